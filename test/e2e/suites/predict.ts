// Predict mode in VS Code: the model's first state and a step in the Run and Debug view, the
// status bar's model, device and speed (from the adapter's `ndbg/model` event), and the step's
// values marked as predicted in the Variables view. Nothing here depends on what the model
// predicts, only on the protocol: lines of the file, frames, locals, marks. The packaged
// extension bundles a model: a launch without one is a failure. The launch sets "compute": false:
// demo.py's states all follow from its call, so by default none of them would be the model's.
// Then a project of several files (test/fixtures/projects/inventory, copied into the workspace):
// its package's breakpoint, its data file and its writes, sealed. Then a hole (temps.py's unwritten
// function): the session stops there, the user answers it in the Variables view, the run follows
// the answer, the answer is kept in the workspace, and "Forget Answered Holes" deletes it.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { click, hasDriver, probe, screenshot, suite, test, typeText, until } from "../harness.js";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { DEBUG_TYPE, act, mark, nextEvent, outputSince, responseTo, session, stack, stopAll, watchSessions } from "../debugSession.js";

const DEMO_LINES = 14;

suite("predict mode", () => {
  test("a predicted first state, a predicted step marked as predicted, and the model in the status bar", async () => {
    watchSessions();
    const folder = vscode.workspace.workspaceFolders![0];
    await vscode.commands.executeCommand("workbench.view.debug");
    const from = mark();
    const starting = Promise.resolve(vscode.debug.startDebugging(folder, "Predict demo")).catch((e: unknown) => e);
    const launched = await responseTo("launch", from, 120_000);
    assert.ok(launched.success, `predict launch failed: ${launched.message}`);
    assert.equal(await starting, true);
    const first = await Promise.race([nextEvent("stopped", from, 120_000).then(() => "stopped"), nextEvent("terminated", from, 120_000).then(() => "terminated")]);
    assert.equal(first, "stopped", `the predict session ended without stopping: ${outputSince(from)}`);
    const [top] = await stack();
    assert.ok(top.line >= 1 && top.line <= DEMO_LINES, `a line of the file: ${top.line}`);
    const model = await nextEvent("ndbg/model", from, 10_000).catch(() => undefined);
    assert.ok(model, "the adapter reports its model with an ndbg/model event");
    const body = model.body as { name: string; device: string };
    assert.equal(typeof body.name, "string");
    if (hasDriver) {
      const items = await until("the model in the status bar", async () => {
        const found = (await probe(".statusbar-item")).filter((i) => i.text.includes(body.name));
        return found.length ? found : undefined;
      });
      assert.match(items[0].text, /CPU|CUDA|Metal|Vulkan/);
    }
    await screenshot("predict-entry");
    await act("workbench.action.debug.stepOver", 120_000);
    const [next] = await stack();
    assert.ok(next.line >= 1 && next.line <= DEMO_LINES, `a line of the file: ${next.line}`);
    // The step's values are the model's: the scope and every variable say so.
    const { scopes } = (await session().customRequest("scopes", { frameId: next.id })) as DebugProtocol.ScopesResponse["body"];
    assert.match(scopes[0].name, /^Predicted locals/);
    const { variables } = (await session().customRequest("variables", { variablesReference: scopes[0].variablesReference })) as DebugProtocol.VariablesResponse["body"];
    assert.ok(variables.length > 0, "the predicted state has locals");
    for (const v of variables) assert.match(v.type ?? "", /predicted/, `${v.name} is marked as predicted`);
    if (hasDriver) await until("the predicted scope in the Variables view", async () => (await probe(".debug-pane .monaco-list-row")).some((r) => /Predicted locals/.test(r.text)) || undefined);
    await screenshot("predict-step");
    await stopAll();
  }, 300_000);

  test("a project of several files: a breakpoint in its package is verified and hit, its data file read, its writes kept off the disk", async () => {
    watchSessions();
    const folder = vscode.workspace.workspaceFolders![0];
    const project = vscode.Uri.joinPath(folder.uri, "project");
    const store = vscode.Uri.joinPath(project, "inventory", "store.py");
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(store));
    const breakpoint = new vscode.SourceBreakpoint(new vscode.Location(store, new vscode.Position(13, 0)));
    vscode.debug.addBreakpoints([breakpoint]);
    try {
      await vscode.commands.executeCommand("workbench.view.debug");
      const from = mark();
      assert.equal(await vscode.debug.startDebugging(folder, "Predict project"), true);
      const set = await responseTo("setBreakpoints", from, 60_000);
      const verdicts = (set.body as DebugProtocol.SetBreakpointsResponse["body"]).breakpoints;
      assert.deepEqual(verdicts.map((b) => [b.verified, b.line]), [[true, 14]], JSON.stringify(verdicts));
      const { body } = await nextEvent<DebugProtocol.StoppedEvent>("stopped", from, 120_000);
      assert.equal(body.reason, "breakpoint", outputSince(from));
      const [top] = await stack();
      assert.ok(top.source?.path?.endsWith("/project/inventory/store.py"), top.source?.path);
      assert.equal(top.line, 14);
      assert.equal(top.name, "Store.take");
      await screenshot("predict-project");
      // (the breakpoint is hit again by the second take(): Continue once VS Code has cleared it)
      const clearing = mark();
      vscode.debug.removeBreakpoints([breakpoint]);
      await responseTo("setBreakpoints", clearing, 30_000);
      const ending = nextEvent("terminated", from, 120_000);
      await vscode.commands.executeCommand("workbench.action.debug.continue");
      await ending;
      const text = outputSince(from);
      assert.match(text, /refused: pen: 50 asked, 10 left\n3 items worth 40\.00\nlow: \['ink'\]/);
      assert.match(text, /out\/low\.txt \(4 bytes\)/);
      await assert.rejects(Promise.resolve(vscode.workspace.fs.stat(vscode.Uri.joinPath(project, "out"))), "the run wrote nothing to disk");
    } finally {
      vscode.debug.removeBreakpoints(vscode.debug.breakpoints);
      await stopAll();
    }
  }, 300_000);

  test("a hole stops the session; answered in the Variables view, the run follows the answer, which is kept until forgotten", async () => {
    watchSessions();
    const folder = vscode.workspace.workspaceFolders![0];
    const answers = vscode.Uri.joinPath(folder.uri, ".vscode", "neural-python-holes.json");
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, "temps.py")));
    await vscode.commands.executeCommand("workbench.view.debug");
    let from = mark();
    // VS Code sends the exception filters on by default: "holes" among them.
    assert.equal(await vscode.debug.startDebugging(folder, { type: DEBUG_TYPE, request: "launch", name: "temps", program: "${workspaceFolder}/temps.py", mode: "predict" }), true);
    const filters = (await responseTo("setExceptionBreakpoints", from, 60_000)).success;
    assert.ok(filters);
    const { body: stop } = await nextEvent<DebugProtocol.StoppedEvent>("stopped", from, 120_000);
    assert.equal(stop.reason, "exception", outputSince(from));
    assert.equal(stop.text, "Hole");
    assert.match(stop.description ?? "", /^to_fahrenheit\(celsius=37\) cannot run: the model suggests /);
    assert.match(outputSince(from), /to_fahrenheit\(\) at line 7 = 212\.0 \(from its docstring, line 4\)/);
    const [top] = await stack();
    assert.equal(top.name, "to_fahrenheit");
    from = mark();
    if (hasDriver) {
      // As a user does it: the (return) row's context menu, VS Code's own "Set Value", the value typed.
      const row = ".debug-pane .monaco-list-row";
      await until("(return) in the Variables view", async () => (await probe(row)).some((r) => r.text.includes("(return)")) || undefined);
      await screenshot("hole-stop");
      await click(row, "(return)", "right");
      await click(".monaco-menu .action-label", "Set Value");
      await typeText("98.6");
    } else {
      const { scopes } = (await session().customRequest("scopes", { frameId: top.id })) as DebugProtocol.ScopesResponse["body"];
      await session().customRequest("setVariable", { variablesReference: scopes[0].variablesReference, name: "(return)", value: "98.6" });
    }
    const set = await responseTo("setVariable", from, 30_000);
    assert.ok(set.success, set.message);
    from = mark();
    await vscode.commands.executeCommand("workbench.action.debug.continue");
    await nextEvent("terminated", from, 120_000);
    assert.match(outputSince(from), /37 98\.6/);
    const kept = JSON.parse(Buffer.from(await vscode.workspace.fs.readFile(answers)).toString("utf8")) as { answers: { hole: string; value: string }[] };
    assert.deepEqual(kept.answers.map((a) => [a.hole, a.value]), [["to_fahrenheit", "98.6"]]);
    // Forgotten: the file is gone. (A user confirms in a modal dialog, which VS Code refuses to show
    // while it runs extension tests: the confirmation is given as the command's argument.)
    const forgot = vscode.commands.executeCommand<number>("neuralPython.forgetHoleAnswers", folder.uri, true);
    assert.equal(await forgot, 1);
    assert.equal(await vscode.workspace.fs.stat(answers).then(() => true, () => false), false);
    await stopAll();
  }, 300_000);
});
