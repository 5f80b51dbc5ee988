// The user answers holes over the real protocol: in predict mode a hole the model answered stops
// the session as an exception does (the "holes" filter, on by default), showing the suggestion as
// (return); setVariable answers it and the run goes on exact from the answer; the answer is kept
// in the project (.vscode/neural-python-holes.json) and a second launch uses it without stopping.
// A docstring example that shows the very call answers it without the model or a stop.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { EXCEPTION_FILTERS } from "../adapter/engine/breakpoints.js";
import { HoleAnswers } from "../adapter/predictors/holeAnswers.js";
import { spawnSync } from "node:child_process";
import { THREAD, firstOf, launchToFirstStop, openSession, stopAfter } from "./support/dap.js";

const T = { timeout: 180_000 };
let dir = "";

// The program the end-to-end test answers in VS Code: a function not written yet whose docstring shows one call.
const PROGRAM = readFileSync(join(import.meta.dirname, "e2e", "workspace", "temps.py"), "utf8");
/** The exception filters VS Code sends unless the user changes them: those declared on by default. */
const DEFAULT_FILTERS = EXCEPTION_FILTERS.filter((f) => f.default).map((f) => f.filter);

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-holes-"));
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** Launches with the exception filters VS Code sends by default, to the first stop or the end. */
async function launch(dc: DebugClient, program: string): Promise<DebugProtocol.Event> {
  return (await launchToFirstStop(dc, { program, mode: "predict", gpu: "cpu", threads: 1 }, program, [], program, DEFAULT_FILTERS)).first;
}

async function locals(dc: DebugClient): Promise<DebugProtocol.Variable[]> {
  const frame = (await dc.stackTraceRequest({ ...THREAD })).body.stackFrames[0];
  const scope = (await dc.scopesRequest({ frameId: frame.id })).body.scopes[0];
  return (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
}

test("the holes filter is declared, labelled as one, on by default", () => {
  const f = EXCEPTION_FILTERS.find((x) => x.filter === "holes");
  assert.ok(f?.default);
  assert.match(f.label, /Holes/);
  assert.deepEqual(DEFAULT_FILTERS, ["uncaught", "holes"]);
});

test("predict mode: a hole stops the session with the model's suggestion; setVariable answers it, the output follows, and a second launch reuses the answer without stopping", T, async () => {
  const program = join(dir, "temps.py");
  writeFileSync(program, PROGRAM);
  mkdirSync(join(dir, ".vscode"), { recursive: true });
  const answers = join(dir, ".vscode", "neural-python-holes.json");

  const s = await openSession(90_000);
  try {
    const stop = (await launch(s.dc, program)) as DebugProtocol.StoppedEvent;
    // to_fahrenheit(100) is its docstring's example: answered exactly, no stop; to_fahrenheit(37) stops.
    assert.equal(stop.event, "stopped");
    assert.equal(stop.body.reason, "exception");
    assert.equal(stop.body.text, "Hole");
    assert.match(stop.body.description ?? "", /^to_fahrenheit\(celsius=37\) cannot run: the model suggests .+\. Set \(return\) to answer it/);
    assert.match(s.text("console"), /to_fahrenheit\(\) at line 7 = 212\.0 \(from its docstring, line 4\)/);
    const info = await s.dc.exceptionInfoRequest({ ...THREAD });
    assert.equal(info.body.exceptionId, "Hole");
    const frame = (await s.dc.stackTraceRequest({ ...THREAD })).body.stackFrames[0];
    assert.equal(frame.name, "to_fahrenheit");
    const rv = (await locals(s.dc)).find((v) => v.name === "(return)");
    assert.ok(rv, "the suggestion is the stop's (return)");
    assert.match(rv.type ?? "", /predicted/);
    assert.deepEqual(rv.presentationHint?.attributes ?? [], [], "settable");

    const set = await s.dc.setVariableRequest({ variablesReference: (await s.dc.scopesRequest({ frameId: frame.id })).body.scopes[0].variablesReference, name: "(return)", value: "98.6" });
    assert.equal(set.body.value, "98.6");
    const end = firstOf(s.dc, ["terminated"]);
    await s.dc.continueRequest({ ...THREAD });
    await end;
    assert.equal(s.text("stdout"), "100 212.0\n37 98.6\n", "the run goes on from the answer, exact");
    assert.match(s.text("console"), /to_fahrenheit\(\) = 98\.6 is kept in .*neural-python-holes\.json/);
  } finally {
    await s.dc.stop();
  }
  const kept = JSON.parse(readFileSync(answers, "utf8")) as { answers: unknown[] };
  assert.deepEqual(kept.answers, [{ program: "temps.py", hole: "to_fahrenheit", arguments: { celsius: "37" }, value: "98.6" }]);

  // A second launch in the same folder: the answer is used, nothing stops.
  const again = await openSession(90_000);
  try {
    const first = await launch(again.dc, program);
    assert.equal(first.event, "terminated", "no stop: every hole is answered");
    assert.equal(again.text("stdout"), "100 212.0\n37 98.6\n");
    assert.match(again.text("console"), /to_fahrenheit\(\) at line 7 = 98\.6 \(your answer, kept in \.vscode[/\\]neural-python-holes\.json\)/);
  } finally {
    await again.dc.stop();
  }
});

test("a file of answers that cannot be read is said, neither used nor written over", T, async () => {
  const sub = join(dir, "broken");
  mkdirSync(join(sub, ".vscode"), { recursive: true });
  const program = join(sub, "temps.py");
  writeFileSync(program, PROGRAM);
  const answers = join(sub, ".vscode", "neural-python-holes.json");
  writeFileSync(answers, "{ not json");
  const s = await openSession(90_000);
  try {
    const stop = (await launch(s.dc, program)) as DebugProtocol.StoppedEvent;
    assert.equal(stop.body.text, "Hole");
    assert.match(s.text("console"), /neural-python-holes\.json is not a file of answers .*: it is neither used nor written over/);
    const frame = (await s.dc.stackTraceRequest({ ...THREAD })).body.stackFrames[0];
    const ref = (await s.dc.scopesRequest({ frameId: frame.id })).body.scopes[0].variablesReference;
    await s.dc.setVariableRequest({ variablesReference: ref, name: "(return)", value: "1.5" });
    await stopAfter(s.dc, (dc) => dc.continueRequest({ ...THREAD }));
    assert.match(s.text("console"), /to_fahrenheit\(\) = 1\.5 is used in this session only: .*not a file of answers/);
    assert.equal(s.text("stdout"), "100 212.0\n37 1.5\n");
  } finally {
    await s.dc.stop();
  }
  assert.equal(readFileSync(answers, "utf8"), "{ not json", "the user's file is as it was");
  assert.ok(existsSync(answers));
});

test("the file of answers as the workspace may have it: a FIFO is said and never blocks; a link planted at the temporary name is not written through", async () => {
  const root = join(dir, "odd");
  mkdirSync(join(root, ".vscode"), { recursive: true });
  const file = join(root, ".vscode", "neural-python-holes.json");
  assert.equal(spawnSync("mkfifo", [file]).status, 0);
  const fifo = await HoleAnswers.open(root, join(root, "p.py"));
  assert.match(fifo.problem ?? "", /FIFO/);
  await assert.rejects(fifo.set({ name: "f", arguments: {} }, "1"), /FIFO/);
  rmSync(file);
  const elsewhere = join(dir, "elsewhere.txt");
  writeFileSync(elsewhere, "mine");
  symlinkSync(elsewhere, `${file}.${process.pid}.tmp`);
  const store = await HoleAnswers.open(root, join(root, "p.py"));
  await store.set({ name: "f", arguments: { x: "1" } }, "2");
  assert.equal(readFileSync(elsewhere, "utf8"), "mine", "the link's target is untouched");
  assert.equal((await HoleAnswers.open(root, join(root, "p.py"))).get({ name: "f", arguments: { x: "1" } }), "2");
});
