// "Where Did This Value Come From?" on a variable of the Variables view: the session goes back
// to the statement that last set it (the adapter's ndbg/valueOrigin, over the whole recorded run).
import * as vscode from "vscode";
import { REQUESTS, type ValueOriginArguments } from "../adapter/protocol.js";
import { DEBUG_TYPE } from "./debugConfig.js";

/** What VS Code passes to a command of the Variables view's context menu. */
export interface VariableContext {
  sessionId?: string;
  container?: { variablesReference?: number };
  variable?: { name?: string };
}

export function registerValueOrigin(log: vscode.LogOutputChannel): vscode.Disposable {
  return vscode.commands.registerCommand("neuralPython.valueOrigin", async (ctx?: VariableContext) => {
    const session = vscode.debug.activeDebugSession;
    const args: Partial<ValueOriginArguments> = { variablesReference: ctx?.container?.variablesReference, name: ctx?.variable?.name };
    if (!session || session.type !== DEBUG_TYPE || (ctx?.sessionId && ctx.sessionId !== session.id) || args.variablesReference === undefined || args.name === undefined) {
      void vscode.window.showInformationMessage("Neural Python: pick a variable of a Neural Python session's Variables view.");
      return;
    }
    try {
      await session.customRequest(REQUESTS.valueOrigin, args);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      log.warn(`where ${args.name} came from: ${why}`);
      void vscode.window.showWarningMessage(`Neural Python: ${why}`);
    }
  });
}
