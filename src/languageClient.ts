// Starts the trace-file language server (dist/server.cjs) when the first trace is opened.
import * as vscode from "vscode";
import { LanguageClient, TransportKind } from "vscode-languageclient/node";
import { TRACE_LANGUAGE } from "./traceCommands.js";

export function startTraceLanguageClient(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): vscode.Disposable {
  let client: LanguageClient | undefined;
  const start = (doc: vscode.TextDocument): void => {
    if (client || doc.languageId !== TRACE_LANGUAGE) return;
    const module = context.asAbsolutePath("dist/server.cjs");
    client = new LanguageClient(
      "ndbgTrace",
      "Neural Python Trace",
      { run: { module, transport: TransportKind.ipc }, debug: { module, transport: TransportKind.ipc } },
      { documentSelector: [{ language: TRACE_LANGUAGE }], outputChannel: log },
    );
    client.start().then(
      () => log.info("trace language server started"),
      (e: unknown) => log.error(`trace language server failed to start: ${e instanceof Error ? e.message : String(e)}`),
    );
  };
  vscode.workspace.textDocuments.forEach(start);
  const sub = vscode.workspace.onDidOpenTextDocument(start);
  return { dispose: () => (sub.dispose(), void client?.stop()) };
}
