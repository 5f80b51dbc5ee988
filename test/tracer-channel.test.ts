// The tracer against programs that attack it, over its real boundary (a Python process running
// adapter/python/tracer.py). The program shares its process with the tracer, so it can write into
// the record channel (the tracer's copy of standard output, descriptor 3), fork, turn tracing off,
// hold values too large to write, and start processes that outlive it. None of that may crash the
// driver, pass forged states on, cut the recording silently, or leave a process running.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RecordError, type TraceOptions } from "../adapter/real/run.js";
import { runTrace, TraceBatch } from "../adapter/real/hostRun.js";
import { runSealed, sealedChild } from "../adapter/real/sealed.js";
import { spawnSync } from "node:child_process";
import { alive, stillAlive } from "./support/processes.js";

let dir = "";
before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-tracer-channel-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function program(text: string): string {
  const file = join(dir, `p${n++}.py`);
  writeFileSync(file, text);
  return file;
}
const trace = (text: string, opts: TraceOptions = {}) => runTrace(program(text), opts);

const forged: [string, string, RegExp][] = [
  ["null", "null", /a record is a JSON object, not null/],
  ["an array", "[1, 2]", /a record is a JSON object, not an array/],
  ["not JSON", "{oops", /a record is not JSON/],
  ['line "NaN"', '{"event": "line", "line": "NaN", "depth": 0, "func": "f", "locals": {}}', /"line" is "NaN", not a positive integer/],
  ["line 0", '{"event": "line", "line": 0, "depth": 0, "func": "f", "locals": {}}', /"line" is 0, not a positive integer/],
  ["a negative depth", '{"event": "line", "line": 1, "depth": -1, "func": "f", "locals": {}}', /"depth" is -1/],
  ["a path outside the folder", '{"event": "line", "line": 1, "depth": 0, "func": "f", "file": "/etc/passwd", "locals": {}}', /"file" is "\/etc\/passwd", not a path inside the program's folder/],
  ["a path climbing out", '{"event": "line", "line": 1, "depth": 0, "func": "f", "file": "../../etc/passwd", "locals": {}}', /not a path inside the program's folder/],
  ["a local that is not a repr", '{"event": "line", "line": 1, "depth": 0, "func": "f", "locals": {"x": 3}}', /the local "x" is not a repr/],
  ["an unknown event", '{"event": "jump", "line": 1, "depth": 0, "func": "f", "locals": {}}', /"event" is "jump"/],
  ["an exit with a made-up status", '{"event": "exit", "status": "fine"}', /an exit's "status" is "fine"/],
  // The tracer writes its Python version once, before the program runs: a program cannot change it.
  ["a second start record", '{"event": "start", "python": "3.12"}', /a start record after the run began/],
  ["a start record with a bad version", '{"event": "start", "python": "2.7"}', /a start's "python" is "2.7"/],
];

for (const [what, record, message] of forged) {
  test(`a program that writes ${what} into the record channel ends the run with a message`, async () => {
    const text = `import os\nos.write(3, ${JSON.stringify(record + "\n")}.encode())\nprint("never shown")\n`;
    await assert.rejects(trace(text), (e: Error) => {
      assert.ok(e instanceof RecordError, String(e));
      assert.match(e.message, /^The trace is not valid \(record \d+: /);
      assert.match(e.message, message);
      return true;
    });
  });
}

test("a batch gives the forged record's run an error exit and goes on with the next program", async () => {
  const batch = new TraceBatch({});
  try {
    // In batch mode the requests come in on descriptor 3 and the channel is descriptor 4; the
    // driver reads only records with the request's id (1, the first).
    const bad = await batch.trace({ program: program(`import os\nos.write(4, b'{"id": 1, "event": "line", "line": "NaN"}\\n')\n`) });
    assert.equal(bad.exit.status, "error");
    assert.match(bad.exit.value!, /The trace is not valid .*"line" is "NaN"/);
    const ok = await batch.trace({ program: program("x = 1\n") });
    assert.equal(ok.exit.status, "normal");
    assert.equal(ok.frames.at(-1)!.locals.x, "1");
  } finally {
    await batch.close();
  }
});

test("a forked child does not write into its parent's trace", async () => {
  const r = await trace("import os\npid = os.fork()\nif pid == 0:\n    child = 1\n    os._exit(0)\nos.waitpid(pid, 0)\nparent = 2\n");
  assert.equal(r.exit.status, "normal");
  assert.ok(!r.frames.some((f) => f.line === 4 || f.line === 5), `the child's lines are in the trace: ${r.frames.map((f) => f.line)}`);
  assert.ok(r.frames.some((f) => f.line === 7));
});

// A program that fights the tracer: it replaces json.dumps and os.write (what the tracer writes
// records with) and turns tracing off. The tracer is no part of it: the run goes on, traced, to its
// end, with python3's output, on this machine (record mode) and sealed (predict mode).
const FIGHTS = `import json, os, sys
json.dumps = lambda *a, **k: "not json"
os.write = lambda fd, data: len(data)
sys.settrace(None)
print(json.dumps({"a": 1}), sys.gettrace())
def f(x):
    return x * 2
total = f(20) + 2
print(total)
`;

test("a program that replaces json.dumps and os.write and calls sys.settrace(None) is traced to its end, with python3's output, in record and predict modes", async () => {
  const file = program(FIGHTS);
  const python = spawnSync("python3", [file], { encoding: "utf8" }).stdout;
  assert.equal(python, "not json None\n42\n");
  for (const r of [await runTrace(file), await runSealed(file)]) {
    assert.equal(r.exit.status, "normal", r.exit.value);
    assert.equal(r.frames.map((f) => f.stdout ?? "").join("") + (r.exit.stdout ?? ""), python);
    assert.ok(r.frames.some((f) => f.func === "f" && f.event === "return" && f.value === "40"), "f's frame was traced after sys.settrace(None)");
    assert.deepEqual(r.frames.filter((f) => f.depth === 0 && f.event === "line").map((f) => f.line), [1, 2, 3, 4, 5, 6, 8, 9]);
  }
  sealedChild().close();
});

// More of the same: print, sys.stdout and sys.monitoring taken, modules the tracer imports
// removed from sys.modules, and an object whose __repr__, __eq__ and __del__ raise.
const FIGHTS_MORE = `import builtins, io, json, sys
class Loud:
    def __repr__(self):
        raise RuntimeError("no repr")
    def __eq__(self, other):
        raise RuntimeError("no eq")
    __hash__ = object.__hash__
    def __del__(self):
        raise RuntimeError("no del")
real_print = builtins.print
builtins.print = lambda *a, **k: real_print("printed:", *a, **k)
if hasattr(sys, "monitoring"):
    sys.monitoring.use_tool_id(3, "mine")
sys.stdout, kept = io.StringIO(), sys.stdout
sys.stdout = kept
for name in ("json", "io", "linecache", "traceback", "os"):
    sys.modules.pop(name, None)
x = Loud()
y = [x, 1]
del x, y
def f(n):
    return n + 1
total = f(41)
print(total)
`;

test("a program that takes print, sys.stdout and sys.monitoring, removes the tracer's modules from sys.modules and raises in __repr__, __eq__ and __del__ is traced to its end, in record and predict modes", async () => {
  const file = program(FIGHTS_MORE);
  const python = spawnSync("python3", [file], { encoding: "utf8" }).stdout;
  assert.equal(python, "printed: 42\n");
  // (line 13 runs where sys.monitoring is: 3.12 and later, as the sealed CPython)
  const hostMonitors = spawnSync("python3", ["-c", "import sys; print(hasattr(sys, 'monitoring'))"], { encoding: "utf8" }).stdout.trim() === "True";
  for (const [r, monitors] of [[await runTrace(file), hostMonitors], [await runSealed(file), true]] as const) {
    assert.equal(r.exit.status, "normal", r.exit.value);
    assert.equal(r.frames.map((f) => f.stdout ?? "").join("") + (r.exit.stdout ?? ""), python);
    assert.equal(r.frames.find((f) => f.line === 20 && f.event === "line")?.locals.x, "<repr failed: RuntimeError>");
    assert.ok(r.frames.some((f) => f.func === "f" && f.event === "return" && f.value === "42"), "f's frame was traced");
    const lines = r.frames.filter((f) => f.depth === 0 && f.event === "line").map((f) => f.line);
    assert.deepEqual(lines, [1, 2, 10, 11, 12, ...(monitors ? [13] : []), 14, 15, ...[16, 17, 16, 17, 16, 17, 16, 17, 16, 17], 16, 18, 19, 20, 21, 23, 24]);
  }
  sealedChild().close();
});

test("a 256 MiB bytearray local is cut while its repr is written", async () => {
  const t0 = performance.now();
  const r = await trace("big = bytearray(256 * 1024 * 1024)\nshared = [[[0] * 1000] * 1000] * 1000\ndone = 1\n", { maxRepr: 100, timeout: 30 });
  const ms = performance.now() - t0;
  assert.equal(r.exit.status, "normal");
  const last = r.frames.at(-1)!;
  assert.equal(last.locals.big, "bytearray(b'" + "\\x00".repeat(22) + "…(cut)");
  assert.equal(last.locals.shared.length, 100 + "…(cut)".length);
  assert.ok(last.locals.shared.startsWith("[[[0, 0, 0"));
  assert.ok(ms < 5000, `it took ${Math.round(ms)} ms`);
});

test("children the program started in sessions of their own are gone when the run ends", async () => {
  const pids = join(dir, "children.txt");
  const r = await trace(
    `import os, subprocess\n` +
      `a = subprocess.Popen(["sleep", "300"], start_new_session=True)\n` +
      `b = subprocess.Popen(["sleep", "300"])\n` +
      `open(${JSON.stringify(pids)}, "w").write("%d %d" % (a.pid, b.pid))\n`,
  );
  assert.equal(r.exit.status, "normal");
  const started = readFileSync(pids, "utf8").split(" ").map(Number);
  assert.deepEqual(await stillAlive(started), []);
});

test("an aborted run kills the program and what it started, and rejects at once", async () => {
  const pids = join(dir, "aborted.txt");
  const ac = new AbortController();
  const run = trace(
    `import os, subprocess\n` +
      `a = subprocess.Popen(["sleep", "300"], start_new_session=True)\n` +
      `open(${JSON.stringify(pids)}, "w").write("%d %d" % (os.getpid(), a.pid))\n` +
      `exec("while True: pass")\n`,
    { timeout: 300, signal: ac.signal },
  );
  const until = Date.now() + 10_000;
  while (!existsSync(pids) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 100));
  const started = readFileSync(pids, "utf8").split(" ").map(Number);
  assert.deepEqual(started.filter(alive), started, "running before the abort");
  ac.abort(new Error("the session ended"));
  await assert.rejects(run, /the session ended/);
  assert.deepEqual(await stillAlive(started), []);
});
