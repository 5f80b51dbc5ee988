// Which states can follow a state under a debugger action, read from the program alone. A
// prediction must be one of them: a frame of a function the current line can call (one deeper,
// with exactly that function's parameters), of the same call, or of the caller it returns to;
// locals only from the names that function binds, and every parameter present; a return with a
// value only where the function can return (an exception unwinds it without one); the callers
// kept; what a statement computes from the locals alone (adapter/rules/computed.ts), that value.
// The frame grammar (adapter/rules/grammar.ts) writes these shapes as GBNF, and every
// parsed answer is checked against them (`refusal`, adapter/rules/refusal.ts), so the two cannot
// disagree. Each function's shape is built once per program (adapter/rules/funcs.ts).
//
// The rules follow the debugger semantics (adapter/real/semantics.ts) over what CPython's tracer
// reports; each is checked against real traces in test/reach.test.ts.
import { setLocal, type Action, type EventKind, type ExitStatus, type Frame, type Step } from "../format/trajectory.js";
import { blockExit, classBases, type PySource } from "../pyread/source.js";
import { closing } from "../pyread/text.js";
import { Effects, type Span } from "./computed.js";
import { literalToRepr, parseRepr, type PythonAsk, type PyValue } from "../format/values.js";
import { funcShapes } from "./funcs.js";
import { refusal } from "./refusal.js";
import type { FuncShape, Next, NextFrame } from "./shapes.js";

/** The program's functions as frames see them, built once per program. */
export class Reach {
  readonly funcs: Map<string, FuncShape>;
  /** Some function rebinds its caller's locals (`nonlocal`): any local may change under any call. */
  private readonly nonlocal: boolean;
  /** Names some function declares `global`: the module's may change under any call. */
  private readonly globals = new Set<string>();
  /** What statements compute from the locals (adapter/rules/computed.ts). */
  private readonly effects: Effects;
  private readonly rows: string[];

  /**
   * `python`: the minor version whose states these are (adapter/model/pyversion.ts); unknown,
   * 3.11's. `ask`: CPython, sealed, which computes what a statement decides (adapter/rules/computed.ts); without it, nothing is.
   */
  constructor(
    private readonly src: PySource,
    python?: string,
    ask?: PythonAsk,
  ) {
    this.nonlocal = /\bnonlocal\b/.test(src.source);
    this.rows = src.source.split("\n");
    for (const m of src.source.matchAll(/^[ \t]*global[ \t]+([\w \t,]+)/gm)) for (const n of m[1].split(",")) if (n.trim()) this.globals.add(n.trim());
    this.effects = new Effects(src, this.globals, python, ask);
    this.funcs = funcShapes(src, this.globals, python);
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
    const set = this.effects.assigned(g, stmt, f.locals);
    const printed = this.effects.printed(stmt, f.locals);
    // A computed assignment runs no code: only its targets change (and, in place, what else holds a list it extends); a print, nothing.
    let changes = this.nonlocal && !set && printed === undefined ? undefined : deltaChanges(f.locals, rebound, [...g.required, ...g.optional]);
    if (set && !set.others) changes = new Map([...set.values.keys()].map((n) => [n, undefined]));
    if (printed !== undefined) changes = new Map();
    const made = g.kind === "module" ? this.instanceMade(stmt) : undefined;
    if (made && changes?.has(made[0])) changes.set(made[0], [made[1]]);
    // A target whose value changes must be written, in a delta too.
    if (set) for (const [n, v] of set.values) if (Object.hasOwn(f.locals, n) && f.locals[n] !== v) must.push(n);
    const inStmt = (l: number): boolean => stmt.line <= l && l <= stmt.endLine;
    const shape = (lines: number[], done: boolean): void => {
      for (const [ls, optional] of this.byNames(g, lines, false))
        frames.push({
          event: "line", func: g, depth: f.depth, lines: ls, locals, value: "no", ...(optional ? { optional } : {}), ...(changes ? { changes } : {}),
          ...(done && must.length && must.length <= 3 ? { must } : {}), ...(done && set ? { values: set.values } : {}), ...(done && printed !== undefined ? { stdout: printed } : {}),
        });
    };
    // (a def or class header, or an import, runs once: its frame does not stop on its line again)
    const once = (binding && stmt.header !== undefined) || (!stmt.simple && stmt.next !== undefined);
    shape(g.lines.filter((l) => inStmt(l) && !(once && l === f.line)), false);
    // A statement that falls through goes on to the next one of its block, and only there; a test computed from the locals, to the branch it takes.
    const next = ownHeader ? undefined : (stmt.next ?? this.effects.taken(stmt, f.locals));
    const loop = next || ownHeader ? undefined : this.effects.iteration(g, stmt, f.locals);
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
      const returned = f.event === "line" && stmt ? this.effects.returned(g, stmt, f.locals) : undefined;
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

  /**
   * The one state a step (into or over) leads to from the last state of `steps`, where the
   * program and that state decide it wholly: a function's entry goes to its first line; a
   * statement that runs none of the program's code (adapter/rules/computed.ts) and whose every
   * effect is computed goes to the one line it leads to, with exactly those effects (an
   * assignment, a print, `pass`, a `def`, a test, a loop's next item or its end), and a computed
   * `return` returns. A call of one of the program's functions with computed arguments enters
   * it (step into) or, where every step of the call is decided, is run through (step over); a
   * return goes back to the caller that made such a call. Undefined wherever anything else could
   * come. The state is always one `next` allows: the two read the same rules.
   */
  async decided(steps: readonly Step[], action: Action, signal?: AbortSignal): Promise<Frame | undefined> {
    if (action.kind !== "step_into" && action.kind !== "step_over") return undefined;
    return this.fueled(async () => {
      if (this.fuel-- <= 0 || this.nesting > MAX_NESTING) return undefined;
      await this.know(steps, signal);
      const stack = callStack(steps);
      const cur = stack.at(-1);
      const g = cur && cur.file === undefined ? this.funcs.get(cur.func) : undefined;
      // (a class body's names and order are its own; a comprehension's frame runs one line over and over)
      if (!cur || !g || (g.kind !== "def" && g.kind !== "module")) return undefined;
      let frame: Frame | undefined;
      if (cur.event === "call") {
        if (g.firstLine !== undefined && cur.line === g.callLines[0] && g.firstLines?.length === 1) frame = lineOf(cur, g.firstLines[0], { ...cur.locals });
      } else if (cur.event === "line") frame = await this.lineDecided(steps, cur, g, action, signal);
      else if (cur.event === "return" && cur.value !== undefined) frame = this.returnedTo(stack, cur);
      if (!frame) return undefined;
      const next = this.next(steps, action);
      return next && !refusal(next, { action, frame }, cur) ? frame : undefined;
    });
  }

  /** Decided steps left to the outermost `decided` or `ahead` under way, and how deeply they nest (a call run through asks for its own steps). */
  private fuel = 0;
  private nesting = 0;

  private async fueled<T>(f: () => Promise<T>): Promise<T> {
    if (this.nesting === 0) this.fuel = MAX_AHEAD;
    this.nesting++;
    try {
      return await f();
    } finally {
      this.nesting--;
    }
  }

  /**
   * Asks CPython, ahead, what the statements of the last state of `steps` compute (its frame's,
   * and where it returns, its caller's): `next` and the rules then read it synchronously. Every
   * caller of `next` knows first (the dialects' `request`); `decided` and `ahead` know as they go.
   */
  async know(steps: readonly Step[], signal?: AbortSignal): Promise<void> {
    const stack = callStack(steps);
    const cur = stack.at(-1);
    for (const f of cur?.event === "return" ? [cur, stack[cur.depth - 1]] : [cur]) {
      const g = f && f.file === undefined ? this.funcs.get(f.func) : undefined;
      const stmt = g && f!.event === "line" ? this.src.statements.find((s) => s.line <= f!.line && f!.line <= s.endLine) : undefined;
      if (stmt) await this.effects.know(g!, stmt, f!.locals, signal);
    }
  }

  /**
   * How far the program decides where `action` leads from the last state of `steps`, step by
   * decided step (`decided`): `frame`, the state itself, where every step on the way is decided;
   * else `passed`, the decided states on the way (maybe none), from the last of which the rest is
   * a prediction (each with the output its own step wrote). A step return steps over calls to
   * its frame's return; a breakpoint, or a continue, steps into them, to the first line event on
   * `stops` (the breakpoint's line, the session's breakpoints) in any frame.
   */
  async ahead(steps: readonly Step[], action: Action, stops: readonly number[] = [], signal?: AbortSignal): Promise<{ frame: Frame } | { passed: Step[] }> {
    if (action.kind === "step_into" || action.kind === "step_over") {
      const frame = await this.decided(steps, action, signal);
      return frame ? { frame } : { passed: [] };
    }
    if (action.kind !== "step_return" && action.kind !== "breakpoint" && action.kind !== "continue") return { passed: [] };
    const returning = action.kind === "step_return";
    const at = action.kind === "breakpoint" ? [action.line] : action.kind === "continue" ? stops : [];
    const move: Action = { kind: returning ? "step_over" : "step_into" };
    return this.fueled(async () => {
      const passed: Step[] = [];
      // The last state passed at each depth: with `steps`, all a step needs of the history (its frame and the callers').
      let frames: Step[] = [];
      while (passed.length < MAX_AHEAD) {
        const frame = await this.decided([...steps, ...frames], move, signal);
        if (!frame) break;
        if (returning ? frame.event === "return" : frame.event === "line" && at.includes(frame.line)) {
          // (a jump's state holds all the output written on the way)
          const stdout = passed.map((s) => s.frame!.stdout ?? "").join("") + (frame.stdout ?? "");
          return { frame: { ...frame, ...(stdout ? { stdout } : {}) } };
        }
        const step: Step = { action: move, frame };
        passed.push(step);
        frames = [...frames.filter((s) => s.frame!.depth < frame.depth), step];
      }
      return { passed };
    });
  }

  /** `decided` from a line event: the statement there, when it stands on that one line, runs no code of the program and has every effect computed, or calls one of its functions. */
  private async lineDecided(steps: readonly Step[], cur: Frame, g: FuncShape, action: Action, signal?: AbortSignal): Promise<Frame | undefined> {
    const stmt = this.src.statements.find((s) => s.line <= cur.line && cur.line <= s.endLine);
    // (an inline comprehension's names come and go on its lines; `nonlocal` lets a callee rebind any local)
    if (!stmt || oneLine(g, stmt) !== cur.line || [...g.inlined.values()].some((ls) => ls.includes(cur.line)) || this.nonlocal) return undefined;
    const locals = { ...cur.locals };
    const to = (s: Span | undefined): Frame | undefined => {
      const line = oneLine(g, s);
      return line === undefined ? undefined : lineOf(cur, line, locals);
    };
    const returned = this.effects.returned(g, stmt, cur.locals);
    if (returned !== undefined) return g.returnLines.includes(cur.line) ? { ...lineOf(cur, cur.line, locals), event: "return", value: returned } : undefined;
    if (stmt.header === "def") {
      const [name] = stmt.binds;
      const made = g.made.get(name);
      if (stmt.binds.length !== 1 || made === undefined || !this.effects.defines(stmt, cur.locals)) return undefined;
      setLocal(locals, name, made);
      return to(stmt.next);
    }
    const set = stmt.simple ? this.effects.assigned(g, stmt, cur.locals) : undefined;
    if (set) {
      // An object changed in place may be held by another name too: only where no other value shows it.
      if (set.others && [...set.values.keys()].some((n) => shared(cur.locals, n))) return undefined;
      for (const [n, v] of set.values) setLocal(locals, n, v);
      return this.finished(cur, g, stmt, locals);
    }
    const printed = stmt.simple ? this.effects.printed(stmt, cur.locals) : undefined;
    if (printed !== undefined) return this.finished(cur, g, stmt, locals, { stdout: printed });
    if (stmt.simple && this.effects.passes(stmt)) return this.finished(cur, g, stmt, locals);
    const entry = stmt.simple ? this.entering(steps, cur, g, stmt) : undefined;
    if (entry) {
      const into: Step = { action: { kind: "step_into" }, frame: entry };
      if (action.kind === "step_into") return entry;
      // Over the call: the callee's steps to its return, all decided, then back here.
      const out = await this.ahead([...steps, into], { kind: "step_return" }, [], signal);
      if (!("frame" in out) || out.frame.value === undefined) return undefined;
      const back = this.returnedTo(callStack([...steps, into, { action: { kind: "step_return" }, frame: out.frame }]), out.frame);
      return back && out.frame.stdout ? { ...back, stdout: out.frame.stdout } : back;
    }
    if (stmt.simple || stmt.header) return undefined;
    // A test that fails where no clause follows, or a loop that ends where no statement follows in its block: on past the statement.
    const holds = this.effects.test(stmt, cur.locals);
    if (holds !== undefined) {
      const branch = holds ? stmt.branch!.yes : stmt.branch!.no;
      return branch ? to(branch) : holds ? undefined : this.finished(cur, g, stmt, locals);
    }
    const loop = this.effects.iteration(g, stmt, cur.locals);
    if (!loop?.items) return undefined;
    if (loop.items.length === 1 && !loop.exit) {
      for (const [n, v] of loop.items[0]) setLocal(locals, n, v);
      return to(loop.body);
    }
    if (loop.items.length || !loop.exit) return undefined;
    return loop.exit === "past" ? this.finished(cur, g, stmt, locals) : to(loop.exit);
  }

  /** The state once `stmt` (on `at`'s line) has run to its end, leaving `locals`: the next statement, past the block it ends, or the function's return. */
  private finished(at: Frame, g: FuncShape, stmt: PySource["statements"][number], locals: Record<string, string>, extra: Partial<Frame> = {}): Frame | undefined {
    const exit = stmt.next ? { to: stmt.next } : blockExit(this.src, stmt);
    if (!exit) return undefined;
    const line = "to" in exit ? oneLine(g, exit.to) : "loop" in exit ? oneLine(g, this.src.statements.find((s) => s.line === exit.loop)) : undefined;
    if (line !== undefined) return { ...lineOf(at, line, locals), ...extra };
    return "end" in exit && g.kind === "def" && g.returnLines.includes(at.line) ? { ...lineOf(at, at.line, locals), event: "return", value: "None", ...extra } : undefined;
  }

  /**
   * The call event a step into `stmt` enters (`Effects.call`): a top-level function of the
   * program, named as the module binds it (not a local of the caller, and bound by now: in a
   * script, the module's frame holds it), its parameters bound from computed arguments.
   */
  private entering(steps: readonly Step[], cur: Frame, g: FuncShape, stmt: PySource["statements"][number]): Frame | undefined {
    const call = this.effects.call(g, stmt, cur.locals);
    const name = call?.callee.qualname;
    const G = name !== undefined ? this.funcs.get(name) : undefined;
    if (!call || !G || G.kind !== "def" || G.callLines.length !== 1) return undefined;
    const made = this.funcs.get("<module>")?.made.get(name!);
    if (made !== `<function ${name} at 0x...>`) return undefined;
    if (g.kind === "module" ? cur.locals[name!] !== made : g.required.includes(name!) || g.optional.includes(name!)) return undefined;
    const root = callStack(steps)[0];
    if (g.kind !== "module" && !this.src.definesOnly && !(root?.func === "<module>" && root.locals[name!] === made)) return undefined;
    return { event: "call", line: G.callLines[0], depth: cur.depth + 1, func: name!, locals: { ...call.params } };
  }

  /**
   * The caller's state once `ret`, the return of a call `entering` decides, has come: the value
   * bound to the assignment's targets (or returned), what the callee changed in place of a list,
   * dict or set given as a bare local carried over, and on from the statement. Undefined where
   * the callee may have changed something else of the caller's.
   */
  private returnedTo(stack: (Frame | undefined)[], ret: Frame): Frame | undefined {
    const caller = stack[ret.depth - 1];
    const cg = caller && caller.file === undefined && caller.event === "line" ? this.funcs.get(caller.func) : undefined;
    const stmt = cg ? this.src.statements.find((s) => s.line === caller!.line) : undefined;
    if (!caller || !cg || !stmt || ret.value === undefined || ret.value.includes("…(") || this.effects.mutableGlobals) return undefined;
    if (this.entering(stack.slice(0, ret.depth).map((frame) => ({ action: { kind: "step_into" }, frame })), caller, cg, stmt)?.func !== ret.func) return undefined;
    const call = this.effects.call(cg, stmt, caller.locals)!;
    const f = call.callee;
    const rebound = (p: string): boolean => this.src.statements.some((t) => t.line > f.defLine && t.line <= f.endLine && t.binds.includes(p));
    // What the callee was given that can change in place: it must end as it began where the caller holds it under no name of its own (`f(d[k])`).
    for (const [p, v] of Object.entries(call.params)) if (mutable(v) && !call.passed.has(p) && (rebound(p) || ret.locals[p] !== v)) return undefined;
    const locals = { ...caller.locals };
    for (const [x, v] of Object.entries(caller.locals)) {
      if (!mutable(v)) continue;
      // Changed in place only through a parameter the callee never rebinds; and then no other name holds it, nor does it hold another's.
      const params = [...call.passed].filter(([, a]) => a === x).map(([p]) => p);
      if (!params.length) continue;
      const final = ret.locals[params[0]];
      if (params.length > 1 || final === undefined || rebound(params[0])) return undefined;
      if (final !== v && Object.entries(caller.locals).some(([y, w]) => y !== x && (w.includes(v) || (mutable(w) && v.includes(w)) || w.includes("…(")))) return undefined;
      setLocal(locals, x, final);
    }
    if (call.form === "return") return cg.returnLines.includes(caller.line) ? { ...lineOf(caller, caller.line, locals), event: "return", value: ret.value } : undefined;
    if (call.form === "assign") {
      const items = call.targets.length === 1 ? [ret.value] : itemReprs(ret.value, call.targets.length);
      if (!items) return undefined;
      call.targets.forEach((t, i) => setLocal(locals, t, items[i]));
    }
    return this.finished(caller, cg, stmt, locals);
  }
}

/** A line event of `at`'s frame on `line`, with `locals`. */
const lineOf = (at: Frame, line: number, locals: Record<string, string>): Frame => ({ event: "line", line, depth: at.depth, func: at.func, locals });

/** The one line of `g` that `s`'s rows hold; undefined where they hold none or several (CPython may stop on any). */
function oneLine(g: FuncShape, s: Span | undefined): number | undefined {
  const ls = s ? g.lines.filter((l) => s.line <= l && l <= s.endLine) : [];
  return ls.length === 1 ? ls[0] : undefined;
}

/** Whether another local of `locals` may hold the object `name` holds: its repr shows it, or is cut. */
const shared = (locals: Record<string, string>, name: string): boolean =>
  Object.entries(locals).some(([x, v]) => x !== name && (v.includes(locals[name] ?? "\0") || v.includes("…(")));

/** Whether a repr shows something that can change in place: a list, dict or set in it, or an object that prints its contents. */
function mutable(repr: string): boolean {
  const has = (v: PyValue): boolean => {
    if (v.t === "list" || v.t === "dict" || v.t === "set" || (v.t === "opaque" && !v.text.startsWith("<"))) return true;
    return "items" in v && v.items.some(has);
  };
  return has(parseRepr(repr));
}

/** The reprs of a tuple's or list's `n` items, as the tracer writes each; undefined for any other value. */
function itemReprs(repr: string, n: number): string[] | undefined {
  const v = parseRepr(repr);
  return (v.t === "tuple" || v.t === "list") && v.items.length === n ? v.items.map((x) => (x.t === "opaque" ? x.text : literalToRepr(x))) : undefined;
}

/** Decided steps `ahead` or `decided` takes at most, calls run through included, before it leaves the rest to the model. */
const MAX_AHEAD = 5_000;
/** How deeply decided steps nest (a call run through asks for its own; each level two). */
const MAX_NESTING = 200;

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
