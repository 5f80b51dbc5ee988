// The debugpy client and the real side of compare mode, over real debugpy (Debian's
// python3-debugpy for /usr/bin/python3): the driver runs programs as the tracer does, stops and
// locals read back as the tracer records them, and the real side follows every action to the
// same state as the debugger semantics over the tracer's recording of the same program.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEBUGPY_INSTALL_HINT, Debugpy, findDebugpyPython, type RealFrameInfo, type RealStop } from "../adapter/real/debugpy.js";
import { RealSide } from "../adapter/predictors/compareReal.js";
import { checkPair, stateLabel } from "../adapter/predictors/comparePairs.js";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { transition } from "../adapter/real/semantics.js";
import type { Action, Step } from "../adapter/format/trajectory.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const FIX = join(ROOT, "test", "fixtures", "compare");
const PROGRAMS = join(ROOT, "test", "fixtures", "programs");
const T = { timeout: 240_000 };

const open: { dispose(): Promise<void> }[] = [];
after(async () => {
  await Promise.all(open.map((d) => d.dispose()));
});

let pythonP: Promise<string> | undefined;
const python = (): Promise<string> => (pythonP ??= findDebugpyPython());

const traces = new Map<string, Promise<TraceResult>>();
/** The tracer's run of a program, with the same Python as debugpy (reprs of modules name its library). */
async function traced(program: string, call?: string): Promise<TraceResult> {
  const key = `${program}|${call ?? ""}`;
  if (!traces.has(key)) traces.set(key, python().then((py) => runTrace(program, { call, python: py })));
  return traces.get(key)!;
}

async function launch(program: string, call?: string, timeout = 10): Promise<Debugpy> {
  const d = await Debugpy.launch({ python: await python(), program, call, cwd: dirname(program), timeout, maxRepr: 1000 });
  open.push(d);
  return d;
}

async function realSide(program: string, call?: string, timeout = 10): Promise<RealSide> {
  const r = await RealSide.start({ python: await python(), program, call, timeout, maxRepr: 1000 });
  open.push(r);
  return r;
}

const stop = (s: RealStop): Extract<RealStop, { kind: "stop" }> => {
  assert.equal(s.kind, "stop", `expected a stop, got ${JSON.stringify(s)}`);
  return s as Extract<RealStop, { kind: "stop" }>;
};

// ---- finding debugpy ----

test("findDebugpyPython finds an interpreter with debugpy, and explains how to install it when there is none", async () => {
  const py = await python();
  assert.equal(spawnSync(py, ["-c", "import debugpy"]).status, 0, `${py} cannot import debugpy`);
  await assert.rejects(findDebugpyPython("/nonexistent/python3"), (e: Error) => {
    assert.match(e.message, /"\/nonexistent\/python3"/);
    assert.ok(e.message.includes(DEBUGPY_INSTALL_HINT), e.message);
    return true;
  });
  // A Python that runs but has no debugpy: the same one without its site directories (-S).
  if (spawnSync(py, ["-S", "-c", "import debugpy"]).status !== 0) {
    const dir = mkdtempSync(join(tmpdir(), "ndbg-bare-"));
    try {
      const bare = join(dir, "python3");
      writeFileSync(bare, `#!/bin/sh\nexec ${py} -S "$@"\n`);
      chmodSync(bare, 0o755);
      await assert.rejects(findDebugpyPython(bare), /has no debugpy[\s\S]*apt-get install python3-debugpy/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

// ---- the client ----

test("a call runs from the driver into the user's file; its line stops and locals are the tracer's line events", T, async () => {
  const program = join(FIX, "calls.py");
  const d = await launch(program, "total([3, 1, 2])");
  const first = stop(d.current);
  assert.equal(first.inDriver, true, "the first stop is the driver's entry line");
  assert.deepEqual(first.frames, []);
  const trace = await traced(program, "total([3, 1, 2])");
  const want = trace.frames.filter((f) => f.event === "line").map((f) => ({ func: f.func, line: f.line, locals: f.locals }));
  const got: typeof want = [];
  let prev: RealFrameInfo[] = [];
  for (let n = 0; n < 200; n++) {
    const s = await d.command("stepIn");
    if (s.kind === "exit") break;
    const top = s.frames[0];
    // A return is shown as a stop in the caller, on the line of the call: not a line event.
    const isReturn = s.frames.length < prev.length && top !== undefined && top.line === prev[prev.length - s.frames.length]?.line;
    prev = s.frames;
    if (!top || s.inDriver || isReturn) continue;
    got.push({ func: top.name, line: top.line, locals: (await d.locals(top, false)).locals });
  }
  assert.deepEqual(got, want);
  assert.equal(d.current.kind, "exit");
  assert.equal((d.current as { code?: number }).code, 0);
});

test("long values and failing reprs are read exactly (debugpy's display shortens them)", T, async () => {
  const program = join(PROGRAMS, "reprs.py");
  const trace = await traced(program, "main()");
  const side = await realSide(program, "main()");
  let i = 0;
  for (let n = 0; n < 300 && !side.ended; n++) {
    i = transition(trace.frames, i, { kind: "step_into" });
    side.commit(await side.follow({ kind: "step_into" }, []));
    const want: Step = i < trace.frames.length ? { frame: trace.frames[i] } : { exit: trace.exit };
    const c = checkPair(want, side.current);
    assert.ok(c?.exact, `state ${i}: tracer ${JSON.stringify(want)} / real ${JSON.stringify(side.current)}`);
  }
  assert.ok(trace.frames.some((f) => Object.values(f.locals).some((v) => v.length > 40)), "the program has long reprs");
});

test("a script runs as __main__ with empty standard input: input() fails as under the tracer", T, async () => {
  const program = join(FIX, "asks.py");
  const d = await launch(program);
  const trace = await traced(program);
  assert.equal(trace.exit.status, "error");
  let exception: string | undefined;
  for (let n = 0; n < 50 && d.current.kind === "stop"; n++) {
    const s = await d.command("stepIn");
    if (s.kind === "stop" && s.reason === "exception" && s.exception?.repr) exception = s.exception.repr;
  }
  assert.equal(exception, trace.exit.value);
  assert.equal(d.current.kind, "exit");
  assert.notEqual((d.current as { code?: number }).code, 0);
});

test("a program that never stops is paused at the time limit, where it is", T, async () => {
  const program = join(FIX, "spin.py");
  const d = await launch(program, "spin(1)", 1);
  const s = stop(await d.command("continue"));
  assert.equal(s.paused, "timeout");
  assert.equal(s.frames[0]?.name, "spin");
  assert.ok([4, 5].includes(s.frames[0].line), `paused in the loop, at line ${s.frames[0].line}`);
});

test("a cancelled command pauses the program and rethrows the cancellation", T, async () => {
  const program = join(FIX, "spin.py");
  const d = await launch(program, "spin(1)", 30);
  const ctl = new AbortController();
  setTimeout(() => ctl.abort(new DOMException("stop", "AbortError")), 300);
  await assert.rejects(d.command("continue", ctl.signal), { name: "AbortError" });
  const s = stop(d.current);
  assert.equal(s.paused, "cancelled");
  assert.equal(s.frames[0]?.name, "spin");
});

// ---- the real side follows the semantics ----

/** A small seeded generator, so a failing walk can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/**
 * Walks a program with actions from `pick`, checking after each that the real side is at the
 * state the semantics give over the tracer's recording, on everything debugpy observes.
 */
async function walk(program: string, call: string | undefined, pick: (i: number) => Action, bps: number[] = [], max = 120): Promise<number> {
  const trace = await traced(program, call);
  const side = await realSide(program, call);
  const at = (i: number): Step => (i < trace.frames.length ? { frame: trace.frames[i] } : { exit: trace.exit });
  let i = 0;
  let steps = 0;
  const check = (what: string): void => {
    const c = checkPair(at(i), side.current);
    assert.ok(c, `${what}: the real side was cut off: ${side.current.note}`);
    assert.ok(c.exact, `${what}: tracer ${stateLabel(at(i))} ${JSON.stringify(at(i))}\nreal ${stateLabel(side.current.step)} ${JSON.stringify(side.current)}\n${JSON.stringify(c)}`);
  };
  check("first state");
  for (let n = 0; n < max && i < trace.frames.length; n++) {
    const action = pick(n);
    i = transition(trace.frames, i, action, bps?.map((line) => ({ line })));
    side.commit(await side.follow(action, bps.map((line) => ({ line }))));
    check(`after action ${n} (${action.kind})`);
    steps++;
  }
  if (i >= trace.frames.length) assert.ok(side.ended, "both ended");
  return steps;
}

const INTO: () => Action = () => ({ kind: "step_into" });

test("step into every event: the real side matches the recording (calls, returns, exceptions, methods, generators)", T, async () => {
  const cases: [string, string | undefined][] = [
    [join(FIX, "calls.py"), "total([3, 1, 2])"],
    [join(FIX, "calls.py"), "chain(1)"],
    [join(FIX, "calls.py"), "crash(0)"],
    [join(FIX, "calls.py"), "mixed(3)"],
    [join(FIX, "calls.py"), "first_or_none([])"],
    [join(FIX, "script.py"), undefined],
    [join(FIX, "cruxeval_5.py"), "f('DSUWeqExTQdCMGpqur', 'a', 'x')"],
    [join(PROGRAMS, "multifile.py"), "main()"],
    [join(PROGRAMS, "recursion.py"), "fact(3)"],
  ];
  for (const [program, call] of cases) assert.ok((await walk(program, call, INTO, [], 400)) > 3, `${program} ${call}`);
});

test("mixed actions with breakpoints: step over, step out and continue reach the same states", T, async () => {
  const kinds: Action["kind"][] = ["step_into", "step_into", "step_over", "step_return", "continue"];
  const cases: [string, string | undefined, number[]][] = [
    [join(FIX, "calls.py"), "total([3, 1, 2])", [7, 14]],
    [join(FIX, "calls.py"), "mixed(3)", [48, 64]],
    [join(FIX, "calls.py"), "crash(0)", [30, 35]],
    [join(FIX, "script.py"), undefined, [5, 11]],
  ];
  for (const [program, call, bps] of cases) {
    for (const seed of [1, 2]) {
      const r = rng(seed);
      await walk(program, call, () => ({ kind: kinds[Math.floor(r() * kinds.length)] }), bps);
    }
  }
});

test("a step over the end of a callback (library code calling user code) is a return, not the next call", T, async () => {
  // debugpy goes on into the next call of the same function, with the id of the frame that ended.
  const program = join(PROGRAMS, "callbacks.py");
  const steps: Action["kind"][] = ["step_into", "step_into", "step_into", "step_into", "step_over", "step_over", "step_into", "step_over", "step_over", "step_over"];
  await walk(program, "main()", (n) => ({ kind: steps[n] ?? "step_over" }));
  const calls = join(FIX, "calls.py"); // inner(x) + inner(x + 1): two calls on one line
  const chain: Action["kind"][] = ["step_into", "step_into", "step_into", "step_over", "step_over", "step_over", "step_into", "step_into", "step_over", "step_over"];
  await walk(calls, "chain(1)", (n) => ({ kind: chain[n] ?? "step_over" }));
});

test("a step over a yield is the generator's return, then the consumer's next line (debugpy's own would run to the end)", T, async () => {
  const program = join(PROGRAMS, "generators.py");
  const steps: Action["kind"][] = ["step_into", "step_into", "step_into", "step_into", "step_over", "step_over", "step_over", "step_over"];
  await walk(program, "elsewhere()", (n) => ({ kind: steps[n] ?? "step_into" }), [], steps.length);
});

test("a frame left by an exception after its finally block ran returns no value (the exception stops again in the caller)", T, async () => {
  const kinds: Action["kind"][] = ["step_into", "step_into", "step_over", "step_over", "step_return", "continue"];
  const r = rng(15);
  await walk(join(PROGRAMS, "exceptions.py"), "main()", () => ({ kind: kinds[Math.floor(r() * kinds.length)] }), [3, 16]);
});
