// The extension loads in a real VS Code and contributes what package.json promises.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { screenshot, suite, test } from "../harness.js";

export const EXTENSION_ID = "neural-python.neural-python-debugger";

suite("extension", () => {
  test("activates and registers its commands", async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} is loaded`);
    await ext.activate();
    assert.equal(ext.isActive, true);
    const commands = await vscode.commands.getCommands(true);
    for (const c of ["neuralPython.saveTrace", "neuralPython.replayTrace", "neuralPython.showLog"]) assert.ok(commands.includes(c), `command ${c}`);
  });

  test("shows its log in the Neural Python output channel", async () => {
    await vscode.commands.executeCommand("neuralPython.showLog");
    await screenshot("output-channel");
    // The channel is a log channel: VS Code lists it among the output channels it knows.
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    const api = ext.exports as { log?: vscode.LogOutputChannel };
    assert.equal(api.log?.name, "Neural Python");
    await vscode.commands.executeCommand("workbench.action.closePanel");
  });
});
