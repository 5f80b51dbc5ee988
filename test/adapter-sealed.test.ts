// Predict mode over the real protocol, as users get it: the built adapter runs the program sealed
// (CPython in WebAssembly, adapter/real/sealed.ts) and the bundled model fills only its holes.
// A script with a class, methods and a caught exception: every stop is the real run's (a record
// session of the same file is the truth), shown as known, in an untrusted workspace too (the
// sealed run needs no trust). With an unfinished method, the model's value is marked "predicted"
// and the rest stays known. `compute: false` is the model alone: every value marked.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { ROOT, buildDist } from "./support/dist.js";
import { THREAD, evaluateHere, inspect, isGroup, isPredicted, launchToFirstStop, openSession, shown, stopAfter, type Stop } from "./support/dap.js";
import { realPython } from "./support/pythons.js";

const T = { timeout: 240_000 };
let dir = "";
let shop = "";
let unfinished = "";
let py312: string | undefined;

// examples/shop.py, and examples/shop_unfinished.py: the same lines with Cart.total() not written yet.
const SHOP = readFileSync(join(ROOT, "examples", "shop.py"), "utf8");

before(async () => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-sealed-"));
  shop = join(dir, "shop.py");
  writeFileSync(shop, SHOP);
  unfinished = join(dir, "unfinished.py");
  writeFileSync(unfinished, readFileSync(join(ROOT, "examples", "shop_unfinished.py"), "utf8"));
  const p = await realPython("3.12");
  py312 = typeof p === "string" ? undefined : p.exe;
});

after(() => rmSync(dir, { recursive: true, force: true }));

const MOVES: ((dc: DebugClient) => Promise<unknown>)[] = [
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.stepInRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.stepOutRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
];

async function walk(launch: Record<string, unknown>, program: string): Promise<{ stops: Stop[]; console: string }> {
  const s = await openSession(120_000);
  try {
    const output: string[] = [];
    s.dc.on("output", (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
    await launchToFirstStop(s.dc, { program, stopOnEntry: true, ...launch }, program);
    const stops = [await inspect(s.dc)];
    for (const move of MOVES) {
      await stopAfter(s.dc, move);
      stops.push(await inspect(s.dc));
    }
    return { stops, console: output.join("") };
  } finally {
    await s.dc.stop();
  }
}

test("predict mode runs a script with a class sealed: every stop is the real run's, known, without workspace trust", T, async () => {
  // The truth runs with a CPython of the sealed run's minor version where one is installed (3.12: the same frames).
  const truth = await walk({ mode: "record", trusted: true, ...(py312 ? { python: py312 } : {}) }, shop);
  const sealed = await walk({ mode: "predict", trusted: false }, shop);
  assert.deepEqual(sealed.stops.map(shown), truth.stops.map(shown));
  assert.match(sealed.console, /runs sealed \(CPython 3\.12 in WebAssembly/);
  for (const stop of sealed.stops) {
    assert.doesNotMatch(stop.scope.name, /Predicted/, `${shown(stop)}: ${stop.scope.name}`);
    assert.ok(!stop.vars.some(isPredicted), shown(stop));
  }
  // The method's state has the object, as debugpy shows it (its repr).
  assert.ok(sealed.stops.some((s) => s.frame.name.startsWith("Cart.") && s.vars.some((v) => v.name === "self" && /Cart object/.test(v.value))));
});

test("predict mode: an unfinished method's value is the model's and marked; the run goes on from it, known before it", T, async () => {
  const s = await openSession(120_000);
  try {
    const output: string[] = [];
    s.dc.on("output", (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
    await launchToFirstStop(s.dc, { program: unfinished, mode: "predict", threads: 1, stopOnEntry: true }, unfinished);
    // Run to the line after the hole's call: `due` is the model's value.
    const line = readFileSync(unfinished, "utf8").split("\n").findIndex((l) => l.startsWith("print(cart.owner")) + 1;
    await s.dc.setBreakpointsRequest({ source: { path: unfinished }, breakpoints: [{ line }] });
    await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD));
    const stop = await inspect(s.dc);
    assert.equal(stop.frame.line, line, shown(stop));
    const due = stop.vars.find((v) => v.name === "due");
    assert.ok(due, shown(stop));
    assert.ok(isPredicted(due), `due is marked: ${due.type}`);
    assert.ok(!isPredicted(stop.vars.find((v) => v.name === "cart")), "cart ran for real");
    // The print reads the model's value: what it writes is marked as coming from a prediction.
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const console = output.join("");
    assert.match(console, /^\[from a predicted value\] ana pays .+$/m);
    assert.match(console, /^skipped: qty must be positive$/m, "output before the hole is the program's own, unmarked");
    assert.match(console, /Cart\.total\(\) \(not written yet\)/);
    assert.match(console, /predict · Cart\.total\(\) at line \d+ = .+ \(predicted, \d+%\)/);
  } finally {
    await s.dc.stop();
  }
});

test("compute: false is the model alone: every value is marked as predicted", T, async () => {
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program: shop, mode: "predict", compute: false, threads: 1, stopOnEntry: true }, shop);
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const stop = await inspect(s.dc);
    assert.match(stop.scope.name, /Predicted/);
    // (debugpy's groups of functions and classes hold values; each value is marked)
    const values = stop.vars.filter((v) => !isGroup(v));
    assert.ok(values.length > 0 && values.every(isPredicted), shown(stop));
  } finally {
    await s.dc.stop();
  }
});

test("a file that does not parse is predicted by the model, and the Debug Console says why", T, async () => {
  const broken = join(dir, "broken.py");
  writeFileSync(broken, "def f(x):\n    return x +\n\ny = f(1)\n");
  const s = await openSession(120_000);
  try {
    const output: string[] = [];
    s.dc.on("output", (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
    await launchToFirstStop(s.dc, { program: broken, mode: "predict", threads: 1, stopOnEntry: true }, broken);
    assert.match(output.join(""), /the file does not parse \(SyntaxError.*\): it cannot run, and the model predicts every state/);
  } finally {
    await s.dc.stop();
  }
});

test("the sealed CPython is the launch's Python version where one is carried (3.12, 3.13); one that is not is told which one the run has", T, async () => {
  const program = join(dir, "version.py");
  writeFileSync(program, "import sys\nversion = '%d.%d' % sys.version_info[:2]\ndone = True\n");
  for (const [asked, runs] of [["3.13", "3.13"], ["3.12", "3.12"], ["3.11", "3.12"]]) {
    const s = await openSession(120_000);
    try {
      await launchToFirstStop(s.dc, { program, mode: "predict", pythonVersion: asked, stopOnEntry: false }, program, [{ line: 3 }]);
      assert.equal((await inspect(s.dc)).vars.find((v) => v.name === "version")?.value, `'${runs}'`);
      assert.match(s.text(), new RegExp(`predict · the program runs sealed \\(CPython ${runs.replace(".", "\\.")} in WebAssembly`));
      if (asked !== runs) assert.match(s.text(), /predict · the sealed run has CPython 3\.12 and 3\.13 only: its states are 3\.12's, not 3\.11's/);
      else assert.doesNotMatch(s.text(), /the sealed run has CPython/);
    } finally {
      await s.dc.stop();
    }
  }
});

test("expressions over a state's values are the session's CPython's too: a 3.13 run's log point past its first window reads 3.13", T, async () => {
  const program = join(dir, "minor.py");
  writeFileSync(program, "import sys\nversion = '%d.%d' % sys.version_info[:2]\nfor i in range(6000):\n    pass\ndone = True\nend = 1\n");
  for (const minor of ["13", "12"]) {
    const s = await openSession(120_000);
    try {
      await launchToFirstStop(s.dc, { program, mode: "predict", pythonVersion: `3.${minor}`, stopOnEntry: false }, program, [{ line: 5, logMessage: "minor {__import__('sys').version_info[1]} of {version}" }, { line: 6 }]);
      assert.equal((await inspect(s.dc)).frame.line, 6);
      assert.match(s.text(), /predict · the run goes past 10,000 events/);
      assert.match(s.text(), new RegExp(`^minor ${minor} of 3\\.${minor}$`, "m"));
    } finally {
      await s.dc.stop();
    }
  }
});

test("a run of 1,000,000 events is debugged as a short one: its states are recorded a window at a time, by running it again to where a move lands", T, async () => {
  const program = join(dir, "long.py");
  writeFileSync(
    program,
    ["def work(n):", "    total = 0", "    for i in range(n):", "        total += i * i", "    return total", "", "", "result = work(500000)", "print(result)", ""].join("\n"),
  );
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: false }, program, [{ line: 5 }]);
    assert.match(s.text(), /predict · the run goes past 10,000 events: its states are recorded that many at a time/);
    // The breakpoint after the loop: the state, its caller, and the frame's own values, exact.
    const { frame, vars } = await inspect(s.dc);
    assert.equal(frame.line, 5);
    assert.deepEqual(Object.fromEntries(vars.map((v) => [v.name, v.value])), { n: "500000", total: "41666541666750000", i: "499999" });
    const stack = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.deepEqual(stack.map((f) => [f.name, f.line]), [["work", 5], ["<module>", 8]]);
    assert.equal((await s.dc.evaluateRequest({ expression: "total", frameId: stack[0].id, context: "hover" })).body.result, "41666541666750000");
    // Back one statement: the loop's last test, then the last iteration's line.
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    assert.equal((await inspect(s.dc)).frame.line, 3);
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    assert.deepEqual(((await inspect(s.dc)).vars.find((v) => v.name === "i") ?? {}).value, "499999");
    // Step Out stops at the breakpoint on its way (as debugpy's does); again, out on the calling line with the value returned, result not yet assigned; then over to the next line.
    await stopAfter(s.dc, (dc) => dc.stepOutRequest(THREAD));
    assert.equal((await inspect(s.dc)).frame.line, 5);
    await stopAfter(s.dc, (dc) => dc.stepOutRequest(THREAD));
    const out = await inspect(s.dc);
    assert.deepEqual([out.frame.name, out.frame.line, out.vars.find((v) => v.name === "(return) work")?.value, out.vars.some((v) => v.name === "result")], ["<module>", 8, "41666541666750000", false]);
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const after = await inspect(s.dc);
    assert.deepEqual([after.frame.line, after.vars.find((v) => v.name === "result")?.value], [9, "41666541666750000"]);
    // Back over the whole call (no window reaches that far: a run looks for the line before it),
    // and over it again: it stops at the breakpoint inside, 1,000,000 events in, as debugpy's does.
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    assert.equal((await inspect(s.dc)).frame.line, 8);
    assert.equal((await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD))).body?.reason, "breakpoint");
    assert.equal((await inspect(s.dc)).frame.line, 5);
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal((await inspect(s.dc)).frame.line, 9);
    // Reverse Continue runs back to the breakpoint, 4 events before: the window holds it.
    await stopAfter(s.dc, (dc) => dc.reverseContinueRequest(THREAD));
    assert.equal((await inspect(s.dc)).frame.line, 5);
    const end = await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD));
    assert.equal(end.event, "terminated");
    assert.match(s.text(), /^41666541666750000$/m);
  } finally {
    await s.dc.stop();
  }
});

test("Step Over stops at a breakpoint however deep into the call it passes, as debugpy's does: 300,000 iterations into a long run's call, past its windows", T, async () => {
  const program = join(dir, "deep.py");
  writeFileSync(program, ["def work(n):", "    total = 0", "    for i in range(n):", "        total += i * i", "    return total", "", "", "result = work(500000)", "print(result)", ""].join("\n"));
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: true }, program);
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal((await inspect(s.dc)).frame.line, 8);
    await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: 4, condition: "i == 300000" }] });
    const hit = await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal(hit.body?.reason, "breakpoint");
    const there = await inspect(s.dc);
    assert.deepEqual([there.frame.name, there.frame.line, there.vars.find((v) => v.name === "i")?.value], ["work", 4, "300000"]);
    // On from there: Step Over stays in the loop (the window recorded from the stop holds it).
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const on = await inspect(s.dc);
    assert.deepEqual([on.frame.line, on.vars.find((v) => v.name === "i")?.value], [3, "300000"]);
  } finally {
    await s.dc.stop();
  }
});

test("Pause stops a run that never ends where it is, as debugpy's does: the state there is exact, and the session goes on (step, step back, continue, pause again)", T, async () => {
  const program = join(dir, "spin.py");
  writeFileSync(program, ["def spin(box):", "    while True:", "        box['n'] += 1", "", "", "box = {'n': 0}", "spin(box)", ""].join("\n"));
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: true }, program);
    const count = async (): Promise<number> => {
      const [frame] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
      return Number((await s.dc.evaluateRequest({ expression: "box['n']", frameId: frame.id, context: "watch" })).body.result);
    };
    // Continue runs on with no breakpoint to stop it; Pause a while later lands where the run is
    // (the run that a Continue makes goes again through all before where it began: not there).
    const pauseSoon = async (ms: number): Promise<DebugProtocol.Event> => {
      const stopped = stopAfter(s.dc, async (dc) => {
        await dc.continueRequest(THREAD);
        await new Promise((res) => setTimeout(res, ms));
        await dc.pauseRequest(THREAD);
      });
      return stopped;
    };
    const paused = await pauseSoon(1000);
    assert.equal(paused.event, "stopped");
    assert.equal((paused as DebugProtocol.StoppedEvent).body.reason, "pause");
    const stack = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.deepEqual(stack.map((f) => f.name), ["spin", "<module>"]);
    assert.ok([2, 3].includes(stack[0].line), `paused on line ${stack[0].line}`);
    // Far past the run's first window (10,000 events): where the run was, not where it began.
    const first = await count();
    assert.ok(first > 20_000, `paused at n = ${first}`);
    // The session goes on from there: a step and a step back are the run's own states.
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    const stepped = await count();
    assert.ok(stepped === first + 1, `stepped from n = ${first} to ${stepped}`);
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    assert.equal(await count(), first);
    const again = await pauseSoon(2500);
    assert.equal((again as DebugProtocol.StoppedEvent).body.reason, "pause");
    assert.ok((await count()) > first, "a second pause lands later in the run");
  } finally {
    await s.dc.stop();
  }
});

test("Pause of a Continue that goes fast (a breakpoint the run never reaches; no trace function in the loop) lands in the loop at a state a counting run reaches again, and the session goes on", T, async () => {
  const program = join(dir, "spin_fast.py");
  writeFileSync(program, ["def spin(box):", "    while box['n'] >= 0:", "        box['n'] += 1", "", "", "box = {'n': 0}", "spin(box)", "print('never')", ""].join("\n"));
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: true }, program);
    await s.dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [{ line: 8 }] });
    const paused = await stopAfter(s.dc, async (dc) => {
      await dc.continueRequest(THREAD);
      await new Promise((res) => setTimeout(res, 1000));
      await dc.pauseRequest(THREAD);
    });
    assert.equal((paused as DebugProtocol.StoppedEvent).body.reason, "pause");
    const top = async (): Promise<{ line: number; n: number }> => {
      const [frame] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
      return { line: frame.line, n: Number((await s.dc.evaluateRequest({ expression: "box['n']", frameId: frame.id, context: "watch" })).body.result) };
    };
    const first = await top();
    assert.ok([2, 3].includes(first.line) && first.n > 0, JSON.stringify(first));
    // The state is the run's own: a step and a step back from it are its neighbours.
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal((await top()).n, first.n + 1);
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    assert.deepEqual(await top(), first);
  } finally {
    await s.dc.stop();
  }
});

test("Pause of a long run that is in C code (it runs no Python line to stop on) stops the move where it began, and the session goes on", T, async () => {
  const program = join(dir, "spin_c.py");
  writeFileSync(program, ["def spin(n):", "    for i in range(n):", "        pass", "", "", "spin(20000)", "import itertools", "total = sum(itertools.count())", ""].join("\n"));
  const s = await openSession(120_000);
  try {
    await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: true }, program);
    const line = async (): Promise<number> => (await s.dc.stackTraceRequest(THREAD)).body.stackFrames[0].line;
    const entry = await line();
    const paused = await stopAfter(s.dc, async (dc) => {
      await dc.continueRequest(THREAD);
      await new Promise((res) => setTimeout(res, 1500));
      await dc.pauseRequest(THREAD);
    });
    assert.equal((paused as DebugProtocol.StoppedEvent).body.reason, "pause");
    assert.equal(await line(), entry);
    // The session goes on from there, in a sealed child started anew.
    await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    assert.equal(await line(), 6);
  } finally {
    await s.dc.stop();
  }
});

test("the Debug Console runs statements in the stopped frame, as debugpy's does: their effects stay, a value set is one, and stepping back and forth replays them; in a short run and at a stop past a long run's first window (where the run held there runs them)", T, async () => {
  // The long run: 12,000 events before the call, so that its stops lie past the first window.
  for (const pad of [[], ["for _ in range(6000):", "    pass"]]) {
    const program = join(dir, `console${pad.length}.py`);
    const at = (line: number): number => line + pad.length;
    writeFileSync(
      program,
      [
        ...pad,
        "class Cart:",
        "    def __init__(self):",
        "        self.items = []",
        "",
        "    def add(self, name, qty):",
        "        self.items.append((name, qty))",
        "",
        "",
        "def total(prices):",
        "    cart = Cart()",
        "    count = len(prices)",
        '    cart.add("book", count)',
        "    return count, len(cart.items)",
        "",
        "",
        "result = total([3, 4])",
        "print(result)",
        "",
      ].join("\n"),
    );
    const s = await openSession(120_000);
    try {
      await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: false }, program, [{ line: at(12) }]);
      assert.equal(/the run goes past 10,000 events/.test(s.text()), pad.length > 0);
      const repl = (expression: string): Promise<string> => evaluateHere(s.dc, expression, "repl");
      const local = async (name: string): Promise<string | undefined> => (await inspect(s.dc)).vars.find((v) => v.name === name)?.value;
      // A statement rebinds a function's local; a method call changes an object: the state shows both.
      assert.equal(await repl("count = 10"), "");
      assert.equal(await local("count"), "10");
      assert.equal(await repl('cart.add("pen", 1)'), "None");
      assert.equal(await repl("cart.items"), "[('pen', 1)]");
      assert.equal(await repl("count + 1"), "11");
      await assert.rejects(repl("missing + 1"), /NameError: name 'missing' is not defined/);
      // The caller's frame, from the stack, as the lines left it.
      const stack = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
      assert.deepEqual(stack.map((f) => [f.name, f.line]), [["total", at(12)], ["<module>", at(16)]]);
      // The run goes on from there.
      await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
      assert.equal((await inspect(s.dc)).frame.line, at(13));
      assert.equal(await repl("cart.items"), "[('pen', 1), ('book', 10)]");
      // Back over the line and forward again: the statements are the run's input, run again where they were.
      await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
      assert.deepEqual([(await inspect(s.dc)).frame.line, await local("count")], [at(12), "10"]);
      await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
      assert.equal(await repl("cart.items"), "[('pen', 1), ('book', 10)]");
      // Setting a variable is a statement too: any local, to any expression of the frame.
      const { vars, scope } = await inspect(s.dc);
      assert.ok(vars.some((v) => v.name === "count"));
      const set = await s.dc.setVariableRequest({ variablesReference: scope.variablesReference, name: "count", value: "count * 2" });
      assert.equal(set.body.value, "20");
      await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD));
      assert.match(s.text(), /\(20, 2\)/);
    } finally {
      await s.dc.stop();
    }
  }
});

test("every run starts in a clean interpreter: what a run changed in a module is gone when the Debug Console runs the program again", T, async () => {
  const program = join(dir, "pi.py");
  writeFileSync(program, "import math, json\nbefore = math.pi\nmath.pi = 3\njson.dumps = None\nafter = math.pi\n");
  const s = await openSession(120_000);
  try {
    const { first } = await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: false }, program, [{ line: 5 }]);
    assert.equal(first.event, "stopped");
    const [frame] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal(frame.line, 5);
    const repl = (expression: string): Promise<string> => s.dc.evaluateRequest({ expression, frameId: frame.id, context: "repl" }).then((r) => r.body.result);
    // Each line runs the program again to this stop, from a clean interpreter: the run's own changes are there, no earlier run's.
    assert.equal(await repl("before"), "3.141592653589793");
    assert.equal(await repl("math.pi"), "3");
    assert.equal(await repl("before + 0"), "3.141592653589793");
    assert.equal(await repl("json.dumps is None"), "True");
  } finally {
    await s.dc.stop();
  }
});

test("an expression asked at a stop is answered by the run held there, as debugpy's live frame answers it: the first runs the program to the stop, the next need no run (what a call did is there for them), another stop starts afresh; a short run and one of 1,000,000 events", T, async () => {
  const counter = ["class Counter:", "    def __init__(self):", "        self.calls = 0", "", "    def bump(self):", "        self.calls += 1", "        return self.calls", "", ""];
  const programs = [
    { name: "held_short.py", lines: [...counter, "c = Counter()", "total = 0", "for i in range(3):", "    total += i", "print(total)", ""], stop: 14, result: "total", value: "3" },
    { name: "held_long.py", lines: [...counter, "def work(n):", "    total = 0", "    for i in range(n):", "        total += i * i", "    return total", "", "", "c = Counter()", "result = work(500000)", "print(result)", ""], stop: 19, result: "result", value: "41666541666750000" },
  ];
  for (const p of programs) {
    const program = join(dir, p.name);
    writeFileSync(program, p.lines.join("\n"));
    const s = await openSession(120_000);
    try {
      await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: false }, program, [{ line: p.stop }]);
      const watch = (expression: string): Promise<string> => evaluateHere(s.dc, expression, "watch");
      assert.equal((await inspect(s.dc)).frame.line, p.stop, p.name);
      // Run again for each, both would be 1: the second is the held run's, whose object the first call changed.
      assert.equal(await watch("c.bump()"), "1", p.name);
      assert.equal(await watch("c.bump()"), "2", p.name);
      assert.equal(await watch(`${p.result} + 0`), p.value, p.name);
      // The state shown is the run's own: the watches' calls are no part of it.
      const { vars } = await inspect(s.dc);
      const c = vars.find((v) => v.name === "c");
      assert.ok(c && c.variablesReference > 0, p.name);
      const fields = (await s.dc.variablesRequest({ variablesReference: c.variablesReference })).body.variables;
      assert.equal(fields.find((v) => v.name === "calls")?.value, "0", p.name);
      // Another stop (one back) is another run's: its first call is 1 again.
      await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
      assert.notEqual((await inspect(s.dc)).frame.line, p.stop, p.name);
      assert.equal(await watch("c.bump()"), "1", p.name);
      // A move lets the held run go: the session goes on to the end with the program's output.
      const end = await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD));
      assert.equal(end.event, "stopped");
      assert.equal((await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD))).event, "terminated", p.name);
      assert.match(s.text(), new RegExp(`^${p.value}$`, "m"), p.name);
    } finally {
      await s.dc.stop();
    }
  }
});

test("a breakpoint's condition and a log point's parts are read in the program's frame, as debugpy reads them: an object's attributes and methods, not values rebuilt from reprs", T, async () => {
  const program = join(dir, "cart.py");
  writeFileSync(
    program,
    [
      "class Cart:",
      "    def __init__(self):",
      "        self.items = []",
      "    def add(self, name):",
      "        self.items.append(name)",
      "",
      "cart = Cart()",
      "for name in ['pen', 'ink', 'pad', 'nib', 'cap']:",
      "    cart.add(name)",
      "print(len(cart.items))",
      "",
    ].join("\n"),
  );
  const s = await openSession(120_000);
  try {
    const output: string[] = [];
    s.dc.on("output", (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
    const { first, breakpoints } = await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: false }, program, [
      { line: 9, condition: "len(cart.items) >= 3" },
      { line: 9, logMessage: "has {cart.items[-1] if cart.items else None} of {len(cart.items)}" },
    ]);
    assert.ok(breakpoints.every((b) => b.verified), JSON.stringify(breakpoints));
    assert.equal(first.event, "stopped");
    const [frame] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal(frame.line, 9);
    // The fourth time line 9 runs: three items in the cart (the object is no literal: rebuilt from its repr, it has no value).
    assert.equal((await s.dc.evaluateRequest({ expression: "name", frameId: frame.id, context: "watch" })).body.result, "'nib'");
    assert.ok(!output.join("").includes("could not be evaluated"), output.join(""));
    const logs = output.filter((o) => o.includes(" of "));
    assert.deepEqual(logs.map((o) => o.trim()), ["has None of 0", "has pen of 1", "has ink of 2", "has pad of 3"]);
  } finally {
    await s.dc.stop();
  }
});

test("a run of 200,000 iterations continues to where a breakpoint's condition holds, read in the program's frame as it runs: one run, not one per hit", T, async () => {
  const program = join(dir, "long_condition.py");
  writeFileSync(program, "class Box:\n    def __init__(self):\n        self.n = 0\n\n\nbox = Box()\ntotal = 0\nfor i in range(200000):\n    box.n += 1\n    total += i\nprint(total)\n");
  const s = await openSession(120_000);
  try {
    const output: string[] = [];
    s.dc.on("output", (e: DebugProtocol.OutputEvent) => output.push(e.body.output));
    // (on an object: its repr is no value, so only the program's frame can tell whether it holds)
    const { first } = await launchToFirstStop(s.dc, { program, mode: "predict", stopOnEntry: false }, program, [{ line: 10, condition: "box.n == 150000 and total > 0" }]);
    assert.equal(first.event, "stopped");
    const [frame] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    const watch = async (expression: string): Promise<string> => (await s.dc.evaluateRequest({ expression, frameId: frame.id, context: "watch" })).body.result;
    assert.equal(frame.line, 10);
    assert.equal(await watch("i"), "149999");
    assert.equal(await watch("total"), String((149999 * 149998) / 2));
    // The stop is told as the run read the condition there, with no note that it could not be read.
    assert.ok(!output.join("").includes("could not be evaluated"), output.join(""));
    // No other hit holds: the next Continue runs to the end.
    const end = await stopAfter(s.dc, (dc) => dc.continueRequest(THREAD));
    assert.equal(end.event, "terminated");
  } finally {
    await s.dc.stop();
  }
});
