// Record mode shows the program's standard error: over DAP, each write to sys.stderr reaches the
// Debug Console as a `stderr` output event with the step that ran it, before that step's stop,
// in order with its standard output. Before, record mode never showed it at all.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { THREAD, launchToFirstStop, openSession, stopAfter } from "./support/dap.js";

const dir = mkdtempSync(join(tmpdir(), "ndbg-stderr-"));
const PROGRAM = join(dir, "warns.py");
before(() => {
  buildDist();
  writeFileSync(PROGRAM, ["import sys", "print('one')", "sys.stderr.write('warn A\\n')", "x = 1", "print('two')", "print('warn B', file=sys.stderr)", "y = 2", ""].join("\n"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

test("record mode: the program's stderr reaches the console as stderr output, with the step that wrote it and in order with stdout", { timeout: 60_000 }, async () => {
  const s = await openSession(20_000);
  // Every event in arrival order: output (category: text) and stops.
  const seen: string[] = [];
  s.dc.on("output", (e: DebugProtocol.OutputEvent) => (e.body.category === "stdout" || e.body.category === "stderr") && seen.push(`${e.body.category}: ${e.body.output}`));
  s.dc.on("stopped", () => seen.push("stopped"));
  try {
    const { first } = await launchToFirstStop(s.dc, { program: PROGRAM, mode: "record", trusted: true, stopOnEntry: true }, PROGRAM);
    assert.equal(first.event, "stopped");
    let e = first;
    while (e.event === "stopped") e = await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.deepEqual(seen, [
      "stopped", // line 1 (the entry stop: the <module> call is passed, as debugpy does)
      "stopped", // line 2
      "stdout: one\n", // written by line 2, shown with the step to line 3
      "stopped", // line 3
      "stderr: warn A\n",
      "stopped", // line 4
      "stopped", // line 5
      "stdout: two\n",
      "stopped", // line 6
      "stderr: warn B\n",
      "stopped", // line 7
      "stopped", // the <module> return
    ]);
  } finally {
    await s.dc.stop();
  }
});
