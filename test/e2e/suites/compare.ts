// The compare panel ("Neural Python: Show Comparison") in VS Code, which a compare session opens
// and whose button is in the debug toolbar while one runs: a compare session whose
// predicted side is a recording of the real run (launch "predictor": "record"), so the result
// does not depend on a model and the two sides agree at every step. The page reports what it
// rendered (read from its DOM) after each update; keys reach the history list's own keydown
// handler through the webview's message channel (the page driver has no key presses). A recording
// that ends early (ends_early.py exits unless debugpy runs it) shows the session going on with the
// real program to its end.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { CompareSnapshot } from "../../../adapter/protocol.js";
import type { ComparePanelHandle } from "../../../src/comparePanel.js";
import type { RenderReport } from "../../../src/compareView.js";
import { hasDriver, log, probe, screenshot, suite, test, until } from "../harness.js";
import { DEBUG_TYPE, act, mark, nextEvent, outputSince, responseTo, session, settled, stack, stopAll, watchSessions } from "../debugSession.js";

const folder = (): vscode.WorkspaceFolder => vscode.workspace.workspaceFolders![0];
const file = (name: string): vscode.Uri => vscode.Uri.joinPath(folder().uri, name);

let panel: ComparePanelHandle;

const snapshot = async (): Promise<CompareSnapshot> => (await session().customRequest("ndbg/compare", {})) as CompareSnapshot;

/** Waits until the page has rendered an update for which `ok` holds; fails with the last report. */
async function shows(what: string, ok: (r: RenderReport) => boolean, ms = 15_000): Promise<RenderReport> {
  let last: RenderReport | undefined;
  try {
    return await until(`the compare panel to show ${what}`, async () => {
      last = await panel.rendered(panel.seq, 5_000).catch(() => last);
      return last && ok(last) ? last : undefined;
    }, ms);
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : e}; it shows ${JSON.stringify(last)}`);
  }
}

/** A key pressed in the history list: waits for the update the selection causes. */
async function press(key: string): Promise<RenderReport> {
  const before = panel.seq;
  assert.equal(await panel.send({ type: "key", key }), true, "the webview takes the message");
  await until(`the panel to answer ${key}`, () => panel.seq > before, 10_000);
  return panel.rendered(panel.seq);
}

suite("compare panel", () => {
  test("a compare session: the current step's two states and 100% agreement with the recording", async () => {
    watchSessions();
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file("demo.py")));
    await vscode.commands.executeCommand("workbench.view.debug");
    const from = mark();
    const started = vscode.debug.startDebugging(folder(), {
      type: DEBUG_TYPE, request: "launch", name: "Compare demo", program: "${workspaceFolder}/demo.py",
      call: "total([3, 1, 2])", mode: "compare", predictor: "record", stopOnEntry: true,
    });
    const launched = await responseTo("launch", from, 60_000);
    assert.ok(launched.success, `compare launch failed: ${launched.message}`);
    assert.equal(await started, true);
    const first = await Promise.race([nextEvent("stopped", from, 60_000).then(() => "stopped"), nextEvent("terminated", from, 60_000).then(() => "terminated")]);
    assert.equal(first, "stopped", `the compare session ended without stopping: ${outputSince(from)}`);
    await settled();
    // The session opened its panel beside the editor, and the debug toolbar has its button.
    await until("the compare panel to open with the session", () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((tab) => tab.label === "Neural Python: Comparison") || undefined);
    if (hasDriver) await until("the Show Comparison button in the debug toolbar", async () => (await probe(".debug-toolbar .action-label.codicon-diff")).length > 0 || undefined);
    for (const command of ["stepInto", "stepInto", "stepOver", "stepOver"]) await act(`workbench.action.debug.${command}`, 60_000);

    // The panel follows the theme: its screenshots in VS Code's default dark theme.
    await vscode.workspace.getConfiguration("workbench").update("colorTheme", "Default Dark Modern", vscode.ConfigurationTarget.Global);
    await until("the dark theme", () => vscode.window.activeColorTheme.kind === vscode.ColorThemeKind.Dark);
    panel = (await vscode.commands.executeCommand<ComparePanelHandle>("neuralPython.showComparison"))!;
    assert.ok(panel && typeof panel.rendered === "function", "the command returns the panel");
    const snap = await snapshot();
    assert.equal(snap.history.length, 5, "the first state and four steps");
    const [top] = await stack();
    const r = await shows("step 4", (x) => x.rows === 5 && x.selected === 4);
    assert.match(r.heading ?? "", /^Step 4 · step_over \(current\)/);
    assert.equal(r.predictedLine, String(top.line), "the predicted line is the line VS Code shows");
    assert.equal(r.realLine, String(top.line), "debugpy is on the same line");
    assert.equal(String(snap.current!.real.line), r.realLine);
    assert.match(r.states ?? "", /^4\/4 \(100%\)$/, "states exact");
    assert.match(r.lines ?? "", /\(100%\)$/);
    assert.match(r.locals ?? "", /\(100%\)$/);
    assert.match(r.mode ?? "", /^free-running/);
    assert.match(r.divergence ?? "", /^No divergence: all 4 compared steps agree/);
    assert.deepEqual(r.mismatches, []);
    assert.equal(r.resync, false, "nothing to resync: the states agree");
    assert.match(r.banner ?? "", /Compare demo.*stopped at step 4/);
    await screenshot("compare-panel");
  }, 180_000);

  test("keyboard: Up, Down, Home and End move the selection, the two states follow", async () => {
    const snap = await snapshot();
    let r = await press("ArrowUp");
    assert.equal(r.selected, 3);
    assert.equal(r.focused, true, "the history list has the focus");
    assert.match(r.heading ?? "", /^Step 3 · step_over$/);
    assert.equal(r.predictedLine, String(snap.history[3].predicted.line));
    r = await press("Home");
    assert.equal(r.selected, 0);
    assert.match(r.heading ?? "", /^Step 0 · start$/);
    r = await press("ArrowUp");
    assert.equal(r.selected, 0, "Up stops at the first step");
    r = await press("ArrowDown");
    assert.equal(r.selected, 1);
    assert.equal(r.predictedLine, String(snap.history[1].predicted.line));
    assert.equal(r.realLine, String(snap.history[1].real.line));
    await screenshot("compare-panel-keyboard");
    r = await press("End");
    assert.equal(r.selected, 4);
    r = await press("ArrowDown");
    assert.equal(r.selected, 4, "Down stops at the last step");
  });

  test("after a stop the panel refreshes; an edited value is marked ≠ and Resync replaces it", async () => {
    await act("workbench.action.debug.stepOver", 60_000);
    let r = await shows("step 5", (x) => x.rows === 6 && x.selected === 5);
    assert.deepEqual(r.mismatches, []);
    const [top] = await stack();
    const { scopes } = (await session().customRequest("scopes", { frameId: top.id })) as DebugProtocol.ScopesResponse["body"];
    assert.deepEqual(scopes.map((s) => s.name), ["Predicted", "Real (debugpy)"]);
    const name = Object.keys((await snapshot()).current!.predicted.locals ?? {})[0];
    assert.ok(name, "the current state has a local to edit");
    await session().customRequest("setVariable", { variablesReference: scopes[0].variablesReference, name, value: "12345" });
    r = await shows(`${name} marked as differing`, (x) => x.mismatches.includes(name));
    assert.deepEqual(r.mismatches, [name], "only the edited value differs");
    assert.equal(r.resync, true, "Resync is offered");
    assert.match(r.states ?? "", /^4\/5 /);
    assert.match(r.divergence ?? "", new RegExp(`^First divergence: step 5 · step_over ${name} = 12345 ≠ real `));
    await screenshot("compare-panel-mismatch");
    await panel.send({ type: "click", selector: "#resync" });
    await until("the adapter to resync", async () => (await snapshot()).current?.resynced || undefined, 10_000);
    r = await shows("the resynced step", (x) => x.resync === false);
    assert.equal((await snapshot()).current!.resynced, true);
  }, 120_000);

  test("when the program runs to its end the panel keeps the last comparison, the exit included", async () => {
    const from = mark();
    await vscode.commands.executeCommand("workbench.action.debug.continue");
    await nextEvent("terminated", from, 60_000);
    const r = await shows("the end of the session", (x) => /has ended/.test(x.banner ?? ""));
    log(`ended: ${JSON.stringify(r)}`);
    assert.equal(r.rows, 7, "the history is kept, with the exit fetched before the adapter went");
    assert.equal(r.selected, 6);
    assert.match(r.heading ?? "", /^Step 6 · continue \(current\)/);
    assert.equal(r.resync, false);
    await screenshot("compare-panel-ended");
  });

  test("a prediction that ends early: the session keeps stepping debugpy's program to its end", async () => {
    watchSessions();
    const from = mark();
    await vscode.debug.startDebugging(folder(), {
      type: DEBUG_TYPE, request: "launch", name: "Compare early end", program: "${workspaceFolder}/ends_early.py",
      mode: "compare", predictor: "record", stopOnEntry: true,
    });
    await nextEvent("stopped", from, 60_000);
    await settled();
    const lines: number[] = [];
    for (let i = 0; i < 20 && vscode.debug.activeDebugSession; i++) {
      const at = mark();
      await vscode.commands.executeCommand("workbench.action.debug.stepOver");
      const next = await Promise.race([nextEvent("stopped", at, 60_000).then(() => "stopped"), nextEvent("terminated", at, 60_000).then(() => "terminated")]);
      if (next === "terminated") break;
      await settled();
      lines.push((await stack())[0].line);
    }
    // Lines 7 to 10 run only under debugpy: the session stood on the loop's and the print's lines
    // after the prediction's end (which comes a few steps after line 6).
    for (const line of [9, 10]) assert.ok(lines.includes(line), `stopped on line ${line} of the real run: ${lines.join(", ")}`);
    assert.equal(lines.at(-1), 10, `the last stop is the print, before the real program's end: ${lines.join(", ")}`);
    assert.match(outputSince(from), /The prediction says the program ended here; the real program goes on/);
    assert.match(outputSince(from), /The real program exited normally/);
    await stopAll();
  }, 120_000);

  test("a session in another mode: the panel says there is nothing to compare", async () => {
    const from = mark();
    assert.equal(await vscode.debug.startDebugging(folder(), "Record demo"), true);
    await nextEvent("stopped", from, 60_000);
    await settled();
    await vscode.commands.executeCommand("neuralPython.showComparison");
    const r = await shows("that the session is not in compare mode", (x) => /record mode, not compare mode/.test(x.banner ?? ""));
    assert.equal(r.rows, 0);
    await stopAll();
    await vscode.workspace.getConfiguration("workbench").update("colorTheme", undefined, vscode.ConfigurationTarget.Global);
  }, 90_000);
});
