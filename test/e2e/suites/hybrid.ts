// Hybrid mode in VS Code: shop.py runs for real and only its unwritten helper (`raise
// NotImplementedError`) and its missing module are predicted. After stepping out of the helper the
// value it returned is marked "predicted" in the Variables view (types are shown for this test:
// debug.showVariableTypes), the real values are not, and the Debug Console names the hole.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { hasDriver, probe, screenshot, suite, test, until } from "../harness.js";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { act, mark, nextEvent, outputSince, responseTo, session, stack, stopAll, watchSessions } from "../debugSession.js";

suite("hybrid mode", () => {
  test("the program runs for real, the unwritten helper's value is predicted and marked", async () => {
    watchSessions();
    const folder = vscode.workspace.workspaceFolders![0];
    const debug = vscode.workspace.getConfiguration("debug", folder.uri);
    await debug.update("showVariableTypes", true, vscode.ConfigurationTarget.Workspace);
    try {
      await vscode.commands.executeCommand("workbench.view.debug");
      const from = mark();
      const starting = Promise.resolve(vscode.debug.startDebugging(folder, "Hybrid shop")).catch((e: unknown) => e);
      const launched = await responseTo("launch", from, 120_000);
      assert.ok(launched.success, `hybrid launch failed: ${launched.message}`);
      assert.equal(await starting, true);
      await nextEvent("stopped", from, 120_000);
      assert.match(outputSince(from), /hybrid · the program runs for real; the model predicts only its holes: parse_price\(\) \(not written yet\)/);
      assert.match(outputSince(from), /parse_price\(\) at line 6 = .* \(predicted, \d+%\)/);
      assert.equal((await stack())[0].line, 9);
      await act("workbench.action.debug.stepOver", 60_000); // main:10, real
      await act("workbench.action.debug.stepInto", 60_000); // the hole: parse_price's body line, real arguments
      await act("workbench.action.debug.stepOver", 60_000); // past its return (the model's value), to main:11, as debugpy steps
      const [top] = await stack();
      assert.equal(top.line, 11);
      const { scopes } = (await session().customRequest("scopes", { frameId: top.id })) as DebugProtocol.ScopesResponse["body"];
      const { variables } = (await session().customRequest("variables", { variablesReference: scopes[0].variablesReference })) as DebugProtocol.VariablesResponse["body"];
      const p = variables.find((v) => v.name === "p");
      assert.ok(p, "p is bound from the hole's value");
      assert.match(p.type ?? "", /predicted \(\d+%\)/, "p came from the model");
      if (hasDriver) await until("the predicted value in the Variables view", async () => (await probe(".debug-pane .monaco-list-row")).some((r) => /predicted/.test(r.text)) || undefined);
      await screenshot("hybrid-predicted");
      await stopAll();
    } finally {
      await debug.update("showVariableTypes", undefined, vscode.ConfigurationTarget.Workspace);
    }
  }, 300_000);
});
