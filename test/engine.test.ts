// The engine over the recorded predictor on real traces: forward steps, stepping back, time
// travel, breakpoints with conditions, the call stack, edits, evaluation and the exit.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../adapter/engine/engine.js";
import { shownInCaller } from "../adapter/engine/stepping.js";
import { RETURN_VALUE } from "../adapter/engine/predictor.js";
import { RecordedPredictor } from "../adapter/predictors/recorded.js";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { evaluateValues, sealedChild, SealedChild, SEALED_PYTHON } from "../adapter/real/sealed.js";
import { transition } from "../adapter/real/semantics.js";
import { parse, serialize, type Frame } from "../adapter/format/trajectory.js";
import type { Predicted, Predictor } from "../adapter/engine/predictor.js";

const dir = mkdtempSync(join(tmpdir(), "ndbg-engine-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));

const traces = new Map<string, Promise<TraceResult>>();
function trace(name: string, source: string, call?: string): Promise<TraceResult> {
  const key = name + "\0" + (call ?? "");
  if (!traces.has(key)) {
    const file = join(dir, name + ".py");
    writeFileSync(file, source);
    traces.set(key, runTrace(file, { call, timeout: 20 }));
  }
  return traces.get(key)!;
}

const LOOP_SRC = `def g(x):
    y = x * 2
    print('g', y)
    return y

def f(n):
    total = 0
    for i in range(n):
        total += g(i)
    return total
`;
const loop = () => trace("loop", LOOP_SRC, "f(3)");
const FACT_SRC = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n";

/**
 * The same recording without what only a recording knows (every caller's state, that edits cannot
 * be replayed): the engine then falls back on its history, as it does for a model.
 */
function historyOnly(p: RecordedPredictor): Predictor {
  return { source: p.source, start: (o) => p.start(o), predict: (h, a, o) => p.predict(h, a, o), dispose: () => {} };
}

async function engine(run: TraceResult | Promise<TraceResult>, opts: { first?: number; maxSteps?: number; historyOnly?: boolean } = {}): Promise<Engine> {
  const recorded = new RecordedPredictor(await run, { first: opts.first });
  const e = new Engine(opts.historyOnly ? historyOnly(recorded) : recorded, { maxSteps: opts.maxSteps, evaluator: evaluateValues });
  await e.start();
  return e;
}
const frameOf = (p: Predicted): Frame => {
  assert.ok(p.step.frame, `expected a frame, got ${JSON.stringify(p.step)}`);
  return p.step.frame;
};
/** Line, event and function of the current state, e.g. "9 line f". */
const at = (p: Predicted): string => (p.step.exit ? `exit ${p.step.exit.status}` : `${frameOf(p).line} ${frameOf(p).event} ${frameOf(p).func}`);
const indexOfLine = (r: TraceResult, line: number, nth = 0): number => r.frames.map((f, i) => (f.event === "line" && f.line === line ? i : -1)).filter((i) => i >= 0)[nth];

/** Every history entry is reached from the one before by its action, under the semantics. */
function assertFaithful(e: Engine, r: TraceResult, bps: number[] = e.breakpoints.map((b) => b.line)): void {
  const h = e.history;
  for (let i = 1; i < h.length; i++) {
    const a = h[i].step.action;
    assert.ok(a, `history entry ${i} has no action`);
    assert.equal(transition(r.frames, h[i - 1].ref!, a, bps?.map((line) => ({ line }))), h[i].ref, `history ${i - 1} -> ${i} by ${a.kind}`);
  }
  assert.ok(e.cursor >= 0 && e.cursor < h.length);
}

test("the traced program has the expected shape", async () => {
  const r = await loop();
  assert.equal(r.exit.status, "normal");
  assert.equal(r.frames.filter((f) => f.event === "call" && f.func === "g").length, 3);
  assert.equal(r.frames.at(-1)!.value, "6");
});

test("forward: step_over, step_into, step_return; output gathered on the way", async () => {
  const e = await engine(loop());
  assert.equal(at(e.current), "6 call f");
  assert.deepEqual(frameOf(e.current).locals, { n: "3" });
  assert.equal(at(await e.step("step_over")), "7 line f");
  assert.equal(at(await e.step("step_over")), "8 line f");
  assert.equal(at(await e.step("step_over")), "9 line f");
  // Stepping over line 9 runs g(0): back on line 8, with g's output.
  const p = await e.step("step_over");
  assert.equal(at(p), "8 line f");
  assert.deepEqual(frameOf(p).locals, { n: "3", total: "0", i: "0" });
  assert.equal(frameOf(p).stdout, "g 0\n");
  assert.equal(at(await e.step("step_into")), "9 line f");
  const call = await e.step("step_into");
  assert.equal(at(call), "1 call g");
  assert.deepEqual(frameOf(call).locals, { x: "1" });
  const ret = await e.step("step_return");
  assert.equal(at(ret), "4 return g");
  assert.equal(frameOf(ret).value, "2");
  assert.equal(frameOf(ret).stdout, "g 2\n");
  // A return is its own stop; stepping over it lands on the caller's next line.
  const back = await e.step("step_over");
  assert.equal(at(back), "8 line f");
  assert.equal(frameOf(back).locals.total, "2");
  assert.equal(e.history.length, 9);
  assert.equal(e.cursor, 8);
  assert.equal(e.ended, false);
  assertFaithful(e, await loop());
});

test("with the model (states one by one), stepBack walks the history; forward steps reuse it when the action matches, else truncate", async () => {
  const r = await loop();
  const e = await engine(r, { historyOnly: true });
  for (const k of ["step_over", "step_over", "step_over", "step_into", "step_return", "step_over"] as const) await e.step(k);
  const len = e.history.length;
  assert.equal(at(e.current), "8 line f");
  assert.equal(at(await e.stepBack()), "4 return g");
  assert.equal(at(await e.stepBack()), "1 call g");
  assert.equal(e.cursor, len - 3);
  assert.equal(e.history.length, len, "stepping back keeps the history");
  // Time travel: the same action replays the known future (the very same entry).
  const known = e.history[e.cursor + 1];
  assert.equal(await e.step("step_return"), known);
  assert.equal(e.history.length, len);
  // Another action drops the known future and asks the predictor.
  await e.stepBack();
  const p = await e.step("step_into");
  assert.equal(at(p), "2 line g");
  assert.equal(e.history.length, len - 1);
  assert.equal(e.cursor, len - 2);
  assertFaithful(e, r);
  // Back to the very start, where nothing is earlier.
  while (e.cursor > 0) await e.stepBack();
  assert.deepEqual(e.takeNotes(), []);
  assert.equal(await e.stepBack(), e.history[0]);
  assert.match(e.takeNotes().join(), /first state/);
  assert.equal(e.history.length, len - 1);
});

test("with the model, stepBack at the start of the history asks for inv_step_over and prepends, keeping program order", async () => {
  const r = await loop();
  // A session that begins at line 9 of the second iteration (i = 1).
  const first = indexOfLine(r, 9, 1);
  const e = await engine(r, { first, historyOnly: true });
  assert.deepEqual(frameOf(e.current).locals, { n: "3", total: "0", i: "1" });
  const prev = await e.stepBack();
  assert.equal(at(prev), "8 line f");
  assert.deepEqual(frameOf(prev).locals, { n: "3", total: "0", i: "0" });
  assert.equal(e.cursor, 0);
  assert.equal(e.history.length, 2);
  assert.equal(e.history[0].step.action, undefined, "the first state has no action");
  assert.deepEqual(e.history[1].step.action, { kind: "step_over" });
  // Further back: over the call to g, to line 9 that made it (not into g's return).
  const ret = await e.stepBack();
  assert.equal(at(ret), "9 line f");
  assert.deepEqual(frameOf(ret).locals, { n: "3", total: "0", i: "0" });
  assertFaithful(e, r);
  // Forwards again, through the prepended history.
  assert.equal(await e.step("step_over"), e.history[1]);
  assert.equal(await e.step("step_over"), e.history[2]);
  assert.equal(e.history.length, 3);
  // The session as a trajectory is valid text in the one format (what only a debugger shows of a real run is not written: a return's caller, a value just returned).
  const t = e.trajectory({ program: "loop.py" });
  assert.deepEqual(parse(serialize(t)), JSON.parse(JSON.stringify(t, (key, v: unknown) => (key === "caller" || key === "returned" ? undefined : v))));
});

test("stepBack at the start into a call: the link forward is step_into", async () => {
  const r = await loop();
  const firstCall = r.frames.findIndex((f) => f.event === "call" && f.func === "g");
  const e = await engine(r, { first: firstCall });
  assert.equal(at(await e.stepBack()), "9 line f");
  assert.deepEqual(e.history[1].step.action, { kind: "step_into" });
  assertFaithful(e, r);
  assert.equal(await e.step("step_into"), e.history[1]);
  // Inside the call, with the caller never seen at its depth: the stack is what is known.
  const only = await engine(r, { first: firstCall + 1, historyOnly: true });
  assert.deepEqual(only.stack().map((f) => f.func), ["g"]);
  // The recording knows the caller all the same.
  const known = await engine(r, { first: firstCall + 1 });
  assert.deepEqual(known.stack().map((f) => [f.func, f.line]), [["g", 2], ["f", 9]]);
});

test("continue: breakpoints, reverseContinue, and the exit", async () => {
  const r = await loop();
  const e = await engine(r);
  e.setBreakpoints([{ line: 4 }]);
  let p = await e.continue();
  assert.equal(at(p), "4 line g");
  assert.deepEqual(frameOf(p).locals, { x: "0", y: "0" });
  assert.equal(frameOf(p).stdout, "g 0\n");
  p = await e.continue();
  assert.deepEqual(frameOf(p).locals, { x: "1", y: "2" });
  assert.equal(e.history.length, 3);
  // Back to the previous hit, then to the start of the history: nothing earlier hits.
  assert.deepEqual(frameOf(await e.reverseContinue()).locals, { x: "0", y: "0" });
  assert.equal(e.cursor, 1);
  assert.equal(await e.reverseContinue(), e.history[0]);
  assert.equal(await e.reverseContinue(), e.history[0]);
  // Continue again from the start (the known future is replaced by the same answers).
  assert.deepEqual(frameOf(await e.continue()).locals, { x: "0", y: "0" });
  assertFaithful(e, r);
  e.setBreakpoints([]);
  p = await e.continue();
  assert.equal(at(p), "exit normal");
  assert.equal(p.step.exit!.stdout, "g 2\ng 4\n");
  assert.equal(e.ended, true);
  assert.deepEqual(e.stack(), []);
  // The exit is final: steps stay there and the history does not grow.
  const n = e.history.length;
  for (const k of ["step_into", "step_over", "step_return"] as const) assert.equal(await e.step(k), p);
  assert.equal(await e.continue(), p);
  assert.equal(e.history.length, n);
  // From the exit, one step back is f's return, the last state of the run.
  assert.equal(at(await e.stepBack()), "10 return f");
});

test("a recording steps back one statement, wherever the last move came from; reverse continue searches the run", async () => {
  const r = await loop();
  const e = await engine(r);
  e.setBreakpoints([{ line: 4 }]);
  await e.continue();
  const second = await e.continue();
  assert.deepEqual(frameOf(second).locals, { x: "1", y: "2" });
  // Back from the breakpoint: the line before it in g, not the stop before (the first hit).
  let p = await e.stepBack();
  assert.equal(at(p), "3 line g");
  assert.deepEqual(frameOf(p).locals, { x: "1", y: "2" });
  assert.equal(at(await e.stepBack()), "2 line g");
  // From a function's first line: the line that called it, not the call event.
  p = await e.stepBack();
  assert.equal(at(p), "9 line f");
  assert.deepEqual(frameOf(p).locals, { n: "3", total: "0", i: "1" });
  // Over the earlier call: the line before, in f.
  assert.equal(at(await e.stepBack()), "8 line f");
  assertFaithful(e, r);
  // Forwards again: the same states, the history reused where the link is the action taken.
  assert.equal(at(await e.step("step_over")), "9 line f");
  assert.equal(at(await e.stepAsDebugger("step_into")), "2 line g", "Step Into stops on the body's first line");
  // Reverse continue: back over the run to the latest hit (the first, x = 0), then to the session's start (f's call: its arguments).
  p = await e.reverseContinue();
  assert.equal(at(p), "4 line g");
  assert.deepEqual(frameOf(p).locals, { x: "0", y: "0" });
  assert.equal(at(await e.reverseContinue()), "6 call f");
  assert.equal(e.cursor, 0);
  assert.equal(await e.stepBack(), e.history[0]);
  assert.match(e.takeNotes().join(), /first state/);
  assertFaithful(e, r);
  // Step Over from a function's last line goes on past its return (kept in the history) to the caller's next line; back from there, over the whole call.
  e.setBreakpoints([]);
  await e.runTo(4);
  assert.equal(at(await e.stepAsDebugger("step_over")), "8 line f");
  assert.equal(at(e.history[e.cursor - 1]), "4 return g");
  assert.equal(at(await e.stepBack()), "9 line f", "back over the whole call, to the line that made it");
});

test("data breakpoints with a condition and a hit count stop at the changes they name, forwards and back", async () => {
  const r = await loop();
  // total: 0 (bound), 0 (g(0)), 2 (g(1)), 6 (g(2)): two changes.
  const e = await engine(r);
  e.setDataBreakpoints([{ watch: { func: "f", path: "total" }, condition: "total > 3" }]);
  assert.deepEqual(frameOf(await e.continue()).locals, { n: "3", total: "6", i: "2" }, "the change where the condition holds");
  assert.equal(at(await e.continue()), "exit normal");
  assert.deepEqual(frameOf(await e.reverseContinue()).locals, { n: "3", total: "6", i: "2" });
  assert.equal(at(await e.reverseContinue()), "6 call f", "the change to 2 does not hold: back to the start");
  // The second change, counted along the run as the session follows it.
  const h = await engine(r);
  h.setDataBreakpoints([{ watch: { func: "f", path: "total" }, hitCondition: "2" }]);
  assert.deepEqual(frameOf(await h.continue()).locals, { n: "3", total: "6", i: "2" });
  assert.equal(h.takeDataHit()?.old, "2");
  // A condition that cannot be evaluated stops, and says why.
  const bad = await engine(r);
  bad.setDataBreakpoints([{ watch: { func: "f", path: "total" }, condition: "total / 0" }]);
  assert.deepEqual(frameOf(await bad.continue()).locals, { n: "3", total: "2", i: "1" });
  assert.match(bad.takeNotes().join("\n"), /breakpoint condition "total \/ 0" of the data breakpoint on total could not be evaluated \(ZeroDivisionError/);
  assert.throws(() => bad.setDataBreakpoints([{ watch: { func: "f", path: "total" }, hitCondition: "often" }]), /hit count "often" is not a number/);
});

test("data breakpoints: continue stops where a watched value changes, reverse continue where it last changed", async () => {
  const r = await loop();
  const e = await engine(r);
  e.setDataBreakpoints([{ watch: { func: "f", path: "total" } }]);
  // total = 0 is its first binding; total += g(0) leaves it 0; total += g(1) makes it 2.
  let p = await e.continue();
  assert.equal(at(p), "8 line f");
  assert.deepEqual(frameOf(p).locals, { n: "3", total: "2", i: "1" });
  let hit = e.takeDataHit();
  assert.deepEqual(hit && [hit.old, hit.value, hit.line], ["0", "2", 9]);
  p = await e.continue();
  assert.deepEqual(frameOf(p).locals, { n: "3", total: "6", i: "2" });
  assert.equal(e.takeDataHit()?.old, "2");
  assert.equal(at(await e.continue()), "exit normal");
  assert.equal(e.takeDataHit(), undefined);
  // Back from the end: where it last changed (6 first seen), then the change before, then the start.
  p = await e.reverseContinue();
  assert.deepEqual(frameOf(p).locals, { n: "3", total: "6", i: "2" });
  hit = e.takeDataHit();
  assert.deepEqual(hit && [hit.old, hit.value, hit.line], ["2", "6", 9]);
  assert.deepEqual(frameOf(await e.reverseContinue()).locals, { n: "3", total: "2", i: "1" });
  assert.equal(at(await e.reverseContinue()), "6 call f");
  assert.equal(e.takeDataHit(), undefined);
  assertFaithful(e, r);
  // A path into an object, watched in a method's frames: where the method changes it.
  const cart = join(mkdtempSync(join(tmpdir(), "ndbg-engine-cart-")), "cart.py");
  writeFileSync(cart, "class Cart:\n    def __init__(self):\n        self.total = 0\n    def add(self, p):\n        self.total += p\n        return self\n\ndef main():\n    c = Cart()\n    c.add(3)\n    c.add(0)\n    c.add(4)\n    return c.total\n");
  // (with the objects a session records: what opens of self)
  const c = await runTrace(cart, { call: "main()", objects: 100, timeout: 20 });
  const ce = new Engine(new RecordedPredictor(c), { evaluator: evaluateValues });
  await ce.start();
  ce.setDataBreakpoints([{ watch: { func: "Cart.add", path: "self.total" } }]);
  p = await ce.continue();
  assert.equal(at(p), "6 line Cart.add");
  hit = ce.takeDataHit();
  assert.deepEqual(hit && [hit.old, hit.value, hit.line], ["0", "3", 5]);
  p = await ce.continue();
  assert.equal(ce.takeDataHit()?.value, "7", "add(0) changed nothing");
  // The same object watched from main's frame (c.total): followed into the methods that change it.
  const oe = new Engine(new RecordedPredictor(c), { evaluator: evaluateValues });
  await oe.start();
  await oe.runTo(10);
  const id = frameOf(oe.current).ids?.c;
  assert.ok(id, "the run names c's identity");
  oe.setDataBreakpoints([{ watch: { func: "main", path: "c.total", object: { id, child: "total" } } }]);
  p = await oe.continue();
  assert.equal(at(p), "6 line Cart.add", "stopped in the method that changed it");
  hit = oe.takeDataHit();
  assert.deepEqual(hit && [hit.old, hit.value, hit.line], ["0", "3", 5]);
  assert.equal(at(await oe.continue()), "6 line Cart.add");
  assert.equal(oe.takeDataHit()?.value, "7");
  // Back from the end to where it last changed, and where its value came from.
  await oe.continue();
  p = await oe.reverseContinue();
  assert.deepEqual([at(p), oe.takeDataHit()?.value], ["6 line Cart.add", "7"]);
  p = await oe.valueOrigin({ func: "main", path: "c.total", object: { id, child: "total" } });
  assert.equal(at(p), "5 line Cart.add", "the statement that set it");
  assert.equal(oe.takeDataHit()?.old, "3");
});

test("a script's session steps back to its first line, and no further; reverse continue stops there", async () => {
  const r = await trace("script", "a = 1\nb = a + 1\nprint(b)\n");
  const e = await engine(r);
  assert.equal(at(await e.stepAsDebugger("step_into")), "1 line <module>");
  await e.stepAsDebugger("step_over");
  await e.stepAsDebugger("step_over");
  assert.equal(at(await e.stepBack()), "2 line <module>");
  assert.equal(at(await e.stepBack()), "1 line <module>");
  assert.equal(at(await e.stepBack()), "1 line <module>", "the module's call event is no stop");
  assert.match(e.takeNotes().join(), /first state/);
  await e.continue();
  assert.equal(at(await e.reverseContinue()), "1 line <module>");
});

test("breakpoints on a line never reached: continue runs to the exit; runTo behaves as continue", async () => {
  const r = await loop();
  const e = await engine(r);
  e.setBreakpoints([{ line: 5 }, { line: 99 }]); // 5 is blank, 99 is past the end
  assert.equal(at(await e.continue()), "exit normal");
  const e2 = await engine(r);
  assert.equal(at(await e2.runTo(3)), "3 line g");
  assert.equal(frameOf(await e2.runTo(3)).locals.x, "1");
  e2.setBreakpoints([{ line: 10 }]);
  assert.equal(at(await e2.runTo(1)), "10 line f", "line 1 has no line event: like continue, to the breakpoint");
  assert.equal(at(await e2.runTo(2)), "exit normal");
  await assert.rejects(e2.runTo(0), RangeError);
  assertFaithful(e2, r);
});

test("conditions: false hits are passed and kept in the history; unevaluable conditions stop with a note", async () => {
  const r = await loop();
  const e = await engine(r);
  e.setBreakpoints([{ line: 4, condition: "x == 2" }]);
  const p = await e.continue();
  assert.deepEqual(frameOf(p).locals, { x: "2", y: "4" });
  assert.deepEqual(e.history.map((h) => h.step.action?.kind ?? "start"), ["start", "continue", "continue", "continue"]);
  assert.deepEqual(e.takeNotes(), []);
  assertFaithful(e, r);
  // reverseContinue only stops where the condition holds: back to the start.
  assert.equal(await e.reverseContinue(), e.history[0]);

  // A condition that never holds: continue runs to the exit.
  const never = await engine(r);
  never.setBreakpoints([{ line: 4, condition: "y > 100" }]);
  assert.equal(at(await never.continue()), "exit normal");

  // A condition that raises counts as true, with a note that says what CPython said.
  const odd = await engine(r);
  odd.setBreakpoints([{ line: 4, condition: "x / y > 1" }]);
  assert.deepEqual(frameOf(await odd.continue()).locals, { x: "0", y: "0" });
  assert.match(odd.takeNotes().join("\n"), /condition "x \/ y > 1" on line 4 could not be evaluated \(ZeroDivisionError: division by zero\)/);

  // Two breakpoints on one line: either condition holding stops.
  const two = await engine(r);
  two.setBreakpoints([{ line: 4, condition: "x == 1" }, { line: 4, condition: "y == 4" }]);
  assert.equal(frameOf(await two.continue()).locals.x, "1");
  assert.equal(frameOf(await two.continue()).locals.x, "2");
});

test("breakpoints that evaluate get the evaluator ready as they are set, before their first hit; plain ones do not", async () => {
  let warmed = 0;
  const evaluator = Object.assign(evaluateValues.bind(null), { warm: () => void warmed++ });
  const e = new Engine(new RecordedPredictor(await loop()), { evaluator });
  e.setBreakpoints([{ line: 4 }, { line: 2, hitCondition: "2" }]);
  assert.equal(warmed, 0);
  e.setBreakpoints([{ line: 4, condition: "x == 2" }]);
  e.setBreakpoints([{ line: 4, logMessage: "x={x}" }]);
  assert.equal(warmed, 2);
  // The sealed CPython's: the child starts at once, and the first run finds it there.
  const executor = new SealedChild();
  try {
    executor.prepare();
    assert.ok(executor.pid !== undefined, "the child started");
    assert.equal((await executor.warm()).python, SEALED_PYTHON);
    assert.equal(executor.starts, 1, "warm() after prepare() starts no second child");
  } finally {
    executor.close();
  }
});

test("maxSteps bounds how many false hits one continue passes", async () => {
  const r = await loop();
  const e = await engine(r, { maxSteps: 2 });
  e.setBreakpoints([{ line: 4, condition: "False" }]);
  const p = await e.continue();
  assert.equal(frameOf(p).locals.x, "1", "stopped at the second hit");
  assert.match(e.takeNotes().join(), /continue stopped after 2 breakpoint hits/);
});

test("stack: innermost first, callers at their latest known states", async () => {
  const r = await trace("fact", FACT_SRC, "fact(3)");
  const e = await engine(r, { historyOnly: true });
  e.setBreakpoints([{ line: 3 }]);
  // Stepping into every call: all callers are known.
  while (!(frameOf(e.current).line === 3 && frameOf(e.current).event === "line")) await e.step("step_into");
  let s = e.stack();
  assert.deepEqual(s.map((f) => [f.line, f.depth, f.locals.n]), [[3, 2, "1"], [4, 1, "2"], [4, 0, "3"]]);
  // After the inner return the stack shrinks.
  await e.step("step_over");
  await e.step("step_over");
  s = e.stack();
  assert.deepEqual(s.map((f) => [f.event, f.depth, f.locals.n]), [["return", 1, "2"], ["line", 0, "3"]]);
  // Jumping straight to the breakpoint: the middle frame was never seen; its caller's last known state stands in.
  const jump = await engine(r, { historyOnly: true });
  jump.setBreakpoints([{ line: 3 }]);
  await jump.continue();
  assert.deepEqual(jump.stack().map((f) => [f.event, f.line, f.depth, f.locals.n]), [["line", 3, 2, "1"], ["call", 1, 0, "3"]]);
  // A recording knows every caller where it stands.
  const exact = await engine(r);
  exact.setBreakpoints([{ line: 3 }]);
  await exact.continue();
  assert.deepEqual(exact.stack().map((f) => [f.event, f.line, f.depth, f.locals.n]), [["line", 3, 2, "1"], ["line", 4, 1, "2"], ["line", 4, 0, "3"]]);
});

test("stack after a finished sibling call, in a sparse history, and inside a generator", async () => {
  const r = await loop();
  // Stepping into the second call of g: the first call's states are older than the caller's latest.
  const e = await engine(r, { historyOnly: true });
  for (const k of ["step_over", "step_over", "step_over", "step_into", "step_return", "step_over", "step_into", "step_into", "step_into"] as const)
    await e.step(k);
  assert.deepEqual(e.stack().map((f) => [f.func, f.line, f.locals.x ?? f.locals.i]), [["g", 2, "1"], ["f", 9, "1"]]);
  // Jumping from one call of g to the next: f's latest known state is where the session began.
  const sparse = await engine(r, { historyOnly: true });
  await sparse.runTo(2);
  await sparse.runTo(2);
  assert.deepEqual(sparse.stack().map((f) => [f.func, f.event, f.line, f.locals.x ?? f.locals.n]), [["g", "line", 2, "1"], ["f", "call", 6, "3"]]);
  const exact = await engine(r);
  await exact.runTo(2);
  await exact.runTo(2);
  assert.deepEqual(exact.stack().map((f) => [f.func, f.event, f.line, f.locals.x ?? f.locals.i]), [["g", "line", 2, "1"], ["f", "line", 9, "1"]]);

  const gen = await trace("gen", "def gen(n):\n    for i in range(n):\n        yield i\n\ndef f():\n    t = 0\n    for x in gen(2):\n        t += x\n    return t\n", "f()");
  const g = await engine(gen, { historyOnly: true });
  while (!(frameOf(g.current).func === "gen" && frameOf(g.current).locals.i === "1")) await g.step("step_into");
  assert.deepEqual(g.stack().map((f) => [f.func, f.event, f.line, f.locals.x]), [["gen", "line", 3, undefined], ["f", "line", 7, "0"]]);
});

test("setVariable edits a copy of the current state; record mode refuses to predict from it", async () => {
  const r = await loop();
  const refused = await engine(r);
  await refused.runTo(3);
  assert.throws(() => refused.setVariable("x", "10"), /record mode replays a real run/);
  assert.equal(frameOf(refused.current).locals.x, "0");
  // Past that refusal, the recording still refuses to predict from an edited state.
  const e = await engine(r, { historyOnly: true });
  await e.runTo(3);
  await e.step("step_into");
  await e.stepBack();
  assert.equal(e.history.length, 3);
  const before = e.current;
  const edited = e.setVariable("x", "10");
  assert.equal(frameOf(edited).locals.x, "10");
  assert.equal(frameOf(before).locals.x, "0", "the recorded state is not changed");
  assert.equal(e.history.length, e.cursor + 1, "the known future is dropped");
  assert.equal(e.current, edited);
  assert.deepEqual(r.frames[edited.ref!].locals.x, "0", "the recording is not changed");
  await assert.rejects(e.step("step_over"), /record mode replays a real run/);
  assert.equal(e.current, edited, "a failed step loses nothing");
  assert.throws(() => e.setVariable("1x", "1"), /not a variable name/);
  assert.throws(() => e.setVariable("nope", "1"), /no local named "nope"/);
  assert.throws(() => e.setVariable("x", "  "), /value is needed/);
  assert.throws(() => e.setVariable(RETURN_VALUE, "1"), /only a return has a return value to set/);
  // Going back in the history is still possible.
  assert.equal(at(await e.stepBack()), "6 call f");
  const done = await engine(r);
  await done.continue();
  assert.throws(() => done.setVariable("x", "1"), /program has ended/);
  // At a return, its value is set like a local.
  const ret = await engine(r, { historyOnly: true });
  while (!(ret.current.step.frame?.event === "return" && ret.current.step.frame.depth === 0)) await ret.step("step_into");
  const atReturn = ret.current;
  const returned = ret.setVariable(RETURN_VALUE, "99");
  assert.equal(frameOf(returned).value, "99");
  assert.deepEqual(frameOf(returned).locals, frameOf(atReturn).locals);
  assert.notEqual(frameOf(atReturn).value, "99", "the recorded state is not changed");
});

test("settle: once per move at its last state, with the breakpoints' conditions; a state it answers instead is the one every reader sees", async () => {
  const r = await loop();
  const recorded = new RecordedPredictor(r);
  const settled: string[] = [];
  const seen: unknown[] = [];
  const wrapped: Predictor = {
    source: recorded.source,
    start: (o) => recorded.start(o),
    predict: (h, a, o) => {
      seen.push(o?.breakpoints);
      return recorded.predict(h, a, o);
    },
    callers: (h) => recorded.callers(h),
    // Stands at y = 99 instead of the first stop in g's return line (as a resync stands at the real state).
    settle: async (h) => {
      const p = h.at(-1)!;
      settled.push(`${h.length - 1}: ${at(p)}`);
      const f = p.step.frame;
      return f?.line === 4 && f.locals.y === "2" ? { ...p, step: { ...p.step, frame: { ...f, locals: { ...f.locals, y: "99" } } }, given: true } : undefined;
    },
    dispose: () => {},
  };
  const e = new Engine(wrapped, { evaluator: evaluateValues });
  await e.start();
  e.setBreakpoints([{ line: 4, condition: "x == 1" }]);
  const p = await e.continue();
  assert.deepEqual(seen.at(-1), [{ line: 4, condition: "x == 1" }], "predictors get the conditions");
  assert.ok(seen.length > 1, "the continue passed a false hit");
  assert.deepEqual(settled, ["0: 6 call f", `${e.cursor}: 4 line g`], "settled after start and once at the continue's last state");
  assert.equal(e.current, p);
  assert.deepEqual(frameOf(p).locals, { x: "1", y: "99" });
  assert.equal((await e.evaluate("y + 1")).value, "100");
  assert.equal(e.stack()[0], p.step.frame);
  assert.equal(e.trajectory().steps[e.cursor].frame?.locals.y, "99");
  // Back moves settle nothing.
  await e.stepBack();
  assert.equal(settled.length, 2);
  // edit stands at a given state, as setVariable does; not while a move runs.
  const step = e.step("step_over");
  assert.throws(() => e.edit(e.current), /step is in progress/);
  await step;
  const here = e.edit({ ...e.current, given: true });
  assert.equal(e.current, here);
  assert.equal(e.history.length, e.cursor + 1, "the known future is dropped");
});

test("evaluate: expressions over the current values, by CPython, sealed, never in the program", async () => {
  const r = await loop();
  const e = await engine(r);
  await e.runTo(4);
  await e.runTo(4);
  assert.equal((await e.evaluate("x + y")).value, "3");
  assert.equal((await e.evaluate("[x] * y")).value, "[1, 1]");
  assert.equal((await e.evaluate("x == 1 and y > 1")).value, "True");
  assert.equal((await e.evaluate("x.bit_length()")).value, "1");
  assert.equal((await e.evaluate("x.to_bytes(2, 'big')")).value, "b'\\x00\\x01'");
  assert.deepEqual(await e.evaluate("print(x, y) or sorted({y: 1, x: 2}.items())"), { value: "[(1, 2), (2, 1)]", stdout: "1 2\n" });
  await assert.rejects(e.evaluate("nope"), /cannot evaluate "nope": NameError: name 'nope' is not defined/);
  await assert.rejects(e.evaluate("open('/etc/hostname').read()"), /cannot evaluate .*(FileNotFoundError|No such file)/);
  await e.continue();
  await assert.rejects(e.evaluate("x"), /program has ended/);
});

test("uncaught exceptions and programs that never start", async () => {
  const r = await trace("raises", "def f(a):\n    b = a + 1\n    raise KeyError(b)\n", "f(1)");
  const e = await engine(r);
  e.setBreakpoints([{ line: 3 }]);
  assert.equal(at(await e.continue()), "3 line f");
  assert.equal(at(await e.step("step_over")), "3 exception f");
  assert.equal(frameOf(e.current).value, "KeyError(2)");
  assert.equal(at(await e.step("step_over")), "3 return f");
  const exit = await e.step("step_over");
  assert.equal(exit.step.exit?.status, "error");
  assert.match(exit.step.exit!.value!, /KeyError\(2\)/);

  const broken = await trace("broken", "def f(:\n    pass\n");
  const b = await engine(broken);
  assert.equal(b.ended, true);
  assert.equal(b.current.step.exit!.status, "error");
  assert.match(b.current.step.exit!.value!, /SyntaxError/);
  assert.equal(await b.stepBack(), b.current);
  assert.deepEqual(b.stack(), []);
});

test("aborted signals: nothing runs and nothing changes", async () => {
  const r = await loop();
  const e = await engine(r);
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(e.step("step_into", ac.signal), { name: "AbortError" });
  await assert.rejects(e.continue(ac.signal), { name: "AbortError" });
  await assert.rejects(e.stepBack(ac.signal), { name: "AbortError" });
  await assert.rejects(e.evaluate("1", ac.signal), { name: "AbortError" });
  assert.equal(e.history.length, 1);
  assert.equal(e.cursor, 0);
  // The engine still works afterwards.
  assert.equal(at(await e.step("step_into")), "7 line f");
});

test("operations issued together run one at a time, in order", async () => {
  const r = await loop();
  const e = await engine(r, { historyOnly: true });
  const [a, b, c] = await Promise.all([e.step("step_into"), e.step("step_into"), e.stepBack()]);
  assert.equal(at(a), "7 line f");
  assert.equal(at(b), "8 line f");
  assert.equal(at(c), "7 line f");
  assert.equal(e.cursor, 1);
  assert.throws(() => {
    void e.step("step_into");
    e.setVariable("n", "1");
  }, /step is in progress/);
});

test("a session before start refuses to step", async () => {
  const e = new Engine(new RecordedPredictor(await loop()), { evaluator: evaluateValues });
  await assert.rejects(e.step("step_into"), /not started/);
  assert.throws(() => e.current, /not started/);
});

test("random walks keep the history a faithful path of the recording", async () => {
  const r = await loop();
  const fact = await trace("fact", FACT_SRC, "fact(4)");
  let seed = 7;
  const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  for (const [run, first] of [[r, 0], [r, 12], [fact, 5]] as const) {
    const e = await engine(run, { first });
    e.setBreakpoints([{ line: 4, condition: "x == 1" }, { line: 9 }, { line: 2 }]);
    for (let i = 0; i < 150; i++) {
      const k = rand(8);
      if (k < 3) await e.step((["step_into", "step_over", "step_return"] as const)[k]);
      else if (k === 3) await e.continue();
      else if (k === 4) await e.runTo(1 + rand(10));
      else if (k === 5) await e.reverseContinue();
      else await e.stepBack();
      assertFaithful(e, run);
      // The current state is the recorded one, with no stray edits.
      const ref = e.current.ref!;
      if (ref < run.frames.length) assert.deepEqual(frameOf(e.current).locals, run.frames[ref].locals);
      e.takeNotes();
    }
  }
});

/** Module code that calls total(), then guarded(), which catches one ValueError and raises another. */
const STOPS_SRC = readFileSync(join(import.meta.dirname, "fixtures", "dap", "stops.py"), "utf8");
const raising = () => trace("raising", STOPS_SRC);

test("Step Out stops at the return, shown in the caller on the calling line with the caller's values then; Step Over goes past a frame's return to the caller's next line", async () => {
  const r = await loop();
  const e = await engine(r);
  await e.runTo(2); // in g(0)
  const p = await e.stepAsDebugger("step_return");
  assert.equal(at(p), "4 return g", "the return of g(0)");
  assert.ok(shownInCaller(frameOf(p)));
  const [, caller] = e.stack();
  assert.deepEqual([caller.func, caller.line, caller.locals.total], ["f", 9, "0"], "the caller on the calling line, before its assignment");
  assertFaithful(e, r);
  // From there, Step Over: the caller's next line (the value just returned stays in the history, before it).
  assert.equal(at(await e.stepAsDebugger("step_over")), "8 line f");
  assert.equal(frameOf(e.history[e.cursor - 1]).event, "return");
  // Step Over from a function's last line goes past its return to the caller's next line, as debugpy's does.
  await e.runTo(4); // g(1)'s last line
  assert.equal(at(await e.stepAsDebugger("step_over")), "8 line f");
  // Step Into from a function's last line stops at its return, shown in the caller.
  await e.runTo(4); // g(2)'s last line
  assert.equal(at(await e.stepAsDebugger("step_into")), "4 return g");
  // Step Back from a return shown in the caller: back over the whole call, to the calling line before it.
  const back = await e.stepBack();
  assert.deepEqual([at(back), frameOf(back).locals.i], ["9 line f", "2"]);
  assertFaithful(e, r);
  // Out of the outermost frame: to the exit.
  assert.equal(at(await e.stepAsDebugger("step_return")), "exit normal");
  assertFaithful(e, r);
});

test("hit conditions count the hits along the history where the condition holds", async () => {
  const r = await loop();
  const xs = async (bp: { line: number; condition?: string; hitCondition?: string }, n: number): Promise<string[]> => {
    const e = await engine(r);
    e.setBreakpoints([bp]);
    const out: string[] = [];
    for (let k = 0; k < n; k++) {
      const p = await e.continue();
      out.push(p.step.exit ? "exit" : frameOf(p).locals.x);
    }
    assertFaithful(e, r);
    return out;
  };
  assert.deepEqual(await xs({ line: 2, hitCondition: "2" }, 2), ["1", "exit"]);
  assert.deepEqual(await xs({ line: 2, hitCondition: ">= 2" }, 3), ["1", "2", "exit"]);
  assert.deepEqual(await xs({ line: 2, hitCondition: "> 1" }, 3), ["1", "2", "exit"]);
  assert.deepEqual(await xs({ line: 2, hitCondition: "< 3" }, 3), ["0", "1", "exit"]);
  assert.deepEqual(await xs({ line: 2, hitCondition: "% 2" }, 2), ["1", "exit"]);
  assert.deepEqual(await xs({ line: 2, hitCondition: "== 3" }, 2), ["2", "exit"]);
  // Only hits where the condition holds count: x > 0 holds at the 2nd and 3rd, so its 2nd hit is x == 2.
  assert.deepEqual(await xs({ line: 2, condition: "x > 0", hitCondition: "2" }, 2), ["2", "exit"]);
  const e = await engine(r);
  for (const bad of ["two", ">= ", "% 0", "=> 2"]) assert.throws(() => e.setBreakpoints([{ line: 2, hitCondition: bad }]), /hit count/, bad);
});

test("log points write their message with {expressions} where they are hit, and do not stop", async () => {
  const r = await loop();
  const e = await engine(r);
  e.setBreakpoints([{ line: 2, logMessage: "g({x}) -> {x * 2}, {{braces}} {[x, 'a']}" }, { line: 10 }]);
  const p = await e.continue();
  assert.equal(at(p), "10 line f", "the log point passed, the breakpoint stopped");
  assert.deepEqual(e.takeLogs().map((l) => l.text), ["g(0) -> 0, {braces} [0, 'a']", "g(1) -> 2, {braces} [1, 'a']", "g(2) -> 4, {braces} [2, 'a']"]);
  assertFaithful(e, r);
  // Each log line comes with the state it was written in.
  const withCondition = await engine(r);
  withCondition.setBreakpoints([{ line: 2, logMessage: "x={x} {nope} {'s'}", condition: "x > 0", hitCondition: ">= 2" }]);
  assert.equal(at(await withCondition.continue()), "exit normal");
  const logs = withCondition.takeLogs();
  assert.deepEqual(logs.map((l) => l.text), ["x=2 <cannot evaluate nope: NameError: name 'nope' is not defined> s"]);
  assert.equal(frameOf(logs[0].state).locals.x, "2");
  // Stepping onto a log point's line writes it too.
  const stepping = await engine(r);
  await stepping.runTo(2);
  stepping.setBreakpoints([{ line: 3, logMessage: "y is {y}" }]);
  await stepping.step("step_over");
  assert.deepEqual(stepping.takeLogs().map((l) => l.text), ["y is 0"]);
  assert.throws(() => stepping.setBreakpoints([{ line: 3, logMessage: "{x" }]), /not closed/);
});

test("exception stops: raised exceptions where they are raised, uncaught ones where the exception that ends the run was raised", async () => {
  const r = await raising();
  assert.equal(r.exit.status, "error");
  const raised = await engine(r);
  raised.setExceptionStops({ raised: true, uncaught: false });
  let p = await raised.continue();
  assert.deepEqual([at(p), frameOf(p).locals.v, frameOf(p).value], ["18 exception check", "-2", "ValueError('negative')"]);
  // The same exception passed up to guarded() is not a new raise: the next stop is check(-5)'s.
  p = await raised.continue();
  assert.deepEqual([at(p), frameOf(p).locals.v], ["18 exception check", "-5"]);
  assert.equal(at(await raised.continue()), "exit error");
  assertFaithful(raised, r);

  const uncaught = await engine(r);
  uncaught.setExceptionStops({ raised: false, uncaught: true });
  p = await uncaught.continue();
  assert.deepEqual([at(p), frameOf(p).locals.v], ["18 exception check", "-5"], "the caught ValueError is passed");
  assert.deepEqual(uncaught.stack().map((f) => f.func), ["check", "guarded", "<module>"]);
  assertFaithful(uncaught, r);
  // On from there: the exception unwinds to the exit.
  assert.equal(at(await uncaught.continue()), "exit error");

  // A breakpoint before the exception still stops first; without exception stops the run ends.
  const both = await engine(r);
  both.setExceptionStops({ raised: true, uncaught: true });
  both.setBreakpoints([{ line: 28 }]); // out.append(0)
  assert.equal(at(await both.continue()), "18 exception check");
  assert.equal(at(await both.continue()), "28 line guarded");
  const none = await engine(r);
  assert.equal(at(await none.continue()), "exit error");
  // A program that ends normally: uncaught stops change nothing.
  const normal = await engine(await loop());
  normal.setExceptionStops({ raised: false, uncaught: true });
  assert.equal(at(await normal.continue()), "exit normal");
});

test("the engine asks the predictor only where an expression reads a value known by its repr alone; CPython's own answers and errors stand", async () => {
  const r = await trace("objects", "class Cart:\n    pass\n\ndef f(x):\n    cart = Cart()\n    y = x + 1\n    return y\n", "f(2)");
  // The recording, answering questions as a chat model does (a recording itself answers none).
  const recorded = new RecordedPredictor(r);
  const asked: string[] = [];
  const answering: Predictor = {
    source: recorded.source,
    start: (o) => recorded.start(o),
    predict: (h, a, o) => recorded.predict(h, a, o),
    evaluate: async (_h, expression) => (asked.push(expression), "42"),
    dispose: () => {},
  };
  const e = new Engine(answering, { evaluator: evaluateValues });
  await e.start();
  await e.runTo(6);
  assert.equal((await e.evaluate("x * 10")).value, "20");
  assert.equal((await e.evaluate("cart.total()")).value, "42");
  assert.match((await e.evaluate(" cart ")).value, /^<\w+\.Cart object at 0x\.\.\.>$/, "a name alone is its repr, an object's too");
  await assert.rejects(e.evaluate("x / 0"), /ZeroDivisionError: division by zero/);
  await assert.rejects(e.evaluate("nope"), /NameError/);
  assert.match((await e.evaluate("['a'*10**6]*10**6")).value, /^\['aaa.*…\(cut\)$/);
  assert.deepEqual(asked, ["cart.total()"]);
});
