// Trace files from and into the debugger: "Save Debug Session as Trace" asks the active session's
// adapter for its trajectory (custom request `ndbg/saveTrace`, arguments {}, response body
// { text: string }: the session so far in the trajectory format) and writes it to a .ndbg file;
// "Replay in Debugger" starts a replay-mode session whose program is the trace file itself.
import * as vscode from "vscode";
import { REQUESTS, type SaveTraceBody } from "../adapter/protocol.js";
import { DEBUG_TYPE } from "./debugConfig.js";

export const TRACE_LANGUAGE = "ndbg-trace";

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}

export async function saveSessionAsTrace(log: vscode.LogOutputChannel, target?: vscode.Uri): Promise<vscode.Uri | undefined> {
  const session = vscode.debug.activeDebugSession;
  if (!session || session.type !== DEBUG_TYPE) {
    void vscode.window.showErrorMessage("Neural Python: no Neural Python debug session is active.");
    return undefined;
  }
  let text: unknown;
  try {
    text = ((await session.customRequest(REQUESTS.saveTrace, {})) as Partial<SaveTraceBody> | undefined)?.text;
  } catch (e) {
    const msg = `Neural Python: the session could not give its trace: ${e instanceof Error ? e.message : String(e)}`;
    log.error(msg);
    void vscode.window.showErrorMessage(msg);
    return undefined;
  }
  if (typeof text !== "string") {
    void vscode.window.showErrorMessage(`Neural Python: the adapter answered ${REQUESTS.saveTrace} without a text.`);
    return undefined;
  }
  if (!target) {
    const program = typeof session.configuration.program === "string" ? session.configuration.program : "session";
    const folder = session.workspaceFolder?.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
    const name = baseName(program).replace(/\.(py|ndbg)$/i, "") + (session.configuration.mode ? `.${session.configuration.mode}` : "") + ".ndbg";
    target = await vscode.window.showSaveDialog({
      title: "Save Debug Session as Trace",
      defaultUri: folder ? vscode.Uri.joinPath(folder, name) : undefined,
      filters: { "Neural Python Trace": ["ndbg"] },
    });
    if (!target) return undefined;
  }
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(text));
  log.info(`saved ${text.length} characters of trace to ${target.toString()}`);
  void vscode.window.showInformationMessage(`Trace saved to ${baseName(target.path)}.`, "Open").then((c) => c && vscode.window.showTextDocument(target!));
  return target;
}

export function replayTrace(uri?: vscode.Uri): Thenable<boolean> {
  uri ??= vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== "file") {
    void vscode.window.showErrorMessage("Neural Python: open a .ndbg trace file to replay it.");
    return Promise.resolve(false);
  }
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  return vscode.debug.startDebugging(folder, {
    type: DEBUG_TYPE,
    request: "launch",
    name: `Replay ${baseName(uri.path)}`,
    program: uri.fsPath,
    mode: "replay",
  });
}

/** Offers a replay once per trace file and window when a trace is opened in an editor. */
export function offerReplay(): vscode.Disposable {
  const offered = new Set<string>();
  const offer = (editor: vscode.TextEditor | undefined): void => {
    const doc = editor?.document;
    if (!doc || doc.languageId !== TRACE_LANGUAGE || doc.uri.scheme !== "file" || offered.has(doc.uri.toString())) return;
    offered.add(doc.uri.toString());
    void vscode.window.showInformationMessage(`${baseName(doc.uri.path)} is a Neural Python trace.`, "Replay in Debugger").then((c) => c && replayTrace(doc.uri));
  };
  offer(vscode.window.activeTextEditor);
  return vscode.window.onDidChangeActiveTextEditor(offer);
}
