// "Neural Python: Forget Answered Holes": deletes the values the user gave holes in a workspace
// folder (the adapter keeps them in HOLE_ANSWERS_FILE, and later launches use them without
// stopping), after asking; so that the next launch stops at those holes again.
import * as vscode from "vscode";
import { HOLE_ANSWERS_FILE } from "../adapter/protocol.js";

/** `folder` and `confirmed` may be passed by whoever runs the command (a test, another extension); a user is asked. */
export function registerForgetHoleAnswers(log: vscode.LogOutputChannel): vscode.Disposable {
  return vscode.commands.registerCommand("neuralPython.forgetHoleAnswers", async (folder?: vscode.Uri, confirmed = false): Promise<number> => {
    const folders = folder instanceof vscode.Uri ? [folder] : (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri);
    const files: vscode.Uri[] = [];
    for (const f of folders) {
      const file = vscode.Uri.joinPath(f, HOLE_ANSWERS_FILE);
      if (await vscode.workspace.fs.stat(file).then(() => true, () => false)) files.push(file);
    }
    if (!files.length) {
      void vscode.window.showInformationMessage("Neural Python: no answered holes are kept in this workspace.");
      return 0;
    }
    const names = files.map((f) => vscode.workspace.asRelativePath(f)).join(", ");
    if (!confirmed && (await vscode.window.showWarningMessage(`Forget the values you gave holes (${names})? The next launch stops at those holes again.`, { modal: true }, "Forget")) !== "Forget") return 0;
    for (const file of files) {
      await vscode.workspace.fs.delete(file);
      log.info(`forgot the answered holes in ${file.fsPath}`);
    }
    return files.length;
  });
}
