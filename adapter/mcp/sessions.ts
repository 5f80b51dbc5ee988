// The MCP server's debugging sessions: each is the session core the debug adapter maps too
// (adapter/session/session.ts: the engine over the predictor adapter/session/modes.ts makes from
// launch arguments validateLaunch checked), so a session here steps, stops, marks and refuses
// exactly as one in the editor does. This file holds the table of sessions
// (ids, a bound on how many, all ended when the client goes) and what each tool asks of a session.
import type { Engine } from "../engine/engine.js";
import type { Evaluated, Hole, Predicted, Predictor } from "../engine/predictor.js";
import { EXCEPTION_FILTERS, checkBreakpoint, readExceptionFilters } from "../engine/breakpoints.js";
import { expressionProblem } from "../pyread/expressions.js";
import { cutText } from "../format/values.js";
import type { Action, Frame } from "../format/trajectory.js";
import { findFunction } from "../pyread/source.js";
import { initPython } from "../pyread/parser.js";
import { parsePython, parsePythonSync } from "../pyread/parse.js";
import { RecordedPredictor } from "../predictors/recorded.js";
import type { ModelStatus } from "../predictors/model.js";
import type { ModelDescription } from "../protocol.js";
import { createPredictor } from "../session/modes.js";
import { Session, type Move } from "../session/session.js";
import { RUNS_PROGRAM, validateLaunch, type LaunchConfig, type Mode } from "../session/launch.js";
import { originOf } from "../session/marks.js";
import { argumentText, returnLineFromCode } from "../tools/cruxeval.js";
import { ToolInputError, shown, type BreakpointArg } from "./checks.js";
import { bounded, Deadline, stopReason, Turns } from "./waits.js";
import { isAbort } from "../system/abort.js";
import {
  frameView, marksOf, originAt, scopeOf, stopView, valueOrigin, variableView, variablesOf,
  type FrameView, type OutputView, type StopView, type VariableView, type Viewed,
} from "./views.js";

export interface ServerOptions {
  /** Record and hybrid mode run the program on this machine: only when the server was started with --allow-run. */
  allowRun: boolean;
  /** Sessions open at once. */
  maxSessions: number;
  /** Most milliseconds a session may take to start (a model to load, a program to record). */
  startTimeoutMs: number;
  /** Most milliseconds one move or question may take. */
  stepTimeoutMs: number;
  /** What relative program paths resolve against. */
  cwd: string;
  /** Diagnostics (llama.cpp's messages): stderr at most, never the protocol stream. */
  log?: (message: string) => void;
}

/** The modes a tool may start: those that need no editor (compare mode's view is the editor's). */
export const MCP_MODES = ["predict", "record", "hybrid", "replay"] as const satisfies readonly Mode[];

/** The launch arguments start_session passes on as they are (validateLaunch reads them). */
export const LAUNCH_ARGS = [
  "program", "cwd", "mode", "call", "compute", "pythonVersion", "python", "model", "holeModel", "predict", "stopOnEntry",
  "maxSteps", "timeout", "maxOutput", "maxRepr", "lowConfidence", "gpu", "threads", "layout", "dialect",
] as const;

export type MoveKind = "step_into" | "step_over" | "step_out" | "step_back" | "continue" | "reverse_continue" | "step_return";

/** Each tool's move as the session core's (step_return: the paper's action as it is). */
const CORE_MOVES: Record<MoveKind, Move> = {
  step_into: { kind: "step_into" },
  step_over: { kind: "step_over" },
  step_out: { kind: "step_out" },
  step_return: { kind: "step_out", exact: true },
  step_back: { kind: "back" },
  continue: { kind: "continue" },
  reverse_continue: { kind: "reverse" },
};

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** One debugging session. */
export class McpSession implements Viewed {
  private readonly turns = new Turns();
  private readonly notes: string[] = [];
  /** The session's current call, aborted when the session ends. */
  private readonly live = new Set<AbortController>();
  ended = false;

  readonly config: LaunchConfig;
  readonly predictor: Predictor;
  readonly engine: Engine;

  constructor(
    readonly id: string,
    /** The session itself (adapter/session/session.ts); this class is the tools' mapping of it. */
    private readonly core: Session,
    private readonly opts: ServerOptions,
    readonly model?: ModelDescription,
  ) {
    ({ config: this.config, predictor: this.predictor, engine: this.engine } = core);
  }

  /** A line for the next answer (hybrid mode's holes, a dropped argument). */
  note(line: string): void {
    if (this.notes.length < 200) this.notes.push(cutText(line, 1000));
  }

  /** One call on this session: in its turn, bounded by the step deadline and the client's cancel. */
  async call<T>(client: AbortSignal | undefined, what: string, work: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
    const ctl = new AbortController();
    this.live.add(ctl);
    const limit = new Deadline(this.opts.stepTimeoutMs, [client, ctl.signal]);
    const signal = limit.signal;
    try {
      return await this.turns.take(signal, () => {
        if (this.ended) throw new ToolInputError(`session ${this.id} has ended`);
        return work(signal);
      });
    } catch (e) {
      if (!isAbort(e) && !signal.aborted) throw e;
      if (ctl.signal.aborted || this.ended) throw new ToolInputError(`session ${this.id} ended while ${what} was under way`);
      throw new ToolInputError(`${stopReason(signal, what, this.opts.stepTimeoutMs)}; ${this.where()}`);
    } finally {
      limit.end();
      this.live.delete(ctl);
    }
  }

  /** Where the session stands, in words, for messages. */
  where(): string {
    const cur = this.engine.history.length ? this.engine.current : undefined;
    const f = cur?.step.frame;
    if (f) return `session ${this.id} stays at line ${f.line} in ${f.func}`;
    return cur?.step.exit ? `session ${this.id} stays at the program's exit` : `session ${this.id} has no state yet`;
  }

  // ---- moving ----

  /**
   * One move. A move still under way after `pauseAfterS` seconds (default: 2 s less than the run's
   * time limit) pauses where its run is, as the adapter's Pause does (a long sealed run's seek lands
   * there; one in C code stays where it began): an agent gets a state of the program back, not an
   * error at the step deadline nor the run's limit.
   */
  async move(kind: MoveKind, client?: AbortSignal, pauseAfterS = Math.max(1, this.config.timeout - 2)): Promise<StopView> {
    const what = kind.replace(/_/g, " ");
    return this.call(client, what, async (signal) => {
      const e = this.engine;
      const back = kind === "step_back" || kind === "reverse_continue";
      if (!back && e.ended) throw new ToolInputError(`the program has ended (${this.exitWords()}): step back to look at earlier states, or end the session`);
      let paused = false;
      const pause = setTimeout(() => (paused = this.predictor.pause?.(true) === true), pauseAfterS * 1000);
      let overStopped: boolean;
      try {
        overStopped = await this.core.move(CORE_MOVES[kind], signal);
      } catch (err) {
        if (paused && isAbort(err) && !signal.aborted) return this.stop("pause");
        if (isAbort(err) || signal.aborted) throw err;
        throw new ToolInputError(`could not ${back ? "go back" : "go on"}: ${errorText(err)}; ${this.where()}`);
      } finally {
        clearTimeout(pause);
        if (paused) this.predictor.pause?.(false);
      }
      if (paused) return this.stop("pause");
      // (a Step Over stopped by a breakpoint inside its call is told as a breakpoint's stop)
      return this.stop(back ? "back" : kind === "continue" || overStopped ? "continue" : "step");
    });
  }

  private exitWords(): string {
    const x = this.engine.current.step.exit;
    return x?.status === "normal" ? "it exited normally" : x?.status === "error" ? `with ${x.value ?? "an error"}` : "stopped by a limit";
  }

  /** The stop answer, with what was written and said on the way. */
  stop(moved: Parameters<typeof stopView>[1]): StopView {
    const e = this.engine;
    const cause = this.core.cause(moved);
    const notes = [...this.notes.splice(0), ...e.takeNotes()];
    const logs = e.takeLogs().map((l) => ({ text: l.text, predicted: originAt(this, l.state).predicted }));
    return stopView(this, moved, cause, { output: this.output(), logs, notes });
  }

  /** The output written on the way to the current state, each state's once (as the adapter's console shows it). */
  private output(): OutputView[] {
    const out: OutputView[] = [];
    for (const p of this.core.unseen()) {
      const predicted = originAt(this, p).predicted;
      const text = p.step.frame?.stdout ?? p.step.exit?.stdout;
      if (text) out.push({ text: cutText(text, 20_000), stream: "stdout", predicted });
      const err = p.step.frame?.stderr ?? p.step.exit?.stderr;
      if (err) out.push({ text: cutText(err, 20_000), stream: "stderr", predicted: false });
    }
    return out;
  }

  // ---- reading ----

  /** The frames at the current state, innermost first; refused at the exit. */
  private frames(): Frame[] {
    const frames = this.engine.stack();
    if (!frames.length) throw new ToolInputError(`the program has ended (${this.exitWords()}): there are no frames; step back to look at earlier states`);
    return frames;
  }

  stack(client?: AbortSignal): Promise<{ sessionId: string; frames: FrameView[] }> {
    return this.call(client, "reading the stack", () => {
      const frames = this.frames();
      return { sessionId: this.id, frames: frames.map((_, i) => frameView(this, frames, i)) };
    });
  }

  variables(frame: number, globals: boolean, client?: AbortSignal): Promise<{ sessionId: string; frame: number; scope: string; variables: VariableView[] }> {
    return this.call(client, "reading the variables", () => {
      const frames = this.frames();
      if (frame >= frames.length) throw new ToolInputError(`there is no frame ${frame}: the stack has ${frames.length} (0 is the current one)`);
      if (globals && (frames.at(-1)!.func !== "<module>" || frames.at(-1)!.file !== undefined))
        throw new ToolInputError("the program's globals are known only when it runs from its top (no entry call): its module frame is not on the stack");
      return { sessionId: this.id, frame, scope: scopeOf(this, frames, frame, globals), variables: variablesOf(this, frames, frame, globals) };
    });
  }

  evaluate(expression: string, frame: number, client?: AbortSignal): Promise<Omit<VariableView, "name"> & { sessionId: string; frame: number; expression: string }> {
    return this.call(client, "evaluating", async (signal) => {
      const frames = this.frames();
      if (frame >= frames.length) throw new ToolInputError(`there is no frame ${frame}: the stack has ${frames.length} (0 is the current one)`);
      const text = expression.trim();
      let result: Evaluated;
      try {
        result = await this.engine.evaluate(text, signal, frame);
      } catch (e) {
        if (isAbort(e) || signal.aborted) throw e;
        throw new ToolInputError(errorText(e));
      }
      // Its objects are named from the expression as the program's run wrote them (parenthesized where it is no plain name).
      const { name: _, ...v } = variableView(result.path ?? text, result.value, valueOrigin(this, frames, frame, text), result.objects);
      return { sessionId: this.id, frame, expression: text, ...v };
    });
  }

  // ---- changing ----

  setVariable(name: string, value: string, client?: AbortSignal): Promise<StopView & { set: VariableView }> {
    return this.call(client, "setting a variable", async (signal) => {
      const e = this.engine;
      if (e.ended) throw new ToolInputError("the program has ended: there are no variables to set");
      // Predict mode: `name = value` runs in the program's frame, and the run goes on from it; elsewhere
      // the value, a Python expression over the frame's values (CPython, sealed), edits the state (Session.setValue).
      let set: Awaited<ReturnType<Session["setValue"]>>;
      try {
        set = await this.core.setValue(name, value, 0, signal);
      } catch (err) {
        if (isAbort(err) || signal.aborted) throw err;
        throw new ToolInputError(errorText(err));
      }
      const frames = e.stack();
      const repr = "assigned" in set ? (frames[0]?.locals[name] ?? "") : set.repr;
      return { ...this.stop("edited"), set: variableView(name, repr, valueOrigin(this, frames, 0, name)) };
    });
  }

  /**
   * Sets breakpoints: with `replace`, these are all the breakpoints; else they join those set
   * before (one per line: a new one on a line replaces the old). Each is answered with whether
   * it can stop: a line with no code never does.
   */
  setBreakpoints(wanted: readonly BreakpointArg[], replace: boolean, client?: AbortSignal): Promise<{ sessionId: string; breakpoints: BreakpointView[]; active: BreakpointArg[] }> {
    return this.call(client, "setting breakpoints", async () => {
      await initPython();
      const lines = new Set(parsePythonSync(this.predictor.source).lines);
      const kept = new Map<number, BreakpointArg>(replace ? [] : this.engine.breakpoints.map((b) => [b.line, { ...b }]));
      const answers: BreakpointView[] = [];
      for (const w of wanted) {
        const check = !lines.has(w.line) ? { refused: "no code on this line" } : await checkBreakpoint(w, expressionProblem);
        if (!check.refused) kept.set(w.line, w);
        const message = check.refused ?? check.note;
        answers.push({ ...w, verified: !check.refused, ...(message ? { message } : {}) });
      }
      this.engine.setBreakpoints([...kept.values()].sort((a, b) => a.line - b.line));
      return { sessionId: this.id, breakpoints: answers, active: this.activeBreakpoints() };
    });
  }

  /** Clears the breakpoints on `lines`, or all of them. */
  clearBreakpoints(lines: readonly number[] | undefined, client?: AbortSignal): Promise<{ sessionId: string; cleared: number[]; active: BreakpointArg[] }> {
    return this.call(client, "clearing breakpoints", () => {
      const all = this.engine.breakpoints;
      const gone = all.filter((b) => !lines || lines.includes(b.line));
      this.engine.setBreakpoints(all.filter((b) => !gone.includes(b)));
      return { sessionId: this.id, cleared: gone.map((b) => b.line), active: this.activeBreakpoints() };
    });
  }

  private activeBreakpoints(): BreakpointArg[] {
    return this.engine.breakpoints.map((b) => ({ ...b }));
  }

  setExceptionStops(raised: boolean, uncaught: boolean, holes = false): void {
    this.engine.setExceptionStops({ raised, uncaught, holes });
  }

  /** The holes the run met so far, in order (predict mode's sealed run, hybrid mode): none where the program runs whole or the model predicts every state. */
  holes(): { sessionId: string; holes: readonly Hole[] } {
    return { sessionId: this.id, holes: this.predictor.holeAnswers?.met ?? [] };
  }

  // ---- the inverse call ----

  /**
   * Which arguments make a function return `output`: the inverse action inv_step_return from a
   * return state of that function with the output as its value and no locals (what the model was
   * trained on), to the call that started it. The session does not move. In record and replay
   * mode the recording answers, from a return of the function with that value that really happened.
   */
  predictInput(output: string, func: string | undefined, line: number | undefined, client?: AbortSignal): Promise<InputView> {
    return this.call(client, "predicting the input", async (signal) => {
      let value: string;
      try {
        value = await this.engine.valueFor(output, signal, true);
      } catch (e) {
        if (isAbort(e) || signal.aborted) throw e;
        throw new ToolInputError(`"output" must be a Python value such as [1, 2] or 'abc': ${errorText(e)}`);
      }
      await initPython();
      const src = await parsePython(this.predictor.source);
      const name = func ?? this.config.call?.split("(")[0].trim() ?? this.currentFunction();
      if (!name) throw new ToolInputError('say which function with "function": the session has no entry call and does not stand in a function');
      const fn = findFunction(src, name);
      if (!fn) throw new ToolInputError(`the program defines no function ${shown(name)}${src.functions.length ? ` (it defines ${src.functions.slice(0, 20).map((f) => f.qualname).join(", ")})` : ""}`);
      let history: Predicted[];
      const p = this.predictor instanceof RecordedPredictor ? this.predictor : await this.inverseModel(signal);
      if (p instanceof RecordedPredictor) {
        if (p.replays === "session")
          throw new ToolInputError("this trace is a saved debugging session, its stops only, not a recording of every event: it cannot tell which call returned a value");
        const k = p.frames.findIndex((f) => f.event === "return" && f.func === fn.qualname && f.file === undefined && f.value === value);
        if (k < 0) {
          const seen = [...new Set(p.frames.filter((f) => f.event === "return" && f.func === fn.qualname && f.value !== undefined).map((f) => f.value!))];
          throw new ToolInputError(
            `the recorded run never returned ${cutText(value, 80)} from ${fn.qualname}${seen.length ? ` (it returned ${seen.slice(0, 5).map((v) => cutText(v, 60)).join(", ")})` : " (it never returned from it)"}: ${this.config.mode} mode answers from the real run only`,
          );
        }
        history = [{ step: { frame: p.frames[k] }, ref: k }];
      } else {
        const ret: Frame = { event: "return", line: line ?? returnLineFromCode(src, fn), depth: this.depthOf(fn.qualname), func: fn.qualname, locals: {}, value };
        history = [{ step: { frame: ret } }];
      }
      const action: Action = { kind: "inv_step_return" };
      let got: Predicted;
      try {
        got = await bounded(p.predict(history, action, { signal }), signal);
      } catch (e) {
        if (isAbort(e) || signal.aborted) throw e;
        throw new ToolInputError(`could not predict the input: ${errorText(e)}`);
      }
      const f = got.step.frame;
      const o = p === this.predictor ? originAt(this, got) : originOf(got, true, this.config.lowConfidence);
      if (!f || f.event !== "call" || f.func !== fn.qualname)
        throw new ToolInputError(`the prediction is no call of ${fn.qualname}: ${f ? `a ${f.event} event of ${f.func} at line ${f.line}` : "the program's exit"}`);
      return {
        sessionId: this.id,
        function: fn.qualname,
        output: value,
        call: `${fn.name}(${argumentText(fn, f.locals)})`,
        arguments: Object.entries(f.locals).map(([n, repr]) => variableView(n, repr, o)),
        line: f.line,
        ...marksOf(o),
      };
    });
  }

  /**
   * The predictor that answers an inverse call: the session's own where the model predicts every
   * state; else (a sealed or hybrid run, whose states come from running the program forwards) the
   * model alone, made once by the same factory with compute off and released with the session.
   */
  private async inverseModel(signal: AbortSignal): Promise<Predictor> {
    if (this.config.mode === "predict" && !this.config.compute) return this.predictor;
    this.inverse ??= createPredictor({ ...this.config, mode: "predict", compute: false, predict: [] }, { ...(this.opts.log ? { log: this.opts.log } : {}) });
    const made = this.inverse;
    try {
      return await bounded(made, signal);
    } catch (e) {
      // A model that failed to load is asked for again next time.
      if (!isAbort(e) && this.inverse === made) this.inverse = undefined;
      throw e;
    }
  }

  /** The model alone, for inverse calls (see inverseModel). */
  private inverse?: Promise<Predictor>;

  /** The function the session stands in, when it is one. */
  private currentFunction(): string | undefined {
    const f = this.engine.current.step.frame;
    return f && f.func !== "<module>" && f.file === undefined ? f.func : undefined;
  }

  /** The depth a call of `func` has in this session: as last seen, else the entry call's 0, else 1 (called from the module). */
  private depthOf(func: string): number {
    for (let k = this.engine.history.length - 1; k >= 0; k--) {
      const f = this.engine.history[k].step.frame;
      if (f?.func === func && f.file === undefined) return f.depth;
    }
    return this.config.call?.split("(")[0].trim() === func ? 0 : 1;
  }

  summary(): SessionSummary {
    const cur = this.engine.current;
    const f = cur.step.frame;
    return {
      sessionId: this.id,
      program: this.config.program,
      mode: this.config.mode,
      ...(this.config.call ? { call: this.config.call } : {}),
      ...(f ? { line: f.line, func: f.func } : { exited: cur.step.exit!.status }),
      ...(this.model ? { model: this.model.name, device: this.model.device, python: this.model.python } : {}),
    };
  }

  /** Ends the session: its call in flight is stopped and its predictor released (a recording's process, a model's context). */
  async dispose(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    for (const c of this.live) c.abort(new DOMException("the session ended", "AbortError"));
    const inverse = this.inverse?.then((p) => p.dispose(), () => undefined);
    await Promise.all([this.core.dispose(), inverse]);
  }
}

export interface BreakpointView extends BreakpointArg {
  verified: boolean;
  message?: string;
}

export interface InputView extends ReturnType<typeof marksOf> {
  sessionId: string;
  function: string;
  output: string;
  /** The call, written as Python: f(1, [2, 3]). */
  call: string;
  arguments: VariableView[];
  line: number;
}

export interface SessionSummary {
  sessionId: string;
  program: string;
  mode: Mode;
  call?: string;
  line?: number;
  func?: string;
  exited?: string;
  model?: string;
  device?: string;
  python?: string;
}

export interface StartOptions {
  breakpoints?: BreakpointArg[];
  exceptions?: { raised: boolean; uncaught: boolean; holes: boolean };
}

/** The sessions of one server: at most maxSessions at once, every one ended by close(). */
export class SessionTable {
  private readonly sessions = new Map<string, McpSession>();
  /** Starts under way, aborted by close(). */
  private readonly starting = new Set<AbortController>();
  private nextId = 1;
  private closed = false;

  constructor(readonly opts: ServerOptions) {}

  get size(): number {
    return this.sessions.size;
  }

  list(): SessionSummary[] {
    return [...this.sessions.values()].map((s) => s.summary());
  }

  get(id: string): McpSession {
    const s = this.sessions.get(id);
    if (!s) {
      const open = [...this.sessions.keys()];
      throw new ToolInputError(`there is no session ${shown(id)}${open.length ? ` (open: ${open.join(", ")})` : " (none is open: start_session starts one)"}`);
    }
    return s;
  }

  /**
   * Starts a session from launch arguments (LAUNCH_ARGS, read by validateLaunch) and stops at
   * its first state, or runs to the first breakpoint without stopOnEntry.
   */
  async start(launch: Record<string, unknown>, extra: StartOptions, client?: AbortSignal): Promise<StopView & { model?: ModelDescription }> {
    if (this.closed) throw new ToolInputError("the server is shutting down");
    const mode = launch.mode ?? "predict";
    if (typeof mode === "string" && !(MCP_MODES as readonly string[]).includes(mode))
      throw new ToolInputError(`"mode" must be one of ${MCP_MODES.join(", ")}, not ${shown(mode)}${mode === "compare" ? " (compare mode is the editor's side-by-side view)" : ""}`);
    if (typeof mode === "string" && (RUNS_PROGRAM as readonly string[]).includes(mode) && !this.opts.allowRun)
      throw new ToolInputError(`${mode} mode runs the program on this machine, and this server was started without --allow-run: only predict and replay sessions, which never run it, can start here`);
    if (this.sessions.size + this.starting.size >= this.opts.maxSessions)
      throw new ToolInputError(`${this.opts.maxSessions} sessions are open (${[...this.sessions.keys()].join(", ") || "starting"}): end one with end_session first`);
    // The client never says the program may run: the server's flag does, for the modes that run it.
    // An agent's session stops at the first state unless told otherwise (the tool's own default; the editor's runs to a breakpoint, as debugpy's).
    const checked = validateLaunch({ stopOnEntry: true, ...launch, trusted: this.opts.allowRun }, this.opts.cwd);
    if (!checked.ok) throw new ToolInputError(checked.error);
    const config = checked.config;
    const notes: string[] = [];
    if (launch.python !== undefined && config.python === undefined)
      notes.push('"python" was not used: in predict mode it would run an interpreter of the client\'s choosing, which needs --allow-run; the Python on PATH reads the program instead (it never runs it)');

    const ctl = new AbortController();
    this.starting.add(ctl);
    const limit = new Deadline(this.opts.startTimeoutMs, [client, ctl.signal]);
    const signal = limit.signal;
    let model: ModelDescription | undefined;
    let core: Session | undefined;
    let session: McpSession | undefined;
    const id = `s${this.nextId++}`;
    try {
      core = await bounded(
        Session.open(config, {
          log: (m) => this.opts.log?.(m),
          status: (st: ModelStatus) => {
            if (st.stage === "ready" || st.stage === "moved") model = { path: st.path, name: st.name, dialect: st.dialect, device: st.device, gpuNames: st.gpuNames, skipped: st.skipped, threads: st.threads, contextSize: st.contextSize, loadMs: st.loadMs, layout: st.layout, python: st.python };
          },
          console: (line) => (session ? session.note(line) : notes.push(cutText(line, 1000))),
          // A recording in progress is killed when the start is given up or the server closes.
          signal,
        }),
        signal,
        (late) => void late.dispose(),
      );
      const engine = core.engine;
      session = new McpSession(id, core, this.opts, model);
      for (const n of notes) session.note(n);
      // The exception stops a client gets unless it says otherwise: the filters' defaults, as the editor offers them.
      const stops = extra.exceptions ?? readExceptionFilters(EXCEPTION_FILTERS.filter((f) => f.default).map((f) => f.filter));
      session.setExceptionStops(stops.raised, stops.uncaught, stops.holes);
      let refused: BreakpointView[] = [];
      if (extra.breakpoints?.length) {
        const set = await session.setBreakpoints(extra.breakpoints, true, signal);
        refused = set.breakpoints.filter((b) => !b.verified || b.message);
      }
      for (const b of refused) session.note(`breakpoint on line ${b.line}: ${b.message}`);
      try {
        await engine.start(signal);
        if (config.stopOnEntry) await core.toFirstLine(signal);
        else if (!engine.ended) await engine.continue(signal);
      } catch (e) {
        if (isAbort(e) || signal.aborted) throw e;
        throw new ToolInputError(`the session could not start: ${errorText(e)}`);
      }
      if (this.closed) throw new ToolInputError("the server is shutting down");
      this.sessions.set(id, session);
      core = undefined; // the session owns it now
      const stop = session.stop(config.stopOnEntry ? "entry" : "continue");
      return { ...stop, ...(model ? { model } : {}) };
    } catch (e) {
      if (isAbort(e) || signal.aborted) {
        if (ctl.signal.aborted) throw new ToolInputError("the server is shutting down: the session was not started");
        throw new ToolInputError(`${stopReason(signal, "starting the session", this.opts.startTimeoutMs)}`);
      }
      throw e instanceof ToolInputError ? e : new ToolInputError(errorText(e));
    } finally {
      limit.end();
      this.starting.delete(ctl);
      if (core) await core.dispose().catch(() => undefined);
    }
  }

  async end(id: string): Promise<SessionSummary> {
    const s = this.get(id);
    const summary = s.summary();
    this.sessions.delete(id);
    await s.dispose();
    return summary;
  }

  /** Ends every session and every start under way; later starts are refused. */
  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.starting) c.abort(new DOMException("the server is shutting down", "AbortError"));
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.dispose()));
  }
}
