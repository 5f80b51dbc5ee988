// What users expect of a Python debugger, as debugpy does it, over the real protocol: Step Out
// stops in the caller with "(return) f" in its Locals, a Globals scope, log points, hit counts,
// exception breakpoints (raised / uncaught), and a launch that answers a client which waits for
// its response before configurationDone. Record mode is checked against the real run (the
// tracer's states); predict mode, with the bundled model on the CPU, for the same behaviour and
// for the marks that say the values are predicted.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { ROOT, buildDist } from "./support/dist.js";
import { THREAD, firstOf, isGroup, openSession, realStack, shownStack, stepOutIndex, stopAfter, ungrouped, type Session } from "./support/dap.js";

const T = { timeout: 240_000 };

/** Module code, several functions, a caught exception and an uncaught one. */
const FIXTURE = join(ROOT, "test", "fixtures", "dap", "stops.py");
const SCALE_BODY = 5; // w = v * RATE
const CALL_LINE = 12; // acc += scale(v)
const RAISE = 18; // raise ValueError("negative")

let dir = "";
let program = "";
let trace: TraceResult;

before(async () => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-stops-"));
  program = join(dir, "prog.py");
  copyFileSync(FIXTURE, program);
  trace = await runTrace(program, {});
  assert.equal(trace.exit.status, "error");
});

after(() => rmSync(dir, { recursive: true, force: true }));

const RECORD = { mode: "record", trusted: true };
// (compute: false: every state the model's, as these tests are about how predicted states behave
// and are shown; the states the program decides are checked in reach.test.ts and adapter-marks)
const PREDICT = { mode: "predict", gpu: "cpu", threads: 1, compute: false };

/**
 * initialize (done by openSession), launch, then what the client configures once initialized
 * (breakpoints, exception filters) and configurationDone; resolves with the first stop or the end.
 */
async function start(s: Session, args: Record<string, unknown>, bps: DebugProtocol.SourceBreakpoint[] = [], filters: string[] = []): Promise<{ first: DebugProtocol.Event; set: DebugProtocol.Breakpoint[] }> {
  let set: DebugProtocol.Breakpoint[] = [];
  const first = firstOf(s.dc, ["stopped", "terminated"]);
  await Promise.all([
    s.dc.waitForEvent("initialized").then(async () => {
      set = (await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: bps })).body.breakpoints;
      await s.dc.setExceptionBreakpointsRequest({ filters });
      await s.dc.configurationDoneRequest();
    }),
    s.dc.launch({ program, stopOnEntry: false, ...args }),
  ]);
  return { first: await first, set };
}

const move = (s: Session, request: (dc: DebugClient) => Promise<unknown>): Promise<DebugProtocol.Event> => stopAfter(s.dc, request);

async function stack(s: Session): Promise<DebugProtocol.StackFrame[]> {
  return (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
}

async function scopes(s: Session, frameId: number): Promise<DebugProtocol.Scope[]> {
  return (await s.dc.scopesRequest({ frameId })).body.scopes;
}

async function variables(s: Session, scope: DebugProtocol.Scope): Promise<DebugProtocol.Variable[]> {
  return (await s.dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
}

/** A scope's variables with debugpy's groups opened in place, and the groups' names. */
async function opened(s: Session, scope: DebugProtocol.Scope): Promise<{ groups: string[]; vars: DebugProtocol.Variable[] }> {
  const shown = await variables(s, scope);
  return { groups: shown.filter(isGroup).map((v) => v.name), vars: await ungrouped(s.dc, shown) };
}

/** Index of the first real state at `line` (the nth), as a continue to it lands there. */
const stateAt = (line: number, nth = 0): number => trace.frames.map((f, i) => (f.event === "line" && f.line === line ? i : -1)).filter((i) => i >= 0)[nth];

// ---- record mode, against the real run ----

test("initialize declares log points, hit counts and the raised / uncaught exception filters", async () => {
  const s = await openSession(30_000);
  try {
    const caps = (await s.dc.initializeRequest()).body!;
    assert.equal(caps.supportsLogPoints, true);
    assert.equal(caps.supportsHitConditionalBreakpoints, true);
    assert.deepEqual(caps.exceptionBreakpointFilters?.map((f) => [f.filter, f.default]), [["raised", false], ["uncaught", true], ["holes", true]]);
    await assert.rejects(s.dc.setExceptionBreakpointsRequest({ filters: ["everything"] }), /unknown exception filter "everything" \(known: raised, uncaught, holes\)/);
  } finally {
    await s.dc.stop();
  }
});

test("record: Step Out stops in the caller on the calling line, with (return) scale in its Locals, as debugpy; Globals holds the module's names", T, async () => {
  const s = await openSession(30_000);
  try {
    const { first } = await start(s, RECORD, [{ line: SCALE_BODY }]);
    assert.equal(first.event, "stopped");
    let i = stateAt(SCALE_BODY);
    assert.deepEqual((await stack(s)).map((f) => [f.name, f.line]), realStack(trace.frames, i).map((f) => [f.func, f.line]));
    await move(s, (dc) => dc.stepOutRequest(THREAD));
    i = stepOutIndex(trace.frames, i);
    const want = shownStack(trace.frames, i);
    const got = await stack(s);
    assert.deepEqual(got.map((f) => [f.name, f.line]), want.map((f) => [f.func, f.line]));
    assert.deepEqual([got[0].name, got[0].line, want[0].locals.acc], ["total", 12, "0"], "the calling line, in the caller, its assignment not yet made");
    const [localsScope, globalsScope, ...rest] = await scopes(s, got[0].id);
    assert.deepEqual([localsScope.name, globalsScope.name, rest.length], ["Locals", "Globals", 0]);
    const locals = await variables(s, localsScope);
    assert.deepEqual(locals.map((v) => [v.name, v.value]), [["(return) scale", "2"], ...Object.entries(want[0].locals)]);
    assert.equal(locals[0].presentationHint?.kind, "virtual");
    // The module's functions grouped as debugpy groups them, the other names as they are.
    const { groups, vars: globals } = await opened(s, globalsScope);
    assert.deepEqual(groups, ["function variables"]);
    assert.deepEqual(Object.fromEntries(globals.map((v) => [v.name, v.value])), want.at(-1)!.locals);
    assert.ok((await variables(s, globalsScope)).slice(0, -1).every((v) => !v.value.startsWith("<function")), "no function outside its group");
    assert.ok(globals.some((v) => v.name === "RATE" && v.value === "2"));
    // Expressions read the globals too, as Python looks names up; calling a function would run it.
    assert.equal((await s.dc.evaluateRequest({ expression: "v * RATE", frameId: got[0].id, context: "watch" })).body.result, "2");
    await assert.rejects(s.dc.evaluateRequest({ expression: "scale(2)", frameId: got[0].id, context: "watch" }), /the value of scale is not known here, only its repr: <function scale/);
    // A step on: the value is shown once more beside the assignment it made (as debugpy), then no longer.
    await move(s, (dc) => dc.nextRequest(THREAD));
    const after = await variables(s, (await scopes(s, (await stack(s))[0].id))[0]);
    assert.deepEqual(after.filter((v) => v.name.startsWith("(return)") || v.name === "acc").map((v) => [v.name, v.value]), [["(return) scale", "2"], ["acc", "2"]]);
    await move(s, (dc) => dc.nextRequest(THREAD));
    assert.ok(!(await variables(s, (await scopes(s, (await stack(s))[0].id))[0])).some((v) => v.name.startsWith("(return)")));
    // Out of total (the breakpoint in scale cleared: Step Out stops at one it meets): in the module on the calling line, where both scopes show the module's names.
    await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
    await move(s, (dc) => dc.stepOutRequest(THREAD));
    assert.deepEqual((await stack(s)).map((f) => [f.name, f.line]), [["<module>", 32]]);
    const [moduleLocals, moduleGlobals] = await scopes(s, (await stack(s))[0].id);
    assert.deepEqual([moduleLocals.name, moduleGlobals.name], ["Locals", "Globals"]);
    assert.deepEqual((await variables(s, moduleLocals)).map((v) => [v.name, v.value]).slice(0, 2), [["(return) total", "12"], ["RATE", "2"]]);
    assert.deepEqual((await variables(s, moduleGlobals)).map((v) => v.name).slice(0, 1), ["RATE"], "Globals: the names alone");
    // Out of the module's own frame: the run ends (here with its uncaught error).
    assert.equal((await move(s, (dc) => dc.stepOutRequest(THREAD))).event, "terminated");
  } finally {
    await s.dc.stop();
  }
});

test("record: log points write {expressions} without stopping; hit counts stop at the hits they name", T, async () => {
  const s = await openSession(30_000);
  try {
    const { first, set } = await start(s, RECORD, [
      { line: SCALE_BODY, logMessage: "scale({v}) = {v * RATE}" },
      { line: CALL_LINE, hitCondition: ">= 2" },
    ]);
    assert.deepEqual(set.map((b) => b.verified), [true, true]);
    assert.equal(first.event, "stopped");
    assert.equal((first as DebugProtocol.StoppedEvent).body.reason, "breakpoint");
    assert.deepEqual((first as DebugProtocol.StoppedEvent).body.hitBreakpointIds, [set[1].id], "the log point is no stop");
    let top = (await stack(s))[0];
    assert.equal(top.line, CALL_LINE);
    assert.equal((await s.dc.evaluateRequest({ expression: "v", frameId: top.id, context: "watch" })).body.result, trace.frames[stateAt(CALL_LINE, 1)].locals.v);
    assert.equal(s.text("console"), "scale(1) = 2\n");
    await move(s, (dc) => dc.continueRequest(THREAD));
    top = (await stack(s))[0];
    assert.equal((await s.dc.evaluateRequest({ expression: "v", frameId: top.id, context: "watch" })).body.result, "3");
    await Promise.all([s.dc.continueRequest(THREAD), s.dc.waitForEvent("terminated")]);
    assert.match(s.text("console"), /^scale\(1\) = 2\nscale\(2\) = 4\nscale\(3\) = 6\n/);
    assert.equal(s.text("stdout"), "total 12\n");
    // What cannot be read is refused with the reason, and stops nothing.
    const bad = await openSession(30_000);
    try {
      const { set: refused } = await start(bad, RECORD, [
        { line: CALL_LINE, hitCondition: "twice" },
        { line: SCALE_BODY, logMessage: "{v" },
        { line: SCALE_BODY + 1, logMessage: "v is {v +}" },
        { line: CALL_LINE + 1, condition: "v ==" },
      ]);
      assert.deepEqual(refused.map((b) => [b.verified, b.message]), [
        [false, 'hit count "twice" is not a number, optionally after one of >= <= == > < % (e.g. "3", ">= 2", "% 2")'],
        [false, 'log message: "{" at 0 is not closed'],
        [false, "log message: {v +}: invalid syntax"],
        // A condition that cannot be read is set, and says it stops every time, as debugpy's does.
        [true, "condition: invalid syntax; it stops there every time"],
      ]);
    } finally {
      await bad.dc.stop();
    }
  } finally {
    await s.dc.stop();
  }
});

test("record: raised exceptions stop where raised; uncaught ones where the exception that ends the run was raised", T, async () => {
  const raised = await openSession(30_000);
  try {
    const { first } = await start(raised, RECORD, [], ["raised"]);
    const e = first as DebugProtocol.StoppedEvent;
    assert.deepEqual([e.event, e.body.reason, e.body.description], ["stopped", "exception", "Exception: ValueError('negative')"]);
    const first_ = trace.frames.findIndex((f) => f.event === "exception");
    assert.deepEqual((await stack(raised)).map((f) => [f.name, f.line]), realStack(trace.frames, first_).map((f) => [f.func, f.line]));
    assert.deepEqual((({ exceptionId, breakMode }) => [exceptionId, breakMode])((await raised.dc.exceptionInfoRequest(THREAD)).body), ["ValueError", "always"]);
    // The same exception passed up to guarded() is no new raise: on to check(-5)'s.
    await move(raised, (dc) => dc.continueRequest(THREAD));
    const top = (await stack(raised))[0];
    assert.deepEqual([top.name, top.line], ["check", RAISE]);
    assert.equal((await raised.dc.evaluateRequest({ expression: "v", frameId: top.id, context: "watch" })).body.result, "-5");
    // Filters can change while stopped: without them the run ends.
    await raised.dc.setExceptionBreakpointsRequest({ filters: [] });
    await Promise.all([raised.dc.continueRequest(THREAD), raised.dc.waitForEvent("terminated")]);
  } finally {
    await raised.dc.stop();
  }
  const uncaught = await openSession(30_000);
  try {
    const { first } = await start(uncaught, RECORD, [], ["uncaught"]);
    assert.equal((first as DebugProtocol.StoppedEvent).body.reason, "exception");
    const at = trace.frames.map((f, k) => (f.event === "exception" && f.func === "check" ? k : -1)).reduce((a, b) => Math.max(a, b));
    assert.deepEqual((await stack(uncaught)).map((f) => [f.name, f.line]), realStack(trace.frames, at).map((f) => [f.func, f.line]));
    assert.equal(trace.frames[at].locals.v, "-5", "the caught ValueError of check(-2) was passed");
    assert.equal((await uncaught.dc.exceptionInfoRequest(THREAD)).body.breakMode, "unhandled");
    await Promise.all([uncaught.dc.continueRequest(THREAD), uncaught.dc.waitForEvent("terminated")]);
    assert.match(uncaught.text("stderr"), /Program ended with an error: ValueError\('negative'\)/);
  } finally {
    await uncaught.dc.stop();
  }
});

test("launch answers a client that waits for its response before configurationDone, at once", T, async () => {
  for (const args of [RECORD, PREDICT]) {
    const s = await openSession(60_000);
    try {
      const initialized = s.dc.waitForEvent("initialized").then(() => Date.now());
      // As a client that sends configurationDone only after the launch response.
      await s.dc.launch({ program, stopOnEntry: true, ...args });
      // (from the initialized event, which comes once the session is ready, however long the
      // model takes to load on a loaded machine)
      const waited = Date.now() - (await initialized);
      const stopped = firstOf(s.dc, ["stopped", "terminated"]);
      await s.dc.configurationDoneRequest();
      assert.equal((await stopped).event, "stopped");
      // It used to come only when configurationDone did, or after a 10-second wait for it.
      assert.ok(waited < 5_000, `${args.mode}: the launch response came ${waited} ms after the initialized event`);
    } finally {
      await s.dc.stop();
    }
  }
});

// ---- predict mode, with the bundled model ----

test("predict (sealed): Step Out stops in the caller with (return) scale, exact and unmarked; the Debug Console calls scale", T, async () => {
  const s = await openSession(120_000);
  try {
    const { first } = await start(s, { mode: "predict" }, [{ line: SCALE_BODY }]);
    assert.equal(first.event, "stopped");
    assert.equal((await stack(s))[0].name, "scale");
    await move(s, (dc) => dc.stepOutRequest(THREAD));
    const got = await stack(s);
    assert.deepEqual([got[0].name, got[0].line], ["total", 12], "the calling line, in the caller");
    const [localsScope] = await scopes(s, got[0].id);
    assert.equal(localsScope.name, "Locals", "the sealed run's state: no prediction");
    const locals = await variables(s, localsScope);
    assert.deepEqual([locals[0].name, locals[0].value, locals[0].presentationHint?.kind], ["(return) scale", "2", "virtual"]);
    assert.doesNotMatch(locals[0].type ?? "", /predicted/);
    // The program's own function, run sealed in this frame.
    assert.equal((await s.dc.evaluateRequest({ expression: "scale(2)", frameId: got[0].id, context: "watch" })).body.result, "4");
  } finally {
    await s.dc.stop();
  }
});

test("predict (the model alone): Step Out leaves the frame; Globals are marked predicted", T, async () => {
  const s = await openSession(120_000);
  try {
    const { first } = await start(s, { ...PREDICT, stopOnEntry: true }, [{ line: SCALE_BODY }]);
    assert.equal(first.event, "stopped");
    // Through a module line (predicted module states; the entry stop is on the first line), then on to scale.
    assert.equal((await move(s, (dc) => dc.nextRequest(THREAD))).event, "stopped");
    assert.equal((await move(s, (dc) => dc.continueRequest(THREAD))).event, "stopped");
    let frames = await stack(s);
    // Into scale, as the model predicts the run (a step in at a time when the continue did not get there).
    for (let n = 0; n < 12 && frames[0].name !== "scale"; n++) {
      if ((await move(s, (dc) => dc.stepInRequest(THREAD))).event === "terminated") assert.fail("the predicted run ended before scale was called");
      frames = await stack(s);
    }
    assert.equal(frames[0].name, "scale");
    const [, globalsScope] = await scopes(s, frames[0].id);
    assert.match(globalsScope?.name ?? "", /^Predicted globals/, "the module's names, predicted");
    for (const v of (await opened(s, globalsScope)).vars) assert.match(v.type ?? "", /predicted/, `${v.name}'s type says predicted`);
    const depth = frames.length;
    assert.equal((await move(s, (dc) => dc.stepOutRequest(THREAD))).event, "stopped");
    const after = await stack(s);
    assert.ok(after.length < depth, `out of scale: ${after.map((f) => f.name).join(" < ")}`);
    // Every value of the state it stopped at is the model's.
    for (const v of (await opened(s, (await scopes(s, after[0].id))[0])).vars) assert.match(v.type ?? "", /predicted/, `${v.name}'s type says predicted`);
  } finally {
    await s.dc.stop();
  }
});

test("predict: a log point writes marked lines and a hit count passes the first hit", T, async () => {
  const s = await openSession(120_000);
  try {
    const { first, set } = await start(s, { ...PREDICT, call: "total([1, 2, 3])" }, [
      { line: CALL_LINE, logMessage: "hit v={v}" },
      { line: CALL_LINE, hitCondition: "2" },
    ]);
    assert.deepEqual(set.map((b) => b.verified), [true, true]);
    const logs = (): string[] => s.output.filter((o) => o.category === "console" && o.output.startsWith("hit v=")).map((o) => o.output);
    assert.equal(first.event, "stopped");
    assert.equal((await stack(s))[0].line, CALL_LINE, "stopped at the breakpoint");
    // Both hits logged (the log point does not stop), and the second stopped.
    assert.equal(logs().length, 2, logs().join(""));
    for (const line of logs()) assert.match(line, /^hit v=.* \(predicted(, \d+%.*)?\)\n$/);
  } finally {
    await s.dc.stop();
  }
});

test("predict: with raised exceptions on, a continue stops at a predicted exception, or after a bounded number of events with a note", { timeout: 420_000 }, async () => {
  // (up to 300 of the model's steps, one at a time on one thread: minutes on a loaded 2-core machine)
  const s = await openSession(400_000);
  try {
    const { first } = await start(s, { ...PREDICT, call: "check(-2)" }, [], ["raised"]);
    assert.equal(first.event, "stopped", "check(-2) raises: the run does not end without a stop");
    const e = first as DebugProtocol.StoppedEvent;
    if (e.body.reason === "exception") {
      assert.match(e.body.description ?? "", /^Predicted exception: /);
      assert.match((await s.dc.exceptionInfoRequest(THREAD)).body.description ?? "", /\(predicted\)$/);
    } else assert.match(s.text("console"), /the run went 300 events without an exception stop and stopped there \(maxEvents\)/);
  } finally {
    await s.dc.stop();
  }
});
