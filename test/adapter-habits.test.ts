// A session as a debugpy user expects it, over the real protocol: stopping on entry stops on the
// script's first line and the first Step Over goes to its second; Step Over stops at a
// breakpoint inside the function it steps over (record mode, and predict mode's sealed run); "Uncaught Exceptions" is on by default; an end
// the model predicted says so, and how sure, in the Debug Console. Record mode is checked against
// the real run; the predicted end with the bundled model on the CPU (compute: false, so that the
// end is the model's).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { THREAD, firstOf, launchToFirstStop, openSession, stopAfter, type Session } from "./support/dap.js";

const T = { timeout: 240_000 };

const SCRIPT = ["def double(v):", "    w = v * 2", "    return w", "", "", "a = 1", "b = double(a)", "print(a, b)", ""].join("\n");
const DEF = 1;
const BODY = 2; // w = v * 2
const FIRST = 6; // a = 1
const CALL = 7; // b = double(a)
const PRINT = 8;

let dir = "";
let program = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-habits-"));
  program = join(dir, "script.py");
  writeFileSync(program, SCRIPT);
});

after(() => rmSync(dir, { recursive: true, force: true }));

const RECORD = { mode: "record", trusted: true };

async function top(s: Session): Promise<DebugProtocol.StackFrame> {
  return (await s.dc.stackTraceRequest(THREAD)).body.stackFrames[0];
}

async function session<T>(work: (s: Session) => Promise<T>): Promise<T> {
  const s = await openSession(60_000);
  try {
    await s.dc.initializeRequest();
    return await work(s);
  } finally {
    await s.dc.stop();
  }
}

test("initialize: Uncaught Exceptions is on by default, Raised Exceptions off, as in debugpy; and Holes on", async () => {
  const s = await openSession(30_000);
  try {
    const caps = (await s.dc.initializeRequest()).body!;
    assert.deepEqual(caps.exceptionBreakpointFilters?.map((f) => [f.filter, f.default]), [["raised", false], ["uncaught", true], ["holes", true]]);
  } finally {
    await s.dc.stop();
  }
});

for (const mode of ["record", "predict"] as const) {
  test(`${mode}: stopping on entry stops on the script's first line, and the first Step Over goes to the next one`, T, async () => {
    await session(async (s) => {
      const args = mode === "record" ? { ...RECORD, program, stopOnEntry: true } : { mode, program, stopOnEntry: true, gpu: "cpu", threads: 1 };
      const { first } = await launchToFirstStop(s.dc, args, program);
      assert.equal(first.event, "stopped", s.text());
      assert.equal((first as DebugProtocol.StoppedEvent).body.reason, "entry");
      const entry = await top(s);
      assert.deepEqual([entry.name, entry.line], ["<module>", DEF], "the first statement of the script: its def");
      const e = await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
      assert.equal(e.event, "stopped", s.text());
      const next = await top(s);
      assert.deepEqual([next.name, next.line], ["<module>", FIRST], "one Step Over: the next statement, not the same line again");
    });
  });
}

for (const [mode, launch] of [["record", RECORD], ["predict (sealed)", { mode: "predict", trusted: false }]] as const)
test(`${mode}: Step Over a call stops at a breakpoint inside the callee, as debugpy does`, T, async () => {
  await session(async (s) => {
    const { first } = await launchToFirstStop(s.dc, { ...launch, program, stopOnEntry: false }, program, [{ line: CALL }, { line: BODY }]);
    assert.equal(first.event, "stopped");
    assert.equal((await top(s)).line, CALL);
    const e = await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal(e.event, "stopped");
    const at = await top(s);
    assert.deepEqual([at.name, at.line], ["double", BODY]);
    assert.equal((e as DebugProtocol.StoppedEvent).body.reason, "breakpoint");
    // Without the breakpoint, Step Over goes over the call.
    await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    await stopAfter(s.dc, (dc) => dc.stepOutRequest(THREAD));
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal((await top(s)).line, PRINT);
  });
});

test("predict (the model alone): an end the model predicts says it is predicted, and how sure", T, async () => {
  await session(async (s) => {
    const { first } = await launchToFirstStop(s.dc, { mode: "predict", program, compute: false, gpu: "cpu", threads: 1, stopOnEntry: true }, program);
    assert.equal(first.event, "stopped", s.text());
    // Continue: no breakpoints, so the model runs the program to its end (or a limit).
    const ended = firstOf(s.dc, ["terminated"], 200_000);
    await s.dc.continueRequest(THREAD);
    await ended;
    const console = s.text("console") + s.text("stderr");
    const line = console.split("\n").find((l) => /^Program (exited|ended|stopped)/.test(l));
    assert.ok(line, `the end is said in the Debug Console: ${console}`);
    assert.match(line, /\(predicted, \d+% sure\)/, `the end says it is the model's, and how sure: ${line}`);
  });
});
