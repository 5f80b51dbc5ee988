// Runs the debug adapter out of the extension host, as its own Node process speaking DAP on
// stdio: a model that aborts the process that loads it (a bad GGUF can) then ends one session,
// not the editor's extensions.
import * as vscode from "vscode";
import { existsSync } from "node:fs";

export class NeuralAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly context: vscode.ExtensionContext, private readonly log: vscode.LogOutputChannel) {}

  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.ProviderResult<vscode.DebugAdapterDescriptor> {
    const adapter = this.context.asAbsolutePath("dist/adapter.js");
    if (!existsSync(adapter)) throw new Error(`Neural Python: the debug adapter is missing (${adapter}); build the extension first.`);
    // The extension host's executable is Electron in desktop VS Code: it runs as plain Node with
    // ELECTRON_RUN_AS_NODE; elsewhere (remote and web servers) it is Node itself.
    const env: Record<string, string> = {};
    if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = "1";
    const cwd = session.workspaceFolder?.uri.scheme === "file" ? session.workspaceFolder.uri.fsPath : undefined;
    this.log.info(`starting adapter for "${session.name}": ${process.execPath} ${adapter}`);
    return new vscode.DebugAdapterExecutable(process.execPath, [adapter], { env, ...(cwd ? { cwd } : {}) });
  }
}

/** Logs every session's protocol traffic (trace level) and how its adapter ended. */
export class NeuralTrackerFactory implements vscode.DebugAdapterTrackerFactory {
  constructor(private readonly log: vscode.LogOutputChannel) {}

  createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    const log = this.log;
    const name = session.name;
    return {
      onWillReceiveMessage: (m) => log.trace(`${name} ▶ ${JSON.stringify(m)}`),
      onDidSendMessage: (m) => log.trace(`${name} ◀ ${JSON.stringify(m)}`),
      // A stream error also arrives when an adapter exits at the end of a session: how it ended is in onExit.
      onError: (e) => log.debug(`${name}: adapter stream: ${e.message}`),
      onExit: (code, signal) => {
        if (code) log.error(`${name}: adapter exited with code ${code}${signal ? ` (${signal})` : ""}`);
        else log.info(`${name}: adapter exited${signal ? ` (${signal})` : ""}`);
      },
    };
  }
}
