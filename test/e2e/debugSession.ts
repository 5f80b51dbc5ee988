// Watches neural-python debug sessions from inside VS Code: every protocol message goes through
// a tracker, so a test can wait for the next "stopped" event and read the state the adapter sent.
import * as vscode from "vscode";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { until } from "./harness.js";

export const DEBUG_TYPE = "neural-python";

interface Seen {
  session: vscode.DebugSession;
  message: DebugProtocol.ProtocolMessage;
  dir: "in" | "out";
}

const seen: Seen[] = [];
let registered: vscode.Disposable | undefined;

export function watchSessions(): void {
  registered ??= vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
    createDebugAdapterTracker: (session) => ({
      onDidSendMessage: (message: DebugProtocol.ProtocolMessage) => void seen.push({ session, message, dir: "out" }),
      onWillReceiveMessage: (message: DebugProtocol.ProtocolMessage) => void seen.push({ session, message, dir: "in" }),
    }),
  });
}

/** A position in the message log: wait for things that happen after it. */
export const mark = (): number => seen.length;

export async function nextEvent<T extends DebugProtocol.Event>(event: string, from: number, ms = 30_000): Promise<{ session: vscode.DebugSession; body: T["body"] }> {
  const hit = await until(`a "${event}" event`, () => seen.slice(from).find((s) => s.dir === "out" && s.message.type === "event" && (s.message as DebugProtocol.Event).event === event), ms);
  return { session: hit.session, body: (hit.message as T).body };
}

/** The arguments VS Code sent with a request (e.g. the resolved launch configuration). */
export async function sentRequest(command: string, from: number, ms = 30_000): Promise<Record<string, unknown>> {
  const hit = await until(`a "${command}" request`, () => seen.slice(from).find((s) => s.dir === "in" && s.message.type === "request" && (s.message as DebugProtocol.Request).command === command), ms);
  return ((hit.message as DebugProtocol.Request).arguments ?? {}) as Record<string, unknown>;
}

/** The adapter's response to a request VS Code sent after `from`. */
export async function responseTo(command: string, from: number, ms = 30_000): Promise<DebugProtocol.Response> {
  const hit = await until(`a response to "${command}"`, () => seen.slice(from).find((s) => s.dir === "out" && s.message.type === "response" && (s.message as DebugProtocol.Response).command === command), ms);
  return hit.message as DebugProtocol.Response;
}

/** The text of the output events the adapter sent after `from`. */
export function outputSince(from: number): string {
  return seen
    .slice(from)
    .filter((s) => s.dir === "out" && s.message.type === "event" && (s.message as DebugProtocol.Event).event === "output")
    .map((s) => (s.message as DebugProtocol.OutputEvent).body.output)
    .join("");
}

export function session(): vscode.DebugSession {
  const s = vscode.debug.activeDebugSession;
  if (!s || s.type !== DEBUG_TYPE) throw new Error("no active neural-python debug session");
  return s;
}

export async function threadId(s = session()): Promise<number> {
  const r = (await s.customRequest("threads")) as DebugProtocol.ThreadsResponse["body"];
  if (!r.threads.length) throw new Error("the adapter reports no threads");
  return r.threads[0].id;
}

export async function stack(s = session()): Promise<DebugProtocol.StackFrame[]> {
  const r = (await s.customRequest("stackTrace", { threadId: await threadId(s), startFrame: 0, levels: 50 })) as DebugProtocol.StackTraceResponse["body"];
  return r.stackFrames;
}

/** The locals of a frame, as VS Code's Variables view gets them: name -> value. */
export async function locals(frameId: number, s = session()): Promise<Record<string, string>> {
  const { scopes } = (await s.customRequest("scopes", { frameId })) as DebugProtocol.ScopesResponse["body"];
  if (!scopes.length) throw new Error("the frame has no scopes");
  const { variables } = (await s.customRequest("variables", { variablesReference: scopes[0].variablesReference })) as DebugProtocol.VariablesResponse["body"];
  return Object.fromEntries(variables.map((v) => [v.name, v.value]));
}

/**
 * Runs a workbench debug command (as the toolbar buttons do) and waits for the stop it causes,
 * then for VS Code to focus the new top frame (so screenshots show it).
 */
export async function act(command: string, ms = 30_000): Promise<DebugProtocol.StoppedEvent["body"]> {
  const from = mark();
  await vscode.commands.executeCommand(command);
  const { body } = await nextEvent<DebugProtocol.StoppedEvent>("stopped", from, ms);
  await settled();
  return body;
}

/** Waits until VS Code shows a stack frame of the active session (Call Stack and Variables filled). */
export async function settled(): Promise<void> {
  await until("VS Code to focus a stack frame", () => {
    const item = vscode.debug.activeStackItem;
    return item instanceof vscode.DebugStackFrame && item.session.id === vscode.debug.activeDebugSession?.id;
  }, 15_000);
  await new Promise((r) => setTimeout(r, 600)); // let the views render before a screenshot
}

export async function stopAll(): Promise<void> {
  if (!vscode.debug.activeDebugSession) return;
  const ended = new Promise<void>((r) => {
    const sub = vscode.debug.onDidTerminateDebugSession(() => {
      if (!vscode.debug.activeDebugSession) (sub.dispose(), r());
    });
  });
  await vscode.debug.stopDebugging();
  await Promise.race([ended, new Promise((r) => setTimeout(r, 10_000))]);
}
