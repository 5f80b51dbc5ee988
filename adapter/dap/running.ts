// The Debug Adapter Protocol's mapping of a session's life and moves (the session core,
// adapter/session/session.ts, which MCP maps too): launch, configuration, restart, the end; each
// step, continue and step back made by the core and told when it ends (arrival.ts); cancel and
// pause of the work in flight (inflight.ts). session.ts, a subclass, answers the requests that
// read and change a stop.
import { basename } from "node:path";
import {
  type ErrorDestination, Event, InitializedEvent, Logger, LoggingDebugSession, OutputEvent,
  Response, StoppedEvent, TerminatedEvent, logger,
} from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { Engine } from "../engine/engine.js";
import type { Predictor } from "../engine/predictor.js";
import type { ModelStatus } from "../predictors/model.js";
import { validateLaunch, type LaunchConfig } from "../session/launch.js";
import { cutText } from "../format/values.js";
import { requestProblem } from "./requests.js";
import { EVENTS } from "../protocol.js";
import { readExceptionFilters } from "../engine/breakpoints.js";
import { Session, type Move } from "../session/session.js";
import { isAbort } from "../system/abort.js";
import { THREAD_ID, type MoveKind } from "./stops.js";
import { ModelNews } from "./console.js";
import { DataBreakpoints } from "./dataBreakpoints.js";
import { SessionFiles } from "./files.js";
import { StopView } from "./stopView.js";
import { BreakpointTable } from "./breakpointTable.js";
import { CAPABILITIES } from "./capabilities.js";
import { Inflight } from "./inflight.js";
import { Arrival } from "./arrival.js";

/** Characters of an error message: a message never carries a whole expression or value back. */
const MAX_MESSAGE = 2_000;
/** How long launch waits for configurationDone before it starts anyway. */
const CONFIGURATION_TIMEOUT_MS = 10_000;

export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * A DAP session's life and moves; its subclass (session.ts) answers the requests that read and
 * change a stop. The fields are the session's state, shared by both.
 */
export abstract class RunningSession extends LoggingDebugSession {
  protected config?: LaunchConfig;
  private rawLaunchArgs?: Record<string, unknown>;
  /** The session itself (adapter/session/): its predictor, engine, stops and edits; this class is DAP's mapping of it. */
  protected core?: Session;
  protected get predictor(): Predictor | undefined {
    return this.core?.predictor;
  }
  protected get engine(): Engine | undefined {
    return this.core?.engine;
  }
  /** What the client is shown at the current stop (stack, scopes, variables, evaluations). */
  protected readonly view = new StopView({
    core: () => this.core,
    threshold: () => this.config?.lowConfidence ?? 1,
    send: (e) => this.sendEvent(e),
    compared: () => this.arrival.compared(),
  });
  protected readonly breakpoints = new BreakpointTable();
  protected readonly dataBreakpoints = new DataBreakpoints();
  /** Which file is which between the client and the states. */
  protected readonly files = new SessionFiles(
    () => this.config,
    () => this.core,
  );
  /** What the client is told when a move ends. */
  protected readonly arrival = new Arrival({
    core: () => this.core,
    view: this.view,
    console: (text, category) => this.console(text, category),
    send: (e) => this.sendEvent(e),
    breakpointIds: (frame) => this.breakpoints.hitIds(frame, (p) => this.files.place(p)),
    dataId: (key) => this.dataBreakpoints.id(key),
    speed: (p) => {
      const event = this.modelNews.speed(p);
      if (event) this.sendEvent(new Event(EVENTS.model, event));
    },
    end: () => this.end(),
  });
  /** Predict mode's model: its progress and where it runs. */
  private readonly modelNews = new ModelNews();
  /** Work in flight, by request seq, so cancel / pause / terminate can abort it. */
  protected readonly inflight = new Inflight();
  /** A pause was asked of the move under way, to land where its run is (pauseRequest). */
  private pausing = false;
  /** Which exceptions stop a continue (kept for restarts and the next launch). */
  protected exceptionStops = readExceptionFilters([]);
  private configurationDone!: Promise<void>;
  private markConfigured!: () => void;
  protected ended = false;
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

  protected fail(response: DebugProtocol.Response, message: string): void {
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

  protected console(text: string, category: "console" | "stdout" | "stderr" = "console"): void {
    this.sendEvent(new OutputEvent(text.endsWith("\n") ? text : text + "\n", category));
  }

  /** Runs a request's work and always answers it: thrown errors become error responses. */
  protected async answer<R extends DebugProtocol.Response>(response: R, work: () => Promise<void> | void): Promise<void> {
    try {
      await work();
    } catch (e) {
      this.fail(response, errorMessage(e));
    }
  }

  // ---- lifecycle ----

  protected override initializeRequest(response: DebugProtocol.InitializeResponse, _args: DebugProtocol.InitializeRequestArguments): void {
    response.body = { ...response.body, ...CAPABILITIES };
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
    const core = await this.inflight.run(-2, false, (signal) =>
      Session.open(config, {
        log: (m) => logger.verbose(m),
        status: (st) => this.modelStatus(st),
        console: (line) => generation === this.generation && this.console(line),
        signal,
      }),
    );
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
    await this.inflight.run(-1, false, (signal) => engine.start(signal));
    return config.stopOnEntry;
  }

  /** After launch or restart: stop on the first state, or run to the first breakpoint. */
  private async firstStop(stopOnEntry: boolean): Promise<void> {
    if (stopOnEntry) await this.toFirstLine();
    if (stopOnEntry || this.engine!.ended) this.arrival.tell("entry");
    else await this.move(-1, "continue", { kind: "continue" });
  }

  /**
   * A script starts with its module's call event, on its first statement's line: stopping on
   * entry stops, as debugpy does, on that line's own event, so the first Step Over moves on.
   */
  private async toFirstLine(): Promise<void> {
    try {
      await this.inflight.run(-1, false, (signal) => this.core!.toFirstLine(signal));
    } catch (e) {
      if (!isAbort(e)) this.console(`Could not go on to the first line: ${errorMessage(e)}`, "stderr");
    }
  }

  /** The session is over: nothing more to step; the client is told once. */
  protected end(): void {
    if (this.ended) return;
    this.ended = true;
    this.sendEvent(new TerminatedEvent());
  }

  private async release(): Promise<void> {
    this.generation++;
    this.inflight.abort("the session ended");
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
    if (args.requestId !== undefined) this.inflight.cancel(args.requestId);
    this.sendResponse(response);
  }

  protected override pauseRequest(response: DebugProtocol.PauseResponse): void {
    // A move under way whose run can pause (a long sealed run's seek) lands where the run is, as
    // debugpy pauses a running program, and is told as a pause (move); the predictor stops one
    // that cannot (a loop in C code: the run goes silent), which then stays where it began, as a
    // move of a predictor that cannot pause does. With none in flight the thread is stopped already.
    if (this.inflight.moving() && !this.pausing && this.predictor?.pause?.(true)) {
      this.pausing = true;
      this.sendResponse(response);
      return;
    }
    const aborted = this.inflight.abort("paused", true);
    this.sendResponse(response);
    if (!aborted && this.engine && !this.ended && this.view.frames.length) {
      const ev = new StoppedEvent("pause", THREAD_ID) as DebugProtocol.StoppedEvent;
      ev.body.allThreadsStopped = true;
      this.sendEvent(ev);
    }
  }

  // ---- breakpoints and exception stops, set before the run starts ----

  protected applyBreakpoints(): void {
    if (!this.engine || !this.config) return;
    this.engine.setBreakpoints(this.breakpoints.specs((p) => this.files.place(p), this.predictor!.source));
  }

  // ---- moving ----

  /**
   * Makes one move of the session core for a request that has been answered already, then tells
   * where it ended (Arrival): a stopped event, or the program's exit and the end of the session.
   */
  private async move(seq: number, kind: MoveKind, m: Move): Promise<void> {
    try {
      const overStopped = await this.inflight.run(seq, true, (signal) => this.core!.move(m, signal));
      const paused = this.endPause();
      if (!this.ended) this.arrival.tell(kind, { overStopped, ...(paused ? { override: "pause" } : {}) });
    } catch (e) {
      this.endPause();
      if (this.ended || !this.engine) return;
      if (isAbort(e)) this.arrival.tell("step", { override: "pause" });
      else {
        this.console(`Could not ${kind === "back" || kind === "reverse" || kind === "origin" ? "go back" : "go on"}: ${errorMessage(e)}`, "stderr");
        this.arrival.tell("step");
      }
    }
  }

  /** The move is over, and a pause asked of it in place with it: whether one was. */
  private endPause(): boolean {
    if (!this.pausing) return false;
    this.pausing = false;
    this.predictor?.pause?.(false);
    return true;
  }

  /** Acknowledges a move request at once (the thread runs until the stopped event), then moves. */
  protected startMove(response: DebugProtocol.Response, request: DebugProtocol.Request | undefined, kind: MoveKind, m: Move): void {
    const engine = this.engine;
    const back = kind === "back" || kind === "reverse" || kind === "origin";
    if (this.core?.comparison && back) return this.fail(response, "compare mode runs forwards only: the real program cannot step back");
    if (!engine || this.ended) return this.fail(response, this.ended ? "the program has ended" : "the program has not been launched");
    if (engine.ended) return this.fail(response, "the program has ended");
    this.sendResponse(response);
    void this.move(request?.seq ?? -1, kind, m);
  }

  // Steps at the "instruction" granularity (a client's finest step) go one event of the run: the
  // paper's actions as they are (a call, a return, an exception each a stop); otherwise as debugpy steps.
  protected override nextRequest(response: DebugProtocol.NextResponse, a: DebugProtocol.NextArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "step", { kind: "step_over", exact: a.granularity === "instruction" });
  }
  protected override stepInRequest(response: DebugProtocol.StepInResponse, a: DebugProtocol.StepInArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "step", { kind: "step_into", exact: a.granularity === "instruction" });
  }
  protected override stepOutRequest(response: DebugProtocol.StepOutResponse, _a: DebugProtocol.StepOutArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "step", { kind: "step_out" });
  }
  protected override continueRequest(response: DebugProtocol.ContinueResponse, _a: DebugProtocol.ContinueArguments, request?: DebugProtocol.Request): void {
    response.body = { allThreadsContinued: true };
    this.startMove(response, request, "continue", { kind: "continue" });
  }
  protected override stepBackRequest(response: DebugProtocol.StepBackResponse, a: DebugProtocol.StepBackArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "back", { kind: "back", granularity: a.granularity });
  }
  protected override reverseContinueRequest(response: DebugProtocol.ReverseContinueResponse, _a: DebugProtocol.ReverseContinueArguments, request?: DebugProtocol.Request): void {
    this.startMove(response, request, "reverse", { kind: "reverse" });
  }

  private modelStatus(s: ModelStatus): void {
    const { lines, event } = this.modelNews.status(s, this.config?.gpu);
    for (const line of lines) this.console(line);
    if (event) this.sendEvent(new Event(EVENTS.model, event));
  }
}
