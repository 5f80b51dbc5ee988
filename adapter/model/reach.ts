// Which states can follow a state under a debugger action, read from the program alone. A
// prediction must be one of them: a frame of a function the current line can call (one deeper,
// with exactly that function's parameters), of the same call, or of the caller it returns to;
// locals only from the names that function binds, and every parameter present; a return with a
// value only where the function can return (an exception unwinds it without one); the callers
// kept. The frame grammar (adapter/model/grammar.ts) writes these shapes as GBNF, and every
// parsed answer is checked against them (`refusal`), so the two cannot disagree.
//
// The rules follow the debugger semantics (adapter/real/semantics.ts) over what CPython's tracer
// reports; each is checked against real traces in test/reach.test.ts.
import type { Action, EventKind, ExitStatus, Frame, Step } from "../format/trajectory.js";
import type { PyFunction, PyScope, PySource, ScopeNames } from "../pyread/pysource.js";
import { ExprError, evaluateValue, iterate, pyEq, reads, truthy } from "../format/expr.js";
import { literalToRepr, parseRepr, type PyValue } from "../format/values.js";
import { funcLines, scopeFuncNames, scopeTable } from "./grammar.js";

/** What a frame of one function (or class body, module, comprehension, lambda) can hold. */
export interface FuncShape {
  func: string;
  kind: "module" | "def" | "class" | "nested";
  lines: number[];
  /** Lines a call event can stand on: where it is called (the first), and where a generator resumes. */
  callLines: number[];
  /** The line of the first line event after a call at the entry: the first statement; a class body's own header. */
  firstLine?: number;
  /** The lines that first line event can stand on: the rows of that statement (and of the next, after a module's docstring). */
  firstLines?: number[];
  /** Lines a return with a value can stand on. */
  returnLines: number[];
  /** Locals written in full start with these, in this order (the parameters, as CPython lists them). */
  required: string[];
  /** Any other locals it can have. */
  optional: string[];
  /** A local can disappear (`del`, an `except ... as` name): a line step may then write locals in full. */
  deletes: boolean;
  /** Its name, as a call on a line would spell it (the last part of the qualname). */
  name: string;
  /** Where each of its own names is bound (see `possible`); absent for comprehensions and lambdas. */
  bindLines?: Record<string, number[]>;
  /** Names whose value is known wherever they are bound: those only undecorated defs or plain classes bind (`madeValues`). */
  made: Map<string, string>;
  /** The locals of the comprehensions it runs inline (3.12+), each with the lines it can be there on: they come and go there. */
  inlined: Map<string, number[]>;
}

/** One kind of state that may come next. */
export interface NextFrame {
  event: EventKind;
  func: FuncShape;
  /** The depth: "any" where it cannot be known (after a jump), "deeper" for at least 1. */
  depth: number | "any" | "deeper";
  lines: number[];
  /** Locals as changes against the current state (`..`), or in full. */
  locals: "delta" | "full" | "either";
  /** A return or exception value: needed, forbidden, or either. */
  value: "yes" | "no" | "maybe";
  /** The names this frame can have beyond the required ones, where fewer than the function's (`possible`). */
  optional?: string[];
  /** Locals the new state must have (in a delta or in full): names the statement just run bound for the first time. */
  must?: string[];
  /**
   * A module's or class body's locals written in full, in the same frame or back in it from a
   * callee: its names so far come first, in their order (a namespace keeps the order names were
   * bound in, and loses none without `del`), each with its value when it cannot change, or how
   * the value must start (undefined: any).
   */
  keep?: { name: string; value?: string; starts?: string[] }[];
  /** The value a return must have: a module's is None. */
  valueIs?: string;
  /** Locals the statement just run set to a value computed from the current ones (`Reach.assigned`): each has exactly it. */
  values?: Map<string, string>;
  /**
   * The locals a delta may write, with how each value must start, when the statement just run
   * is known: only names it binds change freely; a list stays a list, a dict or set a dict or
   * set, a tuple a tuple (a call may mutate them); a number, string or None nobody rebinds
   * stays as it was.
   */
  changes?: Map<string, string[] | undefined>;
}

export interface Next {
  frames: NextFrame[];
  exits: ExitStatus[];
}

/** The program's functions as frames see them, built once per program. */
export class Reach {
  readonly funcs = new Map<string, FuncShape>();
  /** Some function rebinds its caller's locals (`nonlocal`): any local may change under any call. */
  private readonly nonlocal: boolean;
  /** Names some function declares `global`: the module's may change under any call. */
  private readonly globals = new Set<string>();
  /** Every name the file binds anywhere (a builtin it shadows is not the builtin); undefined where assignments are not computed (`assigned`). */
  private readonly bound?: Set<string>;
  private readonly rows: string[];

  /** `python`: the minor version whose states these are (adapter/model/pyversion.ts); unknown, 3.11's. */
  constructor(
    private readonly src: PySource,
    python?: string,
  ) {
    this.nonlocal = /\bnonlocal\b/.test(src.source);
    this.rows = src.source.split("\n");
    this.bound = literalsAreValues(src) ? boundNames(src) : undefined;
    for (const m of src.source.matchAll(/^[ \t]*global[ \t]+([\w \t,]+)/gm)) for (const n of m[1].split(",")) if (n.trim()) this.globals.add(n.trim());
    const byQual = new Map(src.functions.map((f) => [f.qualname, f] as const));
    const classes = new Map(src.classes.map((c) => [c.qualname, c] as const));
    for (const s of scopeTable(src, python)) {
      for (const func of scopeFuncNames(s)) {
        const lines = funcLines(s, func);
        if (!lines.length) continue;
        if (func !== s.func) {
          const names = new Set<string>();
          for (const n of src.nested) if (func.endsWith(n.name) && lines.includes(n.line)) n.names.forEach((x) => names.add(x));
          this.funcs.set(func, { func, kind: "nested", lines, callLines: lines, returnLines: lines, required: [], optional: [...names], deletes: true, name: func, inlined: new Map(), made: new Map() });
          continue;
        }
        const f = byQual.get(func);
        const c = classes.get(func);
        const names: ScopeNames = f?.scope ?? c?.scope ?? src.module;
        // Checked on real traces of 3.10-3.13: a module starts on its first statement, a function on
        // the first of its body (its header where the body has none, only a docstring), a class body
        // where its call stands (its first decorator, else its header).
        const firstLine = s.kind === "module" ? src.firstLine : s.kind === "class" ? c?.callLine : f?.bodyLine || undefined;
        const kind = s.kind;
        const inLines = (ls: number[]): number[] => ls.filter((l) => lines.includes(l));
        const params = f ? cpythonOrder(f) : [];
        // A method that calls super() holds its class in a cell, which the tracer lists as `__class__`.
        const free = f ? [...this.freeNames(f), ...(f.method && f.scope.uses.includes("super") ? ["__class__"] : [])] : [];
        const returns = inLines(names.returnLines);
        // An inline comprehension's locals appear while it runs and are gone after it: a line step may then write locals in full.
        const deletes = names.deletes || s.inlined.size > 0;
        this.funcs.set(func, {
          func,
          kind,
          lines,
          callLines: kind === "module" ? [lines[0]] : [...new Set([f?.callLine ?? c!.callLine, ...inLines(names.resumeLines)])],
          ...(firstLine !== undefined && lines.includes(firstLine) ? { firstLine, firstLines: this.firstRows(firstLine, kind, lines) } : {}),
          returnLines: kind === "def" && returns.length ? returns : lines,
          required: names.deletes ? [] : params,
          optional: [...new Set([...(names.deletes ? params : []), ...names.binds, ...free, ...s.inlined.keys()])].filter((n) => !params.includes(n) || names.deletes),
          deletes,
          name: func.split(".").pop()!,
          bindLines: names.bindLines,
          inlined: s.inlined,
          made: madeValues(src, names.bindLines, this.globals),
        });
      }
    }
  }

  /**
   * The rows a frame's first line event can stand on: any row of its first statement that carries
   * code (CPython may stop on a continuation row). A module's docstring runs, but the canonical
   * layout the model reads has none: its states, mapped back, start on the statement after it.
   */
  private firstRows(first: number, kind: FuncShape["kind"], lines: number[]): number[] {
    const stmt = this.src.statements.find((x) => x.line === first);
    const rows = (x: typeof stmt): number[] => (x ? lines.filter((l) => x.line <= l && l <= x.endLine) : []);
    const docstring = kind === "module" && stmt !== undefined && stmt.simple && !stmt.names.length && /^\s*[rRuUbBfF]*("|')/.test(this.src.source.split("\n")[first - 1] ?? "");
    return [...new Set([first, ...rows(stmt), ...(docstring ? rows(this.src.statements.find((x) => x.line > stmt.endLine)) : [])])];
  }

  /**
   * A module's or class body's names at `locals`, kept in order by its next state in full while or
   * after `stmt` runs (its targets may be rebound, a function may rebind a global), or after any
   * statements (no `stmt`: their values free); undefined for a
   * function's frame (its locals go in the order of its code, not of binding) or one that may lose a name.
   */
  private namespace(g: FuncShape, locals: Record<string, string>, stmt?: PySource["statements"][number]): NextFrame["keep"] {
    if ((g.kind !== "module" && g.kind !== "class") || g.deletes) return undefined;
    const rebound = [...(stmt?.binds ?? []), ...(g.kind === "module" ? this.globals : [])];
    // (without a statement, any number of them run first: every value may change)
    const changes = this.nonlocal || !stmt ? undefined : deltaChanges(locals, rebound, Object.keys(locals));
    return Object.entries(locals).map(([name, value]) => {
      if (!changes) return { name };
      if (!changes.has(name)) return { name, value };
      const starts = changes.get(name);
      return starts ? { name, starts } : { name };
    });
  }

  /**
   * `name = C(...)` at a script's top level, where C is a class of this file that keeps object's
   * repr (no `__repr__` or `__new__` of its own or of its bases, which are this file's, no
   * decorator): [name, `<__main__.C object at 0x...>`].
   */
  private instanceMade(stmt: PySource["statements"][number]): [string, string] | undefined {
    if (!stmt.simple || stmt.binds.length !== 1) return undefined;
    const text = this.rows.slice(stmt.line - 1, stmt.endLine).join("\n").trim();
    const m = /^(\w+)\s*=\s*(\w+)\s*\(/.exec(text);
    if (!m || m[1] !== stmt.binds[0] || closing(text, m[0].length - 1) !== text.length - 1) return undefined;
    const plain = (name: string, seen: Set<string>): boolean => {
      const c = this.src.classes.find((x) => x.qualname === name);
      if (!c || seen.has(name) || c.callLine !== c.defLine || ["__repr__", "__new__"].some((d) => c.scope.binds.includes(d))) return false;
      seen.add(name);
      return classBases(this.src, c)?.every((b) => b === "object" || plain(b, seen)) ?? false;
    };
    // The class must be the one its name is bound to everywhere in the module (madeValues).
    const cls = this.funcs.get("<module>")?.made.get(m[2]);
    return cls === `<class '__main__.${m[2]}'>` && plain(m[2], new Set()) ? [m[1], `<__main__.${m[2]} object at 0x...>`] : undefined;
  }

  /**
   * `a = EXPR`, `a, b = EXPR` or `a += EXPR` where the evaluator (adapter/format/expr.ts)
   * computes EXPR from the frame's `locals` alone: literals, locals, builtins the file does not
   * shadow, methods that change nothing. Such a statement calls no code of the program: once it
   * has run, its targets hold those values; `others`: whether other locals may change too (an
   * augmented assignment mutates a list or dict in place, which other names may hold). Undefined
   * for any other statement, a value with a set in it (CPython orders a set by hashes, salted per
   * process for strings) and one long enough to be cut in a trace.
   */
  private assigned(g: FuncShape, stmt: PySource["statements"][number], locals: Record<string, string>): { values: Map<string, string>; others: boolean } | undefined {
    if (!this.bound || !stmt.simple) return undefined;
    const text = codeOf(this.rows.slice(stmt.line - 1, stmt.endLine).join("\n")).trim();
    const local = new Set([...g.required, ...g.optional]);
    // (a function's `global` name is not its local)
    const own = (n: string): boolean => local.has(n) && !(g.kind !== "module" && this.globals.has(n));
    const append = /^([A-Za-z_]\w*)\s*\.\s*append\s*\(([\s\S]*)\)$/.exec(text);
    if (append) {
      const list = Object.hasOwn(locals, append[1]) ? parseRepr(locals[append[1]]) : undefined;
      if (list?.t !== "list" || !own(append[1]) || closing(text, text.indexOf("(")) !== text.length - 1) return undefined;
      const item = this.computed(append[2], locals, false);
      return item ? this.settled(new Map([[append[1], { t: "list", items: [...list.items, item] }]]), true) : undefined;
    }
    const split = splitAssignment(text);
    if (!split) return undefined;
    const targets = (split.op === "=" ? splitTop(split.lhs) : [split.lhs]).map(parseTarget);
    if (targets.some((t) => !t || !own(t.name))) return undefined;
    const augmented = split.op !== "=";
    const value = this.computed(augmented ? `(${split.lhs}) ${split.op.slice(0, -1)} (${split.rhs})` : split.rhs, locals, false);
    if (!value) return undefined;
    const items = targets.length === 1 ? [value] : (value.t === "list" || value.t === "tuple") && value.items.length === targets.length ? value.items : undefined;
    if (!items) return undefined;
    // The targets are bound left to right, each subscript read with what the ones before it bound.
    const work = { ...locals };
    const out = new Map<string, PyValue>();
    for (const [i, t] of targets.entries()) {
      let v = items[i];
      if (t!.index !== undefined) {
        const index = this.computed(t!.index, work, false);
        const container = Object.hasOwn(work, t!.name) ? parseRepr(work[t!.name]) : undefined;
        const set = index && container ? withItem(container, index, v) : undefined;
        if (!set) return undefined;
        v = set;
      }
      out.set(t!.name, v);
      work[t!.name] = literalToRepr(v);
    }
    // An item assigned, or a list or dict augmented, changes the object in place, which other names may hold.
    const inPlace = targets.some((t) => t!.index !== undefined) || (augmented && ["list", "dict", "opaque"].includes(parseRepr(locals[targets[0]!.name] ?? "None").t));
    return this.settled(out, inPlace);
  }

  /** `values` as the reprs an assignment leaves; undefined where one holds a set or is long enough to be cut in a trace. */
  private settled(values: Map<string, PyValue>, others: boolean): { values: Map<string, string>; others: boolean } | undefined {
    const out = new Map<string, string>();
    for (const [n, v] of values) {
      const r = hasSet(v) ? undefined : literalToRepr(v);
      if (r === undefined || r.length > MAX_COMPUTED || r.includes("…(")) return undefined;
      out.set(n, r);
    }
    return { values: out, others };
  }

  /**
   * Where an `if`, `elif` or `while` header's test is one the evaluator computes from the frame's
   * `locals` alone: the statement its frame goes to next (pysource's `branch`); undefined where the
   * test is not computed or that statement is not known.
   */
  private taken(stmt: PySource["statements"][number], locals: Record<string, string>): { line: number; endLine: number } | undefined {
    if (!stmt.branch || !this.bound) return undefined;
    const m = /^(?:if|elif|while)\b([\s\S]*):$/.exec(codeOf(this.rows.slice(stmt.line - 1, stmt.endLine).join("\n")).trim());
    const test = m ? this.computed(m[1], locals, true) : undefined;
    if (!test || test.t === "opaque") return undefined; // (the truth of an object is its own code's)
    return truthy(test) ? stmt.branch.yes : stmt.branch.no;
  }

  /**
   * The value of `expr` from `locals` alone, where it is the one CPython gets (adapter/format/expr.ts):
   * undefined where it reads a name the frame does not hold, calls a builtin the file shadows or
   * builds a set. A set read from a repr iterates in that repr's order, as CPython's does, but one
   * computed from it (`s | t`) would not: `setsRead` allows reading sets only where the order
   * cannot show (no method, only builtins that ignore it).
   */
  private computed(expr: string, locals: Record<string, string>, setsRead: boolean): PyValue | undefined {
    try {
      const r = reads(expr);
      if (r.set || r.builtins.some((b) => this.bound!.has(b) || Object.hasOwn(locals, b)) || r.names.some((n) => !Object.hasOwn(locals, n))) return undefined;
      const orderFree = setsRead && !r.methods.length && r.builtins.every((b) => ORDER_FREE.has(b));
      const values = r.names.map((n) => parseRepr(locals[n]));
      if (!orderFree && values.some(hasSet)) return undefined;
      // CPython rounds a float power by the platform's pow(), a float sum (3.12+) by compensated summation and
      // a true division of ints past 2**53 in one step: this evaluator may differ in the last digit there.
      const float = (v: PyValue): boolean => hasNumber(v, (x) => x.t === "float" || x.t === "complex");
      const powered = r.ops.includes("**") || r.builtins.some((b) => INEXACT.has(b));
      if (powered && (r.float || r.ops.includes("/") || r.builtins.includes("float") || values.some(float))) return undefined;
      if (r.ops.includes("/") && values.some((v) => hasNumber(v, (x) => x.t === "int" && (x.v >= 2n ** 53n || x.v <= -(2n ** 53n))))) return undefined;
      const value = evaluateValue(expr, locals);
      return powered && float(value) ? undefined : value;
    } catch (e) {
      if (e instanceof ExprError) return undefined;
      throw e;
    }
  }

  /**
   * The value a function's `return EXPR` or `yield EXPR` statement returns (a bare one, None)
   * where EXPR is computed from the frame's `locals` alone; undefined elsewhere, and inside a
   * `try` statement or `with` block, whose `finally` or `__exit__` runs between the value and the return.
   */
  private returned(g: FuncShape, stmt: PySource["statements"][number], locals: Record<string, string>): string | undefined {
    if (!this.bound || g.kind !== "def" || !stmt.simple) return undefined;
    const m = /^(?:return|yield)(?![\w.])\s*([\s\S]*)$/.exec(codeOf(this.rows.slice(stmt.line - 1, stmt.endLine).join("\n")).trim());
    if (!m || /^from\b/.test(m[1]) || this.inBlock(stmt.line, /^(try|except|with|async\s+with)\b/)) return undefined;
    if (!m[1]) return "None";
    const v = this.computed(m[1], locals, false);
    const r = v && !hasSet(v) ? literalToRepr(v) : undefined;
    return r !== undefined && r.length <= MAX_COMPUTED && !r.includes("…(") ? r : undefined;
  }

  /** Whether the statement on `line` stands in a block whose header matches `header`, inside its function (read from the statements' indentation). */
  private inBlock(line: number, header: RegExp): boolean {
    const indent = (l: number): number => /^[ \t]*/.exec(this.rows[l - 1] ?? "")![0].length;
    let inner = indent(line);
    for (const l of [...this.src.statementLines].reverse()) {
      if (l >= line || indent(l) >= inner) continue;
      const text = this.rows[l - 1].trim();
      if (header.test(text)) return true;
      if (/^(async\s+)?def\b|^class\b/.test(text)) return false;
      inner = indent(l);
    }
    return false;
  }

  /**
   * A `for` header whose body's first statement is known (pysource's `branch`): its frame's next
   * line event stands there or at the loop's exit (`exit`: that statement, or anywhere past the
   * loop where the block ends there; undefined where no exit can come). Where the iterable is
   * computed from the locals (or is `range`, `enumerate`, `zip` or `reversed` of such values),
   * `items`: the targets' values the body can start with, the first where they are not bound yet,
   * else the item after the one they hold (and the first where an enclosing loop may start it
   * again). Not computed where a target is bound elsewhere too (it may not hold its item), or where
   * the loop's body may rebind or mutate the iterable (the iterator CPython made then would not be
   * the one read now).
   */
  private iteration(g: FuncShape, stmt: PySource["statements"][number], locals: Record<string, string>): { body: Span; exit?: Span | "past"; items?: Map<string, string>[] } | undefined {
    const body = stmt.branch?.yes;
    const loop = this.src.loops.find((lp) => lp.line === stmt.line);
    const m = /^for\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+in\s+([\s\S]+):$/.exec(codeOf(this.rows.slice(stmt.line - 1, stmt.endLine).join("\n")).trim());
    if (!body || !loop || !m) return undefined;
    const open = { body, exit: stmt.branch!.no ?? ("past" as const) };
    const targets = m[1].split(",").map((x) => x.trim());
    const local = new Set([...g.required, ...g.optional]);
    if (!this.bound || g.deletes || new Set(targets).size !== targets.length || targets.some((t) => !local.has(t) || (g.kind !== "module" && this.globals.has(t)))) return open;
    const iter = m[2].trim();
    let names: string[];
    try {
      names = reads(iter).names;
    } catch (e) {
      if (e instanceof ExprError) return open;
      throw e;
    }
    // (statements' targets, parameters included)
    const rebinds = (n: string, where: (l: number) => boolean): boolean => this.src.statements.some((x) => where(x.line) && g.lines.includes(x.line) && x.binds.includes(n));
    const inBody = (l: number): boolean => stmt.endLine < l && l <= loop.endLine;
    const bodyText = this.rows.slice(stmt.endLine, loop.endLine).join("\n");
    if (names.some((n) => targets.includes(n) || rebinds(n, inBody) || mutates(bodyText, n))) return open;
    const items = this.itemsOf(iter, locals);
    const rows = items?.map((it) => (targets.length === 1 ? [it] : (it.t === "tuple" || it.t === "list") && it.items.length === targets.length ? it.items : undefined));
    if (!rows || rows.some((r) => !r)) return open;
    const reprs = rows.map((r) => r!.map((v) => literalToRepr(v)));
    if (reprs.some((r) => r.some((x) => x.length > MAX_COMPUTED || x.includes("…(")))) return open;
    const keys = reprs.map((r) => r.join("\u0000"));
    const next: (number | "exit")[] = [];
    const start = (): void => void next.push(keys.length ? 0 : "exit");
    if (!targets.every((t) => Object.hasOwn(locals, t))) start();
    else {
      // (a target another statement binds too may not hold the item it was given)
      if (targets.some((t) => g.required.includes(t) || rebinds(t, (l) => l !== stmt.line))) return open;
      const cur = targets.map((t) => locals[t]).join("\u0000");
      const at = keys.flatMap((k, i) => (k === cur ? [i] : []));
      if (!at.length) return open;
      for (const i of at) next.push(i + 1 < keys.length ? i + 1 : "exit");
      if (this.src.loops.some((lp) => lp !== loop && lp.line < stmt.line && stmt.line <= lp.endLine && g.lines.includes(lp.line))) start();
    }
    const found = [...new Set(next.filter((x) => x !== "exit"))].map((i) => new Map(targets.map((t, k) => [t, reprs[i][k]])));
    return { body, ...(next.includes("exit") ? { exit: open.exit } : {}), items: found };
  }

  /** The items a `for` loop over `expr` takes, computed from `locals`; undefined where they are not known. */
  private itemsOf(expr: string, locals: Record<string, string>): PyValue[] | undefined {
    const call = /^(range|enumerate|zip|reversed)\s*\(([\s\S]*)\)$/.exec(expr);
    try {
      if (call && closing(expr, expr.indexOf("(")) === expr.length - 1) {
        if (this.bound!.has(call[1]) || Object.hasOwn(locals, call[1])) return undefined;
        const args = this.computed(`(${call[2]},)`, locals, false);
        if (args?.t !== "tuple" || !args.items.length) return undefined;
        const [a, b, c] = args.items;
        const int = (v: PyValue | undefined): bigint | undefined => (v?.t === "int" ? v.v : v?.t === "bool" ? BigInt(v.v) : undefined);
        switch (call[1]) {
          case "range": {
            const [lo, hi, step] = args.items.length === 1 ? [0n, int(a), 1n] : [int(a), int(b), c ? int(c) : 1n];
            if (lo === undefined || hi === undefined || !step || args.items.length > 3) return undefined;
            const n = step > 0n ? (hi - lo + step - 1n) / step : (lo - hi - step - 1n) / -step;
            if (n > BigInt(MAX_ITEMS)) return undefined;
            return Array.from({ length: Math.max(0, Number(n)) }, (_, i) => ({ t: "int" as const, v: lo + BigInt(i) * step }));
          }
          case "enumerate": {
            const from = b ? int(b) : 0n;
            if (from === undefined || args.items.length > 2) return undefined;
            return iterate(a).map((v, i) => ({ t: "tuple" as const, items: [{ t: "int" as const, v: from + BigInt(i) }, v] }));
          }
          case "zip": {
            const its = args.items.map(iterate);
            return Array.from({ length: Math.min(...its.map((x) => x.length)) }, (_, i) => ({ t: "tuple" as const, items: its.map((x) => x[i]) }));
          }
          default:
            return args.items.length === 1 && ["list", "tuple", "str", "range"].includes(a.t) ? iterate(a).reverse() : undefined;
        }
      }
      // A set read from a repr iterates in that repr's order, as CPython's does; one computed here would not.
      const value = this.computed(expr, locals, /^[A-Za-z_]\w*$/.test(expr));
      return value && value.t !== "opaque" && !(hasSet(value) && !/^[A-Za-z_]\w*$/.test(expr)) ? iterate(value).slice(0, MAX_ITEMS + 1) : undefined;
    } catch (e) {
      if (e instanceof ExprError) return undefined;
      throw e;
    }
  }

  /** A closure's free variables: names it uses that an enclosing function binds. */
  private freeNames(f: PyFunction): string[] {
    const outer = new Set<string>();
    for (let q = f.qualname; q.includes(".<locals>."); ) {
      q = q.slice(0, q.lastIndexOf(".<locals>."));
      const g = this.src.functions.find((x) => x.qualname === q);
      if (!g) break;
      g.params.forEach((p) => outer.add(p.name));
      g.scope.binds.forEach((n) => outer.add(n));
    }
    return f.scope.uses.filter((n) => outer.has(n));
  }

  /** The functions a call event from `line` can enter. */
  private calledFrom(line: number): FuncShape[] {
    const stmt = this.src.statements.find((s) => s.line <= line && line <= s.endLine);
    const onLine = new Set(stmt?.names ?? []);
    const values = new Set(this.src.valueNames);
    const out: FuncShape[] = [];
    for (const g of this.funcs.values()) {
      if (g.kind === "module") continue;
      if (g.kind === "class") {
        // The class body runs where the class statement stands: from its header, or a decorator's line.
        const c = this.src.classes.find((x) => x.qualname === g.func);
        if (g.callLines.includes(line) || (c && c.callLine <= line && line <= c.defLine)) out.push(g);
        continue;
      }
      if (g.kind === "nested") {
        // A comprehension runs on its own lines; a lambda or generator expression wherever it is passed to.
        if (g.lines.includes(line) || /<(lambda|genexpr)>$/.test(g.func)) out.push(g);
        continue;
      }
      // A generator is resumed wherever it is iterated.
      if (onLine.has(g.name) || values.has(g.name) || /^__\w+__$/.test(g.name) || g.callLines.length > 1) out.push(g);
    }
    return out;
  }

  /**
   * The line events of the same call after a line step from `f` (a line of `stmt`): within the
   * statement (another of its rows) it has not finished yet; past it, a simple statement's
   * targets are bound. Either way only what the statement binds, or a call may mutate, changes.
   */
  private lineSteps(f: Frame, g: FuncShape, stmt: PySource["statements"][number], locals: "delta" | "either", frames: NextFrame[]): void {
    // A class body's first line event stands on its own header: the header's successor and name are its caller's.
    const ownHeader = stmt.header !== undefined && g.kind !== "module" && g.firstLine === stmt.line;
    const binding = stmt.simple || (stmt.header !== undefined && !ownHeader);
    const must = binding ? stmt.binds.filter((n) => !Object.hasOwn(f.locals, n) && g.optional.includes(n)) : [];
    const rebound = [...stmt.binds, ...g.inlined.keys(), ...(g.kind === "module" ? this.globals : [])];
    const set = this.assigned(g, stmt, f.locals);
    // A computed assignment runs no code: only its targets change (and, in place, what else holds a list it extends).
    let changes = this.nonlocal && !set ? undefined : deltaChanges(f.locals, rebound, [...g.required, ...g.optional]);
    if (set && !set.others) changes = new Map([...set.values.keys()].map((n) => [n, undefined]));
    const made = g.kind === "module" ? this.instanceMade(stmt) : undefined;
    if (made && changes?.has(made[0])) changes.set(made[0], [made[1]]);
    // A target whose value changes must be written, in a delta too.
    if (set) for (const [n, v] of set.values) if (Object.hasOwn(f.locals, n) && f.locals[n] !== v) must.push(n);
    const inStmt = (l: number): boolean => stmt.line <= l && l <= stmt.endLine;
    const shape = (lines: number[], done: boolean): void => {
      for (const [ls, optional] of this.byNames(g, lines, false))
        frames.push({
          event: "line", func: g, depth: f.depth, lines: ls, locals, value: "no", ...(optional ? { optional } : {}), ...(changes ? { changes } : {}),
          ...(done && must.length && must.length <= 3 ? { must } : {}), ...(done && set ? { values: set.values } : {}),
        });
    };
    // (a def or class header, or an import, runs once: its frame does not stop on its line again)
    const once = (binding && stmt.header !== undefined) || (!stmt.simple && stmt.next !== undefined);
    shape(g.lines.filter((l) => inStmt(l) && !(once && l === f.line)), false);
    // A statement that falls through goes on to the next one of its block, and only there; a test computed from the locals, to the branch it takes.
    const next = ownHeader ? undefined : (stmt.next ?? this.taken(stmt, f.locals));
    const loop = next || ownHeader ? undefined : this.iteration(g, stmt, f.locals);
    if (!loop) {
      shape(g.lines.filter((l) => !inStmt(l) && (!next || (next.line <= l && l <= next.endLine))), true);
      return;
    }
    // A loop's header: into the body (with the next item, where the items are known: only the targets change) or out of the loop.
    const rows = (s: Span): number[] => g.lines.filter((l) => s.line <= l && l <= s.endLine);
    const push = (lines: number[], extra: Partial<NextFrame>): void => {
      for (const [ls, optional] of this.byNames(g, lines, false))
        frames.push({ event: "line", func: g, depth: f.depth, lines: ls, locals, value: "no", ...(optional ? { optional } : {}), ...(changes ? { changes } : {}), ...extra });
    };
    if (!loop.items) push(rows(loop.body), {});
    for (const item of loop.items ?? []) {
      const changed = [...item].filter(([n, v]) => f.locals[n] !== v).map(([n]) => n);
      push(rows(loop.body), { values: item, changes: new Map([...item.keys()].map((n) => [n, undefined])), ...(changed.length && changed.length <= 3 ? { must: changed } : {}) });
    }
    const end = this.src.loops.find((lp) => lp.line === stmt.line)!.endLine;
    const exit = loop.exit === "past" ? g.lines.filter((l) => l < stmt.line || l > end) : loop.exit ? rows(loop.exit) : [];
    // (leaving the loop binds nothing)
    if (exit.length) push(exit, loop.items ? { changes: new Map() } : {});
  }

  /**
   * The names a frame of `g` can have on `line`: a name comes into being only when a statement
   * binds it, so one bound only on later lines, and in no loop that also holds `line`, is not
   * there yet (`inclusive`: the statement on `line` itself may have bound it, as at a return);
   * the names of a comprehension run inline (3.12+) are there on its lines, while it runs.
   */
  private possible(g: FuncShape, line: number, inclusive: boolean): string[] {
    const at = g.bindLines;
    if (!at) return g.optional;
    const loops = this.src.loops.filter((lp) => lp.line <= line && line <= lp.endLine);
    return g.optional.filter((n) => {
      const bs = at[n];
      return !bs || bs.some((b) => b < line || (inclusive && b === line) || loops.some((lp) => lp.line <= b && b <= lp.endLine)) || !!g.inlined.get(n)?.includes(line);
    });
  }

  /** `lines` grouped by the names a frame of `g` can have on them (undefined: all of its names). */
  private byNames(g: FuncShape, lines: number[], inclusive: boolean): [number[], string[] | undefined][] {
    const groups = new Map<string, [number[], string[] | undefined]>();
    for (const l of lines) {
      const ns = this.possible(g, l, inclusive);
      const key = ns.length === g.optional.length ? "" : ns.join(",");
      const group = groups.get(key) ?? [[], key ? ns : undefined];
      group[0].push(l);
      groups.set(key, group);
    }
    return [...groups.values()];
  }

  /** What `action` can lead to from the last state of `steps`; undefined when the current state is not one this program's shapes cover. */
  next(steps: readonly Step[], action: Action): Next | undefined {
    const stack = callStack(steps);
    const cur = stack[stack.length - 1];
    if (!cur || cur.file !== undefined) return undefined;
    const F = this.funcs.get(cur.func);
    if (!F) return undefined;
    const d = cur.depth;
    const frames: NextFrame[] = [];
    const exits: ExitStatus[] = ["limit"];
    /** Every function a frame at depth k can be in (only the outermost can be the module). */
    const any = (k: number): FuncShape[] => [...this.funcs.values()].filter((g) => g.kind !== "module" || k === 0);
    /** The frame at depth k of the stack, or every function when it is not known. */
    const at = (k: number): FuncShape[] => {
      const f = stack[k];
      const g = f && f.file === undefined ? this.funcs.get(f.func) : undefined;
      return g ? [g] : any(k);
    };
    const add = (event: EventKind, fs: FuncShape[], depth: NextFrame["depth"], lines: (g: FuncShape) => number[], locals: NextFrame["locals"], value: NextFrame["value"]): void => {
      for (const g of fs) for (const [ls, optional] of this.byNames(g, lines(g), event !== "line")) frames.push({ event, func: g, depth, lines: ls, locals, value, ...(optional ? { optional } : {}) });
    };
    const all = (g: FuncShape): number[] => g.lines;
    const calls = (from: Frame | undefined, depth: number): void => {
      if (!from) add("call", any(depth), depth, (g) => g.callLines, "full", "no");
      else add("call", this.calledFrom(from.line), depth, (g) => g.callLines, "full", "no");
    };
    /** The states of the frame at depth k after a step inside it (from a call, line or exception event). */
    const within = (f: Frame, g: FuncShape, locals: NextFrame["locals"]): void => {
      const stmt = f.event === "line" ? this.src.statements.find((s) => s.line <= f.line && f.line <= s.endLine) : undefined;
      // A call at the entry (not a generator resumed at a yield) goes on to the first line, and only there.
      const entered = f.event === "call" && g.firstLine !== undefined && f.line === g.callLines[0];
      if (entered) add("line", [g], f.depth, () => g.firstLines!, locals, "no");
      // (a comprehension's or lambda's frame runs one line over and over, and a comprehension run
      // inline (3.12+) comes and goes with its names: no statement tells what is next there)
      else if (!stmt || locals === "full" || g.kind === "nested" || (locals === "either" && g.inlined.size > 0)) add("line", [g], f.depth, all, locals, "no");
      else this.lineSteps(f, g, stmt, locals, frames);
      // Every new line is a stop of its own: the frame returns from the statement it stands on.
      const here = stmt ? (l: number): boolean => stmt.line <= l && l <= stmt.endLine : (l: number): boolean => l === f.line;
      const mark = frames.length;
      add("return", [g], f.depth, (x) => x.returnLines.filter(here), "full", "yes");
      // A `return` or `yield` of a value computed from the locals runs nothing: the frame returns that value, its locals as they are.
      const returned = f.event === "line" && stmt ? this.returned(g, stmt, f.locals) : undefined;
      for (const n of frames.slice(mark)) {
        if (g.kind === "module") n.valueIs = "None";
        const keep = f.event === "line" && stmt ? this.namespace(g, f.locals, stmt) : undefined;
        if (keep) n.keep = keep;
        if (returned !== undefined) {
          const names = Object.keys(f.locals);
          n.valueIs = returned;
          n.optional = names.filter((x) => !g.required.includes(x));
          n.keep = n.optional.map((name) => ({ name, value: f.locals[name] }));
          n.values = new Map(g.required.filter((x) => names.includes(x)).map((x) => [x, f.locals[x]]));
        }
      }
      // Unwound: after an exception, or (3.12+) after the line event of the cleanup an inline
      // comprehension runs when an exception leaves it (on its line, its names still there).
      if (f.event === "exception" || (f.event === "line" && [...g.inlined.values()].some((ls) => ls.includes(f.line)))) add("return", [g], f.depth, () => [f.line], "full", "no");
      add("exception", [g], f.depth, (x) => x.lines.filter(here), "full", "yes");
    };
    /** After the frame at depth d returned: the caller's next states, or the exit. */
    const afterReturn = (withCalls: boolean): void => {
      if (d === 0) {
        exits.push("normal", "error");
        return;
      }
      const caller = stack[d - 1];
      const callerStmt = caller?.event === "line" ? this.src.statements.find((s) => s.line <= caller.line && caller.line <= s.endLine) : undefined;
      for (const g of at(d - 1)) {
        const mark = frames.length;
        add("line", [g], d - 1, all, "full", "no");
        add("return", [g], d - 1, (x) => x.returnLines, "full", "yes");
        add("exception", [g], d - 1, all, "full", "yes");
        const keep = caller && callerStmt && caller.func === g.func ? this.namespace(g, caller.locals, callerStmt) : undefined;
        for (const n of frames.slice(mark)) {
          if (keep) n.keep = keep;
          if (n.event === "return" && g.kind === "module") n.valueIs = "None";
        }
      }
      if (withCalls) calls(stack[d - 1], d);
    };
    const lineLocals: NextFrame["locals"] = cur.event === "call" || cur.event === "line" ? (F.deletes ? "either" : "delta") : "full";

    switch (action.kind) {
      case "step_into":
      case "step_over":
        if (cur.event === "return") afterReturn(action.kind === "step_into");
        else {
          within(cur, F, lineLocals);
          if (action.kind === "step_into" && cur.event !== "call") calls(cur, d + 1);
        }
        break;
      case "step_return":
        if (cur.event === "return") {
          if (d === 0) exits.push("normal", "error");
          else
            for (const g of at(d - 1)) {
              add("return", [g], d - 1, (x) => x.returnLines, "full", "yes");
              add("return", [g], d - 1, all, "full", "no");
            }
        } else {
          const mark = frames.length;
          add("return", [F], d, (x) => x.returnLines, "full", "yes");
          add("return", [F], d, all, "full", "no");
          // Out of a module or class body: the names it has now stay, in order, whatever runs before the return.
          const keep = this.namespace(F, cur.locals);
          for (const n of frames.slice(mark)) {
            if (keep) n.keep = keep;
            if (F.kind === "module") n.valueIs = "None";
          }
        }
        break;
      case "breakpoint":
      case "inv_breakpoint": {
        const line = action.line!;
        const root = stack[0] && stack[0].file === undefined ? this.funcs.get(stack[0].func) : undefined;
        for (const g of this.funcs.values()) {
          if (!g.lines.includes(line)) continue;
          if (!root || g === root) add("line", [g], "any", () => [line], "full", "no");
          else add("line", [g], "deeper", () => [line], "full", "no");
        }
        if (action.kind === "breakpoint") exits.push("normal", "error");
        else add("call", root ? [root] : any(0), 0, (g) => g.callLines, "full", "no"); // never there: back to the start
        break;
      }
      case "continue":
        exits.push("normal", "error");
        break;
      case "inv_step_into":
      case "inv_step_over":
        if (cur.event === "call") {
          if (d === 0) add("call", [F], 0, () => [cur.line], "full", "no"); // nothing earlier: it stays
          else {
            for (const g of at(d - 1)) {
              add("line", [g], d - 1, all, "full", "no");
              add("exception", [g], d - 1, all, "full", "yes");
            }
            add("return", any(d), d, all, "full", "maybe"); // a callee of the same line returned just before
          }
        } else {
          add("call", [F], d, (g) => g.callLines, "full", "no");
          add("line", [F], d, all, "full", "no");
          add("exception", [F], d, all, "full", "yes");
          if (action.kind === "inv_step_into") add("return", any(d + 1), d + 1, all, "full", "maybe");
        }
        break;
      case "inv_step_return":
        if (cur.event === "call") {
          if (d === 0) add("call", [F], 0, () => [cur.line], "full", "no");
          else add("call", at(d - 1), d - 1, (g) => g.callLines, "full", "no");
        } else {
          add("call", [F], d, (g) => g.callLines, "full", "no");
          if (F.kind === "module" || F.kind === "class") add("line", [F], d, all, "full", "no"); // traced from inside the frame
        }
        break;
    }
    // A delta carries the current locals over. Where one of them is not a name the new line of
    // this call can have, no delta is right there: only a full list of locals could be.
    const carried = Object.keys(cur.locals);
    const fits = (n: NextFrame): boolean => {
      if (n.locals === "full" || n.func.func !== cur.func) return true;
      const ok = new Set([...n.func.required, ...(n.optional ?? n.func.optional)]);
      return carried.every((x) => ok.has(x));
    };
    // A namespace's names stay: where one of them cannot be (bound only further on), the frame cannot be either.
    const holds = (n: NextFrame): boolean => {
      const ok = new Set([...n.func.required, ...(n.optional ?? n.func.optional)]);
      return !n.keep || n.keep.every((k) => ok.has(k.name));
    };
    const kept = frames.filter(holds).flatMap((n): NextFrame[] => (fits(n) ? [n] : n.locals === "either" ? [{ ...n, locals: "full" }] : []));
    return { frames: kept, exits: [...new Set(exits)] };
  }
}

// Base classes whose class keeps type's repr (`<class 'module.Name'>`): builtins and exceptions. An
// Enum's metaclass writes `<enum 'Name'>`, a class of an unknown module may have any metaclass.
const PLAIN_BASES = new Set(["object", "int", "float", "complex", "str", "bytes", "list", "dict", "set", "frozenset", "tuple", "BaseException", "Exception"]);
const PLAIN_DECORATOR = /^\s*@\s*((dataclasses\.)?dataclass\b|(functools\.)?total_ordering\s*$)/;

/** The bases a one-row class header names (`class C(A, B):`), none for `class C:`; undefined for any other header (keywords, calls, several rows). */
function classBases(src: PySource, c: PyScope): string[] | undefined {
  const header = /^\s*class\s+\w+\s*(?:\(([\w.,\s]*)\))?\s*:/.exec(src.source.split("\n")[c.defLine - 1] ?? "");
  return header ? (header[1] ?? "").split(",").map((b) => b.trim()).filter(Boolean) : undefined;
}

/**
 * The repr each name of a scope has wherever its frame holds it, for the names that only
 * undecorated defs, or plain classes of a script, bind there: the tracer writes a function as
 * `<function QUAL at 0x...>` and a class run as a script's code as `<class '__main__.QUAL'>`
 * (classes inside functions aside: a call's module is named after its file).
 */
function madeValues(src: PySource, bindLines: Record<string, number[]> | undefined, globals: ReadonlySet<string>): Map<string, string> {
  const rows = src.source.split("\n");
  const plain = (c: PyScope, seen: Set<PyScope>): boolean => {
    if (seen.has(c) || c.qualname.includes("<locals>")) return false;
    seen.add(c);
    for (let l = c.callLine; l < c.defLine; l++) if (!PLAIN_DECORATOR.test(rows[l - 1] ?? "")) return false;
    const bases = classBases(src, c);
    return (
      bases !== undefined &&
      bases.every((b) => {
        if (PLAIN_BASES.has(b) || (/^\w*(Error|Exception|Warning)$/.test(b) && !/Enum|Flag/.test(b))) return true;
        const base = src.classes.find((x) => x.qualname === b);
        return base !== undefined && plain(base, seen);
      })
    );
  };
  const made = (line: number, name: string): string | undefined => {
    const f = src.functions.find((x) => x.defLine === line && x.name === name);
    if (f) return f.callLine === f.defLine ? `<function ${f.qualname} at 0x...>` : undefined;
    const c = src.classes.find((x) => x.defLine === line && x.name === name);
    return c && plain(c, new Set()) ? `<class '__main__.${c.qualname}'>` : undefined;
  };
  const out = new Map<string, string>();
  for (const [name, lines] of Object.entries(bindLines ?? {})) {
    if (globals.has(name)) continue; // a function may rebind it
    const values = new Set(lines.map((l) => made(l, name)));
    const [v] = values;
    if (values.size === 1 && v !== undefined) out.set(name, v);
  }
  return out;
}

// `a = EXPR`, `a, b = EXPR`, `a += EXPR` (and the other augmented operators): targets, operator, expression.
const ASSIGNMENT = /^([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(=|\+=|-=|\*=|\/\/=|\/=|%=|\*\*=|\|=|&=|\^=|<<=|>>=)\s*([\s\S]+)$/;
// Builtins whose result does not depend on the order they meet a set's items in.
const ORDER_FREE = new Set(["len", "min", "max", "sorted", "any", "all", "bool", "abs", "isinstance"]);
/** Items of a loop computed (past them, the loop is left to the model). */
const MAX_ITEMS = 10_000;
type Span = { line: number; endLine: number };
/** Characters of a computed value: well under the shortest repr a trace cuts (`--max-repr`, 1000 by default). */
const MAX_COMPUTED = 200;
// Libraries whose numbers print as Python's do (numpy's float64 prints 1.5) but compute otherwise.
const NUMERIC_LIBRARY = /^\s*(?:import|from)\s+(numpy|pandas|torch|jax|tensorflow|cupy|scipy|sympy)\b/m;
// Builtin types whose subclasses print as literals but may compute otherwise.
const LITERAL_TYPES = new Set(["int", "float", "complex", "bool", "str", "bytes", "bytearray", "list", "dict", "tuple", "set", "frozenset", "UserList", "UserDict", "UserString"]);

/**
 * Whether every value in this file that prints as a literal is one (so that the evaluator may
 * compute with it): no class of its own prints itself (`__repr__`) or extends a literal's type,
 * no numeric library, no `import *` (which may shadow a builtin).
 */
function literalsAreValues(src: PySource): boolean {
  if (NUMERIC_LIBRARY.test(src.source) || /^\s*from\s+\S+\s+import\s+\*/m.test(src.source)) return false;
  return src.classes.every((c) => !c.scope.binds.includes("__repr__") && !(classBases(src, c) ?? []).some((b) => LITERAL_TYPES.has(b.split(".").pop()!)));
}

/** Every name the file binds: its functions' and classes' names, parameters and locals, the module's names. */
function boundNames(src: PySource): Set<string> {
  const out = new Set(src.module.binds);
  for (const f of src.functions) [f.name, ...f.params.map((p) => p.name), ...f.scope.binds].forEach((n) => out.add(n));
  for (const c of src.classes) [c.name, ...c.scope.binds].forEach((n) => out.add(n));
  return out;
}

/** Python text without its comments (a `#` inside a string is no comment). */
function codeOf(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const q = /^('''|"""|'|")/.exec(text.slice(i, i + 3))?.[1];
    if (q) {
      let j = i + q.length;
      while (j < text.length && !text.startsWith(q, j)) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + q.length);
      i = j + q.length - 1;
    } else if (text[i] === "#") {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else out += text[i];
  }
  return out;
}

const INEXACT = new Set(["pow", "sum", "round", "divmod"]);

/** Whether a value holds a number that `is` holds for, anywhere in it. */
function hasNumber(v: PyValue, is: (x: PyValue) => boolean): boolean {
  if (is(v)) return true;
  if (v.t === "dict") return v.entries.some(([k, x]) => hasNumber(k, is) || hasNumber(x, is));
  return "items" in v && v.items.some((x) => hasNumber(x, is));
}

/** Whether `text` may change the object `name` holds in place (a mutating method; an item assigned, augmented or deleted). */
function mutates(text: string, name: string): boolean {
  const n = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const method = `\\.\\s*(append|extend|insert|remove|pop|clear|sort|reverse|add|discard|update|popitem|setdefault|appendleft|popleft|extendleft|rotate)\\b`;
  const item = `\\[[^\\n]*?\\]\\s*(?:[-+*/%&|^@]|//|\\*\\*|>>|<<)?=(?!=)`;
  return new RegExp(`(?<![\\w.])${n}\\s*(${method}|${item})|\\bdel\\s+${n}\\b`).test(text);
}

/** Whether a value holds a set anywhere (as a dict's key or value too). */
function hasSet(v: PyValue): boolean {
  if (v.t === "set" || v.t === "frozenset") return true;
  if (v.t === "dict") return v.entries.some(([k, x]) => hasSet(k) || hasSet(x));
  return "items" in v && v.items.some(hasSet);
}

/**
 * A simple statement split at its assignment (`=` or an augmented operator, outside brackets and
 * strings): left side, operator, right side; undefined for any other statement, a chained or
 * annotated assignment.
 */
function splitAssignment(text: string): { lhs: string; op: string; rhs: string } | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const q = text.startsWith(ch.repeat(3), i) ? ch.repeat(3) : ch;
      let j = i + q.length;
      while (j < text.length && !text.startsWith(q, j)) j += text[j] === "\\" ? 2 : 1;
      i = j + q.length - 1;
    } else if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    else if (depth === 0 && ch === "=" && text[i + 1] !== "=") {
      const op = /(\*\*|\/\/|>>|<<|[-+*/%&|^@])?$/.exec(text.slice(0, i))![0];
      if (/[=!<>:]$/.test(text.slice(0, i - op.length)) && !op) return undefined; // ==, !=, <=, >=, :=
      const lhs = text.slice(0, i - op.length).trim();
      const rhs = text.slice(i + 1).trim();
      return rhs && !/^=/.test(rhs) && splitAssignment(rhs) === undefined ? { lhs, op: op + "=", rhs } : undefined;
    }
  }
  return undefined;
}

/** `text` split at its top-level commas (outside brackets and strings). */
function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) return [text];
      i = end;
    } else if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    else if (ch === "," && depth === 0) {
      out.push(text.slice(from, i).trim());
      from = i + 1;
    }
  }
  out.push(text.slice(from).trim());
  return out;
}

/**
 * An assignment target: a name, or a name with one subscript (`xs[i]`, `d[k]`); undefined for
 * anything else (attributes, slices, nested subscripts: a nested list may be one object several
 * times over, which no repr shows).
 */
function parseTarget(text: string): { name: string; index?: string } | undefined {
  const m = /^([A-Za-z_]\w*)\s*(\[([\s\S]*)\])?$/.exec(text);
  if (!m) return undefined;
  if (m[2] === undefined) return { name: m[1] };
  const open = text.indexOf("[");
  return closing(text, open) === text.length - 1 && !/^\s*$/.test(m[3]) && splitTop(m[3]).every((x) => !x.includes(":")) ? { name: m[1], index: m[3] } : undefined;
}

/** `container` with `container[index] = value` done as CPython does for a list or dict; undefined where that raises or is not known. */
function withItem(container: PyValue, index: PyValue, value: PyValue): PyValue | undefined {
  if (container.t === "list") {
    const i = index.t === "int" ? index.v : index.t === "bool" ? BigInt(index.v) : undefined;
    const n = BigInt(container.items.length);
    if (i === undefined || i >= n || i < -n) return undefined;
    const items = [...container.items];
    items[Number(i < 0n ? i + n : i)] = value;
    return { t: "list", items };
  }
  if (container.t === "dict" && hashable(index)) {
    // An equal key already there keeps its place and its own form (d[1.0] = x keeps the key 1).
    const at = container.entries.findIndex(([k]) => hashable(k) && pyEq(k, index));
    const entries = [...container.entries];
    if (at >= 0) entries[at] = [entries[at][0], value];
    else entries.push([index, value]);
    return { t: "dict", entries };
  }
  return undefined;
}

/** Whether a value can be a dict's key (and its equality is known: no opaque part). */
function hashable(v: PyValue): boolean {
  if (v.t === "tuple") return v.items.every(hashable);
  return ["int", "bool", "float", "complex", "none", "str", "bytes"].includes(v.t);
}

/** The index of the bracket that closes the one at `open` in `text` (strings skipped), or -1. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

/** How a value's repr starts when its object keeps its type: undefined for anything that may change freely, [] for what cannot change. */
function keptKind(repr: string): string[] | undefined {
  // An object's default repr names its type and address, a function's, class's or generator's its
  // name: the object may change, its repr cannot while the name holds it.
  if (/^<([\w.]+ object at 0x\.\.\.|(function|generator object|coroutine object|bound method) [^<>]*(<locals>[^<>]*)* at 0x\.\.\.|class '[^']+')>$/.test(repr)) return [];
  if (repr.startsWith("[")) return ["["];
  if (repr.startsWith("{") || repr.startsWith("set(")) return ["{", "set("];
  if (repr.startsWith("(")) return ["("];
  if (/^(-?\d[\d_]*(\.\d*)?([eE][-+]?\d+)?j?|-?inf|nan|None|True|False|b?'([^'\\]|\\.)*'|b?"([^"\\]|\\.)*")$/.test(repr)) return [];
  return undefined;
}

/** The names a delta may write after a statement that binds `binds`, each with the starts its value may have (undefined: any). */
function deltaChanges(locals: Record<string, string>, binds: readonly string[], names: readonly string[]): Map<string, string[] | undefined> {
  const out = new Map<string, string[] | undefined>();
  for (const n of names) {
    if (binds.includes(n)) out.set(n, undefined);
    else if (Object.hasOwn(locals, n)) {
      const kind = keptKind(locals[n]);
      if (!kind || kind.length) out.set(n, kind);
    }
  }
  return out;
}

/** Parameters in the order CPython lists a frame's locals: positional, keyword-only, *args, **kwargs. */
function cpythonOrder(f: PyFunction): string[] {
  const order = ["positional_only", "positional", "keyword_only", "var_positional", "var_keyword"];
  return order.flatMap((k) => f.params.filter((p) => p.kind === k).map((p) => p.name));
}

/**
 * The frames on the stack at the last state of `steps`, by depth; undefined where it cannot be
 * known. Steps (step into / over / return and their inverses) never pass a frame shallower
 * than where they land, so the callers stay what they were; a jump (breakpoint, continue) may
 * have passed returns and calls, and keeps only the outermost frame, which lasts the whole run.
 */
export function callStack(steps: readonly Step[]): (Frame | undefined)[] {
  let stack: (Frame | undefined)[] = [];
  for (const s of steps) {
    const f = s.frame;
    if (!f) continue;
    const k = s.action?.kind;
    const jump = k === "breakpoint" || k === "continue" || k === "inv_breakpoint";
    if (!jump && f.depth <= stack.length) stack = stack.slice(0, f.depth);
    else {
      const root = stack[0];
      stack = new Array<Frame | undefined>(f.depth).fill(undefined);
      if (f.depth > 0) stack[0] = root;
    }
    stack[f.depth] = f;
  }
  return stack;
}

/** Why `step` is not a state `next` allows, or undefined when it is one. */
export function refusal(next: Next, step: Step, prev: Frame | undefined): string | undefined {
  if (step.exit) return next.exits.includes(step.exit.status) ? undefined : `the program cannot exit here (${step.exit.status})`;
  const f = step.frame;
  if (!f) return "no state";
  if (f.file !== undefined) return undefined;
  const cands = next.frames.filter((n) => n.event === f.event && n.func.func === f.func);
  if (!cands.length) return `a ${f.event} event in ${f.func} cannot follow here`;
  const depthOk = (n: NextFrame): boolean => (n.depth === "any" ? true : n.depth === "deeper" ? f.depth >= 1 : n.depth === f.depth);
  const atDepth = cands.filter(depthOk);
  if (!atDepth.length) return `${f.func} cannot be at depth ${f.depth} here`;
  const onLine = atDepth.filter((n) => n.lines.includes(f.line));
  if (!onLine.length) return `a ${f.event} event cannot stand on line ${f.line} of ${f.func} here`;
  const valued = onLine.filter((n) => n.value === "maybe" || (n.value === "yes") === (f.value !== undefined));
  if (!valued.length) return f.value === undefined ? `a ${f.event} on line ${f.line} needs a value` : `a ${f.event} on line ${f.line} has no value`;
  const why = valued.map((n) => localsRefusal(n, f.locals, prev, f.value));
  return why.includes(undefined) ? undefined : why[0];
}

function localsRefusal(n: NextFrame, locals: Record<string, string>, prev: Frame | undefined, value: string | undefined): string | undefined {
  const g = n.func;
  const names = Object.keys(locals);
  const allowed = new Set([...g.required, ...(n.optional ?? g.optional)]);
  const stray = names.filter((x) => !allowed.has(x));
  if (stray.length) return `${g.func} has no local ${stray.map((x) => JSON.stringify(x)).join(", ")}`;
  const missing = g.required.filter((x) => !names.includes(x));
  if (missing.length) return `${g.func} lost its parameter${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`;
  // A line step inside one call writes changed locals only: none of the others can be gone.
  if (n.locals === "delta" && prev && Object.keys(prev.locals).some((x) => !names.includes(x))) return `a line step of ${g.func} dropped a local`;
  if (n.changes && prev) {
    for (const x of names) {
      if (Object.hasOwn(prev.locals, x) && prev.locals[x] === locals[x]) continue;
      if (!n.changes.has(x)) return `${x} cannot change on line ${prev.line}`;
      const starts = n.changes.get(x);
      if (starts && !starts.some((p) => locals[x].startsWith(p)))
        return Object.hasOwn(prev.locals, x) ? `${x} cannot change its type on line ${prev.line}` : `line ${prev.line} binds ${x} to ${starts.join(" or ")}`;
    }
  }
  if (n.keep) {
    const order = n.keep.map((k) => k.name);
    // (after the parameters, which come first in a function's frame)
    const from = g.required.length;
    if (names.slice(from, from + order.length).join(",") !== order.join(",")) return `${g.func}'s names are ${order.join(", ")} first, in that order`;
    for (const k of n.keep) {
      if (k.value !== undefined && locals[k.name] !== k.value) return `${k.name} cannot change here`;
      if (k.starts && !k.starts.some((p) => locals[k.name].startsWith(p))) return `${k.name} cannot change its type here`;
    }
  }
  if (n.valueIs !== undefined && value !== undefined && value !== n.valueIs) return `a return of ${g.func} is ${n.valueIs}`;
  // (a value the state already had stays: the user may have set it)
  const had = (x: string): boolean => prev?.locals[x] === locals[x] || !!n.keep?.some((k) => k.name === x && k.value === locals[x]);
  const wrong = names.find((x) => g.made.has(x) && locals[x] !== g.made.get(x) && !had(x));
  if (wrong) return `${wrong} is ${g.made.get(wrong)} in ${g.func}, not ${locals[wrong]}`;
  const computed = [...(n.values ?? [])].find(([x, v]) => locals[x] !== v);
  if (computed) return `line ${prev?.line} sets ${computed[0]} to ${computed[1]}, not ${locals[computed[0]]}`;
  const unbound = (n.must ?? []).filter((x) => !names.includes(x));
  if (unbound.length) return `line ${prev?.line} assigns ${unbound.join(", ")}, which the next line does not have`;
  return undefined;
}

