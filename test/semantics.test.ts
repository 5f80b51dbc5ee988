// Debugger semantics (adapter/real/semantics.ts) against hand-computed expectations: first on frame
// lists written out by hand, then on real traces of small programs from the tracer, whose event
// sequence is checked first so that the expectations are known to be about the real run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transition } from "../adapter/real/semantics.js";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import type { Action, ActionKind, Frame } from "../adapter/format/trajectory.js";

/** Frames from lines "EVENT LINE DEPTH FUNC": c = call, l = line, r = return, e = exception. */
function frames(spec: string): Frame[] {
  const ev = { c: "call", l: "line", r: "return", e: "exception" } as const;
  return spec.trim().split("\n").map((row) => {
    const [e, line, depth, func] = row.trim().split(/\s+/);
    return { event: ev[e as keyof typeof ev], line: Number(line), depth: Number(depth), func, locals: {} };
  });
}
const act = (kind: ActionKind, line?: number): Action => (line === undefined ? { kind } : { kind, line });
/** transition for several start states at once: expectations read as a table. */
function table(fs: readonly Frame[], action: Action, expected: Record<number, number>, bps?: number[]): void {
  for (const [i, want] of Object.entries(expected))
    assert.equal(transition(fs, Number(i), action, bps?.map((line) => ({ line }))), want, `${action.kind}${action.line ?? ""} from ${i}${bps ? ` bps ${bps}` : ""}`);
}

// Brute-force definitions, to check the fast scans against on every state of every trace.
function bruteInvStepOver(fs: readonly Frame[], i: number): number {
  if (i === 0) return 0;
  const here = i < fs.length ? fs[i].depth : -1;
  for (let k = i - 1; k >= 0; k--) if (transition(fs, k, act("step_over")) === i && fs[k].depth <= here) return k;
  return i - 1;
}
function checkInvariants(fs: readonly Frame[]): void {
  const n = fs.length;
  for (let i = 0; i <= n; i++) {
    assert.equal(transition(fs, i, act("inv_step_over")), bruteInvStepOver(fs, i), `inv_step_over from ${i}`);
    for (const k of ["step_into", "step_over", "step_return", "continue"] as const) {
      const j = transition(fs, i, act(k));
      assert.ok(i === n ? j === n : j > i && j <= n, `${k} from ${i} went to ${j}`);
    }
    for (const k of ["inv_step_into", "inv_step_over", "inv_step_return"] as const) {
      const j = transition(fs, i, act(k));
      assert.ok(i === 0 ? j === 0 : j >= 0 && j <= i, `${k} from ${i} went to ${j}`);
    }
    // step_return stops on a return event (or leaves the trace); inv_step_return on a call or the start of a frame.
    const r = transition(fs, i, act("step_return"));
    assert.ok(r === n || fs[r].event === "return", `step_return from ${i} stopped on ${fs[r]?.event}`);
    // step_over never stops deeper than where it started.
    const o = transition(fs, i, act("step_over"));
    if (i < n && o < n) assert.ok(fs[o].depth <= fs[i].depth, `step_over from ${i} went deeper`);
  }
}

// ---- programs, their event sequences written out by hand, and expectations over them ----
// Each case is checked twice: on the hand-written frames, and on the real tracer's frames after
// checking that the real run has exactly the hand-written event sequence.

interface Case {
  name: string;
  source: string;
  call?: string;
  /** The run's events, "EVENT LINE DEPTH FUNC" a line. */
  shape: string;
  exit: "normal" | "error";
  check(fs: readonly Frame[]): void;
  /** Checks that need the real run's locals. */
  checkReal?(fs: readonly Frame[]): void;
}

const CASES: Case[] = [];
const dir = mkdtempSync(join(tmpdir(), "ndbg-semantics-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const real = new Map<string, Promise<TraceResult>>();
function realTrace(c: Case): Promise<TraceResult> {
  if (!real.has(c.name)) {
    const file = join(dir, c.name.replace(/\W+/g, "_") + ".py");
    writeFileSync(file, c.source);
    real.set(c.name, runTrace(file, { call: c.call, timeout: 20 }));
  }
  return real.get(c.name)!;
}
const shapeOf = (fs: readonly Frame[]): string =>
  fs.map((f) => `${f.event[0]} ${f.line} ${f.depth} ${f.func}`).join("\n");
const norm = (spec: string): string => spec.trim().split("\n").map((r) => r.trim().split(/\s+/).join(" ")).join("\n");

CASES.push({
  name: "nested calls",
  source: "def g(x):\n    return x + 1\n\ndef f(n):\n    a = g(n)\n    b = g(a)\n    return a + b\n",
  call: "f(1)",
  shape: `
    c 4 0 f
    l 5 0 f
    c 1 1 g
    l 2 1 g
    r 2 1 g
    l 6 0 f
    c 1 1 g
    l 2 1 g
    r 2 1 g
    l 7 0 f
    r 7 0 f`,
  exit: "normal",
  check(fs) {
    const EXIT = fs.length;
    table(fs, act("step_into"), { 0: 1, 1: 2, 4: 5, 10: EXIT, [EXIT]: EXIT });
    // From a call: the first line. From line 5 (calls g): line 6. A return is its own stop: from
    // line 7 to the return of f. From g's return: the caller's next stop. From f's return: the exit.
    table(fs, act("step_over"), { 0: 1, 1: 5, 2: 3, 3: 4, 4: 5, 5: 9, 9: 10, 10: EXIT, [EXIT]: EXIT });
    // To this frame's return; from a return, to the caller's return; from the outermost return, the exit.
    table(fs, act("step_return"), { 0: 10, 1: 10, 2: 4, 3: 4, 4: 10, 7: 8, 8: 10, 10: EXIT });
    table(fs, act("inv_step_into"), { 0: 0, 1: 0, 5: 4, [EXIT]: 10 });
    // Latest k no deeper than i with step_over(k) = i: line 6 is reached by step_over from g's
    // return (4, deeper) and from line 5 (1): back over the call to 1. Into a call nothing steps
    // over: the state before.
    table(fs, act("inv_step_over"), { 0: 0, 1: 0, 2: 1, 3: 2, 4: 3, 5: 1, 9: 5, 10: 9, [EXIT]: 10 });
    // The call that opened the frame: from g's return, g's call (its arguments); from a call, the caller's call.
    table(fs, act("inv_step_return"), { 0: 0, 1: 0, 3: 2, 4: 2, 8: 6, 10: 0, 2: 0, 6: 0, [EXIT]: 0 });
    table(fs, act("inv_breakpoint", 2), { 0: 0, 3: 0, 4: 3, 9: 7, [EXIT]: 7 });
    table(fs, act("inv_breakpoint", 99), { 9: 0 });
    // Breakpoints; a line never reached (again) behaves as continue: to a breakpoint, else the exit.
    table(fs, act("breakpoint", 2), { 0: 3, 3: 7, 6: 7 });
    table(fs, act("breakpoint", 2), { 7: EXIT });
    table(fs, act("breakpoint", 2), { 7: 9 }, [7]);
    table(fs, act("breakpoint", 99), { 0: EXIT });
    table(fs, act("breakpoint", 99), { 0: 5 }, [6, 7]);
    table(fs, act("breakpoint", 4), { 0: EXIT }); // line 4 only has a call event, no line event
    table(fs, act("continue"), { 0: EXIT, 9: EXIT });
    table(fs, act("continue"), { 0: 5, 5: 9, 9: EXIT }, [6, 7]);
    table(fs, act("continue"), { 0: 3, 3: 7 }, [2]);
    table(fs, act("continue"), { 0: EXIT }, [99]);
    table(fs, act("continue"), { 0: EXIT }, []);
  },
  checkReal(fs) {
    // From a return, inv_step_return recovers the call's arguments.
    assert.deepEqual(fs[transition(fs, 4, act("inv_step_return"))].locals, { x: "1" });
    assert.deepEqual(fs[transition(fs, 8, act("inv_step_return"))].locals, { x: "2" });
    assert.deepEqual(fs[transition(fs, 10, act("inv_step_return"))].locals, { n: "1" });
    assert.equal(fs[transition(fs, 1, act("step_over"))].locals.a, "2");
  },
});

CASES.push({
  name: "recursion",
  source: "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n",
  call: "fact(2)",
  shape: `
    c 1 0 fact
    l 2 0 fact
    l 4 0 fact
    c 1 1 fact
    l 2 1 fact
    l 3 1 fact
    r 3 1 fact
    r 4 0 fact`,
  exit: "normal",
  check(fs) {
    const EXIT = fs.length;
    // Stepping over the recursive call lands on the frame's own return.
    table(fs, act("step_over"), { 2: 7, 3: 4, 5: 6, 6: 7, 7: EXIT });
    table(fs, act("step_return"), { 1: 7, 4: 6, 6: 7, 7: EXIT });
    table(fs, act("breakpoint", 2), { 0: 1, 1: 4, 4: EXIT });
    table(fs, act("inv_step_return"), { 6: 3, 7: 0, 3: 0, 5: 3 });
    table(fs, act("inv_step_over"), { 7: 2, 6: 5, 4: 3, 3: 2 });
    table(fs, act("inv_breakpoint", 2), { 7: 4, 4: 1, 1: 0 });
  },
  checkReal(fs) {
    assert.deepEqual(fs[transition(fs, 6, act("inv_step_return"))].locals, { n: "1" });
    assert.equal(fs[transition(fs, 2, act("step_over"))].value, "2");
  },
});

CASES.push({
  name: "loop",
  source: "def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n",
  call: "f(3)",
  shape: `
    c 1 0 f
    l 2 0 f
    l 3 0 f
    l 4 0 f
    l 3 0 f
    l 4 0 f
    l 3 0 f
    l 4 0 f
    l 3 0 f
    l 5 0 f
    r 5 0 f`,
  exit: "normal",
  check(fs) {
    const EXIT = fs.length;
    table(fs, act("breakpoint", 4), { 0: 3, 3: 5, 5: 7, 7: EXIT });
    table(fs, act("continue"), { 0: 2, 2: 3, 3: 4, 8: 9, 9: EXIT }, [3, 4, 5]);
    table(fs, act("inv_breakpoint", 4), { 9: 7, 7: 5, 3: 0 });
    table(fs, act("step_over"), { 3: 4, 8: 9 });
    table(fs, act("inv_step_over"), { 4: 3, 9: 8 });
  },
  checkReal(fs) {
    assert.equal(fs[transition(fs, 0, act("breakpoint", 4))].locals.i, "0");
    assert.equal(fs[transition(fs, 9, act("inv_breakpoint", 4))].locals.i, "2");
    assert.equal(fs[transition(fs, 9, act("step_return"))].value, "3");
  },
});

CASES.push({
  name: "exception caught",
  source: "def g():\n    raise ValueError('x')\n\ndef f():\n    try:\n        g()\n    except ValueError:\n        return 1\n",
  call: "f()",
  shape: `
    c 4 0 f
    l 5 0 f
    l 6 0 f
    c 1 1 g
    l 2 1 g
    e 2 1 g
    r 2 1 g
    e 6 0 f
    l 7 0 f
    l 8 0 f
    r 8 0 f`,
  exit: "normal",
  check(fs) {
    // Stepping over a raising call stops at the exception arriving in the caller.
    table(fs, act("step_over"), { 2: 7, 4: 5, 5: 6, 6: 7, 7: 8 });
    // The raising frame's return (no value) is where step_return out of it stops.
    table(fs, act("step_return"), { 4: 6, 5: 6, 2: 10, 7: 10 });
    assert.equal(fs[6].value, undefined);
    table(fs, act("inv_step_return"), { 6: 3, 7: 0 });
    table(fs, act("inv_step_over"), { 7: 2, 6: 5, 8: 7 });
  },
});

CASES.push({
  name: "exception uncaught",
  source: "def g():\n    raise ValueError('x')\n\ndef f():\n    g()\n    return 1\n",
  call: "f()",
  shape: `
    c 4 0 f
    l 5 0 f
    c 1 1 g
    l 2 1 g
    e 2 1 g
    r 2 1 g
    e 5 0 f
    r 5 0 f`,
  exit: "error",
  check(fs) {
    const EXIT = fs.length;
    table(fs, act("step_over"), { 1: 6, 3: 4, 4: 5, 5: 6, 6: 7, 7: EXIT });
    table(fs, act("step_return"), { 1: 7, 3: 5, 5: 7, 6: 7 });
    table(fs, act("breakpoint", 6), { 0: EXIT }); // line 6 is never reached
    table(fs, act("continue"), { 0: EXIT }, [6]);
    table(fs, act("inv_step_over"), { [EXIT]: 7, 7: 6, 6: 1 });
  },
  checkReal(fs) {
    // The exception arrives in the caller with its repr; the unwound frames return no value.
    assert.equal(fs[transition(fs, 1, act("step_over"))].value, "ValueError('x')");
    assert.equal(fs[transition(fs, 1, act("step_return"))].value, undefined);
  },
});

CASES.push({
  name: "generator",
  source: "def gen(n):\n    for i in range(n):\n        yield i\n\ndef f():\n    t = 0\n    for x in gen(2):\n        t += x\n    return t\n",
  call: "f()",
  shape: `
    c 5 0 f
    l 6 0 f
    l 7 0 f
    c 1 1 gen
    l 2 1 gen
    l 3 1 gen
    r 3 1 gen
    l 8 0 f
    l 7 0 f
    c 3 1 gen
    l 2 1 gen
    l 3 1 gen
    r 3 1 gen
    l 8 0 f
    l 7 0 f
    c 3 1 gen
    l 2 1 gen
    r 2 1 gen
    l 9 0 f
    r 9 0 f`,
  exit: "normal",
  check(fs) {
    // Each resumption is a call, each yield a return.
    table(fs, act("step_over"), { 2: 7, 8: 13, 14: 18, 9: 10, 6: 7 });
    table(fs, act("step_return"), { 4: 6, 10: 12, 16: 17, 6: 19 });
    table(fs, act("inv_step_return"), { 12: 9, 6: 3, 17: 15, 9: 0 });
    table(fs, act("breakpoint", 3), { 0: 5, 5: 11, 11: fs.length });
    table(fs, act("inv_breakpoint", 8), { 18: 13, 13: 7, 7: 0 });
  },
});

CASES.push({
  name: "script with a comprehension",
  source: "x = 1\nys = [v * 2 for v in range(2)]\nprint(x, ys)\n",
  shape: `
    c 1 0 <module>
    l 1 0 <module>
    l 2 0 <module>
    c 2 1 <listcomp>
    l 2 1 <listcomp>
    l 2 1 <listcomp>
    l 2 1 <listcomp>
    r 2 1 <listcomp>
    l 3 0 <module>
    r 3 0 <module>`,
  exit: "normal",
  check(fs) {
    const EXIT = fs.length;
    table(fs, act("step_over"), { 2: 8, 3: 4, 7: 8, 8: 9, 9: EXIT });
    table(fs, act("step_return"), { 4: 7, 2: 9 });
    // Line 2 runs in both frames: breakpoints on it stop in the comprehension too.
    table(fs, act("breakpoint", 2), { 1: 2, 2: 4, 4: 5, 6: EXIT });
    table(fs, act("inv_step_return"), { 7: 3, 9: 0, 3: 0 });
  },
});

for (const c of CASES) {
  test(`${c.name}: hand-written frames`, () => {
    const fs = frames(c.shape);
    c.check(fs);
    checkInvariants(fs);
  });
  test(`${c.name}: real trace has the hand-written events, and the same answers`, async () => {
    const r = await realTrace(c);
    assert.equal(shapeOf(r.frames), norm(c.shape));
    assert.equal(r.exit.status, c.exit);
    c.check(r.frames);
    c.checkReal?.(r.frames);
    checkInvariants(r.frames);
  });
}

test("tracing began inside a frame (no call event): inv_step_return falls back to its first state", () => {
  const fs = frames(`
    l 1 0 <module>
    l 2 0 <module>
    l 3 0 <module>
    l 2 0 <module>
    r 2 0 <module>`);
  const EXIT = fs.length;
  table(fs, act("breakpoint", 2), { 0: 1, 1: 3, 3: EXIT });
  table(fs, act("continue"), { 0: 1, 1: 3, 3: EXIT }, [2]);
  table(fs, act("inv_breakpoint", 2), { 4: 3, 3: 1, 1: 0 });
  table(fs, act("inv_step_return"), { 4: 0, 2: 0, [EXIT]: 0 });
  table(fs, act("step_return"), { 0: 4, 4: EXIT });
  checkInvariants(fs);
});

test("a call from untraced code has no caller: inv_step_return stays", () => {
  const fs = frames(`
    c 1 0 f
    r 1 0 f
    c 1 0 g
    r 1 0 g`);
  table(fs, act("inv_step_return"), { 2: 2, 3: 2, 1: 0 });
  checkInvariants(fs);
});

test("a cut-off trace (limit): step_return and step_over stop at the end", () => {
  const fs = frames(`
    c 1 0 f
    l 2 0 f
    c 5 1 g
    l 6 1 g`);
  table(fs, act("step_return"), { 1: 4, 3: 4 });
  table(fs, act("step_over"), { 1: 4 });
  checkInvariants(fs);
});

test("lines of other files never hit breakpoints of the main file", () => {
  const fs = frames(`
    l 1 0 <module>
    c 1 1 helper
    l 2 1 helper
    r 2 1 helper
    l 2 0 <module>`);
  for (const k of [1, 2, 3]) fs[k].file = "lib.py";
  table(fs, act("breakpoint", 2), { 0: 4 });
  table(fs, act("continue"), { 0: 4 }, [2]);
  table(fs, act("inv_breakpoint", 2), { 4: 0 });
});

test("bad arguments are errors, not wrong answers", () => {
  const fs = frames(CASES[0].shape);
  assert.throws(() => transition(fs, -1, act("step_into")), RangeError);
  assert.throws(() => transition(fs, fs.length + 1, act("step_into")), RangeError);
  assert.throws(() => transition(fs, 1.5, act("step_into")), RangeError);
  assert.throws(() => transition(fs, 0, { kind: "breakpoint" }), /breakpoint needs a line number/);
  assert.throws(() => transition(fs, 3, { kind: "inv_breakpoint" }), /needs a line number/);
  assert.throws(() => transition(fs, 1, { kind: "jump" } as unknown as Action), /unknown action "jump"/);
  // An empty trace (a program that failed before any traced code): the start is the exit.
  assert.equal(transition([], 0, act("step_into")), 0);
  assert.equal(transition([], 0, act("inv_step_over")), 0);
});
