// The README's predict example, as a newcomer runs it: cart.py (a class, its methods, module code
// and one method not written yet) open in the editor, the README's "Predict" configuration
// (test/readme.test.ts checks that the workspace's launch.json holds it as the README writes it).
// Stopping on entry stops on the script's first line, and the first Step Over moves to its next
// statement; stepping on, the states the code decides are exact and unmarked, and the value of the
// unwritten method is the model's, marked; the cart opens into its attributes and the Debug Console
// calls its methods (run sealed). The screenshot at the end is the README's
// (scripts/screenshot.mjs copies it to docs/screenshot.png).
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { hasDriver, probe, screenshot, suite, test, until } from "../harness.js";
import { act, mark, nextEvent, outputSince, responseTo, session, stack, stopAll, watchSessions } from "../debugSession.js";

const FIRST = 1; // class Cart:
const NEXT = 17; // cart = Cart("ana")
const LAST = 22; // print("to pay:", final)

async function variables(frameId: number): Promise<DebugProtocol.Variable[]> {
  const { scopes } = (await session().customRequest("scopes", { frameId })) as DebugProtocol.ScopesResponse["body"];
  return children(scopes[0].variablesReference);
}

async function children(variablesReference: number): Promise<DebugProtocol.Variable[]> {
  return ((await session().customRequest("variables", { variablesReference })) as DebugProtocol.VariablesResponse["body"]).variables;
}

suite("README", () => {
  const first = new vscode.SourceBreakpoint(new vscode.Location(vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, "cart.py"), new vscode.Position(FIRST - 1, 0)));
  test("the predict example: a breakpoint on the first line, Step Over to the next statement, exact states unmarked, the hole's value marked, objects open and methods run", async () => {
    watchSessions();
    const folder = vscode.workspace.workspaceFolders![0];
    const debug = vscode.workspace.getConfiguration("debug", folder.uri);
    await debug.update("showVariableTypes", true, vscode.ConfigurationTarget.Workspace);
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, "cart.py"));
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand("workbench.view.debug");
      // The README's configuration runs to the first breakpoint, as debugpy's do.
      vscode.debug.addBreakpoints([first]);
      const from = mark();
      const starting = Promise.resolve(vscode.debug.startDebugging(folder, "Predict")).catch((e: unknown) => e);
      const launched = await responseTo("launch", from, 180_000);
      assert.ok(launched.success, `predict launch failed: ${launched.message}`);
      assert.equal(await starting, true);
      const { body } = await nextEvent<DebugProtocol.StoppedEvent>("stopped", from, 180_000);
      assert.equal(body.reason, "breakpoint");
      assert.deepEqual([(await stack())[0].name, (await stack())[0].line], ["<module>", FIRST], "stopped on the script's first line");
      vscode.debug.removeBreakpoints([first]);
      await act("workbench.action.debug.stepOver", 120_000);
      assert.equal((await stack())[0].line, NEXT, "the first Step Over moves on to the next statement");
      while ((await stack())[0].line < LAST) await act("workbench.action.debug.stepOver", 120_000);
      const [top] = await stack();
      assert.equal(top.line, LAST);
      const vars = await variables(top.id);
      const total = vars.find((v) => v.name === "total");
      assert.equal(total?.value, "16", "cart.total() runs sealed: exact");
      assert.doesNotMatch(total?.type ?? "", /predicted/, "an exact value carries no mark");
      const final = vars.find((v) => v.name === "final");
      assert.match(final?.type ?? "", /predicted \(\d+%\)/, `final comes from the unwritten discount(): ${final?.type}`);
      assert.match(outputSince(from), /Cart\.discount\(\) at line \d+ = .* \(predicted, \d+%\)/, "the Debug Console names the hole and its value");
      // The object opens into its attributes, as in debugpy, and the Debug Console runs its methods sealed.
      const cart = vars.find((v) => v.name === "cart");
      assert.ok(cart && cart.variablesReference > 0, `cart opens: ${JSON.stringify(cart)}`);
      const attrs = await children(cart.variablesReference);
      assert.deepEqual(attrs.map((v) => `${v.name}=${v.value}`), ["owner='ana'", "items=[('tea', 4, 2), ('cake', 8, 1)]"]);
      const called = (await session().customRequest("evaluate", { expression: "cart.total() + len(cart.items)", frameId: top.id, context: "repl" })) as DebugProtocol.EvaluateResponse["body"];
      assert.equal(called.result, "18", "the program's method runs on its live object");
      if (hasDriver) await until("the marked value in the Variables view", async () => (await probe(".debug-pane .monaco-list-row")).some((r) => /predicted/.test(r.text)) || undefined);
      await screenshot("readme-predict");
      await stopAll();
    } finally {
      vscode.debug.removeBreakpoints([first]);
      await debug.update("showVariableTypes", undefined, vscode.ConfigurationTarget.Workspace);
    }
  }, 400_000);
});
