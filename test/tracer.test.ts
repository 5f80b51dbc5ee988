// The real tracer over its real boundary: a Python process running adapter/python/tracer.py.
// Expected line sequences were worked out by hand from the fixture programs (Python 3.11 event
// rules; NDBG_TEST_PYTHON picks another interpreter).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tracerScript, type TraceOptions } from "../adapter/real/run.js";
import { findPython, runTrace, TraceBatch } from "../adapter/real/hostRun.js";
import type { Frame } from "../adapter/format/trajectory.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = (name: string): string => path.join(here, "fixtures", "programs", name);
const chosen = process.env.NDBG_TEST_PYTHON || undefined;
const python = await findPython(chosen);
const minor = Number(execFileSync(python, ["-c", "import sys; print(sys.version_info[1])"], { encoding: "utf8" }).trim());
const trace = (name: string, opts: TraceOptions = {}) => runTrace(fixture(name), { python: chosen, ...opts });

/** "event line depth func", the position of a frame. */
const where = (f: Frame): string => `${f.event} ${f.line} ${f.depth} ${f.func}`;

test("recursion: depth grows with each call and returns unwind it", async () => {
  const r = await trace("recursion.py");
  assert.deepEqual(r.frames.map(where), [
    "call 1 0 <module>",
    "line 1 0 <module>",
    "line 7 0 <module>",
    "call 1 1 fact",
    "line 2 1 fact",
    "line 4 1 fact",
    "call 1 2 fact",
    "line 2 2 fact",
    "line 4 2 fact",
    "call 1 3 fact",
    "line 2 3 fact",
    "line 3 3 fact",
    "return 3 3 fact",
    "return 4 2 fact",
    "return 4 1 fact",
    "return 7 0 <module>",
  ]);
  assert.deepEqual(r.frames.filter((f) => f.event === "return").map((f) => f.value), ["1", "2", "6", "None"]);
  assert.deepEqual(r.frames[3].locals, { n: "3" });
  assert.deepEqual(r.frames.at(-1)!.locals, { fact: "<function fact at 0x...>", result: "6" });
  assert.deepEqual(r.exit, { status: "normal" });
  assert.equal(r.source, "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n\n\nresult = fact(3)\n");
});

test("an entry call runs the module body untraced and starts at depth 0", async () => {
  const r = await trace("recursion.py", { call: "fact(2)" });
  assert.deepEqual(r.frames.map(where), [
    "call 1 0 fact",
    "line 2 0 fact",
    "line 4 0 fact",
    "call 1 1 fact",
    "line 2 1 fact",
    "line 3 1 fact",
    "return 3 1 fact",
    "return 4 0 fact",
  ]);
  assert.equal(r.frames.at(-1)!.value, "2");
});

test("exceptions: caught, through finally, uncaught; an unwound frame returns no value", async () => {
  const r = await trace("exceptions.py", { call: "main()" });
  assert.deepEqual(r.frames.map(where), [
    "call 14 0 main",
    "line 15 0 main",
    "line 16 0 main",
    "call 1 1 risky",
    "line 2 1 risky",
    "line 3 1 risky",
    "exception 3 1 risky",
    "return 3 1 risky",
    "exception 16 0 main",
    "line 17 0 main",
    "line 18 0 main",
    "line 19 0 main",
    "call 7 1 cleanup",
    "line 8 1 cleanup",
    "line 9 1 cleanup",
    "call 1 2 risky",
    "line 2 2 risky",
    "line 3 2 risky",
    "exception 3 2 risky",
    "return 3 2 risky",
    "exception 9 1 cleanup",
    "line 11 1 cleanup",
    "return 11 1 cleanup",
    "exception 19 0 main",
    "return 19 0 main",
  ]);
  const f = r.frames;
  assert.equal(f[6].value, "ValueError(-1)");
  assert.equal(f[8].value, "ValueError(-1)");
  for (const i of [7, 19, 22, 24]) assert.ok(!("value" in f[i]), `frame ${i} (${where(f[i])}) has no value`);
  assert.deepEqual(f[10].locals, { e: "ValueError(-1)" });
  assert.deepEqual(f[11].locals, { caught: "'ValueError(-1)'" }); // `except ... as e` deletes e
  assert.deepEqual(f[22].locals, { x: "0" }); // the finally clause ran before the unwinding return
  assert.deepEqual(r.exit, { status: "error", value: "ValueError(-2)" });
});

test("a return records its caller as it stands (the calling line, the callee's effects seen); the caller's next event, what was returned", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ndbg-tracer-returns-"));
  try {
    const file = path.join(dir, "returns.py");
    writeFileSync(file, "def grow(xs):\n    xs.append(1)\n    return len(xs)\n\ndef fail():\n    raise ValueError()\n\ndef main():\n    xs = []\n    n = grow(xs) + grow(xs)\n    try:\n        fail()\n    except ValueError:\n        pass\n    return n\n");
    const r = await runTrace(file, { python: chosen, call: "main()" });
    const returns = r.frames.flatMap((f, i) => (f.event === "return" ? [i] : []));
    const [first, second, unwound, last] = returns;
    // The caller on the calling line, xs appended to, n not yet assigned.
    assert.deepEqual(r.frames[first].caller, { event: "line", line: 10, depth: 0, func: "main", locals: { xs: "[1]" } });
    assert.deepEqual(r.frames[second].caller?.locals, { xs: "[1, 1]" });
    // The event after each return, in the caller, says what was returned (not after a call: grow's second call follows the first return).
    assert.equal(r.frames[first + 1].event, "call");
    assert.equal(r.frames[first + 1].returned, undefined);
    assert.deepEqual([where(r.frames[second + 1]), r.frames[second + 1].returned], ["line 11 0 main", { func: "grow", value: "2" }]);
    // An unwound frame returned nothing: its caller's exception event shows nothing returned.
    assert.equal(r.frames[unwound].value, undefined);
    assert.deepEqual([r.frames[unwound + 1].event, r.frames[unwound + 1].returned], ["exception", undefined]);
    // The outermost frame has no traced caller.
    assert.equal(r.frames[last].caller, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("generators: each resumption is a call event, its depth taken from the new caller", async () => {
  const r = await trace("generators.py", { call: "main()" });
  assert.deepEqual(r.frames.map(where), [
    "call 7 0 main",
    "line 8 0 main",
    "line 9 0 main",
    "call 1 1 countdown",
    "line 2 1 countdown",
    "line 3 1 countdown",
    "return 3 1 countdown",
    "line 10 0 main",
    "line 9 0 main",
    "call 3 1 countdown",
    "line 4 1 countdown",
    "line 2 1 countdown",
    "line 3 1 countdown",
    "return 3 1 countdown",
    "line 10 0 main",
    "line 9 0 main",
    "call 3 1 countdown",
    "line 4 1 countdown",
    "line 2 1 countdown",
    "return 2 1 countdown",
    ...(minor < 10 ? ["exception 9 0 main"] : []), // the for loop's StopIteration, reported before 3.10
    "line 11 0 main",
    "return 11 0 main",
  ]);
  assert.deepEqual(r.frames.filter((f) => f.func === "countdown" && f.event === "return").map((f) => f.value), ["2", "1", "None"]);
  assert.deepEqual(r.frames[9].locals, { n: "2" });
  assert.equal(r.frames.at(-1)!.value, "3");

  const e = await trace("generators.py", { call: "elsewhere()" });
  assert.deepEqual(e.frames.map(where), [
    "call 18 0 elsewhere",
    "line 19 0 elsewhere",
    "line 20 0 elsewhere",
    "call 1 1 countdown",
    "line 2 1 countdown",
    "line 3 1 countdown",
    "return 3 1 countdown",
    "line 21 0 elsewhere",
    "call 14 1 advance",
    "line 15 1 advance",
    "call 3 2 countdown", // resumed from advance: one deeper than its first run
    "line 4 2 countdown",
    "line 2 2 countdown",
    "line 3 2 countdown",
    "return 3 2 countdown",
    "return 15 1 advance",
    "line 22 0 elsewhere",
    "return 22 0 elsewhere",
    // The unfinished generator dies with elsewhere's locals: Python closes it by raising
    // GeneratorExit at its yield, and it unwinds (a return without a value). 3.13 traces none of it.
    ...(minor < 13 ? ["call 3 0 countdown", "exception 3 0 countdown", "return 3 0 countdown"] : []),
  ]);
  assert.equal(e.frames[7].locals.g, "<generator object countdown at 0x...>");
  assert.equal(e.frames[17].value, "5");
  if (minor < 13) {
    assert.equal(e.frames[19].value, "GeneratorExit()");
    assert.ok(!("value" in e.frames[20]));
  }
});

test("comprehensions: their own frames (inlined from 3.12 on), iterator locals hidden", async () => {
  const r = await trace("comprehensions.py", { call: "squares(3)" });
  if (minor >= 12) {
    // PEP 709: list and dict comprehensions run inside the function's frame.
    assert.ok(r.frames.every((f) => f.func === "squares"));
  } else {
    // Qualified names before 3.11 too (the tracer asks the function object).
    const lc = "squares.<locals>.<listcomp>";
    const dc = "squares.<locals>.<dictcomp>";
    assert.deepEqual(r.frames.map(where), [
      "call 1 0 squares",
      "line 2 0 squares",
      `call 2 1 ${lc}`,
      `line 2 1 ${lc}`,
      `line 2 1 ${lc}`,
      `line 2 1 ${lc}`,
      `line 2 1 ${lc}`,
      `return 2 1 ${lc}`,
      "line 3 0 squares",
      `call 3 1 ${dc}`,
      `line 3 1 ${dc}`,
      `line 3 1 ${dc}`,
      `line 3 1 ${dc}`,
      `return 3 1 ${dc}`,
      "return 3 0 squares",
    ]);
    assert.deepEqual(r.frames[2].locals, {}); // ".0", the iterator, is not shown
    assert.deepEqual(r.frames.slice(3, 7).map((f) => f.locals.i), [undefined, "0", "1", "2"]);
    assert.equal(r.frames[7].value, "[0, 1, 4]");
    assert.deepEqual(r.frames[12].locals, { k: "'b'", v: "1" });
  }
  assert.equal(r.frames.at(-1)!.value, "{'a': 0, 'b': 1}");
});

test("the trace says which Python ran it (minor version), in one process and in a batch", async () => {
  const r = await trace("comprehensions.py", { call: "squares(3)" });
  assert.equal(r.python, `3.${minor}`);
  const batch = new TraceBatch({ python: chosen });
  try {
    const b = await batch.trace({ source: "x = [i for i in range(2)]\n" });
    assert.equal(b.python, `3.${minor}`);
    assert.equal(b.exit.status, "normal");
  } finally {
    await batch.close();
  }
});

test("classes: methods carry qualified names; a __repr__ that raises is caught", async () => {
  const r = await trace("classes.py", { call: "main()" });
  const init = "Counter.__init__"; // before 3.11 too: the tracer takes the function's __qualname__
  assert.deepEqual(r.frames.map(where), [
    "call 13 0 main",
    "line 14 0 main",
    `call 2 1 ${init}`,
    `line 3 1 ${init}`,
    `return 3 1 ${init}`,
    "line 15 0 main",
    "call 5 1 Counter.bump",
    "line 6 1 Counter.bump",
    "line 7 1 Counter.bump",
    "return 7 1 Counter.bump",
    "line 16 0 main",
    "return 16 0 main",
  ]);
  // Before `self.count` exists the class's own __repr__ fails, and the tracer says so.
  assert.deepEqual(r.frames[2].locals, { self: "<repr failed: AttributeError>", start: "5" });
  assert.deepEqual(r.frames[4].locals, { self: "Counter(5)", start: "5" });
  assert.equal(r.frames[8].locals.self, "Counter(6)");
  assert.equal(r.frames[9].value, "6");
  assert.equal(r.frames.at(-1)!.value, "Counter(6)");
});

test("a class body is a frame: its bookkeeping names are hidden, its dunder methods are not", async () => {
  const r = await trace("classes.py");
  assert.deepEqual(r.frames.map(where), [
    "call 1 0 <module>",
    "line 1 0 <module>",
    "call 1 1 Counter",
    "line 1 1 Counter",
    "line 2 1 Counter",
    "line 5 1 Counter",
    "line 9 1 Counter",
    "return 9 1 Counter",
    "line 13 0 <module>",
    "return 13 0 <module>",
  ]);
  assert.deepEqual(r.frames[7].locals, {
    __init__: "<function Counter.__init__ at 0x...>",
    bump: "<function Counter.bump at 0x...>",
    __repr__: "<function Counter.__repr__ at 0x...>",
  });
  assert.deepEqual(r.frames[9].locals, { Counter: "<class '__main__.Counter'>", main: "<function main at 0x...>" });
});

test("stdout goes to the frame after it was written; stderr to the result; modules are not locals", async () => {
  const r = await trace("output.py");
  assert.deepEqual(
    r.frames.map((f) => [where(f), f.stdout]),
    [
      ["call 1 0 <module>", undefined],
      ["line 1 0 <module>", undefined],
      ["line 2 0 <module>", undefined],
      ["line 3 0 <module>", "a\n"],
      ["line 4 0 <module>", undefined],
      ["line 5 0 <module>", "b"],
      ["line 6 0 <module>", undefined],
      ["return 6 0 <module>", "c\n"],
    ],
  );
  assert.deepEqual(r.frames.at(-1)!.locals, { x: "1" }); // no sys, no __name__
  assert.deepEqual(r.exit, { status: "normal" });
  assert.equal(r.stderr, "warn\n");
});

test("calls back from builtins and library code (sorted key=, re.sub) are traced", async () => {
  const r = await trace("callbacks.py", { call: "main()" });
  assert.deepEqual(r.frames.map(where), [
    "call 12 0 main",
    "line 13 0 main",
    ...["ccc", "a", "bb"].flatMap(() => ["call 4 1 weight", "line 5 1 weight", "return 5 1 weight"]),
    "line 14 0 main",
    ...[1, 2].flatMap(() => ["call 8 1 upper", "line 9 1 upper", "return 9 1 upper"]),
    "line 15 0 main",
    "return 15 0 main",
  ]);
  assert.deepEqual(r.frames.filter((f) => f.func === "weight" && f.event === "call").map((f) => f.locals.word), ["'ccc'", "'a'", "'bb'"]);
  assert.equal(r.frames.find((f) => f.func === "upper")!.locals.m, "<re.Match object; span=(0, 1), match='a'>");
  assert.equal(r.frames.at(-1)!.value, "(['a', 'bb', 'ccc'], 'ABc')");
});

test("an infinite loop ends at the event limit", async () => {
  const r = await trace("forever.py", { maxEvents: 50 });
  assert.equal(r.frames.length, 50);
  assert.deepEqual(r.exit, { status: "limit", value: "the limit of 50 events was reached" });
  assert.equal(r.limit, "events");
  if (minor >= 10) {
    // call, line 1, then lines 2 and 3 in turn: the 50th frame is line 3 of the 24th turn.
    assert.deepEqual(r.frames.slice(0, 6).map(where), ["call 1 0 <module>", "line 1 0 <module>", "line 2 0 <module>", "line 3 0 <module>", "line 2 0 <module>", "line 3 0 <module>"]);
    assert.deepEqual(r.frames.slice(2).map((f) => f.line), Array.from({ length: 48 }, (_, i) => (i % 2 ? 3 : 2)));
    assert.equal(r.frames.at(-1)!.locals.n, "23");
  } else {
    // Before 3.10 `while True:` gives no line event: line 3 repeats.
    assert.deepEqual(r.frames.slice(2).map((f) => f.line), Array(48).fill(3));
    assert.equal(r.frames.at(-1)!.locals.n, "47");
  }
});

test("the time limit ends a loop, a sleep, and a call stuck in C", async () => {
  const loop = await trace("forever.py", { maxEvents: 1e9, timeout: 0.3 });
  assert.equal(loop.exit.status, "limit");
  assert.equal(loop.limit, "time");
  assert.ok(loop.frames.length > 3);

  // Blocked in time.sleep: the tracer's watchdog writes the exit record.
  const sleep = await trace("sleeper.py", { timeout: 0.3 });
  assert.deepEqual(sleep.exit, { status: "limit", value: "the time limit of 0.3 s was reached" });
  assert.equal(sleep.limit, "time");
  assert.equal(sleep.frames.at(-1)!.line, 4);
  assert.equal(sleep.frames.at(-1)!.stdout, "going to sleep\n");

  // Holding the interpreter lock in C: only the driver's kill ends it.
  const busy = await trace("busy_c.py", { timeout: 0.3 });
  assert.deepEqual(busy.exit, { status: "limit", value: "the time limit was reached (the program did not stop: it was killed)" });
  assert.equal(busy.limit, "time");
  assert.equal(busy.frames.at(-1)!.line, 2);
});

test("runaway output ends at the output limit, cut exactly there", async () => {
  const r = await trace("chatty.py", { maxOutput: 100 });
  assert.equal(r.exit.status, "limit");
  assert.equal(r.limit, "output");
  const text = r.frames.map((f) => f.stdout ?? "").join("") + (r.exit.stdout ?? "");
  assert.equal(text.length, 100);
  assert.ok(text.startsWith("line 0\nline 1\n"));
});

test("a syntax error is an error exit, not a rejection", async () => {
  const r = await trace("syntax_error.py");
  assert.deepEqual(r.frames, []);
  assert.equal(r.exit.status, "error");
  assert.match(r.exit.value!, /^SyntaxError\('invalid syntax', \('.*syntax_error\.py', 1, /);
  const bad = await trace("recursion.py", { call: "fact(" });
  assert.match(bad.exit.value!, /^SyntaxError\(/);
  const missing = await trace("recursion.py", { call: "nothing(1)" });
  assert.deepEqual(missing.exit, { status: "error", value: `NameError("name 'nothing' is not defined")` });
});

test("a missing program or a bad option is a clear rejection", async () => {
  await assert.rejects(trace("no_such_program.py"), /Program not found: .*no_such_program\.py/);
  await assert.rejects(runTrace(path.join(here, "fixtures")), /Program is not a file/);
  await assert.rejects(trace("recursion.py", { timeout: -1 }), /timeout must be a positive number/);
  await assert.rejects(findPython(path.join(here, "fixtures", "no-python")), /The configured Python ".*no-python" cannot be used/);
});

test("long reprs are capped with a marker; addresses are normalised", async () => {
  const r = await trace("reprs.py", { call: "main()", maxRepr: 40 });
  const last = r.frames.at(-1)!;
  const capped = "'" + "x".repeat(39) + "…(+12 chars)"; // the repr is 52 characters
  assert.equal(last.locals.big, capped);
  assert.equal(last.value, capped);
  assert.equal(last.locals.thing, "<reprs.Opaque object at 0x...>");
  const full = await trace("reprs.py", { call: "main()", maxRepr: 0 });
  assert.equal(full.frames.at(-1)!.value, "'" + "x".repeat(50) + "'");
});

test("a program of several files: frames of other user files carry their path", async () => {
  const r = await trace("multifile.py", { call: "main()" });
  assert.deepEqual(
    r.frames.map((f) => `${where(f)} ${f.file ?? "-"}`),
    [
      "call 4 0 main -",
      "line 5 0 main -",
      "call 2 1 Square.__init__ shapes.py",
      "line 3 1 Square.__init__ shapes.py",
      "return 3 1 Square.__init__ shapes.py",
      "line 6 0 main -",
      "call 5 1 Square.area shapes.py",
      "line 6 1 Square.area shapes.py",
      "return 6 1 Square.area shapes.py",
      "return 6 0 main -",
    ],
  );
  assert.equal(r.frames[2].locals.self, "<shapes.Square object at 0x...>");
  assert.equal(r.frames.at(-1)!.value, "9");
});

test("unbounded recursion raises RecursionError at the program's limit, and the unwinding is traced", async () => {
  const r = await trace("deep.py");
  assert.deepEqual(r.exit, { status: "error", value: "RecursionError('maximum recursion depth exceeded')" });
  const calls = r.frames.filter((f) => f.event === "call" && f.func === "down");
  // The module is frame 1 of 1000: down(0) .. down(998) run, down(999) is refused.
  assert.equal(calls.length, 999);
  assert.equal(calls.at(-1)!.locals.n, "998");
  const unwinding = r.frames.slice(r.frames.findIndex((f) => f.event === "exception"));
  assert.equal(unwinding.length, 2 * 1000);
  assert.deepEqual(unwinding.slice(-2).map(where), ["exception 5 0 <module>", "return 5 0 <module>"]);
});

test("the tracer and the files it loads are Python 3.8 syntax", () => {
  const dir = path.dirname(tracerScript());
  for (const name of ["tracer.py", "console.py", "processes.py", "batch.py", "holes.py", "guard.py"]) {
    execFileSync(python, ["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), feature_version=(3, 8))", path.join(dir, name)]);
  }
});

test("batch: many programs through one process, the same frames as one process each", async () => {
  const batch = new TraceBatch({ python: chosen });
  try {
    const cases: [string, TraceOptions][] = [
      ["recursion.py", {}],
      ["exceptions.py", { call: "main()" }],
      ["generators.py", { call: "elsewhere()" }],
      ["callbacks.py", { call: "main()" }],
      ["output.py", {}],
      ["multifile.py", { call: "main()" }],
      ["reprs.py", { call: "main()", maxRepr: 40 }],
    ];
    for (const [name, opts] of cases) {
      const single = await trace(name, opts);
      const batched = await batch.trace({ program: fixture(name), ...opts });
      assert.deepEqual(batched, single, name);
    }
    // Requests made at once are queued and answered in order, each with its own result.
    const names = ["recursion.py", "output.py", "forever.py"];
    const together = await Promise.all(names.map((name) => batch.trace({ program: fixture(name), maxEvents: 30 })));
    assert.deepEqual(together.map((r) => [r.frames.length, r.exit.status]), [[16, "normal"], [8, "normal"], [30, "limit"]]);
    const text = await batch.trace({ source: "def f(a):\n    return a * 2\n", call: "f(21)" });
    assert.deepEqual(text.frames.map(where), ["call 1 0 f", "line 2 0 f", "return 2 0 f"]);
    assert.equal(text.frames.at(-1)!.value, "42");
    assert.equal(text.source, "def f(a):\n    return a * 2\n");
    assert.equal(batch.starts, 1);
    await assert.rejects(batch.trace({ program: fixture("no_such_program.py") }), /Program not found/);
    await assert.rejects(batch.trace({}), /needs a program or a source/);
  } finally {
    await batch.close();
  }
});

test("batch: global state is restored between programs, and limits are per program", async () => {
  const batch = new TraceBatch({ python: chosen });
  try {
    const before = await batch.trace({ program: fixture("report.py") });
    await batch.trace({ program: fixture("state.py") });
    const after = await batch.trace({ program: fixture("report.py") });
    assert.equal(after.exit.status, "normal");
    assert.equal(after.frames.at(-1)!.stdout, before.frames.at(-1)!.stdout);
    assert.equal(before.frames.at(-1)!.stdout, "1000 1 programs __main__\n");
    const limited = await batch.trace({ program: fixture("forever.py"), maxEvents: 20 });
    assert.equal(limited.frames.length, 20);
    assert.equal(limited.limit, "events");
    const unlimited = await batch.trace({ program: fixture("recursion.py") });
    assert.equal(unlimited.exit.status, "normal");
    assert.equal(batch.starts, 1);
  } finally {
    await batch.close();
  }
});

test("batch: a program that must be killed costs a restart, not the batch", async () => {
  const batch = new TraceBatch({ python: chosen, timeout: 0.3 });
  try {
    const sleep = await batch.trace({ program: fixture("sleeper.py") }); // the watchdog ends the process
    assert.equal(sleep.limit, "time");
    const busy = await batch.trace({ program: fixture("busy_c.py") }); // the driver kills it
    assert.deepEqual(busy.exit, { status: "limit", value: "the time limit was reached (the program did not stop: it was killed)" });
    assert.equal(busy.limit, "time");
    const ok = await batch.trace({ program: fixture("recursion.py"), timeout: 5 });
    assert.equal(ok.frames.at(-1)!.value, "None");
    assert.equal(batch.starts, 3);
  } finally {
    await batch.close();
  }
});

test("runTrace writes nothing next to the program and leaves no process behind", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ndbg-tracer-"));
  try {
    writeFileSync(path.join(dir, "main.py"), "import helper\nprint(helper.twice(2))\n");
    writeFileSync(path.join(dir, "helper.py"), "def twice(x):\n    return 2 * x\n");
    const r = await runTrace(path.join(dir, "main.py"), { python: chosen });
    assert.equal(r.frames.find((f) => f.func === "twice")!.file, "helper.py");
    assert.deepEqual(r.exit, { status: "normal" });
    assert.equal(r.frames.at(-1)!.stdout, "4\n");
    const listing = execFileSync("ls", ["-A", dir], { encoding: "utf8" }).trim().split("\n");
    assert.deepEqual(listing.sort(), ["helper.py", "main.py"]); // no __pycache__
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
