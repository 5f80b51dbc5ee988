// "Neural Python: Check Inference Backends": `ndbg doctor` (adapter/cli/commands/doctor.ts) run as its
// own Node process on the configured model, its report shown in an output channel. Its probes
// load llama.cpp binaries that may abort, so they never run in the extension host; the verdicts
// it writes are the ones sessions read.
import * as vscode from "vscode";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { nodeEnv } from "./adapterFactory.js";

export function registerBackendCheck(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): vscode.Disposable {
  const out = vscode.window.createOutputChannel("Neural Python: Inference Backends");
  let running = false;
  const command = vscode.commands.registerCommand("neuralPython.checkBackends", async (): Promise<number | undefined> => {
    out.show(true);
    if (running) return undefined;
    const cli = context.asAbsolutePath("dist/ndbg.js");
    if (!existsSync(cli)) {
      out.appendLine(`The command line tool is missing (${cli}); build the extension first.`);
      return undefined;
    }
    const settings = vscode.workspace.getConfiguration("neuralPython");
    const args = [cli, "doctor"];
    const model = settings.get<string>("model")?.trim();
    if (model) args.push("--model", model);
    const threads = settings.get<number>("threads") ?? 0;
    if (threads > 0) args.push("--threads", String(threads));
    out.clear();
    out.appendLine(`Checking the inference backends (each is loaded and timed in a process of its own; this can take a minute)…`);
    log.info(`checking inference backends: ${process.execPath} ${args.join(" ")}`);
    running = true;
    try {
      return await new Promise<number>((resolve) => {
        const child = spawn(process.execPath, args, {
          cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? context.extensionPath,
          env: { ...process.env, ...nodeEnv() },
          stdio: ["ignore", "pipe", "pipe"],
        });
        child.stdout.setEncoding("utf8").on("data", (d: string) => out.append(d));
        // Progress ("ndbg doctor: cuda fails") and errors.
        child.stderr.setEncoding("utf8").on("data", (d: string) => out.append(d));
        child.on("error", (e) => {
          out.appendLine(`It could not start: ${e.message}`);
          resolve(-1);
        });
        child.on("close", (code, signal) => {
          if (code !== 0) out.appendLine(signal ? `The check was stopped (${signal}).` : `The check ended with code ${code}.`);
          resolve(code ?? -1);
        });
      });
    } finally {
      running = false;
    }
  });
  return vscode.Disposable.from(out, command);
}
