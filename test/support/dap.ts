// A DAP client for the adapter tests: the built adapter (dist/adapter.js) driven by
// @vscode/debugadapter-testsupport's DebugClient, with waits that never outlive their timeouts.
import { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { ADAPTER } from "./dist.js";
import { transition } from "../../adapter/real/semantics.js";
import type { Frame } from "../../adapter/format/trajectory.js";

export const THREAD = { threadId: 1 };

export interface Session {
  dc: DebugClient;
  /** Every output event so far. */
  output: DebugProtocol.OutputEvent["body"][];
  /** Text of the output events of a category so far (all of them without one). */
  text(category?: string): string;
}

/** Starts the adapter; `timeout` (ms) is the client's default wait, and firstOf's. */
export async function openSession(timeout: number): Promise<Session> {
  const dc = new DebugClient(process.execPath, ADAPTER, "neural-python");
  dc.defaultTimeout = timeout;
  // The client's requests wait for their answer with no limit: one the adapter never answers would
  // keep a test (and the suite) waiting for ever. Each is bounded by the session's timeout.
  const client = dc as unknown as { send(command: string, args?: unknown): Promise<DebugProtocol.Response> };
  const send = client.send.bind(dc);
  client.send = (command, args) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${command} within ${timeout} ms`)), timeout);
      send(command, args).then(resolve, reject).finally(() => clearTimeout(timer));
    });
  await dc.start();
  const output: DebugProtocol.OutputEvent["body"][] = [];
  dc.on("output", (e: DebugProtocol.OutputEvent) => output.push(e.body));
  return { dc, output, text: (c) => output.filter((o) => c === undefined || o.category === c).map((o) => o.output).join("") };
}

/** The first of several events, with a timeout that does not outlive it (waitForEvent's would keep the process up). */
export function firstOf(dc: DebugClient, names: string[], ms = dc.defaultTimeout): Promise<DebugProtocol.Event> {
  return new Promise((resolve, reject) => {
    const handlers = names.map((name) => [name, (e: DebugProtocol.Event) => done(() => resolve(e))] as const);
    const timer = setTimeout(() => done(() => reject(new Error(`no ${names.join(" or ")} event within ${ms} ms`))), ms);
    function done(settle: () => void): void {
      clearTimeout(timer);
      for (const [name, h] of handlers) dc.removeListener(name, h);
      settle();
    }
    for (const [name, h] of handlers) dc.on(name, h);
  });
}

/**
 * launch (after initialize, which start() did) with breakpoints in `program` (or in `file`, another
 * file of it) set during configuration, and the exception filters `filters` where given (as VS
 * Code sends those on by default); resolves with the first stop (or the end) and the breakpoints
 * as the adapter set them.
 */
export async function launchToFirstStop(
  dc: DebugClient,
  args: Record<string, unknown>,
  program: string,
  breakpoints: DebugProtocol.SourceBreakpoint[] = [],
  file = program,
  filters?: string[],
): Promise<{ first: DebugProtocol.Event; breakpoints: DebugProtocol.Breakpoint[] }> {
  let set: DebugProtocol.Breakpoint[] = [];
  const first = firstOf(dc, ["stopped", "terminated"]);
  // Awaited only once launch has answered: a launch that fails (or never answers) is the error to report, not this wait's.
  first.catch(() => undefined);
  await Promise.all([
    dc.waitForEvent("initialized").then(async () => {
      set = (await dc.setBreakpointsRequest({ source: { path: file }, breakpoints })).body.breakpoints;
      if (filters) await dc.setExceptionBreakpointsRequest({ filters });
      await dc.configurationDoneRequest();
    }),
    dc.launch(args),
  ]);
  return { first: await first, breakpoints: set };
}

/** Sends a move request; resolves with the stop it leads to, or the end of the session. */
export async function stopAfter(dc: DebugClient, request: (dc: DebugClient) => Promise<unknown>): Promise<DebugProtocol.Event> {
  const next = firstOf(dc, ["stopped", "terminated"]);
  const [, e] = await Promise.all([request(dc), next]);
  return e;
}

/**
 * Where a debugger's Step Into, Over or Out goes in a real run (Engine.stepAsDebugger): the action,
 * then on past what debugpy does not stop at: a call (into the body), a frame an exception
 * unwinds, after a Step Over the return of the frame it stepped in, after a Step Out the
 * outermost frame's return.
 */
export function stepIndex(frames: readonly Frame[], i: number, kind: "step_into" | "step_over" | "step_return", bps?: number[]): number {
  const places = bps?.map((line) => ({ line }));
  // (Step Over and Out stop at a breakpoint hit on the way)
  const go = (from: number, k: typeof kind): number => Math.min(transition(frames, from, { kind: k }, places), k !== "step_into" && places ? transition(frames, from, { kind: "continue" }, places) : frames.length);
  let j = go(i, kind);
  for (let n = 0; n < 256 && j < frames.length; n++) {
    const f = frames[j];
    const on = f.event === "call" ? "step_into" : f.event !== "return" ? undefined : f.depth === 0 ? (kind === "step_return" ? "step_over" : undefined) : f.value === undefined ? "step_into" : kind === "step_over" ? "step_over" : undefined;
    if (!on) break;
    j = go(j, on);
  }
  return j;
}

/** Where Step Out goes in a real run (stepIndex's step_return). */
export const stepOutIndex = (frames: readonly Frame[], i: number, bps?: number[]): number => stepIndex(frames, i, "step_return", bps);

/**
 * Where Step Back goes in a real run (a reverse Step Over, past call events to the line that made
 * the call; from a return shown in the caller, back over the whole call): i itself at the first
 * state, a script's first line included.
 */
export function backIndex(frames: readonly Frame[], i: number): number {
  const f = frames[i];
  let j = transition(frames, i, { kind: f?.event === "return" && f.depth > 0 ? "inv_step_return" : "inv_step_over" });
  if (j === i) return i;
  for (let n = 0; n < 256 && frames[j].event === "call"; n++) {
    const k = transition(frames, j, { kind: "inv_step_into" });
    if (k === j) return frames[j].func === "<module>" && frames[j].depth === 0 ? i : j;
    j = k;
  }
  return j;
}

/** The stack a debugger shows at state i of a run: a return with a caller in the caller (as it stands then), else the real stack. */
export function shownStack(frames: readonly Frame[], i: number): Frame[] {
  const stack = realStack(frames, i);
  const f = frames[i];
  return f?.event === "return" && f.depth > 0 && f.caller ? [f.caller, ...stack.slice(2)] : stack;
}

/** The real stack at state i of a run: the state, then for each caller the latest earlier state at its depth. */
export function realStack(frames: readonly Frame[], i: number): Frame[] {
  const out = [frames[i]];
  for (let d = frames[i].depth - 1, k = i - 1; d >= 0 && k >= 0; k--) if (frames[k].depth === d) out.push(frames[k]), d--;
  return out;
}

/** Whether a variable is one of debugpy's groups (functions, classes), which open into values. */
export const isGroup = (v: DebugProtocol.Variable): boolean => /^(function|class) variables$/.test(v.name) && v.value === "";

/** A scope's variables with debugpy's groups opened in place (their members after the other names). */
export async function ungrouped(dc: DebugClient, vars: DebugProtocol.Variable[]): Promise<DebugProtocol.Variable[]> {
  const out: DebugProtocol.Variable[] = [];
  for (const v of vars) out.push(...(isGroup(v) ? (await dc.variablesRequest({ variablesReference: v.variablesReference })).body.variables : [v]));
  return out;
}

/** The top frame of a stop, its first scope and that scope's variables. */
export interface Stop {
  frame: DebugProtocol.StackFrame;
  scope: DebugProtocol.Scope;
  vars: DebugProtocol.Variable[];
}

export async function inspect(dc: DebugClient): Promise<Stop> {
  const [frame] = (await dc.stackTraceRequest(THREAD)).body.stackFrames;
  const [scope] = (await dc.scopesRequest({ frameId: frame.id })).body.scopes;
  const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
  return { frame, scope, vars };
}

/** An expression evaluated in the current stop's frame, as a watch, the Debug Console ("repl") or a hover asks it: its result. */
export async function evaluateHere(dc: DebugClient, expression: string, context: "watch" | "repl" | "hover"): Promise<string> {
  const [frame] = (await dc.stackTraceRequest(THREAD)).body.stackFrames;
  return (await dc.evaluateRequest({ expression, frameId: frame.id, context })).body.result;
}

/** A stop in one line: where, and each variable's value. */
export const shown = (s: Stop): string => `${s.frame.name}:${s.frame.line} ${s.vars.map((v) => `${v.name}=${v.value}`).join(" ")}`;
/** Whether a variable is marked as the model's. */
export const isPredicted = (v: DebugProtocol.Variable | undefined): boolean => /predicted/.test(v?.type ?? "");
