// Fills in a `neural-python` launch configuration: the active Python file as program, predict
// mode, the user's settings where the configuration leaves them empty, and the entry call, asked
// for when the file only defines functions. Refuses modes that run code in an untrusted workspace,
// and tells the adapter whether the workspace is trusted (it refuses them too).
import * as vscode from "vscode";
import { scanEntry, suggestedCall } from "./pythonEntry.js";

export const DEBUG_TYPE = "neural-python";
/** Settings (neuralPython.X) copied into the launch configuration when it has no X of its own. */
const SETTINGS = ["model", "dialect", "python", "gpu", "threads", "lowConfidence"] as const;
/** Modes that run the user's program (tracer or debugpy). */
const RUNS_CODE = new Set(["record", "compare", "hybrid"]);

export const isTraceFile = (path: unknown): boolean => typeof path === "string" && /\.ndbg$/i.test(path);
const isEmpty = (v: unknown): boolean => v === undefined || v === null || v === "";

export class NeuralConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(private readonly log: vscode.LogOutputChannel) {}

  resolveDebugConfiguration(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): vscode.DebugConfiguration | undefined {
    // F5 without a launch.json: debug the active Python file.
    if (!config.type && !config.request && !config.name) {
      const doc = vscode.window.activeTextEditor?.document;
      if (!doc || (doc.languageId !== "python" && doc.languageId !== "ndbg-trace")) {
        void vscode.window.showErrorMessage("Neural Python: open a Python file (or a .ndbg trace) to debug it.");
        return undefined;
      }
      config.name = doc.languageId === "python" ? "Predict file" : "Replay trace";
      config.program = "${file}";
    }
    config.type = DEBUG_TYPE;
    config.request ??= "launch";
    config.program ??= "${file}";
    // Relative paths are the workspace's (the adapter process may serve several workspaces).
    if (isEmpty(config.cwd) && folder?.uri.scheme === "file") config.cwd = folder.uri.fsPath;
    const settings = vscode.workspace.getConfiguration("neuralPython", folder?.uri);
    for (const key of SETTINGS) {
      const value = settings.get(key);
      // threads 0 means "choose from the machine": the adapter's own default.
      if (isEmpty(config[key]) && !isEmpty(value) && !(key === "threads" && value === 0)) config[key] = value;
    }
    return config;
  }

  async resolveDebugConfigurationWithSubstitutedVariables(_folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
    const program = config.program as string;
    // The adapter's own check: it runs no program unless told the workspace is trusted, and only
    // VS Code can say so (whatever launch.json puts here is overwritten).
    config.trusted = vscode.workspace.isTrusted;
    // A trace file is replayed: recorded states only, nothing runs, so no trust is needed.
    if (isTraceFile(program)) {
      config.mode = "replay";
      this.log.info(`replay ${JSON.stringify(config)}`);
      return config;
    }
    config.mode ??= "predict";
    // VS Code itself asks for trust before any debugging; this also covers clients and settings
    // that let a session start in Restricted Mode: predict mode never runs code, the others do.
    if (RUNS_CODE.has(config.mode) && !vscode.workspace.isTrusted) {
      const msg = `Neural Python: ${config.mode} mode runs your program, which this untrusted workspace does not allow. Predict mode never runs code: use "mode": "predict", or trust the workspace.`;
      this.log.warn(msg);
      void vscode.window.showErrorMessage(msg, "Manage Workspace Trust").then((c) => c && vscode.commands.executeCommand("workbench.trust.manage"));
      return undefined;
    }
    if (isEmpty(config.call) && typeof program === "string" && program.endsWith(".py")) {
      const call = await this.askForCall(program);
      if (call === null) return undefined; // cancelled: no session
      if (call) config.call = call;
    }
    this.log.info(`launch ${JSON.stringify(config)}`);
    return config;
  }

  /** undefined: the file runs as a script; null: the user cancelled; else the entry call. */
  private async askForCall(program: string): Promise<string | null | undefined> {
    let text: string;
    try {
      text = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(program)));
    } catch {
      return undefined; // the adapter reports a missing file clearly
    }
    const info = scanEntry(text);
    if (info.hasModuleCode || !info.functions.length) return undefined;
    const offer = suggestedCall(info)!;
    const call = await vscode.window.showInputBox({
      title: "Neural Python: entry call",
      prompt: `${program.split(/[\\/]/).pop()} only defines functions: which call should be debugged?`,
      value: offer.value,
      valueSelection: offer.selection,
      ignoreFocusOut: true,
      validateInput: (v) => (/^\s*[A-Za-z_][\w.]*\s*\(.*\)\s*$/s.test(v) ? undefined : "a call, e.g. f([1, 2])"),
    });
    return call === undefined ? null : call.trim();
  }
}

/** Configurations offered in the Run and Debug view's list without a launch.json (dynamic), under the "Neural Python" heading: short names, which the list's narrow box shows whole. */
export class NeuralDynamicConfigurations implements vscode.DebugConfigurationProvider {
  provideDebugConfigurations(): vscode.DebugConfiguration[] {
    const doc = vscode.window.activeTextEditor?.document;
    if (doc?.languageId === "ndbg-trace") return [{ type: DEBUG_TYPE, request: "launch", name: "Replay trace", program: "${file}", mode: "replay" }];
    return [
      { type: DEBUG_TYPE, request: "launch", name: "Predict file", program: "${file}", mode: "predict" },
      { type: DEBUG_TYPE, request: "launch", name: "Record file", program: "${file}", mode: "record" },
      { type: DEBUG_TYPE, request: "launch", name: "Compare file", program: "${file}", mode: "compare" },
    ];
  }
}
