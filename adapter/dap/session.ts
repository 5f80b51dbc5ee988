// The Debug Adapter Protocol's mapping of a session (adapter/session/session.ts, which MCP maps
// too): the requests that read and change a stop (stack, scopes, variables, evaluate, set a value,
// breakpoints of every kind, the exception widget, this debugger's own requests) over the life
// and moves of running.ts. What a stop shows is stopView.ts's, the breakpoints' table
// breakpointTable.ts's, compare mode's views compare.ts's.
import { basename } from "node:path";
import { Source, StackFrame, Thread } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { Frame } from "../format/trajectory.js";
import { initPython } from "../pyread/parser.js";
import { REQUESTS, type ValueOriginArguments } from "../protocol.js";
import { readExceptionFilters } from "../engine/breakpoints.js";
import { THREAD_ID, exceptionInfo } from "./stops.js";
import { DataBreakpoints } from "./dataBreakpoints.js";
import { namedIn } from "./variables.js";
import { watchText, type Watch } from "../engine/watches.js";
import { customBody } from "./custom.js";
import { RunningSession, errorMessage } from "./running.js";

/** The sourceReference of a replayed program whose file is not there: its text comes from the trace. */
const TRACE_SOURCE = 1;

export class NeuralPythonSession extends RunningSession {
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

  // ---- data breakpoints ----

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
    this.startMove(response, request, "origin", { kind: "origin", watch });
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
      response.body = await this.inflight.run(request?.seq ?? -2, false, (signal) => this.view.evaluate(args, signal));
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

  // ---- this debugger's own requests ----

  protected override async customRequest(command: string, response: DebugProtocol.Response, args: unknown, request?: DebugProtocol.Request): Promise<void> {
    if (command === REQUESTS.valueOrigin) return this.valueOrigin(response, args, request);
    if (!Object.values(REQUESTS).includes(command as never)) return super.customRequest(command, response, args, request);
    return this.answer(response, () => {
      response.body = customBody(command, {
        core: () => this.core,
        ended: () => this.ended,
        view: this.view,
        console: (line) => this.console(line),
        send: (e) => this.sendEvent(e),
        compared: () => this.arrival.compared(),
        program: () => this.files.program(),
      });
      this.sendResponse(response);
    });
  }

  // ---- exceptions ----

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
