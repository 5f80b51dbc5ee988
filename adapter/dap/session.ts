// The Debug Adapter Protocol's mapping of a session (adapter/session/session.ts, which MCP maps
// too): VS Code's requests to the session's moves, its stops to stopped events, its states to stack
// frames, scopes and variables. The breakpoints table (breakpointTable.ts), the variable store
// (variables.ts) and compare mode's views (compare.ts) are this mapping's parts with a job each.
import { basename } from "node:path";
import {
  type ErrorDestination, Event, ExitedEvent, InitializedEvent, InvalidatedEvent, Logger, LoggingDebugSession, OutputEvent,
  Response, Source, StackFrame, StoppedEvent, TerminatedEvent, Thread, logger,
} from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { shownInCaller, type Engine } from "../engine/engine.js";
import type { Predicted, Predictor } from "../engine/predictor.js";
import type { ModelPredictor, ModelStatus } from "../predictors/model.js";
import type { Exit, Frame } from "../format/trajectory.js";
import { validateLaunch, type LaunchConfig } from "../session/launch.js";
import { initPython } from "../pyread/pysource.js";
import { cutText } from "../format/values.js";
import { requestProblem } from "./requests.js";
import type { ComparePredictor } from "../predictors/compare.js";
import { CompareConsole } from "./compare.js";
import { EVENTS, REQUESTS, type SaveTraceBody, type StatsBody, type ValueOriginArguments } from "../protocol.js";
import { EXCEPTION_FILTERS, readExceptionFilters } from "../engine/breakpoints.js";
import { Session, type Cause } from "../session/session.js";
import { isAbort } from "../system/abort.js";
import { THREAD_ID, exceptionInfo, stoppedEvent, type MoveKind } from "./stops.js";
import { ModelNews, exitLine, outputBodies } from "./console.js";
import { DataBreakpoints } from "./dataBreakpoints.js";
import { SessionFiles } from "./files.js";
import { StopView } from "./stopView.js";
import { BreakpointTable } from "./breakpointTable.js";
import { namedIn } from "./variables.js";
import { watchText, type Watch } from "../engine/watches.js";

/** Characters of an error message: a message never carries a whole expression or value back. */
const MAX_MESSAGE = 2_000;
/** The sourceReference of a replayed program whose file is not there: its text comes from the trace. */
const TRACE_SOURCE = 1;
/** How long launch waits for configurationDone before it starts anyway. */
const CONFIGURATION_TIMEOUT_MS = 10_000;

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export class NeuralPythonSession extends LoggingDebugSession {
  private config?: LaunchConfig;
  private rawLaunchArgs?: Record<string, unknown>;
  /** The session itself (adapter/session/): its predictor, engine, stops and edits; this class is DAP's mapping of it. */
  private core?: Session;
  private get predictor(): Predictor | undefined {
    return this.core?.predictor;
  }
  private get engine(): Engine | undefined {
    return this.core?.engine;
  }
  /** What the client is shown at the current stop (stack, scopes, variables, evaluations). */
  private view = new StopView({
    core: () => this.core,
    threshold: () => this.config?.lowConfidence ?? 1,
    send: (e) => this.sendEvent(e),
    compared: () => this.showComparison(),
  });
  private breakpoints = new BreakpointTable();
  /** Engine calls in flight, by request seq, so cancel / pause / terminate can abort them. */
  private inflight = new Map<number, { ctl: AbortController; move: boolean }>();
  private configurationDone!: Promise<void>;
  private markConfigured!: () => void;
  private ended = false;
  /** Counts releases, so a launch that outlives its session (a disconnect while tracing) stops there. */
  private generation = 0;

  constructor() {
    super();
    this.setDebuggerLinesStartAt1(true);
    this.setDebuggerColumnsStartAt1(true);
    this.resetConfiguration();
  }

  private resetConfiguration(): void {
    this.configurationDone = new Promise((res) => (this.markConfigured = res));
  }

  // ---- small helpers ----

  private fail(response: DebugProtocol.Response, message: string): void {
    response.success = false;
    response.message = cutText(message, MAX_MESSAGE);
    this.sendResponse(response);
  }

  /** Arguments are checked before any handler reads them; unsupported requests are refused (adapter/dap/requests.ts). */
  protected override dispatchRequest(request: DebugProtocol.Request): void {
    const problem = requestProblem(request.command, request.arguments);
    if (problem) return this.fail(new Response(request), problem);
    super.dispatchRequest(request);
  }

  /** The library answers a handler's exception with its stack (its code 1104): the client gets the message alone. */
  protected override sendErrorResponse(response: DebugProtocol.Response, codeOrMessage: number | DebugProtocol.Message, format?: string, variables?: Record<string, string>, dest?: ErrorDestination): void {
    if (codeOrMessage === 1104) return this.fail(response, `internal error: ${variables?._exception ?? "unknown"}`);
    super.sendErrorResponse(response, codeOrMessage, format, variables, dest);
  }

  private console(text: string, category: "console" | "stdout" | "stderr" = "console"): void {
    this.sendEvent(new OutputEvent(text.endsWith("\n") ? text : text + "\n", category));
  }

  private track(seq: number, move: boolean): AbortController {
    const ctl = new AbortController();
    this.inflight.set(seq, { ctl, move });
    return ctl;
  }

  /** Aborts engine calls in flight (moves only, or all); returns how many. */
  private abort(reason: string, movesOnly = false): number {
    let n = 0;
    for (const [seq, { ctl, move }] of this.inflight) {
      if (movesOnly && !move) continue;
      ctl.abort(new DOMException(reason, "AbortError"));
      this.inflight.delete(seq);
      n++;
    }
    return n;
  }

  /** Which file is which between the client and the states. */
  private files = new SessionFiles(
    () => this.config,
    () => this.core,
  );

  /** A frame's source: its file, or the program's text as the trace holds it. */
  private sourceOf(frame: Frame): Source {
    const path = this.files.of(frame);
    if (path !== undefined) return new Source(basename(path), this.convertDebuggerPathToClient(path));
    const named = this.predictor?.programName;
    return new Source(`${basename(named ?? "program.py")} (from ${basename(this.config!.program)})`, undefined, TRACE_SOURCE);
  }

  protected override sourceRequest(response: DebugProtocol.SourceResponse, args: DebugProtocol.SourceArguments): void {
    if (args.sourceReference !== TRACE_SOURCE || !this.predictor) return this.fail(response, "no such source");
    response.body = { content: this.predictor.source, mimeType: "text/x-python" };
    this.sendResponse(response);
  }

  /** Runs a request's work and always answers it: thrown errors become error responses. */
  private async answer<R extends DebugProtocol.Response>(response: R, work: () => Promise<void> | void): Promise<void> {
    try {
      await work();
    } catch (e) {
      this.fail(response, errorMessage(e));
    }
  }

  // ---- lifecycle ----

  protected override initializeRequest(response: DebugProtocol.InitializeResponse, _args: DebugProtocol.InitializeRequestArguments): void {
    response.body = {
      ...response.body,
      supportsConfigurationDoneRequest: true,
      supportsStepBack: true,
      supportsSteppingGranularity: true,
      supportsConditionalBreakpoints: true,
      supportsSetVariable: true,
      supportsEvaluateForHovers: true,
      supportsRestartRequest: true,
      supportsExceptionInfoRequest: true,
      supportsTerminateRequest: true,
      supportsCancelRequest: true,
      supportsHitConditionalBreakpoints: true,
      supportsLogPoints: true,
      supportsFunctionBreakpoints: false,
      supportsDataBreakpoints: true,
      supportsClipboardContext: true,
      supportsSetExpression: false,
      supportsGotoTargetsRequest: false,
      supportsStepInTargetsRequest: false,
      supportsCompletionsRequest: false,
      supportsModulesRequest: false,
      supportsLoadedSourcesRequest: false,
      exceptionBreakpointFilters: EXCEPTION_FILTERS,
    };
    this.sendResponse(response);
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.sendResponse(response);
    this.markConfigured();
  }

  protected override async launchRequest(response: DebugProtocol.LaunchResponse, args: DebugProtocol.LaunchRequestArguments): Promise<void> {
    // The library's own protocol log would go to the debug console: keep it off.
    logger.setup(Logger.LogLevel.Stop, false);
    this.rawLaunchArgs = args as Record<string, unknown>;
    // Answered once the client may configure, so one that waits for the answer before its
    // configurationDone does not wait for the configuration timeout.
    let answered = false;
    try {
      // A launch on a live session replaces it: the previous predictor (a model context, a
      // recording, debugpy) is released first, or each relaunch would keep one more.
      if (this.predictor) await this.release();
      const stopOnEntry = await this.begin(args as Record<string, unknown>, true, () => ((answered = true), this.sendResponse(response)));
      await this.firstStop(stopOnEntry);
    } catch (e) {
      this.launchFailed(answered ? undefined : response, errorMessage(e));
    }
  }

  /** A launch that cannot go on: said in the console and in the response (when not answered yet), then the session ends. */
  private launchFailed(response: DebugProtocol.Response | undefined, message: string): void {
    this.console(cutText(message, MAX_MESSAGE), "stderr");
    if (response) this.fail(response, message);
    this.end();
    void this.release();
  }

  /**
   * Validates the arguments, creates predictor and engine and takes the first state. On the
   * first launch the client configures breakpoints in between (initialized / configurationDone),
   * and `configuring` is called when it may start.
   */
  private async begin(args: Record<string, unknown>, first: boolean, configuring?: () => void): Promise<boolean> {
    const checked = validateLaunch(args);
    if (!checked.ok) throw new Error(`Invalid launch configuration: ${checked.error}`);
    const config = checked.config;
    this.config = config;
    this.ended = false;
    const generation = this.generation;
    // Released with the session (disconnect, restart, adapter exit): a recording in progress is killed.
    const preparing = this.track(-2, false);
    let core: Session;
    try {
      core = await Session.open(config, {
        log: (m) => logger.verbose(m),
        status: (st) => this.modelStatus(st),
        console: (line) => generation === this.generation && this.console(line),
        signal: preparing.signal,
      });
    } finally {
      this.inflight.delete(-2);
    }
    if (generation !== this.generation) {
      await core.dispose();
      throw new Error("the session ended while the program was being prepared");
    }
    this.core = core;
    const { predictor, engine } = core;
    if (predictor.replays && config.mode === "replay")
      this.console(
        predictor.replays === "run"
          ? `Replaying ${basename(config.program)}: a recording of every event; steps, breakpoints and stepping back work as in record mode.\n`
          : `Replaying ${basename(config.program)}: a saved debugging session; each step goes to its next saved stop, step back to the one before.\n`,
      );
    if (first) {
      this.sendEvent(new InitializedEvent());
      configuring?.();
      await Promise.race([this.configurationDone, new Promise((res) => setTimeout(res, CONFIGURATION_TIMEOUT_MS).unref())]);
    }
    if (generation !== this.generation) throw new Error("the session ended while the program was being prepared");
    this.applyBreakpoints();
    engine.setExceptionStops(this.exceptionStops);
    const ctl = this.track(-1, false);
    try {
      await engine.start(ctl.signal);
    } finally {
      this.inflight.delete(-1);
    }
    return config.stopOnEntry;
  }

  /** After launch or restart: stop on the first state, or run to the first breakpoint. */
  private async firstStop(stopOnEntry: boolean): Promise<void> {
    if (stopOnEntry) await this.toFirstLine();
    if (stopOnEntry || this.engine!.ended) this.afterMove("entry");
    else await this.move(-1, "continue", (s) => this.engine!.continue(s));
  }

  /**
   * A script starts with its module's call event, on its first statement's line: stopping on
   * entry stops, as debugpy does, on that line's own event, so the first Step Over moves on.
   */
  private async toFirstLine(): Promise<void> {
    const ctl = this.track(-1, false);
    try {
      await this.core!.toFirstLine(ctl.signal);
    } catch (e) {
      if (!isAbort(e)) this.console(`Could not go on to the first line: ${errorMessage(e)}`, "stderr");
    } finally {
      this.inflight.delete(-1);
    }
  }

  /** The session is over: nothing more to step; the client is told once. */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.sendEvent(new TerminatedEvent());
  }

  private async release(): Promise<void> {
    this.generation++;
    this.abort("the session ended");
    const core = this.core;
    this.core = undefined;
    try {
      await core?.dispose();
    } catch (e) {
      this.console(`Could not release the predictor: ${errorMessage(e)}`, "stderr");
    }
  }

  protected override async restartRequest(response: DebugProtocol.RestartResponse, args: DebugProtocol.RestartArguments): Promise<void> {
    const next = (args?.arguments as Record<string, unknown> | undefined) ?? this.rawLaunchArgs;
    if (!next) return this.fail(response, "restart needs a launched session");
    // A restart runs the same kind of session again: a predict session must not become one that
    // runs the program because a restart request says so. A refused restart leaves the session as it was.
    const checked = validateLaunch(next);
    if (!checked.ok) return this.fail(response, `Invalid launch configuration: ${checked.error}`);
    if (this.config && checked.config.mode !== this.config.mode)
      return this.fail(response, `restart cannot change the mode (${this.config.mode} to ${checked.config.mode}): start a new session in ${checked.config.mode} mode`);
    await this.release();
    this.rawLaunchArgs = next;
    try {
      const stopOnEntry = await this.begin(next, false);
      this.sendResponse(response);
      await this.firstStop(stopOnEntry);
    } catch (e) {
      this.launchFailed(response, errorMessage(e));
    }
  }

  protected override async terminateRequest(response: DebugProtocol.TerminateResponse): Promise<void> {
    await this.release();
    this.sendResponse(response);
    this.end();
  }

  /** The connection is gone (server mode): frees the session's predictor and context. */
  async close(): Promise<void> {
    this.ended = true;
    await this.release();
  }

  protected override async disconnectRequest(response: DebugProtocol.DisconnectResponse, args: DebugProtocol.DisconnectArguments, request?: DebugProtocol.Request): Promise<void> {
    await this.release();
    this.ended = true;
    super.disconnectRequest(response, args, request);
  }

  protected override cancelRequest(response: DebugProtocol.CancelResponse, args: DebugProtocol.CancelArguments): void {
    if (args.requestId !== undefined) this.inflight.get(args.requestId)?.ctl.abort(new DOMException("cancelled", "AbortError"));
    this.sendResponse(response);
  }

  protected override pauseRequest(response: DebugProtocol.PauseResponse): void {
    // States come one at a time: pausing means stopping the move being worked out, which then
    // reports a stop with reason "pause"; with none in flight the thread is stopped already.
    const aborted = this.abort("paused", true);
    this.sendResponse(response);
    if (!aborted && this.engine && !this.ended && this.view.frames.length) {
      const ev = new StoppedEvent("pause", THREAD_ID) as DebugProtocol.StoppedEvent;
      ev.body.allThreadsStopped = true;
      this.sendEvent(ev);
    }
  }

  // ---- breakpoints ----

  private applyBreakpoints(): void {
    if (!this.engine || !this.config) return;
    this.engine.setBreakpoints(this.breakpoints.specs((p) => this.files.place(p), this.predictor!.source));
  }

  protected override async setBreakPointsRequest(response: DebugProtocol.SetBreakpointsResponse, args: DebugProtocol.SetBreakpointsArguments): Promise<void> {
    try {
      await initPython();
    } catch (e) {
      return this.fail(response, `cannot read Python structure: ${errorMessage(e)}`);
    }
    const path = args.source.path ? this.convertClientPathToDebugger(args.source.path) : undefined;
    if (!path) return this.fail(response, "breakpoints need a source file path");
    const wanted: DebugProtocol.SourceBreakpoint[] = (args.breakpoints ?? (args.lines ?? []).map((line) => ({ line }))).map((w) => ({ ...w, line: this.convertClientLineToDebugger(w.line) }));
    const isProgram = this.files.isProgram(path);
    const other = this.config && !isProgram ? this.files.userFile(path) : undefined;
    const set = await this.breakpoints.set(path, wanted, {
      refusal: other && "refused" in other ? other.refused : undefined,
      known: isProgram && this.predictor ? this.predictor.source : undefined,
    });
    try {
      this.applyBreakpoints();
    } catch (e) {
      return this.fail(response, errorMessage(e));
    }
    for (const bp of set) if (bp.line !== undefined) bp.line = this.convertDebuggerLineToClient(bp.line);
    response.body = { breakpoints: set };
    this.sendResponse(response);
  }

  // ---- moving ----

  /**
   * Runs one engine move for a request that has been answered already, then reports where it
   * ended: a stopped event, or the program's exit and the end of the session.
   */
  private async move(seq: number, kind: MoveKind, op: (signal: AbortSignal) => Promise<Predicted>): Promise<void> {
    const ctl = this.track(seq, true);
    try {
      await op(ctl.signal);
      if (!this.ended) this.afterMove(kind);
    } catch (e) {
      if (this.ended || !this.engine) return;
      if (isAbort(e)) this.afterMove("step", "pause");
      else {
        this.console(`Could not ${kind === "back" || kind === "reverse" || kind === "origin" ? "go back" : "go on"}: ${errorMessage(e)}`, "stderr");
        this.afterMove("step");
      }
    } finally {
      this.inflight.delete(seq);
    }
  }

  /** Acknowledges a move request at once (the thread runs until the stopped event), then moves. */
  private startMove(response: DebugProtocol.Response, request: DebugProtocol.Request | undefined, kind: MoveKind, op: (engine: Engine, signal: AbortSignal) => Promise<Predicted>): void {
    const engine = this.engine;
    const back = kind === "back" || kind === "reverse" || kind === "origin";
    if (this.comparison && back) return this.fail(response, "compare mode runs forwards only: the real program cannot step back");
    if (!engine || this.ended) return this.fail(response, this.ended ? "the program has ended" : "the program has not been launched");
    if (engine.ended) return this.fail(response, "the program has ended");
    this.sendResponse(response);
    void this.move(request?.seq ?? -1, kind, (s) => op(engine, s));
  }

  /**
   * Step Over, Into and Back at the "instruction" granularity (a client's finest step) go one
   * event of the run: the paper's actions as they are (a call, a return, an exception each a stop).
   */
  protected override nextRequest(response: DebugProtocol.NextResponse, a: DebugProtocol.NextArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "step", async (e, s) => {
      const f = e.current.step.frame;
      const depth = f ? (shownInCaller(f) ? f.depth - 1 : f.depth) : 0;
      const p = a.granularity === "instruction" ? await e.step("step_over", s) : await this.stepAs(e, "step_over", s);
      // Deeper than it started: a breakpoint inside the call it stepped over stopped it.
      this.overStopped = (p.step.frame?.depth ?? -1) > depth;
      return p;
    });
  }
  protected override stepInRequest(response: DebugProtocol.StepInResponse, a: DebugProtocol.StepInArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "step", (e, s) => (a.granularity === "instruction" ? e.step("step_into", s) : this.stepAs(e, "step_into", s)));
  }
  /**
   * Step Into, Over and Out as debugpy stops (Engine.stepAsDebugger); compare mode takes the paper's
   * actions as they are, so that the call and return events it predicts are compared with the
   * real run's too.
   */
  private stepAs(e: Engine, kind: "step_into" | "step_over" | "step_return", signal: AbortSignal): Promise<Predicted> {
    return this.comparison ? e.step(kind, signal) : e.stepAsDebugger(kind, signal);
  }
  protected override stepOutRequest(response: DebugProtocol.StepOutResponse, _a: DebugProtocol.StepOutArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "step", (e, s) => this.stepAs(e, "step_return", s));
  }
  protected override continueRequest(response: DebugProtocol.ContinueResponse, _a: DebugProtocol.ContinueArguments, request?: DebugProtocol.Request): void {
    response.body = { allThreadsContinued: true };
    this.startMove(response, request, "continue", (e, s) => e.continue(s));
  }
  protected override stepBackRequest(response: DebugProtocol.StepBackResponse, a: DebugProtocol.StepBackArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "back", (e, s) => e.stepBack(s, a.granularity));
  }
  protected override reverseContinueRequest(response: DebugProtocol.ReverseContinueResponse, _a: DebugProtocol.ReverseContinueArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "reverse", (e, s) => e.reverseContinue(s));
  }

  // ---- data breakpoints ----

  private dataBreakpoints = new DataBreakpoints();

  /** The watch a variable of the Variables view (or an expression, without a reference) would be, or why it cannot be one. */
  private watchOf(args: { variablesReference?: number; name: string; frameId?: number }): Watch | string {
    if (!this.engine || !this.predictor) return "the program has not been launched";
    const named = args.variablesReference ? namedIn(this.view.variables.get(args.variablesReference), args.name) : { frame: this.view.frameAt(args.frameId)?.index ?? this.view.top, path: args.name.trim() };
    return DataBreakpoints.watchOf(named, this.view.frames, args.name, this.predictor.eventByEvent === true);
  }

  protected override dataBreakpointInfoRequest(response: DebugProtocol.DataBreakpointInfoResponse, args: DebugProtocol.DataBreakpointInfoArguments): void {
    const watch = this.watchOf(args);
    response.body = typeof watch === "string" ? { dataId: null, description: watch } : { dataId: JSON.stringify(watch), description: `When ${watchText(watch)} changes`, accessTypes: ["write"], canPersist: false };
    this.sendResponse(response);
  }

  protected override setDataBreakpointsRequest(response: DebugProtocol.SetDataBreakpointsResponse, args: DebugProtocol.SetDataBreakpointsArguments): void {
    const { answers, set } = this.dataBreakpoints.set(args.breakpoints, this.engine !== undefined);
    this.engine?.setDataBreakpoints(set);
    response.body = { breakpoints: answers };
    this.sendResponse(response);
  }

  /** ndbg/valueOrigin: back to the statement that last set a variable's value (or first bound it). */
  private valueOrigin(response: DebugProtocol.Response, args: unknown, request?: DebugProtocol.Request): void {
    const a = (typeof args === "object" && args !== null ? args : {}) as Partial<ValueOriginArguments>;
    if (!Number.isInteger(a.variablesReference) || typeof a.name !== "string") return this.fail(response, "ndbg/valueOrigin needs a variable: variablesReference and name");
    const watch = this.watchOf({ variablesReference: a.variablesReference!, name: a.name });
    if (typeof watch === "string") return this.fail(response, watch);
    this.startMove(response, request, "origin", (e, s) => e.valueOrigin(watch, s));
  }

  /** The last Step Over stopped at a breakpoint in a call it stepped over (read once, by the stop that reports it). */
  private overStopped = false;

  /** Reports the engine's current state after a move. */
  private afterMove(kind: MoveKind, reasonOverride?: string): void {
    const engine = this.engine!;
    const overStopped = this.overStopped;
    this.overStopped = false;
    // (a stop the user asked for, a pause, is told as such whatever else holds there)
    const found = this.core!.cause(kind);
    const cause: Cause = reasonOverride ? { kind: "moved" } : found;
    for (const note of engine.takeNotes()) this.console(note);
    this.showOutput();
    this.view.variables.reset();
    const cur = engine.current;
    this.modelSpeed(cur);
    if (cur.step.exit) {
      this.view.show([], 0);
      this.showComparison();
      this.exitProgram(cur.step.exit);
      return;
    }
    const frame = cur.step.frame!;
    const stack = engine.stack();
    // A stop for the returning frame's own news (its hole's answer, a value its last statement
    // changed) stays in that frame; compare mode shows each predicted event as it is.
    this.view.show(stack, !this.comparison && cause.kind !== "hole" && cause.kind !== "data" && stack.length > 1 && shownInCaller(frame) ? 1 : 0);
    this.showComparison();
    this.sendEvent(
      stoppedEvent(kind, cause, {
        ...(reasonOverride ? { override: reasonOverride } : {}),
        predicted: () => this.view.origins.frame(0).predicted,
        dataId: (key) => this.dataBreakpoints.id(key),
        breakpointIds: () => this.breakpoints.hitIds(frame, (p) => this.files.place(p)),
        overStopped,
      }),
    );
  }

  /** Predict mode's model: its progress and where it runs. */
  private modelNews = new ModelNews();

  private modelStatus(s: ModelStatus): void {
    const { lines, event } = this.modelNews.status(s, this.config?.gpu);
    for (const line of lines) this.console(line);
    if (event) this.sendEvent(new Event(EVENTS.model, event));
  }

  private modelSpeed(p: Predicted): void {
    const event = this.modelNews.speed(p);
    if (event) this.sendEvent(new Event(EVENTS.model, event));
  }

  /** Shows the output written on the way to the current state, each state's once, and the log points' messages. */
  private showOutput(): void {
    for (const body of outputBodies(this.core!.unseen(), this.engine!.takeLogs(), this.view.origins, this.predictor?.guessedOutput?.bind(this.predictor))) {
      const ev = new OutputEvent("") as DebugProtocol.OutputEvent;
      ev.body = body;
      this.sendEvent(ev);
    }
  }

  private exitProgram(exit: Exit): void {
    const { text, category } = exitLine(exit, this.view.origins.of(this.engine?.current));
    this.console(text, category);
    this.sendEvent(new ExitedEvent(exit.status === "normal" ? 0 : 1));
    this.end();
  }

  // ---- inspecting ----

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    response.body = { threads: [new Thread(THREAD_ID, "main")] };
    this.sendResponse(response);
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse, args: DebugProtocol.StackTraceArguments): void {
    const { frames, total } = this.view.stack(args.startFrame, args.levels);
    const stackFrames = frames.map(({ id, frame: f }) => new StackFrame(id, f.func, this.sourceOf(f), this.convertDebuggerLineToClient(f.line), this.convertDebuggerColumnToClient(1)));
    response.body = { stackFrames, totalFrames: total };
    this.sendResponse(response);
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    const scopes = this.view.scopes(args.frameId);
    if (typeof scopes === "string") return this.fail(response, scopes);
    response.body = { scopes };
    this.sendResponse(response);
  }

  protected override variablesRequest(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): void {
    const variables = this.view.variablesOf(args);
    if (typeof variables === "string") return this.fail(response, variables);
    response.body = { variables };
    this.sendResponse(response);
  }

  protected override async evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments, request?: DebugProtocol.Request): Promise<void> {
    await this.answer(response, async () => {
      this.launched();
      const ctl = this.track(request?.seq ?? -2, false);
      try {
        response.body = await this.view.evaluate(args, ctl.signal);
      } finally {
        this.inflight.delete(request?.seq ?? -2);
      }
      this.sendResponse(response);
    });
  }

  protected override async setVariableRequest(response: DebugProtocol.SetVariableResponse, args: DebugProtocol.SetVariableArguments): Promise<void> {
    await this.answer(response, async () => {
      this.launched();
      response.body = await this.view.setVariable(args);
      this.sendResponse(response);
    });
  }

  /** Refuses a request that reads or changes a stop where there is none: nothing launched, or the program ended. */
  private launched(): void {
    if (!this.engine) throw new Error("the program has not been launched");
    if (this.ended || this.engine.ended) throw new Error("the program has ended");
  }

  // ---- compare mode ----

  private get comparison(): ComparePredictor | undefined {
    return this.core?.comparison;
  }

  /** Compare mode's console lines (of which comparison). */
  private compareConsole?: CompareConsole;

  /** Compare mode, at each stop: notes of the real side, one line per new pair, a summary at the end. */
  private showComparison(): void {
    const cmp = this.comparison;
    const engine = this.engine;
    if (!cmp || !engine) return;
    if (this.compareConsole?.of !== cmp) this.compareConsole = new CompareConsole(cmp);
    for (const line of this.compareConsole.lines(engine.ended)) this.console(line);
  }

  /**
   * Custom requests (names and bodies: adapter/protocol.ts). `ndbg/compare`: the comparison so
   * far. `ndbg/resync`: replaces the current predicted state by the real one (answers the new
   * snapshot). `ndbg/saveTrace`: the session in the trajectory format: the one trajectory, or in
   * compare mode the predicted and the real one (meta "side").
   */
  protected override async customRequest(command: string, response: DebugProtocol.Response, args: unknown, request?: DebugProtocol.Request): Promise<void> {
    switch (command) {
      case REQUESTS.compare:
        return this.answer(response, () => {
          response.body = this.requireComparison().snapshot();
          this.sendResponse(response);
        });
      case REQUESTS.resync:
        return this.answer(response, () => {
          const cmp = this.requireComparison();
          const engine = this.engine;
          if (this.ended || !engine || engine.ended) throw new Error("the program has ended");
          // The engine stands at the real state: every view reads it from there.
          const { pair } = this.core!.resync();
          this.view.frames = engine.stack();
          this.showComparison();
          this.console(`compare · step ${pair.index}: resynced, the predicted state is now the real one`);
          this.sendEvent(new InvalidatedEvent(["variables", "stacks"]));
          response.body = cmp.snapshot();
          this.sendResponse(response);
        });
      case REQUESTS.saveTrace:
        return this.answer(response, () => {
          response.body = { text: this.traceText() } satisfies SaveTraceBody;
          this.sendResponse(response);
        });
      case REQUESTS.stats:
        // Every model call since launch, oldest first (for `ndbg bench`); empty for other predictors.
        return this.answer(response, () => {
          const p = this.predictor as Partial<Pick<ModelPredictor, "stats" | "describe" | "sequence">> | undefined;
          response.body = {
            pid: process.pid,
            model: typeof p?.describe === "function" ? p.describe() : undefined,
            steps: p?.stats ?? [],
            predictions: p?.sequence?.predictions,
          } satisfies StatsBody;
          this.sendResponse(response);
        });
      case REQUESTS.valueOrigin:
        return this.valueOrigin(response, args, request);
      default:
        return super.customRequest(command, response, args, request);
    }
  }

  private requireComparison(): ComparePredictor {
    const cmp = this.comparison;
    if (!cmp) throw new Error(this.engine ? `this session is not in compare mode (mode "${this.config?.mode}")` : "the program has not been launched");
    return cmp;
  }

  /** The session so far in the trajectory format (Session.traceText), its program named as the states stand in it. */
  private traceText(): string {
    const core = this.core;
    if (!core) throw new Error("the program has not been launched");
    return core.traceText(this.files.program() ?? core.predictor.programName ?? core.config.program);
  }

  /** Which exceptions stop a continue (kept for restarts and the next launch). */
  private exceptionStops = readExceptionFilters([]);

  protected override setExceptionBreakPointsRequest(response: DebugProtocol.SetExceptionBreakpointsResponse, args: DebugProtocol.SetExceptionBreakpointsArguments): void {
    try {
      this.exceptionStops = readExceptionFilters(args.filters);
    } catch (e) {
      return this.fail(response, errorMessage(e));
    }
    this.engine?.setExceptionStops(this.exceptionStops);
    response.body = { breakpoints: args.filters.map(() => ({ verified: true })) };
    this.sendResponse(response);
  }

  protected override exceptionInfoRequest(response: DebugProtocol.ExceptionInfoResponse): void {
    const engine = this.engine;
    const hole = engine && !engine.ended ? engine.holeAt(engine.current) : undefined;
    const body = exceptionInfo(hole, this.view.frames[0], () => this.view.origins.frame(0).predicted, engine?.uncaught ?? false);
    if (typeof body === "string") return this.fail(response, body);
    response.body = body;
    this.sendResponse(response);
  }
}
