// Debugging in VS Code's own Run and Debug view: a launch.json configuration, the stop at entry,
// Call Stack and Variables, step into / over / out, a breakpoint, step back, a hover, the end of
// the program, the entry-call prompt, saving a session as a trace and replaying a trace file.
// Record mode for now: the states are real, so the assertions can name them.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { click, hasDriver, probe, screenshot, suite, test, until } from "../harness.js";
import { DEBUG_TYPE, act, locals, mark, nextEvent, outputSince, responseTo, sentRequest, session, settled, stack, stopAll, watchSessions } from "../debugSession.js";

const folder = (): vscode.WorkspaceFolder => vscode.workspace.workspaceFolders![0];
const file = (name: string): vscode.Uri => vscode.Uri.joinPath(folder().uri, name);
const DEMO_LINES = 14;

/**
 * Opens the Run and Debug view and, where a driver sees the page, waits until VS Code's own
 * Variables and Call Stack views show what the adapter sent (`locals`: "name = value" rows,
 * `frames`: function names).
 */
async function showDebugView(expect: { locals?: string[]; frames?: string[] } = {}): Promise<void> {
  await vscode.commands.executeCommand("workbench.view.debug");
  if (!hasDriver) return;
  // Compared without spaces: a row's text is its name, separator and value spans run together.
  const squash = (x: string): string => x.replace(/\s+/g, "");
  const rows = async (): Promise<string[]> => (await probe(".debug-pane .monaco-list-row")).map((r) => squash(r.text));
  let shown: string[] = [];
  try {
    await until(`the Run and Debug view to show ${JSON.stringify(expect)}`, async () => {
      shown = await rows();
      const ok = [...(expect.locals ?? []), ...(expect.frames ?? [])].every((l) => shown.some((r) => r.startsWith(squash(l))));
      return ok || undefined;
    }, 10_000);
  } catch (e) {
    throw new Error(`${e instanceof Error ? e.message : e}; it shows ${JSON.stringify(shown)}`);
  }
}

suite("debugging (record mode)", () => {
  test("launch.json configuration starts and stops at the entry", async () => {
    watchSessions();
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file("demo.py")));
    // The Run and Debug view open before the first stop, as after F5: VS Code then expands Locals.
    await vscode.commands.executeCommand("workbench.view.debug");
    const from = mark();
    const started = await vscode.debug.startDebugging(folder(), "Record demo");
    assert.equal(started, true, "the session starts");
    const launch = await sentRequest("launch", from);
    assert.equal(launch.program, file("demo.py").fsPath, "program with ${workspaceFolder} substituted");
    assert.equal(launch.mode, "record");
    assert.equal(launch.call, "total([3, 1, 2])");
    assert.equal(launch.threads, 1, "the neuralPython.threads setting fills the empty attribute");
    const { body } = await nextEvent("stopped", from);
    assert.equal(body.reason, "entry");
    await settled();
    const frames = await stack();
    assert.equal(frames.length, 1);
    assert.match(frames[0].name, /total/);
    assert.ok(frames[0].source?.path?.endsWith("demo.py"));
    assert.ok([11, 12].includes(frames[0].line), `entry at the call of total (line ${frames[0].line})`);
    assert.equal((await locals(frames[0].id)).values, "[3, 1, 2]");
    await showDebugView({ locals: ["values = [3, 1, 2]"], frames: ["total"] });
    await screenshot("debug-entry");
  });

  test("step into enters running_max; Call Stack shows both frames", async () => {
    let frames = await stack();
    for (let i = 0; i < 4 && !/running_max/.test(frames[0].name); i++) {
      await act("workbench.action.debug.stepInto");
      frames = await stack();
    }
    assert.match(frames[0].name, /running_max/);
    assert.equal(frames.length, 2);
    assert.match(frames[1].name, /total/);
    assert.equal((await locals(frames[0].id)).values, "[3, 1, 2]");
    await showDebugView({ locals: ["values = [3, 1, 2]"], frames: ["running_max", "total"] });
    await screenshot("debug-step-into");
  });

  test("step over walks the lines of running_max, locals follow", async () => {
    const seenLines: number[] = [];
    let vars: Record<string, string> = {};
    for (let i = 0; i < 3; i++) {
      await act("workbench.action.debug.stepOver");
      const [top] = await stack();
      assert.match(top.name, /running_max/);
      seenLines.push(top.line);
      vars = await locals(top.id);
    }
    assert.ok(seenLines.every((l) => l >= 1 && l <= DEMO_LINES), `lines of the file: ${seenLines}`);
    assert.equal(new Set(seenLines).size, 3, `three different lines: ${seenLines}`);
    assert.equal(vars.best, "None");
    assert.equal(vars.out, "[]");
    await showDebugView({ locals: ["best = None", "out = []"] });
    await screenshot("debug-step-over");
  });

  test("a breakpoint stops continue on its line", async () => {
    const bp = new vscode.SourceBreakpoint(new vscode.Location(file("demo.py"), new vscode.Position(5, 0)));
    const from = mark();
    vscode.debug.addBreakpoints([bp]);
    try {
      // VS Code sends the breakpoint on its own time: continue only once the adapter has it.
      assert.ok((await responseTo("setBreakpoints", from)).success);
      const stop = await act("workbench.action.debug.continue");
      assert.equal(stop.reason, "breakpoint");
      const [top] = await stack();
      assert.equal(top.line, 6);
      assert.equal((await locals(top.id)).v, "3");
      await showDebugView({ locals: ["v = 3"] });
      await screenshot("debug-breakpoint");
    } finally {
      vscode.debug.removeBreakpoints([bp]);
    }
  });

  test("hover over a variable shows its value", async () => {
    const [top] = await stack();
    const r = (await session().customRequest("evaluate", { expression: "v", frameId: top.id, context: "hover" })) as { result: string };
    assert.equal(r.result, "3");
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file("demo.py")));
    editor.selection = new vscode.Selection(5, 19, 5, 19); // the `v` of `best = v`
    await vscode.commands.executeCommand("editor.debug.action.showDebugHover");
    await screenshot("debug-hover");
    // Put the hover away for the next screenshots: it goes with its editor (the next stop reopens the file).
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });

  test("step back returns to an earlier state", async () => {
    const [before] = await stack();
    const stop = await act("workbench.action.debug.stepBack");
    assert.ok(["step", "entry", "breakpoint"].includes(stop.reason), stop.reason);
    const [top] = await stack();
    assert.match(top.name, /running_max/);
    assert.ok(top.line < before.line, `back from line ${before.line} to line ${top.line}`);
    assert.equal((await locals(top.id)).best, "None", "locals as they were");
    await showDebugView({ locals: ["best = None"], frames: ["running_max"] });
    await screenshot("debug-step-back");
  });

  test("save the session as a trace", async () => {
    const { text } = (await session().customRequest("ndbg/saveTrace", {})) as { text?: unknown };
    assert.equal(typeof text, "string");
    const target = file("saved.ndbg");
    await vscode.commands.executeCommand("neuralPython.saveTrace", target);
    const doc = await vscode.workspace.openTextDocument(target);
    assert.equal(doc.languageId, "ndbg-trace");
    assert.match(doc.getText(), /^#ndbg 2 python3\.\d+ /);
    assert.ok(doc.getText().includes("<|call_sep|>1 1 running_max"));
  });

  test("step out returns to total", async () => {
    let frames = await stack();
    for (let i = 0; i < 3 && frames.length > 1; i++) {
      await act("workbench.action.debug.stepOut");
      frames = await stack();
    }
    assert.equal(frames.length, 1);
    assert.match(frames[0].name, /total/);
    await showDebugView({ frames: ["total"] });
    await screenshot("debug-step-out");
  });

  test("continue runs to the end and the session terminates", async () => {
    const from = mark();
    const ended = new Promise<void>((r) => {
      const sub = vscode.debug.onDidTerminateDebugSession((s) => s.type === DEBUG_TYPE && (sub.dispose(), r()));
    });
    await vscode.commands.executeCommand("workbench.action.debug.continue");
    await nextEvent("terminated", from);
    await Promise.race([ended, new Promise((_, rej) => setTimeout(() => rej(new Error("the session did not end")), 15_000))]);
    assert.equal(vscode.debug.activeDebugSession, undefined);
  });

  test("an object opens into its attributes in the Variables view", async () => {
    watchSessions();
    // cart.py's line 21, `final = total - cart.discount(total)`: the cart is built (discount() is not written, so the line itself raises).
    const bp = new vscode.SourceBreakpoint(new vscode.Location(file("cart.py"), new vscode.Position(20, 0)));
    vscode.debug.addBreakpoints([bp]);
    try {
      const from = mark();
      await vscode.debug.startDebugging(folder(), { type: DEBUG_TYPE, request: "launch", name: "cart", program: "${workspaceFolder}/cart.py", mode: "record", stopOnEntry: false });
      await nextEvent("stopped", from, 60_000);
      const [top] = await stack();
      assert.equal(top.line, 21);
      const { scopes } = (await session().customRequest("scopes", { frameId: top.id })) as DebugProtocol.ScopesResponse["body"];
      const vars = ((await session().customRequest("variables", { variablesReference: scopes[0].variablesReference })) as DebugProtocol.VariablesResponse["body"]).variables;
      const cart = vars.find((v) => v.name === "cart");
      assert.ok(cart && cart.variablesReference > 0, `cart opens: ${JSON.stringify(cart)}`);
      const attrs = ((await session().customRequest("variables", { variablesReference: cart.variablesReference })) as DebugProtocol.VariablesResponse["body"]).variables;
      assert.deepEqual(attrs.map((v) => [v.name, v.value, v.evaluateName]), [
        ["owner", "'ana'", "cart.owner"],
        ["items", "[('tea', 4, 2), ('cake', 8, 1)]", "cart.items"],
      ]);
      await stopAll();
    } finally {
      vscode.debug.removeBreakpoints([bp]);
    }
  });

  test("Break on Value Change and Where Did This Value Come From? in the Variables view's menu", async () => {
    watchSessions();
    // demo.py's line 5, `if best is None or v > best:`, in running_max's first iteration.
    const bp = new vscode.SourceBreakpoint(new vscode.Location(file("demo.py"), new vscode.Position(4, 0)));
    vscode.debug.addBreakpoints([bp]);
    try {
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file("demo.py")));
      await vscode.commands.executeCommand("workbench.view.debug");
      let from = mark();
      await vscode.debug.startDebugging(folder(), { type: DEBUG_TYPE, request: "launch", name: "watch", program: "${workspaceFolder}/demo.py", call: "total([3, 1, 2])", mode: "record", stopOnEntry: false });
      await nextEvent("stopped", from, 60_000);
      vscode.debug.removeBreakpoints([bp]);
      const [top] = await stack();
      assert.equal(top.line, 5);
      assert.equal((await locals(top.id)).best, "None");
      const row = ".debug-pane .monaco-list-row";
      if (hasDriver) {
        // As a user does it: the variable's context menu, VS Code's own "Break on Value Change".
        await showDebugView({ locals: ["best = None"] });
        from = mark();
        await click(row, "best", "right");
        await click(".monaco-menu .action-label", "Break on Value Change");
        assert.ok((await responseTo("setDataBreakpoints", from)).success);
      } else {
        const { scopes } = (await session().customRequest("scopes", { frameId: top.id })) as DebugProtocol.ScopesResponse["body"];
        const info = (await session().customRequest("dataBreakpointInfo", { variablesReference: scopes[0].variablesReference, name: "best" })) as DebugProtocol.DataBreakpointInfoResponse["body"];
        await session().customRequest("setDataBreakpoints", { breakpoints: [{ dataId: info.dataId }] });
      }
      // best = v (3): seen at the next line.
      let stop = await act("workbench.action.debug.continue");
      assert.equal(stop.reason, "data breakpoint");
      assert.equal(stop.description, "best in running_max() changed: None → 3 (line 6)");
      assert.equal((await stack())[0].line, 7);
      await screenshot("data-breakpoint");
      // Where did out's value come from: back to the statement that set it (its append).
      let [at] = await stack();
      for (let i = 0; i < 8 && (await locals(at.id)).out !== "[3, 3]"; i++) {
        await act("workbench.action.debug.stepOver");
        [at] = await stack();
      }
      assert.equal((await locals(at.id)).out, "[3, 3]");
      if (hasDriver) {
        await showDebugView({ locals: ["out = [3, 3]"] });
        from = mark();
        await click(row, "out", "right");
        await click(".monaco-menu .action-label", "Where Did This Value Come From?");
        stop = (await nextEvent<DebugProtocol.StoppedEvent>("stopped", from)).body;
      } else {
        const { scopes } = (await session().customRequest("scopes", { frameId: at.id })) as DebugProtocol.ScopesResponse["body"];
        from = mark();
        await vscode.commands.executeCommand("neuralPython.valueOrigin", { sessionId: session().id, container: { variablesReference: scopes[0].variablesReference }, variable: { name: "out" } });
        stop = (await nextEvent<DebugProtocol.StoppedEvent>("stopped", from)).body;
      }
      assert.equal(stop.reason, "goto");
      assert.match(stop.description ?? "", /^out in running_max\(\) was set to \[3, 3\] here \(line 7\)$/);
      const [origin] = await stack();
      assert.deepEqual([origin.line, (await locals(origin.id)).out], [7, "[3]"]);
      await showDebugView({ locals: ["out = [3]"] });
      await screenshot("value-origin");
      await stopAll();
    } finally {
      vscode.debug.removeBreakpoints([bp]);
    }
  });

  test("a file of functions only: the entry call is asked for", async () => {
    watchSessions();
    const from = mark();
    const starting = vscode.debug.startDebugging(folder(), { type: DEBUG_TYPE, request: "launch", name: "functions", program: "${workspaceFolder}/functions.py", mode: "record" });
    await new Promise((r) => setTimeout(r, 1500)); // the input box opens
    await screenshot("entry-call-input");
    await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    assert.equal(await starting, true);
    const launch = await sentRequest("launch", from);
    assert.equal(launch.call, "mean(xs)", "the offered call: first function, its parameters");
    await stopAll();
  });

  test("replay a trace file in the debugger", async () => {
    watchSessions();
    const from = mark();
    const started = vscode.commands.executeCommand<boolean>("neuralPython.replayTrace", file("demo.ndbg"));
    const launched = await responseTo("launch", from);
    assert.ok(launched.success, `launch failed: ${launched.message}`);
    assert.equal(await started, true);
    const first = await Promise.race([nextEvent("stopped", from).then(() => "stopped"), nextEvent("terminated", from).then(() => "terminated")]);
    assert.equal(first, "stopped", `the replay ended without stopping: ${outputSince(from)}`);
    await settled();
    const frames = await stack();
    assert.match(frames[0].name, /total/);
    assert.ok(frames[0].source?.path?.endsWith("demo.py"), "the replay shows the program that sits beside the trace");
    assert.equal((await locals(frames[0].id)).values, "[3, 1, 2]");
    await act("workbench.action.debug.stepInto");
    await act("workbench.action.debug.stepBack");
    await until("the first frame again", async () => (await stack())[0].line === frames[0].line || undefined, 5000);
    await showDebugView({ locals: ["values = [3, 1, 2]"], frames: ["total"] });
    await screenshot("replay-trace");
    await stopAll();
  });
});
