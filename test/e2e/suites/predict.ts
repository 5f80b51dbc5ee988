// Predict mode in VS Code: the model's first state and a step in the Run and Debug view, and the
// status bar's model, device and speed (from the adapter's `ndbg/model` event). Nothing here
// depends on what the model predicts, only on the protocol: lines of the file, frames, locals.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { hasDriver, probe, screenshot, suite, test, until } from "../harness.js";
import { act, mark, nextEvent, outputSince, responseTo, stack, stopAll, watchSessions } from "../debugSession.js";

const DEMO_LINES = 14;

suite("predict mode", () => {
  test("a predicted first state, a predicted step, and the model in the status bar", async (t) => {
    watchSessions();
    const folder = vscode.workspace.workspaceFolders![0];
    await vscode.commands.executeCommand("workbench.view.debug");
    const from = mark();
    const starting = Promise.resolve(vscode.debug.startDebugging(folder, "Neural Python: predict demo")).catch((e: unknown) => e);
    const launched = await responseTo("launch", from, 120_000);
    if (!launched.success) {
      // Until predict mode and a bundled model exist, the adapter says so; anything else is a failure.
      if (/not available yet|none is bundled|no model/i.test(launched.message ?? "")) t.skip(`predict mode cannot run here yet: ${launched.message}`);
      assert.fail(`predict launch failed: ${launched.message}`);
    }
    assert.equal(await starting, true);
    const first = await Promise.race([nextEvent("stopped", from, 120_000).then(() => "stopped"), nextEvent("terminated", from, 120_000).then(() => "terminated")]);
    if (first === "terminated") {
      const said = outputSince(from);
      if (/none is bundled|no model/i.test(said)) t.skip(`no model to predict with: ${said.trim()}`);
      assert.fail(`the predict session ended without stopping: ${said}`);
    }
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
    await screenshot("predict-step");
    await stopAll();
  }, 300_000);
});
