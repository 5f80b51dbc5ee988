// Compare mode's real side: the program under debugpy, kept at the state the user's actions lead to.
//
// How states are paired. The real side follows every user action with the same debugger
// semantics as the prediction (adapter/real/semantics.ts), applied to the real run as far as debugpy
// shows it. debugpy stops on line events, on raised exceptions (where they are raised, and again
// in each caller they pass through) and, after step in / step out, on a function's return (shown
// in the caller, with the returned value as "(return) f"). It never stops on call events, and
// `next` passes a function's return. Those states are rebuilt from the stops around them:
//   - a call: the callee's first stop gives its arguments (the locals at its first line), the
//     source its line (the `def` line, or the first decorator's);
//   - a return that `next` passed: the caller's next stop shows the value as "(return) f", the
//     frame's last stop its line;
// and whatever debugpy cannot see (a return's locals, the line of a frame left by step out or
// continue, a value no frame shows) is marked unobserved and left out of the comparison. So the
// predicted state after an action is paired with the real state that the same action reaches,
// never with "whatever debugpy stopped at": with a recording as the predicted side, every pair
// agrees (test/adapter-compare.test.ts checks that).
//
// Ends: when the real program ends first, later predicted states are paired with its exit (a
// mismatch: the real program is over). When it cannot go on (no stop within the time limit:
// an endless loop or a blocking call; debugpy gone), its side ends with a note and later pairs
// have no real state (not counted). When the prediction ends first, the session ends as always.
import { isAbort } from "../system/abort.js";
import { parsePython } from "../pyread/parse.js";
import { scopeAt, type PySource } from "../pyread/source.js";
import { Debugpy, type BreakpointLine, type DebugpyOptions, type RealFrameInfo, type RealStop, type StepCommand } from "../real/debugpy.js";
import { transition } from "../real/semantics.js";
import { SESSION_OBJECTS } from "../real/run.js";
import { evaluateValues } from "../real/sealed.js";
import { breakpointCanHit, type Action, type Exit, type Frame, type Objects, type Step } from "../format/trajectory.js";
import { SOURCE_LIMIT, readTextFile } from "../system/files.js";
import type { Observable, RealOrigin } from "../protocol.js";
import { dirname, resolve } from "node:path";

// ---------------------------------------------------------------------------------------------
// Real states

/** A state of the real run, as far as debugpy shows it. */
export interface RealState {
  /** A frame, or the exit ("limit" when the real side was cut off). Unobserved parts are filled from the frame's last stop, for saving. */
  step: Step;
  /** What debugpy could not observe: left out of the comparison. */
  unobserved: Observable[];
  origin: RealOrigin;
  /** Why the real side was cut off. */
  note?: string;
}

export interface RealSideOptions extends Omit<DebugpyOptions, "cwd"> {
  cwd?: string;
  /** Most debugpy commands one user action may take (e.g. breakpoints hit inside a call being stepped over). */
  maxMoves?: number;
}

export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The real program under debugpy, kept at the state the user's actions lead to (by the debugger
 * semantics) and ahead of it: `known[0]` is the current real state, later entries were seen on
 * the way (rebuilt calls and returns, then debugpy's current stop).
 */
export class RealSide {
  private known: RealState[] = [];
  /** User frames alive at debugpy's current stop, innermost first. */
  private live: RealFrameInfo[] = [];
  /** Their qualnames, named while they were seen (a frame's id may be reused once it is gone). */
  private liveNames = new Map<RealFrameInfo, string>();
  /** Each live frame's last read locals and line (for rebuilt states). */
  private seen = new Map<number, { locals: Record<string, string>; line: number }>();
  /** The frame of the latest exception stop (a frame that leaves from there was unwound). */
  private raisedIn?: number;
  /** The exception each live frame last raised (or passed on), by frame id. */
  private raisedRepr = new Map<number, string>();
  /** The repr of the uncaught exception that is ending the program. */
  private uncaught?: string;
  private readonly sources = new Map<string, Promise<PySource | undefined>>();
  private readonly maxMoves: number;
  /** Milliseconds debugpy took for the latest follow. */
  lastMs = 0;

  private constructor(private readonly dbg: Debugpy, private readonly opts: RealSideOptions) {
    this.maxMoves = opts.maxMoves ?? 1000;
  }

  /** Starts debugpy on the program and runs it to its first real state (the entry call, or the script's first event). */
  static async start(opts: RealSideOptions, signal?: AbortSignal): Promise<RealSide> {
    const cwd = opts.cwd ?? dirname(opts.program);
    const dbg = await Debugpy.launch({ ...opts, cwd }, signal);
    const side = new RealSide(dbg, { ...opts, cwd });
    try {
      const t0 = Date.now();
      if (dbg.current.kind === "exit") side.known.push(side.exitState(dbg.current));
      else {
        // Into the traced code: from the driver's entry line to the first user stop.
        for (let n = 0; side.known.length === 0; n++) {
          if (n > 20) throw new Error("the real program did not enter the program's code");
          await side.move("stepIn", signal);
        }
      }
      side.lastMs = Date.now() - t0;
      return side;
    } catch (e) {
      await dbg.dispose();
      throw e;
    }
  }

  get python(): string {
    return this.dbg.python;
  }

  get current(): RealState {
    return this.known[0];
  }

  /** The real program is over (exited, or cut off). */
  get ended(): boolean {
    return this.known[0].step.exit !== undefined;
  }

  /**
   * Where `action` leads the real program from the current real state: moves debugpy as far as
   * needed and returns the index of the target among the known states. The move is made current
   * by commit (a prediction that failed leaves the real side where it was, ahead of it); until
   * then, asking again for the same action answers the same target.
   */
  async follow(action: Action, bps: readonly BreakpointLine[], signal?: AbortSignal): Promise<number> {
    const t0 = Date.now();
    try {
      await this.dbg.setBreakpoints(bps);
      for (let n = 0; ; n++) {
        const j = await this.target(action, bps);
        if (j >= 0) return j;
        if (n >= this.maxMoves) {
          this.cut(`the real program needed more than ${this.maxMoves} debugger moves for one action`);
          return this.known.length - 1;
        }
        await this.move(await this.command(action), signal);
      }
    } catch (e) {
      if (isAbort(e)) throw e;
      this.cut(`the real debugger failed: ${errorMessage(e)}`);
      return this.known.length - 1;
    } finally {
      this.lastMs = Date.now() - t0;
    }
  }

  /** Gives up on the real side (it can no longer be kept in step): no real state from here on. */
  async abandon(note: string): Promise<number> {
    this.cut(note);
    await this.dbg.dispose();
    return this.known.length - 1;
  }

  /** Makes the state that follow found the current one. */
  commit(index: number): RealState {
    this.known = this.known.slice(Math.min(index, this.known.length - 1));
    return this.known[0];
  }

  async dispose(): Promise<void> {
    await this.dbg.dispose();
  }

  // ---- where an action leads ----

  /** The index of the action's target among the known states, or -1 when debugpy must go further. */
  private async target(action: Action, bps: readonly BreakpointLine[]): Promise<number> {
    const k = this.known;
    if (k[0].step.exit) return 0;
    const endsKnown = k[k.length - 1].step.exit !== undefined;
    const frames = (endsKnown ? k.slice(0, -1) : k).map((s) => s.step.frame!);
    if (action.kind === "continue") {
      for (let i = 1; i < k.length; i++) {
        const s = k[i];
        if (s.step.exit) return i;
        if (await this.hits(s, i === k.length - 1, bps)) return i;
      }
      return -1;
    }
    const j = transition(frames, 0, action);
    if (j < frames.length) return j;
    return endsKnown ? k.length - 1 : -1;
  }

  /** Whether a known state is a breakpoint hit whose condition holds (debugpy evaluates it at its current stop). */
  private async hits(s: RealState, atStop: boolean, bps: readonly BreakpointLine[]): Promise<boolean> {
    const f = s.step.frame!;
    if (!breakpointCanHit(f)) return false;
    const here = bps.filter((b) => b.line === f.line);
    if (!here.length) return false;
    if (here.some((b) => !b.condition)) return true;
    const cur = this.dbg.current;
    for (const b of here) {
      if (atStop && cur.kind === "stop" && cur.frames[0]) {
        if (await this.dbg.conditionHolds(b.condition!, cur.frames[0].id)) return true;
      } else {
        // (a condition that cannot be evaluated stops, as the engine's does)
        const [r] = await evaluateValues(f.locals, [b.condition!]).catch((e: unknown) => [{ error: String(e) }]);
        if ("error" in r || r.truth !== false) return true;
      }
    }
    return false;
  }

  /** The debugpy command that brings the real program nearer to the action's target. */
  private async command(action: Action): Promise<StepCommand> {
    const cur = this.dbg.current;
    if (cur.kind !== "stop" || cur.inDriver || cur.exception?.unhandled) return "continue";
    if (cur.foreign) return action.kind === "step_into" ? "stepIn" : action.kind === "continue" ? "continue" : "stepOut";
    const v = this.known[0].step.frame!;
    const suspended = cur.frames.length - 1; // depth of the frame debugpy is suspended in
    switch (action.kind) {
      case "step_into":
        return "stepIn";
      case "step_over":
        if (suspended > (v.event === "return" ? v.depth - 1 : v.depth)) return "stepOut";
        // debugpy's step over a yield runs on to the program's end: step in lands where it goes.
        return (await this.lineText(cur.frames[0])).match(/\b(yield|await)\b/) ? "stepIn" : "next";
      case "step_return":
        return "stepOut";
      default:
        return "continue";
    }
  }

  // ---- debugpy moves ----

  private async move(cmd: StepCommand, signal?: AbortSignal): Promise<void> {
    const prev = this.dbg.current;
    let next: RealStop;
    // A continue stops at breakpoints only: raised exceptions would be stops to pass, one by one.
    await this.dbg.setExceptionFilters(cmd === "continue" ? ["uncaught"] : ["raised", "uncaught"]);
    try {
      next = await this.dbg.command(cmd, signal);
    } catch (e) {
      if (isAbort(e)) {
        // Paused where it was: keep what it shows, ahead of the current state.
        if (this.dbg.current.kind === "stop") this.known.push(...(await this.absorb(prev, cmd, this.dbg.current)));
        throw e;
      }
      throw e;
    }
    if (next.kind === "stop" && next.paused === "timeout") {
      const at = next.frames[0];
      const where = at ? ` (it was at line ${at.line}${at.file ? ` of ${at.file}` : ""}, in ${at.name})` : "";
      this.cut(`the real program did not reach its next stop within ${this.opts.timeout} s${where}: an endless loop, or a call that waits`);
      await this.dbg.dispose();
      return;
    }
    const events = await this.absorb(prev, cmd, next);
    const out = this.dbg.takeOutput();
    const last = events[events.length - 1];
    if (out && last) {
      if (last.step.frame) last.step.frame.stdout = (last.step.frame.stdout ?? "") + out;
      else if (last.step.exit) last.step.exit.stdout = (last.step.exit.stdout ?? "") + out;
    }
    this.known.push(...events);
  }

  /** Ends the real side: no real state from here on. */
  private cut(note: string): void {
    if (this.known.at(-1)?.step.exit) return;
    this.known.push({ step: { exit: { status: "limit" } }, unobserved: ["value"], origin: "cut", note });
  }

  private exitState(stop: Extract<RealStop, { kind: "exit" }>): RealState {
    if (stop.code === undefined && stop.message && stop.message !== "ended")
      return { step: { exit: { status: "limit" } }, unobserved: ["value"], origin: "cut", note: `the real debugger ended: ${stop.message}` };
    if (stop.code === 0 || (stop.code === undefined && this.uncaught === undefined)) return { step: { exit: { status: "normal" } }, unobserved: [], origin: "end" };
    const exit: Exit = { status: "error" };
    if (this.uncaught !== undefined) exit.value = this.uncaught;
    return { step: { exit }, unobserved: this.uncaught === undefined ? ["value"] : [], origin: "end" };
  }

  /**
   * The real states between debugpy's previous stop and this one, in program order: returns of
   * the frames that left, calls of the frames that came, then the stop itself (unless the stop
   * is a return: then it is that return's state).
   */
  private async absorb(prev: RealStop, cmd: StepCommand, next: RealStop): Promise<RealState[]> {
    const out: RealState[] = [];
    const live = this.live; // innermost first
    const exact = cmd === "stepIn" || cmd === "next"; // stops at every line of the frames it leaves
    if (next.kind === "exit") {
      live.forEach((r, i) => out.push(this.returnState(r, live.length - 1 - i, exact, undefined)));
      this.live = [];
      this.liveNames.clear();
      out.push(this.exitState(next));
      return out;
    }
    if (next.exception?.unhandled) {
      // The program is ending with this exception: its frames have unwound already.
      this.uncaught = next.exception.repr;
      return out;
    }
    const nowOuter = [...next.frames].reverse();
    const wasOuter = [...live].reverse();
    let c = 0;
    while (c < nowOuter.length && c < wasOuter.length && nowOuter[c].id === wasOuter[c].id && nowOuter[c].name === wasOuter[c].name) c++;
    if (cmd === "next" && next.reason !== "exception" && c > 0 && c === wasOuter.length && c === nowOuter.length && (await this.newCallSameId(live[0], nowOuter[c - 1]))) c--;
    const popped = wasOuter.slice(c).reverse(); // innermost first
    const pushed = nowOuter.slice(c);
    const top = next.frames[0];
    // debugpy stops on a return (step in / step out) in the caller, on the line of the call; a
    // generator's yield it passes, to the caller's next line.
    const caller = wasOuter[c - 1];
    const isReturnStop = popped.length > 0 && pushed.length === 0 && (cmd === "stepIn" || cmd === "stepOut") && next.reason === "step" &&
      (next.inDriver || (top !== undefined && caller !== undefined && top.line === caller.line));
    // Return values are shown in the frame they returned to: debugpy's suspended frame.
    let returns: Record<string, string> = {};
    let locals: Record<string, string> | undefined;
    let objects: Objects | undefined;
    if (top && !next.inDriver && !next.foreign) ({ locals, returns, objects } = await this.dbg.locals(top, await this.isNamespace(top), SESSION_OBJECTS));
    else if (next.inDriver && next.top && popped.length) returns = (await this.dbg.locals(next.top, true)).returns;
    popped.forEach((r, i) => {
      const outermost = i === popped.length - 1;
      const shown = outermost && pushed.length === 0 && cmd !== "continue" ? returnValue(returns, r.name) : undefined;
      // The exception it raised stops again in the caller: it left by that exception (a `finally` may have run).
      const unwound = next.reason === "exception" && next.exception?.repr !== undefined && this.raisedRepr.get(r.id) === next.exception.repr;
      out.push(this.returnState(r, wasOuter.length - 1 - i, exact, shown, unwound));
    });
    for (const [i, f] of pushed.entries()) {
      const isTop = i === pushed.length - 1;
      out.push(await this.callState(f, c + i, isTop && (cmd === "stepIn" || cmd === "next") && !next.inDriver && !next.foreign ? locals : undefined));
    }
    this.live = next.frames;
    this.liveNames = new Map(await Promise.all(next.frames.map(async (f) => [f, await this.qualname(f)] as const)));
    for (const id of [...this.seen.keys()]) if (!next.frames.some((f) => f.id === id)) this.seen.delete(id);
    for (const id of [...this.raisedRepr.keys()]) if (!next.frames.some((f) => f.id === id)) this.raisedRepr.delete(id);
    if (top && locals) this.seen.set(top.id, { locals, line: top.line });
    if (isReturnStop && !(prev.kind === "stop" && prev.foreign)) {
      out[out.length - 1].origin = "stop";
      return out;
    }
    if (next.inDriver || next.foreign || !top) return out;
    if (prev.kind === "stop" && prev.foreign && !popped.length && !pushed.length) return out; // back from untraced code: not an event
    const before = live[0];
    if (exact && !popped.length && !pushed.length && next.reason === "step" && prev.kind === "stop" && prev.reason !== "exception" && before && before.line !== top.line && /^\s*except\b/.test(await this.lineText(top))) {
      // debugpy never stops on StopIteration, GeneratorExit or StopAsyncIteration: a handler
      // reached straight from a line of the same frame had that line raise. Its locals are the
      // handler's (the `as` name is bound after this stop); the exception itself is not seen.
      const raised: Frame = { event: "exception", line: before.line, depth: next.frames.length - 1, func: await this.qualname(top), locals: { ...(locals ?? {}) } };
      if (top.file !== undefined) raised.file = top.file;
      out.push({ step: { frame: raised }, unobserved: ["value"], origin: "rebuilt" });
    }
    const frame: Frame = { event: next.reason === "exception" ? "exception" : "line", line: top.line, depth: next.frames.length - 1, func: await this.qualname(top), locals: locals ?? {} };
    if (top.file !== undefined) frame.file = top.file;
    if (objects && Object.keys(objects).length) frame.objects = objects;
    const unobserved: Observable[] = [];
    if (frame.event === "exception") {
      this.raisedIn = top.id;
      if (next.exception?.repr !== undefined) this.raisedRepr.set(top.id, next.exception.repr);
      if (next.exception?.repr !== undefined) frame.value = next.exception.repr;
      else unobserved.push("value");
    } else if (this.raisedIn === top.id) this.raisedIn = undefined;
    out.push({ step: { frame }, unobserved, origin: "stop" });
    return out;
  }

  /** A frame's return, as far as debugpy showed it. */
  private returnState(r: RealFrameInfo, depth: number, lineKnown: boolean, shown: string | undefined, unwound = false): RealState {
    // r is as the previous stop showed it: its line is where the frame last was.
    const last = this.seen.get(r.id);
    const frame: Frame = { event: "return", line: r.line, depth, func: this.liveNames.get(r) ?? r.name, locals: { ...(last?.locals ?? {}) } };
    if (r.file !== undefined) frame.file = r.file;
    const unobserved: Observable[] = ["locals"];
    if (!lineKnown) unobserved.push("line");
    // Left from an exception stop with no line stop since: unwound (no value). After step out or
    // continue its handler may have run unseen: the value is not known.
    const raised = this.raisedIn === r.id;
    if (raised) this.raisedIn = undefined;
    if (unwound) {
      // no value
    } else if (raised && !lineKnown) unobserved.push("value");
    else if (raised) {
      // unwound: no value
    } else if (r.name === "<module>") frame.value = "None";
    else if (shown !== undefined) frame.value = shown;
    else unobserved.push("value");
    return { step: { frame }, unobserved, origin: "rebuilt" };
  }

  /** A call event, rebuilt: its line from the source, its locals (the arguments) from the callee's first stop. */
  private async callState(f: RealFrameInfo, depth: number, firstLocals: Record<string, string> | undefined): Promise<RealState> {
    const unobserved: Observable[] = [];
    const src = await this.source(f);
    let line = f.line;
    if (f.name === "<module>") line = 1;
    else if (!f.name.startsWith("<")) {
      const scope = src && this.scopeNamed(src, f.name, f.line);
      if (scope && scope.bodyLine === f.line) line = scope.callLine;
      else unobserved.push("line"); // e.g. a generator resumed where it stopped
    }
    if (unobserved.includes("line")) firstLocals = undefined; // not its first line: the locals may have moved on
    const frame: Frame = { event: "call", line, depth, func: await this.qualname(f), locals: { ...(firstLocals ?? {}) } };
    if (f.file !== undefined) frame.file = f.file;
    if (!firstLocals) unobserved.push("locals");
    return { step: { frame }, unobserved, origin: "rebuilt" };
  }

  /**
   * After `next`, the frame on top has the id and name of the one before: the same call, or a
   * new call of the same function (debugpy reuses ids of frames that are gone, and a step over
   * the end of a function goes on as a step in: into the next call of a callback, or of
   * `f(1) + f(2)`). A new call stands on the function's first line; the same call can be there
   * again only inside a loop around that line, and it never loses a local.
   */
  private async newCallSameId(before: RealFrameInfo, now: RealFrameInfo): Promise<boolean> {
    const src = await this.source(now);
    const scope = src && this.scopeNamed(src, now.name, now.line);
    if (!src || !scope || now.line !== scope.bodyLine || now.name === "<module>") return false;
    const inLoop = src.loops.some((l) => l.line >= scope.callLine && l.endLine <= scope.endLine && l.line <= now.line && now.line <= l.endLine && l.line <= before.line && before.line <= l.endLine);
    if (!inLoop) return true;
    const had = this.seen.get(before.id)?.locals ?? {};
    const params = new Set(src.functions.find((f) => f.qualname === scope.qualname)?.params.map((p) => p.name) ?? []);
    const cur = this.dbg.current;
    if (cur.kind !== "stop" || !cur.frames[0]) return false;
    const nowLocals = (await this.dbg.locals(cur.frames[0], false)).locals;
    return Object.keys(had).some((k) => !params.has(k) && !(k in nowLocals));
  }

  /** The text of a frame's current line. */
  private async lineText(f: RealFrameInfo | undefined): Promise<string> {
    if (!f) return "";
    const src = await this.source(f);
    return src?.source.split("\n")[f.line - 1] ?? "";
  }

  // ---- names of frames ----

  private source(f: RealFrameInfo): Promise<PySource | undefined> {
    const path = f.file === undefined ? this.opts.program : resolve(dirname(this.opts.program), f.file);
    let p = this.sources.get(path);
    if (!p) {
      p = readTextFile(path, SOURCE_LIMIT).then((t) => parsePython(t)).catch(() => undefined);
      this.sources.set(path, p);
    }
    return p;
  }

  private scopeNamed(src: PySource, name: string, line: number): { qualname: string; callLine: number; bodyLine: number; endLine: number } | undefined {
    let best: (typeof src.functions)[number] | (typeof src.classes)[number] | undefined;
    for (const s of [...src.functions, ...src.classes]) if (s.name === name && s.callLine <= line && line <= s.endLine && (!best || s.defLine >= best.defLine)) best = s;
    return best;
  }

  private names = new Map<string, string>();

  /** CPython's co_qualname for a frame debugpy names by co_name (`Stack.push`, `f.<locals>.<listcomp>`). */
  private async qualname(f: RealFrameInfo): Promise<string> {
    const key = `${f.file ?? ""}|${f.name}|${f.line}`;
    const known = this.names.get(key);
    if (known) return known;
    const src = await this.source(f);
    let q = f.name;
    if (src && f.name !== "<module>") {
      if (f.name.startsWith("<")) {
        const scope = scopeAt(src, f.line);
        if (scope) q = `${scope.qualname}${src.functions.some((fn) => fn === scope) ? ".<locals>." : "."}${f.name}`;
      } else q = this.scopeNamed(src, f.name, f.line)?.qualname ?? f.name;
    }
    this.names.set(key, q);
    return q;
  }

  private async isNamespace(f: RealFrameInfo): Promise<boolean> {
    if (f.name === "<module>") return true;
    const src = await this.source(f);
    return !!src?.classes.some((c) => c.name === f.name && c.callLine <= f.line && f.line <= c.endLine);
  }
}

/**
 * A returned value as debugpy shows it in the caller: keyed by the function's name, or
 * "Class.name" for methods. Values of earlier calls linger there, so only a step that records
 * returns (step in, over, out; not continue) is asked, and an ambiguous key gives nothing.
 */
function returnValue(returns: Record<string, string>, name: string): string | undefined {
  if (name in returns) return returns[name];
  const keys = Object.keys(returns).filter((k) => k.endsWith("." + name));
  return keys.length === 1 ? returns[keys[0]] : undefined;
}
