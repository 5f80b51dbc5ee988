// Entry point of the end-to-end tests inside VS Code's extension host (extensionTestsPath):
// VS Code calls run() and exits with 0 when it resolves, 1 when it rejects.
// NDBG_E2E_FILTER (a regular expression over "suite: test") selects tests.
import * as vscode from "vscode";
import { runAll } from "./harness.js";
import "./suites/extension.js";
import "./suites/traceFiles.js";
import "./suites/debugging.js";
import "./suites/predict.js";
import "./suites/compare.js";
import "./suites/hybrid.js";
import "./suites/readme.js";

export async function run(): Promise<void> {
  // A plain window for the screenshots: no secondary side bar.
  await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar").then(undefined, () => undefined);
  const filter = process.env.NDBG_E2E_FILTER ? new RegExp(process.env.NDBG_E2E_FILTER) : undefined;
  const failures = await runAll(filter);
  if (failures) throw new Error(`${failures} end-to-end test(s) failed`);
}
