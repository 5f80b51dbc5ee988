// Record mode over the real protocol: the built adapter (`node dist/adapter.js`) driven by
// @vscode/debugadapter-testsupport's DebugClient. Every stop is checked against the real run:
// the tracer's frames for the same program, walked with the debugger semantics.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { serialize } from "../adapter/format/trajectory.js";
import { transition } from "../adapter/real/semantics.js";
import type { Action, Frame } from "../adapter/format/trajectory.js";
import { ROOT, buildDist } from "./support/dist.js";
import { THREAD, backIndex, stepIndex, ungrouped, firstOf, launchToFirstStop, openSession, shownStack, stepOutIndex, type Session } from "./support/dap.js";

const FIX = join(ROOT, "test", "fixtures", "dap");
const CALLS = join(FIX, "calls.py");
const SCRIPT = join(FIX, "script.py");
const CRASH = join(FIX, "crash.py");
const USES_LIB = join(FIX, "uses_lib.py");

before(buildDist);

// ---- the real run, for expectations ----

const traces = new Map<string, Promise<TraceResult>>();
function realRun(program: string, call?: string): Promise<TraceResult> {
  const key = `${program}|${call ?? ""}`;
  if (!traces.has(key)) traces.set(key, runTrace(program, call ? { call } : {}));
  return traces.get(key)!;
}


// ---- a client ----

const open = (): Promise<Session> => openSession(30_000);

type Bp = DebugProtocol.SourceBreakpoint;

/** initialize, launch, breakpoints during configuration; resolves with the first stop (or the end). */
async function launch(s: Session, args: Record<string, unknown>, bps: Bp[] = [], program = args.program as string): Promise<{ stopped?: DebugProtocol.StoppedEvent; terminated?: true; breakpoints: DebugProtocol.Breakpoint[] }> {
  const { first, breakpoints } = await launchToFirstStop(s.dc, { mode: "record", trusted: true, stopOnEntry: true, ...args }, program, bps);
  return { ...(first.event === "stopped" ? { stopped: first as DebugProtocol.StoppedEvent } : { terminated: true as const }), breakpoints };
}

/** Sends a move request and waits for the stop it leads to. */
async function move(s: Session, request: (dc: DebugClient) => Promise<unknown>): Promise<DebugProtocol.StoppedEvent> {
  const [, e] = await Promise.all([request(s.dc), s.dc.waitForEvent("stopped")]);
  return e as DebugProtocol.StoppedEvent;
}

async function frames(s: Session): Promise<DebugProtocol.StackFrame[]> {
  return (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
}

async function variables(s: Session, ref: number): Promise<DebugProtocol.Variable[]> {
  return (await s.dc.variablesRequest({ variablesReference: ref })).body.variables;
}

/** The Locals scope of a frame (Globals follows it where the module's frame is on the stack). */
async function localsScope(s: Session, frameId: number): Promise<number> {
  const scopes = (await s.dc.scopesRequest({ frameId })).body.scopes;
  assert.equal(scopes[0].name, "Locals");
  assert.ok(scopes.slice(1).every((x) => x.name === "Globals") && scopes.length <= 2, scopes.map((x) => x.name).join(", "));
  return scopes[0].variablesReference;
}

/** The stack and every frame's locals, against the real run at state i. */
async function expectState(s: Session, trace: TraceResult, i: number, program: string): Promise<void> {
  const want = shownStack(trace.frames, i);
  const got = await frames(s);
  const where = (f: Frame): string => (f.file === undefined ? program : join(dirname(program), f.file));
  assert.deepEqual(got.map((f) => [f.name, f.line, f.source?.path]), want.map((f) => [f.func, f.line, where(f)]), `stack at state ${i}`);
  for (let k = 0; k < got.length; k++) {
    const vars = await ungrouped(s.dc, await variables(s, await localsScope(s, got[k].id)));
    const plain = vars.filter((v) => !v.name.startsWith("("));
    assert.deepEqual(Object.fromEntries(plain.map((v) => [v.name, v.value])), want[k].locals, `locals of frame ${k} at state ${i}`);
    // A return shown in its caller: "(return) f" in the caller's Locals (after a Step Over past a return it depends on the stop before: adapter-stops.test.ts checks it).
    const state = trace.frames[i];
    if (k === 0 && state?.event === "return" && state.depth > 0 && state.value !== undefined) {
      const rv = vars.find((v) => v.name === `(return) ${state.func.split(".").at(-1)}`);
      assert.equal(rv?.value, state.value, `the return value in the caller at state ${i}`);
      assert.deepEqual(rv?.presentationHint?.attributes, ["readOnly"], `a real run's return value cannot be set (state ${i})`);
    }
    const pseudo = vars.filter((v) => v.name.startsWith("(") && !v.name.startsWith("(return) "));
    const top = k === 0 && want[0] === state ? want[0] : undefined;
    const expected =
      top?.event === "return" && top.value !== undefined ? [["(return)", top.value]] : top?.event === "exception" ? [["(exception)", top.value]] : [];
    assert.deepEqual(pseudo.map((v) => [v.name, v.value]), expected, `pseudo-variables at state ${i}`);
    for (const v of pseudo) assert.deepEqual(v.presentationHint?.attributes, ["readOnly"], `${v.name} of a real run cannot be set (state ${i})`);
  }
}

/** Where the real run goes from state i by an action (the index of the next state, or frames.length at the exit). */
const next = (trace: TraceResult, i: number, action: Action, bps?: number[]): number => transition(trace.frames, i, action, bps?.map((line) => ({ line })));

// ---- tests ----

test("initialize advertises what the adapter does", async () => {
  const s = await open();
  try {
    const caps = (await s.dc.initializeRequest()).body!;
    for (const k of ["supportsStepBack", "supportsConfigurationDoneRequest", "supportsConditionalBreakpoints", "supportsSetVariable", "supportsEvaluateForHovers", "supportsRestartRequest", "supportsExceptionInfoRequest", "supportsTerminateRequest", "supportsCancelRequest"] as const) {
      assert.equal(caps[k], true, k);
    }
    const threads = (await s.dc.threadsRequest()).body.threads;
    assert.deepEqual(threads, [{ id: 1, name: "main" }]);
  } finally {
    await s.dc.stop();
  }
});

test("stepping in, over and out of calls, with the stack and locals of the real run", async () => {
  const trace = await realRun(CALLS, "main(3)");
  const s = await open();
  try {
    const { stopped } = await launch(s, { program: CALLS, call: "main(3)" });
    assert.equal(stopped?.body.reason, "entry");
    let i = 0;
    await expectState(s, trace, i, CALLS);
    assert.equal(trace.frames[i].line, 14);

    const steps: [string, (dc: DebugClient) => Promise<unknown>, Action | "out", number][] = [
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 15],
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 16],
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 17],
      ["stepIn", (dc) => dc.stepInRequest(THREAD), { kind: "step_into" }, 7], // into total: its first line, not its def
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 8],
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 9],
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 8], // over square(0): back to the loop
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 9],
      ["stepIn", (dc) => dc.stepInRequest(THREAD), { kind: "step_into" }, 2], // into square(1)
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 3],
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 8], // past its return, to the caller's next line (as debugpy)
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 9],
      ["stepIn", (dc) => dc.stepInRequest(THREAD), { kind: "step_into" }, 2], // into square(2)
      ["stepOut", (dc) => dc.stepOutRequest(THREAD), "out", 9], // its return, shown in the caller on the calling line
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 8],
      ["next", (dc) => dc.nextRequest(THREAD), { kind: "step_over" }, 10],
      ["stepOut", (dc) => dc.stepOutRequest(THREAD), "out", 17], // total's return, in main on the calling line
    ];
    for (const [name, request, action, line] of steps) {
      const e = await move(s, request);
      i = action === "out" ? stepOutIndex(trace.frames, i) : stepIndex(trace.frames, i, action.kind as "step_into" | "step_over");
      assert.equal(e.body.reason, "step", name);
      assert.equal(shownStack(trace.frames, i)[0].line, line, `the real run is shown on line ${line} after ${name}`);
      await expectState(s, trace, i, CALLS);
    }
    // Output comes as the run wrote it, once, when the state that wrote it is reached.
    assert.equal(s.text("stdout"), "acc: 5\n");
    assert.deepEqual([trace.frames[i].event, trace.frames[i].func, shownStack(trace.frames, i)[0].func], ["return", "total", "main"]);
  } finally {
    await s.dc.stop();
  }
});

test("variables expand into lists and dicts, with names that evaluate", async () => {
  const trace = await realRun(CALLS, "main(3)");
  const s = await open();
  try {
    await launch(s, { program: CALLS, call: "main(3)" }, [{ line: 17 }]);
    const e = await move(s, (dc) => dc.continueRequest(THREAD));
    assert.equal(e.body.reason, "breakpoint");
    const i = next(trace, 0, { kind: "continue" }, [17]);
    await expectState(s, trace, i, CALLS);
    const top = (await frames(s))[0];
    const vars = await variables(s, await localsScope(s, top.id));
    const data = vars.find((v) => v.name === "data")!;
    const table = vars.find((v) => v.name === "table")!;
    assert.equal(data.value, trace.frames[i].locals.data);
    assert.equal(data.type, "list");
    assert.ok(data.variablesReference > 0);
    const items = await variables(s, data.variablesReference);
    assert.deepEqual(items.map((v) => [v.name, v.value, v.evaluateName]), [["[0]", "0", "data[0]"], ["[1]", "1", "data[1]"], ["[2]", "2", "data[2]"]]);
    assert.ok(items.every((v) => v.variablesReference === 0));

    assert.equal(table.type, "dict");
    const entries = await variables(s, table.variablesReference);
    assert.deepEqual(entries.map((v) => [v.name, v.value]), [["'n'", "3"], ["'items'", "[0, 1, 2]"], ["'name'", `"it's"`]]);
    const nested = entries[1];
    assert.equal(nested.evaluateName, "table['items']");
    assert.deepEqual((await variables(s, nested.variablesReference)).map((v) => [v.name, v.value]), [["[0]", "0"], ["[1]", "1"], ["[2]", "2"]]);
    // An evaluateName is an expression the adapter answers, as watches do.
    const ev = await s.dc.evaluateRequest({ expression: nested.evaluateName!, frameId: top.id, context: "watch" });
    assert.equal(ev.body.result, "[0, 1, 2]");
    assert.ok(ev.body.variablesReference > 0);
    // Handles belong to one stop: after the next stop they are refused, not confused.
    await move(s, (dc) => dc.nextRequest(THREAD));
    await assert.rejects(s.dc.variablesRequest({ variablesReference: table.variablesReference }), /earlier stop/);
  } finally {
    await s.dc.stop();
  }
});

test("breakpoints with a condition, continue and reverse continue", async () => {
  const trace = await realRun(CALLS, "main(3)");
  const s = await open();
  try {
    const { breakpoints } = await launch(s, { program: CALLS, call: "main(3)" }, [{ line: 9, condition: "v == 2" }, { line: 10 }, { line: 4 }, { line: 5 }]);
    assert.deepEqual(breakpoints.map((b) => b.verified), [true, true, false, false], "blank lines cannot stop");
    assert.match(breakpoints[2].message ?? "", /no code/);
    const ids = breakpoints.map((b) => b.id);

    // continue passes line 9 while v is 0 and 1, and stops when v == 2.
    let e = await move(s, (dc) => dc.continueRequest(THREAD));
    assert.equal(e.body.reason, "breakpoint");
    assert.deepEqual(e.body.hitBreakpointIds, [ids[0]]);
    const hits9 = trace.frames.map((f, k) => (f.event === "line" && f.line === 9 ? k : -1)).filter((k) => k >= 0);
    const at = hits9.find((k) => trace.frames[k].locals.v === "2")!;
    assert.ok(at > hits9[0]);
    await expectState(s, trace, at, CALLS);
    const top = (await frames(s))[0];
    assert.equal((await s.dc.evaluateRequest({ expression: "v", frameId: top.id, context: "hover" })).body.result, "2");

    e = await move(s, (dc) => dc.continueRequest(THREAD));
    assert.deepEqual([e.body.reason, e.body.hitBreakpointIds], ["breakpoint", [ids[1]]]);
    const at10 = trace.frames.findIndex((f) => f.event === "line" && f.line === 10);
    await expectState(s, trace, at10, CALLS);
    assert.equal(s.text("stdout"), "", "nothing is printed before line 10 runs");

    // Back to the hit on line 9 (the hits whose condition was false are passed going back too).
    e = await move(s, (dc) => dc.reverseContinueRequest(THREAD));
    assert.deepEqual([e.body.reason, e.body.hitBreakpointIds], ["breakpoint", [ids[0]]]);
    await expectState(s, trace, at, CALLS);

    // Changing breakpoints mid-session: none left, so continue runs to the end.
    const none = await s.dc.setBreakpointsRequest({ source: { path: CALLS }, breakpoints: [] });
    assert.deepEqual(none.body.breakpoints, []);
    const [, , exited] = await Promise.all([s.dc.continueRequest(THREAD), s.dc.waitForEvent("terminated"), s.dc.waitForEvent("exited")]);
    assert.equal((exited as DebugProtocol.ExitedEvent).body.exitCode, 0);
    assert.equal(s.text("stdout"), "acc: 5\n");
    assert.match(s.text("console"), /Program exited normally/);
  } finally {
    await s.dc.stop();
  }
});

test("stepping back retraces the run, and forwards again replays it", async () => {
  const trace = await realRun(CALLS, "main(3)");
  const s = await open();
  try {
    await launch(s, { program: CALLS, call: "main(3)" }, [{ line: 2 }]);
    let e = await move(s, (dc) => dc.continueRequest(THREAD));
    let i = next(trace, 0, { kind: "continue" }, [2]);
    assert.equal(e.body.reason, "breakpoint");
    await expectState(s, trace, i, CALLS);
    // Step forwards a few states, then back one statement at a time (a reverse Step Over), to the
    // session's entry (main's call) and no further.
    for (let k = 0; k < 4; k++) {
      await move(s, (dc) => dc.stepInRequest(THREAD));
      i = stepIndex(trace.frames, i, "step_into");
      await expectState(s, trace, i, CALLS);
    }
    const backs: number[] = [];
    while (i > 0 && backs.length < 40) {
      e = await move(s, (dc) => dc.stepBackRequest(THREAD));
      assert.equal(e.body.reason, "step");
      i = backIndex(trace.frames, i);
      backs.push(trace.frames[i].line);
      await expectState(s, trace, i, CALLS);
    }
    // From the loop's line 9 (v = 1) back along total's loop, over square(0)'s call, not into it.
    assert.deepEqual(backs.slice(0, 3), [8, 9, 8]);
    assert.equal(i, 0);
    e = await move(s, (dc) => dc.stepBackRequest(THREAD));
    await expectState(s, trace, 0, CALLS);
    assert.match(s.text("console"), /first state/);
    // Forwards again: the run replays exactly.
    await move(s, (dc) => dc.continueRequest(THREAD));
    const first = next(trace, 0, { kind: "continue" }, [2]);
    await expectState(s, trace, first, CALLS);
    await move(s, (dc) => dc.stepInRequest(THREAD));
    await expectState(s, trace, stepIndex(trace.frames, first, "step_into"), CALLS);
  } finally {
    await s.dc.stop();
  }
});

test("evaluate answers from the state, in any frame, by CPython over its values, sealed", async () => {
  const trace = await realRun(CALLS, "main(3)");
  const s = await open();
  try {
    await launch(s, { program: CALLS, call: "main(3)" }, [{ line: 3 }]);
    await move(s, (dc) => dc.continueRequest(THREAD));
    const i = next(trace, 0, { kind: "continue" }, [3]);
    await expectState(s, trace, i, CALLS);
    const [sq, tot, main] = await frames(s);
    const ev = async (expression: string, frameId: number, context = "repl"): Promise<string> =>
      (await s.dc.evaluateRequest({ expression, frameId, context })).body.result;
    assert.equal(await ev("x * 10 + y", sq.id), "0");
    assert.equal(await ev("values[1:] + [acc]", tot.id), "[1, 2, 0]");
    assert.equal(await ev("table['name'][2:]", main.id), `"'s"`);
    assert.equal(await ev("len(data) == n", main.id), "True");
    const list = await s.dc.evaluateRequest({ expression: "sorted(data, reverse=True)", frameId: main.id, context: "repl" });
    assert.equal(list.body.result, "[2, 1, 0]");
    const items = await variables(s, list.body.variablesReference);
    assert.deepEqual(items.map((v) => [v.value, v.evaluateName]), [["2", "(sorted(data, reverse=True))[0]"], ["1", "(sorted(data, reverse=True))[1]"], ["0", "(sorted(data, reverse=True))[2]"]]);
    assert.equal(await ev(items[2].evaluateName!, main.id, "watch"), "0");
    await assert.rejects(s.dc.evaluateRequest({ expression: "nope", frameId: sq.id, context: "repl" }), /nope/);
    // The values are rebuilt in the sealed CPython: what an expression tries there reaches nothing here.
    await assert.rejects(s.dc.evaluateRequest({ expression: "__import__('os').system('touch x')", frameId: sq.id, context: "repl" }), /the sealed run starts no processes/);
    assert.equal(await ev("x.to_bytes(2, 'big')", sq.id, "hover"), "b'\\x00\\x00'");
  } finally {
    await s.dc.stop();
  }
});

test("setVariable is refused in record mode, and the state stays as recorded", async () => {
  const trace = await realRun(CALLS, "main(3)");
  const s = await open();
  try {
    await launch(s, { program: CALLS, call: "main(3)" });
    await move(s, (dc) => dc.nextRequest(THREAD));
    const top = (await frames(s))[0];
    const ref = await localsScope(s, top.id);
    await assert.rejects(s.dc.setVariableRequest({ variablesReference: ref, name: "n", value: "10" }), /record mode replays a real run/);
    await expectState(s, trace, 1, CALLS);
    await move(s, (dc) => dc.nextRequest(THREAD));
    await expectState(s, trace, 2, CALLS);
  } finally {
    await s.dc.stop();
  }
});

test("an exception stops with reason exception and is described", async () => {
  const trace = await realRun(SCRIPT);
  const s = await open();
  try {
    const { breakpoints } = await launch(s, { program: SCRIPT }, [{ line: 4 }, { line: 1 }]);
    assert.deepEqual(breakpoints.map((b) => b.verified), [true, false], "a comment line cannot stop");
    let e = await move(s, (dc) => dc.continueRequest(THREAD));
    let i = next(trace, 0, { kind: "continue" }, [4]);
    assert.equal(e.body.reason, "breakpoint");
    await expectState(s, trace, i, SCRIPT);
    assert.deepEqual((await frames(s)).map((f) => f.name), ["risky", "<module>"]);
    e = await move(s, (dc) => dc.stepInRequest(THREAD));
    i = next(trace, i, { kind: "step_into" });
    assert.equal(trace.frames[i].event, "exception");
    assert.equal(e.body.reason, "exception");
    assert.equal(e.body.text, "ValueError(2)");
    await expectState(s, trace, i, SCRIPT);
    const info = (await s.dc.exceptionInfoRequest(THREAD)).body;
    assert.deepEqual([info.exceptionId, info.description, info.breakMode], ["ValueError", "ValueError(2)", "always"]);
    // Stepping on: the frame unwinds (no stop, as in debugpy), the handler at module level takes it.
    for (const line of [11, 12]) {
      e = await move(s, (dc) => dc.stepInRequest(THREAD));
      i = stepIndex(trace.frames, i, "step_into");
      assert.equal(trace.frames[i].line, line);
      assert.equal(e.body.reason, trace.frames[i].event === "exception" ? "exception" : "step");
      await expectState(s, trace, i, SCRIPT);
    }
    await assert.rejects(s.dc.exceptionInfoRequest(THREAD), /not stopped at an exception/);
    await Promise.all([s.dc.continueRequest(THREAD), s.dc.waitForEvent("terminated")]);
    assert.equal(s.text("stdout"), "out = [0, 10, -1, 30]\n");
  } finally {
    await s.dc.stop();
  }
});

test("stepping to the end of a run that fails, and the terminated event", async () => {
  const trace = await realRun(CRASH, "main()");
  assert.equal(trace.exit.status, "error");
  const s = await open();
  try {
    await launch(s, { program: CRASH, call: "main()" });
    let i = 0;
    for (;;) {
      const [, e] = await Promise.all([
        s.dc.nextRequest(THREAD),
        firstOf(s.dc, ["stopped", "terminated"]),
      ]);
      i = stepIndex(trace.frames, i, "step_over");
      if (e.event === "terminated") break;
      await expectState(s, trace, i, CRASH);
    }
    assert.equal(i, trace.frames.length, "the real run ended there too");
    assert.match(s.text("stderr"), /Program ended with an error: ZeroDivisionError\('division by zero'\)/);
    // The session is over: moves are refused with a reason, never left hanging.
    await assert.rejects(s.dc.nextRequest(THREAD), /ended/);
    assert.deepEqual(await frames(s), []);
  } finally {
    await s.dc.stop();
  }
});

test("running without stopOnEntry goes to the first breakpoint, or to the end", async () => {
  const trace = await realRun(SCRIPT);
  const s = await open();
  try {
    const { stopped } = await launch(s, { program: SCRIPT, stopOnEntry: false }, [{ line: 13 }]);
    assert.equal(stopped?.body.reason, "breakpoint");
    await expectState(s, trace, next(trace, 0, { kind: "continue" }, [13]), SCRIPT);
  } finally {
    await s.dc.stop();
  }
  const s2 = await open();
  try {
    const r = await launch(s2, { program: SCRIPT, stopOnEntry: false });
    assert.equal(r.terminated, true);
    assert.equal(s2.text("stdout"), "out = [0, 10, -1, 30]\n");
  } finally {
    await s2.dc.stop();
  }
});

test("a program with a syntax error ends the session cleanly with the error", async () => {
  const s = await open();
  try {
    const r = await launch(s, { program: join(FIX, "broken_syntax.py") });
    assert.equal(r.terminated, true);
    assert.match(s.text("stderr"), /SyntaxError/);
    assert.deepEqual(await frames(s), []);
  } finally {
    await s.dc.stop();
  }
});

test("bad launch arguments get a clear error in the console and the response, and a clean end", async () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ program: join(FIX, "missing.py") }, /program not found: .*missing\.py/],
    [{ program: FIX }, /program is not a file/],
    [{}, /"program" is required/],
    [{ program: CALLS, mode: "fast" }, /"mode" must be one of predict, record, compare/],
    [{ program: CALLS, call: "main(1); main(2)" }, /"call" must be a single expression/],
    [{ program: CALLS, call: "x = main(1)" }, /"call" must be a single expression/],
    [{ program: CALLS, maxSteps: -1 }, /"maxSteps" must be a positive whole number/],
    [{ program: CALLS, timeout: "10" }, /"timeout" must be a positive number/],
    [{ program: CALLS, stopOnEntry: "yes" }, /"stopOnEntry" must be true or false/],
    [{ program: CALLS, mode: "predict", model: join(FIX, "missing.gguf") }, /model file not found: .*missing\.gguf/],
    [{ program: CALLS, gpu: "tpu" }, /"gpu" must be one of auto, cuda, metal, vulkan, cpu/],
    [{ program: CALLS, threads: -1 }, /"threads" must be a whole number/],
    [{ program: join(ROOT, "test", "golden", "minimal.ndbg"), mode: "record" }, /minimal\.ndbg is a trace file: replay it with "mode": "replay"/],
    [{ program: CALLS, mode: "replay" }, /replay mode replays a trace file \(\.ndbg\), not .*calls\.py/],
    [{ program: CALLS, call: "main(3)", python: "/nonexistent/python3" }, /python/i],
  ];
  for (const [args, message] of cases) {
    const s = await open();
    try {
      await s.dc.initializeRequest();
      const ended = s.dc.waitForEvent("terminated");
      await assert.rejects(s.dc.launchRequest({ mode: "record", trusted: true, ...args } as DebugProtocol.LaunchRequestArguments), message, JSON.stringify(args));
      await ended;
      assert.match(s.text("stderr"), message);
      await assert.rejects(s.dc.nextRequest(THREAD), /ended|not been launched/);
    } finally {
      await s.dc.stop();
    }
  }
});

test("restart, pause, cancel and terminate all answer", async () => {
  const trace = await realRun(CALLS, "main(3)");
  const s = await open();
  try {
    await launch(s, { program: CALLS, call: "main(3)" }, [{ line: 9 }]);
    await move(s, (dc) => dc.continueRequest(THREAD));
    // Restart: a fresh recording, stopped on entry, breakpoints kept.
    const e = await move(s, (dc) => dc.restartRequest({ arguments: { type: "neural-python", request: "launch", mode: "record", trusted: true, program: CALLS, call: "main(3)", stopOnEntry: true } as DebugProtocol.LaunchRequestArguments }));
    assert.equal(e.body.reason, "entry");
    await expectState(s, trace, 0, CALLS);
    const hit = await move(s, (dc) => dc.continueRequest(THREAD));
    assert.equal(hit.body.reason, "breakpoint");
    await expectState(s, trace, next(trace, 0, { kind: "continue" }, [9]), CALLS);
    // Pause with nothing in flight: the thread is stopped where it is.
    const p = await move(s, (dc) => dc.pauseRequest(THREAD));
    assert.equal(p.body.reason, "pause");
    // Cancel of a request that is not running is answered too.
    const c = await s.dc.customRequest("cancel", { requestId: 999_999 });
    assert.equal(c.success, true);
    const [t] = await Promise.all([s.dc.terminateRequest(), s.dc.waitForEvent("terminated")]);
    assert.equal(t.success, true);
    await assert.rejects(s.dc.stepBackRequest(THREAD), /ended/);
  } finally {
    await s.dc.stop();
  }
});

test("frames in another user file show that file; a breakpoint there is verified and hit", async () => {
  const call = "main([(1, 2), (3, 4)])";
  const trace = await realRun(USES_LIB, call);
  const lib = join(FIX, "shapes_lib.py");
  const s = await open();
  try {
    await launch(s, { program: USES_LIB, call });
    // Step in until the run is inside the other file, checking every state on the way.
    let i = 0;
    while (trace.frames[i].file === undefined) {
      await move(s, (dc) => dc.stepInRequest(THREAD));
      i = stepIndex(trace.frames, i, "step_into");
      await expectState(s, trace, i, USES_LIB);
    }
    const stack = await frames(s);
    assert.equal(stack[0].source?.path, lib);
    assert.equal(stack[0].name, "area");
    assert.ok(stack.slice(1).every((f) => f.source?.path === USES_LIB));
    // Out of it again.
    await move(s, (dc) => dc.stepOutRequest(THREAD));
    i = stepOutIndex(trace.frames, i);
    await expectState(s, trace, i, USES_LIB);
    // A breakpoint in the other file binds, and Continue stops there (the second call).
    const other = await s.dc.setBreakpointsRequest({ source: { path: lib }, breakpoints: [{ line: 3 }] });
    assert.deepEqual(other.body.breakpoints.map((b) => b.verified), [true]);
    const hit = await move(s, (dc) => dc.continueRequest(THREAD));
    assert.equal(hit.body.reason, "breakpoint");
    assert.deepEqual(hit.body.hitBreakpointIds, [other.body.breakpoints[0].id]);
    i = trace.frames.findIndex((f, k) => k > i && f.file === "shapes_lib.py" && f.event === "line" && f.line === 3);
    await expectState(s, trace, i, USES_LIB);
    assert.equal((await frames(s))[0].source?.path, lib);
    // Cleared, and on to the end.
    await s.dc.setBreakpointsRequest({ source: { path: lib }, breakpoints: [] });
    await Promise.all([s.dc.continueRequest(THREAD), s.dc.waitForEvent("terminated")]);
    assert.match(s.text("console"), /Program exited normally/);
  } finally {
    await s.dc.stop();
  }
});

test("launch limits reach the tracer: a run that never ends is cut off and said so", async () => {
  const program = join(FIX, "forever.py");
  const s = await open();
  try {
    const { stopped } = await launch(s, { program, call: "spin()", maxSteps: 40 });
    assert.equal(stopped?.body.reason, "entry");
    const states: string[] = [];
    for (let k = 0; k < 5; k++) {
      await move(s, (dc) => dc.nextRequest(THREAD));
      const top = (await frames(s))[0];
      states.push(`${top.line}:${(await s.dc.evaluateRequest({ expression: "n", frameId: top.id, context: "repl" }).catch(() => ({ body: { result: "-" } }))).body.result}`);
    }
    assert.deepEqual(states, ["2:-", "3:0", "4:0", "3:1", "4:1"]);
    const [, exited] = await Promise.all([s.dc.continueRequest(THREAD), s.dc.waitForEvent("exited"), s.dc.waitForEvent("terminated")]);
    assert.equal((exited as DebugProtocol.ExitedEvent).body.exitCode, 1);
    assert.match(s.text("stderr"), /stopped by a limit/);
  } finally {
    await s.dc.stop();
  }
});

test("replay mode: a saved session stop by stop, a full recording by the semantics, the source from the trace when its file is gone", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-replay-"));
  const program = join(dir, "calls.py");
  copyFileSync(CALLS, program);
  const trace = await realRun(CALLS, "main(3)");
  // A record session: next, step in, next; saved as a trace.
  const rec = await open();
  let saved: string;
  try {
    await launch(rec, { program, call: "main(3)" });
    for (const request of [(dc: DebugClient) => dc.nextRequest(THREAD), (dc: DebugClient) => dc.stepInRequest(THREAD), (dc: DebugClient) => dc.nextRequest(THREAD)]) await move(rec, request);
    saved = ((await rec.dc.customRequest("ndbg/saveTrace")).body as { text: string }).text;
  } finally {
    await rec.dc.stop();
  }
  const sessionFile = join(dir, "session.ndbg");
  writeFileSync(sessionFile, saved);
  const stops = [0, { kind: "step_over" }, { kind: "step_into" }, { kind: "step_over" }].reduce<number[]>(
    (acc, a) => (typeof a === "number" ? [a] : [...acc, next(trace, acc.at(-1)!, a as Action)]),
    [],
  );

  // The saved session: any forward move goes to the next saved stop, step back to the one before.
  const s = await open();
  try {
    const { stopped } = await launch(s, { program: sessionFile, mode: "replay" }, [], program);
    assert.equal(stopped?.body.reason, "entry");
    assert.match(s.text("console"), /Replaying session\.ndbg: a saved debugging session/);
    await expectState(s, trace, stops[0], program);
    await move(s, (dc) => dc.stepOutRequest(THREAD));
    await expectState(s, trace, stops[1], program);
    await move(s, (dc) => dc.nextRequest(THREAD));
    await expectState(s, trace, stops[2], program);
    await move(s, (dc) => dc.stepBackRequest(THREAD));
    await expectState(s, trace, stops[1], program);
    await move(s, (dc) => dc.stepInRequest(THREAD));
    await move(s, (dc) => dc.stepInRequest(THREAD));
    await expectState(s, trace, stops[3], program);
    const ended = s.dc.waitForEvent("terminated");
    await s.dc.continueRequest(THREAD);
    await ended;
  } finally {
    await s.dc.stop();
  }

  // Every event of the run, as `ndbg trace` writes it: the semantics answer each action.
  const full = serialize({
    version: 1,
    meta: { program: "calls.py", call: "main(3)" },
    source: trace.source,
    steps: [...trace.frames.map((frame, i) => (i ? { action: { kind: "step_into" as const }, frame } : { frame })), { action: { kind: "step_into" as const }, exit: trace.exit }],
  });
  const fullFile = join(dir, "full.ndbg");
  writeFileSync(fullFile, full);
  const r = await open();
  try {
    const { stopped } = await launch(r, { program: fullFile, mode: "replay", stopOnEntry: false }, [{ line: 9 }], program);
    assert.equal(stopped?.body.reason, "breakpoint");
    assert.match(r.text("console"), /Replaying full\.ndbg: a recording of every event/);
    let i = next(trace, 0, { kind: "continue" }, [9]);
    await expectState(r, trace, i, program);
    // (Step Out stops where line 9 is hit again on the way, as debugpy's does)
    await move(r, (dc) => dc.stepOutRequest(THREAD));
    i = stepOutIndex(trace.frames, i, [9]);
    assert.equal(trace.frames[i].line, 9);
    await expectState(r, trace, i, program);
  } finally {
    await r.dc.stop();
  }

  // The program's file gone: its text comes from the trace, as a source reference.
  rmSync(program);
  const g = await open();
  try {
    await launch(g, { program: sessionFile, mode: "replay" }, [], program);
    const [top] = await frames(g);
    assert.equal(top.source?.path, undefined);
    assert.match(top.source?.name ?? "", /calls\.py \(from session\.ndbg\)/);
    const ref = top.source!.sourceReference!;
    assert.ok(ref > 0);
    const content = (await g.dc.sourceRequest({ sourceReference: ref, source: top.source })).body.content;
    assert.equal(content, trace.source);
  } finally {
    await g.dc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
