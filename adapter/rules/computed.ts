// What a statement computes from a frame's locals alone, where the run would compute the same:
// the values an assignment binds or an item assignment leaves, the branch a test takes, the item a
// loop goes on with, the value a `return` gives, what a print writes. CPython computes them,
// sealed, over the locals rebuilt from their reprs (`evaluate` in adapter/python/sealed.py, given
// to the rules as a PythonAsk); these rules only choose what to ask and decline wherever the
// program's own run could get another answer (a set's order, a builtin the file shadows, a class
// that prints itself, a loop whose iterable changes under it, an object several names hold).
// CPython is asked ahead (`know`, asynchronously); the rules read its answers synchronously, inside
// the grammar of the model's next state. Reach (adapter/rules/reach.ts) holds predictions to what
// they give; each is checked there against real traces.
import { classBases, type PyFunction, type PySource } from "../pyread/source.js";
import { closing, codeOf } from "../pyread/text.js";
import { literalToRepr, parseRepr, type Answer, type Evaluation, type ItemsAnswer, type PythonAsk, type PyValue, type Reads } from "../format/values.js";
import { pythonMinor } from "../format/trajectory.js";
import type { FuncShape } from "./shapes.js";

type Statement = PySource["statements"][number];
export type Span = { line: number; endLine: number };

/** The values a loop's targets take, item by item (`Effects.loopItems`): reprs, each item's key, and the items with each key. */
type LoopItems = { reprs: string[][]; keys: string[]; at: Map<string, number[]> };

/** A statement that calls a function of the program with computed arguments (`Effects.call`). */
export interface UserCall {
  form: "call" | "assign" | "return";
  /** The names an assignment binds. */
  targets: string[];
  callee: PyFunction;
  /** The callee's locals at its call event: its parameters, bound. */
  params: Record<string, string>;
  /** Parameter -> the caller's local given for it as a bare name. */
  passed: Map<string, string>;
}

/** The statements of one program, as far as they are computed from the locals. */
export class Effects {
  /** Every name the file binds anywhere (a builtin it shadows is not the builtin); undefined where nothing is computed (`literalsAreValues`, or no CPython to ask). */
  private readonly bound?: Set<string>;
  /** Names CPython is told have no value: those the file binds, and builtins whose values are the sealed process's own. */
  private readonly hidden: string[];
  private readonly rows: string[];
  private readonly texts = new Map<number, string>();
  /** CPython's answers, by what was asked over which locals (`key`); the oldest go first past MAX_ANSWERS. */
  private readonly answers = new Map<string, Answer>();
  /** What the rules asked while `know` collected, unanswered. */
  private readonly misses = new Map<string, { names: Record<string, string>; entry: Evaluation }>();
  private collecting = false;

  /**
   * `globals`: the names some function declares `global`; `python`: the minor version whose states
   * these are (a float sum rounds otherwise before 3.12); `ask`: CPython, sealed (none: nothing is
   * computed).
   */
  constructor(
    private readonly src: PySource,
    private readonly globals: ReadonlySet<string>,
    private readonly python: string | undefined,
    private readonly ask?: PythonAsk,
  ) {
    this.rows = src.source.split("\n");
    this.bound = ask && literalsAreValues(src) ? boundNames(src) : undefined;
    this.hidden = [...new Set([...(this.bound ?? []), ...PROCESS_BOUND])];
  }

  /**
   * Some function reads a module-level name that may hold an object changed in place (bound at
   * the top level other than by a def, class, import or a computed value with no list, dict or
   * set in it): a call may then change what its caller holds without being given it. Known once
   * `know` has run (until then, true).
   */
  get mutableGlobals(): boolean {
    return !this.bound || (this.shared ?? true);
  }

  private shared?: boolean;

  /**
   * Asks CPython, ahead, all that the rules read of `stmt` over `locals` (of a frame of `g`), and
   * on the first call what the module's top-level statements compute; afterwards the rules answer
   * synchronously from what it said. Asking again is free.
   */
  async know(g: FuncShape, stmt: Statement, locals: Record<string, string>, signal?: AbortSignal): Promise<void> {
    if (!this.bound) return;
    if (this.shared === undefined) this.shared = await this.collected(() => this.sharedGlobals(), signal);
    await this.collected(() => {
      this.assigned(g, stmt, locals);
      this.printed(stmt, locals);
      this.test(stmt, locals);
      this.returned(g, stmt, locals);
      this.defines(stmt, locals);
      this.call(g, stmt, locals);
      this.iteration(g, stmt, locals);
    }, signal);
  }

  /**
   * Runs `read` until it asks nothing CPython has not answered (each answer may lead it to ask
   * another): its result then, read from answers alone (what was known already costs one reading).
   */
  private async collected<T>(read: () => T, signal?: AbortSignal): Promise<T> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      this.misses.clear();
      this.collecting = true;
      let result: T;
      try {
        result = read();
      } finally {
        this.collecting = false;
      }
      if (!this.misses.size) return result;
      await this.fill(signal);
    }
    return read();
  }

  /** Asks CPython what was missed, one request per set of locals. */
  private async fill(signal?: AbortSignal): Promise<void> {
    const groups = new Map<string, { names: Record<string, string>; keys: string[]; entries: Evaluation[] }>();
    for (const [key, m] of this.misses) {
      const id = JSON.stringify(m.names);
      const group = groups.get(id) ?? { names: m.names, keys: [], entries: [] };
      group.keys.push(key);
      group.entries.push(m.entry);
      groups.set(id, group);
    }
    for (const group of groups.values()) {
      let answers: Answer[];
      try {
        answers = await this.ask!(group.names, group.entries, { hidden: this.hidden, signal });
      } catch (e) {
        signal?.throwIfAborted();
        // (no CPython to ask here: the rules decline, and the model predicts)
        answers = group.entries.map(() => ({ error: e instanceof Error ? e.message : String(e) }));
      }
      group.keys.forEach((key, i) => this.remember(key, answers[i] ?? { error: "no answer" }));
    }
  }

  private remember(key: string, answer: Answer): void {
    if (this.answers.size >= MAX_ANSWERS) this.answers.delete(this.answers.keys().next().value!);
    this.answers.set(key, answer);
  }

  /** CPython's answer to `entry` over `names`, where it has given one; else undefined (noted while `know` collects). */
  private answer(entry: Evaluation, names: Record<string, string>): Answer | undefined {
    const key = JSON.stringify([entry, names]);
    const a = this.answers.get(key);
    if (a === undefined && this.collecting) this.misses.set(key, { names, entry });
    return a;
  }

  private sharedGlobals(): boolean {
    const changeable = new Set<string>();
    for (const stmt of this.src.statements) {
      if (!stmt.binds.length || /^[ \t]/.test(this.rows[stmt.line - 1] ?? "") || stmt.header) continue;
      const text = this.code(stmt);
      if (/^(import|from)\b/.test(text)) continue;
      const split = stmt.simple ? splitAssignment(text) : undefined;
      const value = split?.op === "=" ? this.computed(split.rhs, {}, false) : undefined;
      if (!value || hasNumber(value, (x) => x.t === "list" || x.t === "dict" || x.t === "set" || x.t === "opaque")) stmt.binds.forEach((n) => changeable.add(n));
    }
    return this.src.functions.some((f) => f.scope.uses.some((n) => changeable.has(n) && !f.scope.binds.includes(n) && !f.params.some((p) => p.name === n)));
  }

  /** A statement's text without its comments, read once per program (every step asks several rules of it). */
  private code(stmt: Statement): string {
    let text = this.texts.get(stmt.line);
    if (text === undefined) {
      text = codeOf(this.rows.slice(stmt.line - 1, stmt.endLine).join("\n")).trim();
      this.texts.set(stmt.line, text);
    }
    return text;
  }

  /**
   * `a = EXPR`, `a, b = EXPR`, `a += EXPR`, `d[k] = EXPR` (one subscript: a nested list may be one
   * object several times over) or `xs.append(EXPR)`, run by CPython over the frame's `locals`
   * alone: literals, locals, builtins the file does not shadow. Such a statement calls no code of
   * the program: once it has run, the names it binds or whose list or dict it changes hold those
   * values; `others`: whether other locals may change too (an item assigned or appended, or a list
   * or dict augmented, changes the object in place, which other names may hold). Undefined for any
   * other statement, one that changes anything but its targets or writes output, a value with a
   * set in it (CPython orders a set by hashes, salted per process for strings) and one long enough
   * to be cut in a trace.
   */
  assigned(g: FuncShape, stmt: Statement, locals: Record<string, string>): { values: Map<string, string>; others: boolean } | undefined {
    if (!this.bound || !stmt.simple) return undefined;
    const text = this.code(stmt);
    const local = new Set([...g.required, ...g.optional]);
    // (a function's `global` name is not its local)
    const own = (n: string): boolean => local.has(n) && !(g.kind !== "module" && this.globals.has(n));
    const append = /^([A-Za-z_]\w*)\s*\.\s*append\s*\(([\s\S]*)\)$/.exec(text);
    let targets: string[];
    let inPlace: boolean;
    if (append) {
      if (parseRepr(locals[append[1]] ?? "None").t !== "list" || !own(append[1]) || closing(text, text.indexOf("(")) !== text.length - 1) return undefined;
      [targets, inPlace] = [[append[1]], true];
    } else {
      const split = splitAssignment(text);
      if (!split) return undefined;
      const parsed = (split.op === "=" ? splitTop(split.lhs) : [split.lhs]).map(parseTarget);
      if (parsed.some((t) => !t || !own(t.name))) return undefined;
      targets = parsed.map((t) => t!.name);
      // An item assigned, or a list or dict augmented, changes the object in place, which other names may hold.
      inPlace = parsed.some((t) => t!.index !== undefined) || (split.op !== "=" && ["list", "dict", "opaque"].includes(parseRepr(locals[targets[0]] ?? "None").t));
      // Names bound to what other names hold (`c = a`, `a, b = b, a`): the same values, objects too; nothing to compute.
      const sources = split.op === "=" && !inPlace ? splitTop(split.rhs) : [];
      if (sources.length === targets.length && sources.every((x) => /^[A-Za-z_]\w*$/.test(x) && Object.hasOwn(locals, x)))
        return this.settled(new Map(targets.map((t, i) => [t, locals[sources[i]]])), false);
    }
    const ran = this.answer({ exec: text }, locals);
    if (!ran || !("names" in ran) || ran.stdout || !this.readsValues(ran.reads, locals, false)) return undefined;
    // (what changed is the targets alone; a target bound to the value it held is unchanged)
    if (Object.keys(ran.names).some((n) => !targets.includes(n))) return undefined;
    const values = new Map<string, string>();
    for (const t of targets) {
      const r = ran.names[t] ?? locals[t];
      if (r === undefined) return undefined;
      values.set(t, r);
    }
    return this.settled(values, inPlace);
  }

  /** `values` as an assignment leaves them; undefined where one holds a set or is long enough to be cut in a trace. */
  private settled(values: Map<string, string>, others: boolean): { values: Map<string, string>; others: boolean } | undefined {
    for (const r of values.values()) if (!writable(r)) return undefined;
    return { values, others };
  }

  /**
   * Where an `if`, `elif` or `while` header's test is one CPython computes from the frame's
   * `locals` alone: the statement its frame goes to next (the parse's `branch`); undefined where the
   * test is not computed or that statement is not known.
   */
  taken(stmt: Statement, locals: Record<string, string>): { line: number; endLine: number } | undefined {
    const holds = this.test(stmt, locals);
    return holds === undefined ? undefined : holds ? stmt.branch!.yes : stmt.branch!.no;
  }

  /** Whether an `if`, `elif` or `while` header's test holds, where CPython computes it from the frame's `locals` alone. */
  test(stmt: Statement, locals: Record<string, string>): boolean | undefined {
    if (!stmt.branch || !this.bound) return undefined;
    const m = /^(?:if|elif|while)\b([\s\S]*):$/.exec(this.code(stmt));
    // (the truth of an object is its own code's: its repr is no value, and CPython declines it)
    return m ? this.evaluated(m[1].trim(), locals, true)?.truth : undefined;
  }

  /**
   * The value of `expr` from `locals` alone, as CPython computes it (with its truth): undefined
   * where it reads a name the frame does not hold, a value known only by its repr, a builtin the
   * file shadows, raises, or builds a set. A set read from a repr iterates in that repr's order,
   * as CPython's does, but one computed from it (`s | t`) would not: `setsRead` allows reading
   * sets only where the order cannot show (no method, only builtins that ignore it).
   */
  private evaluated(expr: string, locals: Record<string, string>, setsRead: boolean): { value: PyValue; repr: string; truth?: boolean } | undefined {
    const a = this.answer(expr, locals);
    if (!a || !("value" in a) || a.cut || !this.readsValues(a.reads, locals, setsRead, a.value)) return undefined;
    return { value: parseRepr(a.value), repr: a.value, ...(a.truth !== undefined ? { truth: a.truth } : {}) };
  }

  private computed(expr: string, locals: Record<string, string>, setsRead: boolean): PyValue | undefined {
    return this.evaluated(expr, locals, setsRead)?.value;
  }

  /**
   * Whether what an expression or statement read (`reads`, CPython's account) leaves its answer
   * the one the program's run gets, in one step: it has no scope of its own (a comprehension's
   * frame is a step of the run), builds no set, reads no set but where the order cannot show
   * (`setsRead`), and rounds no float sum otherwise than the session's Python would (3.12 added
   * compensated summation; the sealed CPython is 3.12).
   */
  private readsValues(reads: Reads | undefined, locals: Record<string, string>, setsRead: boolean, result?: string): boolean {
    // (a comprehension, generator or lambda runs as a frame of its own: the run stops in it)
    if (!reads || reads.set || reads.scopes) return false;
    const values = reads.names.filter((n) => Object.hasOwn(locals, n)).map((n) => parseRepr(locals[n]));
    const orderFree = setsRead && !reads.methods && reads.calls.every((b) => ORDER_FREE.has(b));
    if (!orderFree && values.some(hasSet)) return false;
    const float = (v: PyValue): boolean => hasNumber(v, (x) => x.t === "float" || x.t === "complex");
    if (reads.calls.includes("sum") && !SUMS_AS_SEALED(this.python) && (values.some(float) || (result !== undefined && float(parseRepr(result))))) return false;
    return true;
  }

  /**
   * The value a function's `return EXPR` or `yield EXPR` statement returns (a bare one, None)
   * where EXPR is computed from the frame's `locals` alone; undefined elsewhere, and inside a
   * `try` statement or `with` block, whose `finally` or `__exit__` runs between the value and the return.
   */
  returned(g: FuncShape, stmt: Statement, locals: Record<string, string>): string | undefined {
    if (!this.bound || g.kind !== "def" || !stmt.simple) return undefined;
    const m = /^(?:return|yield)(?![\w.])\s*([\s\S]*)$/.exec(this.code(stmt));
    if (!m || /^from\b/.test(m[1]) || this.inBlock(stmt.line, /^(try|except|with|async\s+with)\b/)) return undefined;
    if (!m[1]) return "None";
    const r = this.evaluated(m[1].trim(), locals, false)?.repr;
    return r !== undefined && writable(r) ? r : undefined;
  }

  /**
   * What a `print(...)` statement writes, run by CPython over the frame's `locals` alone (its
   * arguments' str() joined by `sep`, then `end`); undefined for any other statement, one that
   * writes elsewhere (`file=`) or prints an object (whose str() is its own code's), or output
   * long enough to be cut.
   */
  printed(stmt: Statement, locals: Record<string, string>): string | undefined {
    if (!this.bound || !stmt.simple || this.bound.has("print") || Object.hasOwn(locals, "print")) return undefined;
    const text = this.code(stmt);
    if (!/^print\s*\(/.test(text) || closing(text, text.indexOf("(")) !== text.length - 1) return undefined;
    const ran = this.answer({ exec: text }, locals);
    if (!ran || !("names" in ran) || Object.keys(ran.names).length || !this.readsValues(ran.reads, locals, false)) return undefined;
    const out = ran.stdout ?? "";
    return out.length <= MAX_COMPUTED ? out : undefined;
  }

  /**
   * Whether an undecorated `def` header runs nothing but the binding of its function: no
   * annotation (evaluated there, it may name what is not bound yet) and only defaults computed
   * from the locals. (Other statements run none of the program's code where their values are
   * computed: CPython has no value for an object, known by its repr alone, whose methods the file may define.)
   */
  defines(stmt: Statement, locals: Record<string, string>): boolean {
    const f = stmt.header === "def" && this.bound ? this.src.functions.find((x) => x.defLine === stmt.line) : undefined;
    const text = f ? this.code(stmt) : "";
    if (!f || text.slice(0, -1).includes(":") || text.includes("->")) return false;
    return f.params.every((p) => p.default === undefined || this.computed(p.default, locals, false) !== undefined);
  }

  /**
   * A statement that calls one top-level function of the program by its name, every argument
   * computed from the frame's `locals`: `NAME(ARGS)`, `TARGETS = NAME(ARGS)` (bare names) or
   * `return NAME(ARGS)` (not inside `try` or `with`). `params`: the callee's parameters bound
   * from them, as reprs in CPython's order (positional and keyword arguments only, defaults
   * that are literals); `passed`: the caller's local each parameter was given as a bare name.
   * Undefined for any other statement, or where some function declares a `global` (a call may
   * then change what the rules read nowhere).
   */
  call(g: FuncShape, stmt: Statement, locals: Record<string, string>): UserCall | undefined {
    if (!this.bound || !stmt.simple || this.globals.size) return undefined;
    const text = this.code(stmt);
    let form: UserCall["form"] = "call";
    let targets: string[] = [];
    let rhs = text;
    const ret = /^return\s+([\s\S]+)$/.exec(text);
    const split = ret ? undefined : splitAssignment(text);
    if (ret) {
      if (g.kind !== "def" || this.inBlock(stmt.line, /^(try|except|with|async\s+with)\b/)) return undefined;
      [form, rhs] = ["return", ret[1].trim()];
    } else if (split) {
      targets = splitTop(split.lhs).map((t) => t.trim());
      if (split.op !== "=" || !targets.every((t) => /^[A-Za-z_]\w*$/.test(t))) return undefined;
      [form, rhs] = ["assign", split.rhs.trim()];
    }
    const m = /^([A-Za-z_]\w*)\s*\(([\s\S]*)\)$/.exec(rhs);
    const callee = m && closing(rhs, rhs.indexOf("(")) === rhs.length - 1 ? this.src.functions.find((f) => f.qualname === m[1]) : undefined;
    // (a generator's or coroutine's call runs none of its body; *args and **kwargs are not bound here)
    if (!callee || callee.scope.resumeLines.length || /^\s*async\b/.test(this.rows[callee.defLine - 1] ?? "") || callee.params.some((p) => p.kind === "var_positional" || p.kind === "var_keyword")) return undefined;
    // Each parameter's value as CPython writes it.
    const params = new Map<string, string>();
    const passed = new Map<string, string>();
    const positional = callee.params.filter((p) => p.kind === "positional_only" || p.kind === "positional");
    let i = 0;
    for (const arg of m![2].trim() ? splitTop(m![2]).map((a) => a.trim()) : []) {
      const kw = /^([A-Za-z_]\w*)\s*=(?!=)\s*([\s\S]+)$/.exec(arg);
      const p = kw ? callee.params.find((q) => q.name === kw[1] && q.kind !== "positional_only") : positional[i++];
      const expr = kw ? kw[2] : arg;
      const v = p && !params.has(p.name) && !expr.startsWith("*") ? this.evaluated(expr, locals, false) : undefined;
      if (!v || !writable(v.repr)) return undefined;
      params.set(p!.name, v.repr);
      if (/^[A-Za-z_]\w*$/.test(expr)) passed.set(p!.name, expr);
    }
    for (const p of callee.params) {
      if (params.has(p.name)) continue;
      // (a default list, dict or set is one object for every call: earlier calls may have changed it)
      const v = p.default !== undefined ? this.evaluated(p.default, {}, false) : undefined;
      if (!v || !writable(v.repr) || hasNumber(v.value, (x) => x.t === "list" || x.t === "dict" || x.t === "set")) return undefined;
      params.set(p.name, v.repr);
    }
    const order = ["positional_only", "positional", "keyword_only"];
    const reprs = order.flatMap((k) => callee.params.filter((q) => q.kind === k)).map((p): [string, string] => [p.name, params.get(p.name)!]);
    return { form, targets, callee, params: Object.fromEntries(reprs), passed };
  }

  /** Whether `stmt` is `pass`. */
  passes(stmt: Statement): boolean {
    return this.code(stmt) === "pass";
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
   * A `for` header whose body's first statement is known (the parse's `branch`): its frame's next
   * line event stands there or at the loop's exit (`exit`: that statement, or anywhere past the
   * loop where the block ends there; undefined where no exit can come). Where the iterable is
   * computed from the locals (or is `range`, `enumerate`, `zip` or `reversed` of such values),
   * `items`: the targets' values the body can start with, the first where they are not bound yet,
   * else the item after the one they hold (and the first where an enclosing loop may start it
   * again). Not computed where a target is bound elsewhere too (it may not hold its item), or where
   * the loop's body may rebind or mutate the iterable (the iterator CPython made then would not be
   * the one read now).
   */
  iteration(g: FuncShape, stmt: Statement, locals: Record<string, string>): { body: Span; exit?: Span | "past"; items?: Map<string, string>[] } | undefined {
    const body = stmt.branch?.yes;
    const loop = this.src.loops.find((lp) => lp.line === stmt.line);
    const m = /^for\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s+in\s+([\s\S]+):$/.exec(this.code(stmt));
    if (!body || !loop || !m) return undefined;
    const open = { body, exit: stmt.branch!.no ?? ("past" as const) };
    const targets = m[1].split(",").map((x) => x.trim());
    const local = new Set([...g.required, ...g.optional]);
    if (!this.bound || g.deletes || new Set(targets).size !== targets.length || targets.some((t) => !local.has(t) || (g.kind !== "module" && this.globals.has(t)))) return open;
    const iter = m[2].trim();
    const asked = this.answer({ items: iter, max: MAX_ITEMS }, locals);
    if (!asked || !("items" in asked) || !asked.reads) return open;
    const names = asked.reads.names;
    // (statements' targets, parameters included)
    const rebinds = (n: string, where: (l: number) => boolean): boolean => this.src.statements.some((x) => where(x.line) && g.lines.includes(x.line) && x.binds.includes(n));
    const inBody = (l: number): boolean => stmt.endLine < l && l <= loop.endLine;
    const bodyText = this.rows.slice(stmt.endLine, loop.endLine).join("\n");
    if (names.some((n) => targets.includes(n) || rebinds(n, inBody) || mutates(bodyText, n))) return open;
    const known = this.loopItems(iter, asked, locals, targets.length);
    if (!known) return open;
    const { reprs, keys } = known;
    const next: (number | "exit")[] = [];
    const start = (): void => void next.push(keys.length ? 0 : "exit");
    if (!targets.every((t) => Object.hasOwn(locals, t))) start();
    else {
      // (a target another statement binds too may not hold the item it was given)
      if (targets.some((t) => g.required.includes(t) || rebinds(t, (l) => l !== stmt.line))) return open;
      const cur = targets.map((t) => locals[t]).join("\u0000");
      const at = known.at.get(cur) ?? [];
      if (!at.length) return open;
      for (const i of at) next.push(i + 1 < keys.length ? i + 1 : "exit");
      if (this.src.loops.some((lp) => lp !== loop && lp.line < stmt.line && stmt.line <= lp.endLine && g.lines.includes(lp.line))) start();
    }
    const found = [...new Set(next.filter((x) => x !== "exit"))].map((i) => new Map(targets.map((t, k) => [t, reprs[i][k]])));
    return { body, ...(next.includes("exit") ? { exit: open.exit } : {}), items: found };
  }

  /**
   * The reprs of the values a loop's `n` targets take, item by item, over `iter` (CPython's
   * items of it, `asked`, over `locals`), and each item's key (the reprs joined); undefined where
   * they are not known, too many, or too long. Kept for the last few iterables: a loop asks at
   * every item.
   */
  private loopItems(iter: string, asked: ItemsAnswer, locals: Record<string, string>, n: number): LoopItems | undefined {
    const key = [iter, n, ...asked.reads!.names.map((x) => locals[x])].join("\u0000");
    if (this.loops.has(key)) return this.loops.get(key);
    const all = this.itemsOf(iter, asked, locals);
    const rows = all?.map((it) => (n === 1 ? [it] : (it.t === "tuple" || it.t === "list") && it.items.length === n ? it.items : undefined));
    const reprs = rows && !rows.some((r) => !r) ? rows.map((r) => r!.map((v) => literalToRepr(v))) : undefined;
    let out: LoopItems | undefined;
    if (reprs && reprs.every((r) => r.every(writable))) {
      const keys = reprs.map((r) => r.join("\u0000"));
      const at = new Map<string, number[]>();
      keys.forEach((k, i) => at.set(k, [...(at.get(k) ?? []), i]));
      out = { reprs, keys, at };
    }
    if (this.loops.size >= 16) this.loops.delete(this.loops.keys().next().value!);
    this.loops.set(key, out);
    return out;
  }

  private readonly loops = new Map<string, LoopItems | undefined>();

  /**
   * The items a `for` loop over `expr` takes: CPython's (`asked`), where they do not depend on a
   * set's order; a set held by a bare name iterates in its repr's order, as CPython's does (the
   * repr is written by iterating it), where a set rebuilt from it may not.
   */
  private itemsOf(expr: string, asked: ItemsAnswer, locals: Record<string, string>): PyValue[] | undefined {
    if (asked.more) return undefined;
    const bare = /^[A-Za-z_]\w*$/.test(expr) && Object.hasOwn(locals, expr) ? parseRepr(locals[expr]) : undefined;
    if (bare && (bare.t === "set" || bare.t === "frozenset")) return bare.items;
    if (!this.readsValues(asked.reads, locals, false)) return undefined;
    const items = asked.items.map(parseRepr);
    return items.some((v) => v.t === "opaque" || hasSet(v)) ? undefined : items;
  }
}

// Builtins whose result does not depend on the order they meet a set's items in.
const ORDER_FREE: ReadonlySet<string> = new Set(["len", "min", "max", "sorted", "bool", "abs", "any", "all"]);
// Builtins whose values belong to the process that computes them (an address, a salted hash, a
// namespace, input, files), or that run code given as text: CPython is told they have no value.
const PROCESS_BOUND = ["id", "hash", "input", "open", "breakpoint", "exit", "quit", "help", "globals", "locals", "vars", "dir", "__import__", "eval", "exec", "compile", "memoryview", "object", "super"];
/** Rounds of asking CPython for one statement (an answer may lead the rules to ask another: a subscript read with what the targets before it bound). */
const MAX_ROUNDS = 4;
/** CPython's answers kept (a loop's statements ask again at every item). */
const MAX_ANSWERS = 20_000;
/** Whether the session's Python sums floats as the sealed CPython (3.12) does: with compensated summation, from 3.12 on. */
const SUMS_AS_SEALED = (python: string | undefined): boolean => python !== undefined && pythonMinor(python) >= 12;
/** Items of a loop computed (past them, the loop is left to the model). */
const MAX_ITEMS = 10_000;
/** Characters of a computed value: well under the shortest repr a trace cuts (`--max-repr`, 1000 by default). */
const MAX_COMPUTED = 200;

/**
 * Whether a computed repr is what a trace of the run writes: short of any cut, not cut already
 * (a repr cut short ends its values "…("), and holding no set (a run may write its items in
 * another order than the set CPython rebuilt here).
 */
function writable(repr: string): boolean {
  return repr.length <= MAX_COMPUTED && !repr.includes("…(") && !hasSet(parseRepr(repr));
}

// Libraries whose numbers print as Python's do (numpy's float64 prints 1.5) but compute otherwise.
const NUMERIC_LIBRARY = /^\s*(?:import|from)\s+(numpy|pandas|torch|jax|tensorflow|cupy|scipy|sympy)\b/m;
// Builtin types whose subclasses print as literals but may compute otherwise.
const LITERAL_TYPES = new Set(["int", "float", "complex", "bool", "str", "bytes", "bytearray", "list", "dict", "tuple", "set", "frozenset", "UserList", "UserDict", "UserString"]);

/**
 * Whether every value in this file that prints as a literal is one (so that CPython may
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


