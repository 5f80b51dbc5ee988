// The model alone ("compute": false: predict mode's model, which users also meet in compare mode
// and in every hole of a sealed run) over the real protocol: the built adapter (`node dist/adapter.js`) driven by
// @vscode/debugadapter-testsupport's DebugClient, with a real GGUF (a tiny random-weight llama
// written by training/gguf.py --random) run by node-llama-cpp on the CPU. A random model's
// answers are garbage, so these tests check the protocol and validity: every stop is a state of
// the program (its lines are executable lines), an invalid answer is an error in the console
// with the session still stopped where it was, and the user's program never runs. The history
// test uses the shipped model instead: stepping back needs a step answered with a state.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { parsePython } from "../adapter/pyread/parse.js";
import type { PySource } from "../adapter/pyread/source.js";
import { NDBG, ROOT, buildDist } from "./support/dist.js";
import { randomModel, shippedModel } from "./support/models.js";
import { THREAD, firstOf, launchToFirstStop, openSession, stopAfter, type Session as Client } from "./support/dap.js";

const BROKEN = join(ROOT, "test", "fixtures", "broken");
const T = { timeout: 180_000 };

let dir = "";
/** A random model that mostly writes short frames (seed 2), and one that mostly writes until cut off (seed 0). */
let gguf = "";
let ggufLong = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-predict-"));
  gguf = randomModel(join(dir, "random.gguf"), 2);
  ggufLong = randomModel(join(dir, "random-long.gguf"), 0);
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

// ---- a client ----

interface Session extends Client {
  events: DebugProtocol.Event[];
}

async function open(): Promise<Session> {
  const s = await openSession(60_000);
  const events: DebugProtocol.Event[] = [];
  s.dc.on("ndbg/model", (e: DebugProtocol.Event) => events.push(e));
  return { ...s, events };
}

const base = (args: Record<string, unknown>): Record<string, unknown> => ({ mode: "predict", compute: false, model: gguf, gpu: "cpu", threads: 1, stopOnEntry: true, ...args });

/** initialize, launch in predict mode, breakpoints during configuration; resolves with the first stop. */
async function launch(s: Session, args: Record<string, unknown>, lines: number[] = []): Promise<DebugProtocol.StoppedEvent> {
  const { first: e } = await launchToFirstStop(s.dc, base(args), args.program as string, lines.map((line) => ({ line })));
  assert.equal(e.event, "stopped", "the session starts stopped at the entry");
  return e as DebugProtocol.StoppedEvent;
}

/** A move: its stop (a predicted state, or the same state after an error in the console) or the end. */
const move = (s: Session, request: (dc: DebugClient) => Promise<unknown>): Promise<DebugProtocol.Event> => stopAfter(s.dc, request);

async function stack(s: Session): Promise<DebugProtocol.StackFrame[]> {
  return (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
}

async function locals(s: Session, frameId: number): Promise<Record<string, DebugProtocol.Variable>> {
  const scopes = (await s.dc.scopesRequest({ frameId })).body.scopes;
  const vars = (await s.dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
  return Object.fromEntries(vars.map((v) => [v.name, v]));
}

/** Every frame of the program stands on an executable line (a <module> call on line 1). */
async function assertStackValid(s: Session, src: PySource, program: string): Promise<DebugProtocol.StackFrame[]> {
  const frames = await stack(s);
  assert.ok(frames.length > 0);
  for (const f of frames) {
    if (f.source?.path !== program) continue;
    if (f.name === "<module>" && f.line === 1) continue;
    assert.ok(src.lines.includes(f.line), `frame ${f.name} stands on line ${f.line}, not an executable line (${src.lines.join(",")})`);
  }
  return frames;
}

test("launch predicts from the entry call: its arguments as variables, the device in the ndbg/model event", T, async () => {
  const s = await open();
  try {
    const program = join(BROKEN, "syntax_error.py");
    const stop = await launch(s, { program, call: "fine(3, 'a', scale=2)" });
    assert.equal(stop.body.reason, "entry");
    const [top] = await stack(s);
    assert.deepEqual([top.name, top.line], ["fine", 14]);
    const vars = await locals(s, top.id);
    assert.equal(vars.n.value, "3");
    assert.equal(vars.scale.value, "2");
    assert.equal(vars.rest.value, "('a',)");
    assert.ok(vars.rest.variablesReference > 0, "a tuple expands");
    assert.equal(vars.opts.value, "{}");
    const ev = s.events.find((e) => e.body?.device);
    assert.ok(ev, "an ndbg/model event");
    assert.equal(ev.body.device, "cpu");
    assert.equal(typeof ev.body.name, "string");
    assert.match(s.text("console"), /Model .* on cpu/);
  } finally {
    await s.dc.stop();
  }
});

test("every step stops on a state of the program, or reports the model's error and stays; the session never crashes", T, async () => {
  for (const [file, call] of [["unfinished.py", "run('1 + 2')"], ["half_written.py", "fib(4)"], ["missing_import.py", "mean([1, 2])"]] as const) {
    const s = await open();
    try {
      const program = join(BROKEN, file);
      const src = await parsePython(readFileSync(program, "utf8"));
      await launch(s, { program, call }, [src.lines[src.lines.length - 1]]);
      let before = await assertStackValid(s, src, program);
      const moves: ((dc: DebugClient) => Promise<unknown>)[] = [
        (dc) => dc.nextRequest(THREAD), (dc) => dc.stepInRequest(THREAD), (dc) => dc.stepOutRequest(THREAD),
        (dc) => dc.nextRequest(THREAD), (dc) => dc.continueRequest(THREAD),
      ];
      for (const m of moves) {
        const errorsBefore = (s.text().match(/Could not go on/g) ?? []).length;
        const e = await move(s, m);
        if (e.event === "terminated") break;
        const frames = await assertStackValid(s, src, program);
        const failed = (s.text().match(/Could not go on/g) ?? []).length > errorsBefore;
        if (failed) assert.deepEqual(frames.map((f) => [f.name, f.line]), before.map((f) => [f.name, f.line]), "after an error the state is the one before");
        before = frames;
      }
      // Still answering.
      const threads = await s.dc.threadsRequest();
      assert.equal(threads.success, true);
    } finally {
      await s.dc.stop();
    }
  }
});

test("setVariable edits the state the next prediction starts from; evaluate reads the state; step back replays the history", T, async () => {
  // The shipped model, not a random one: stepping back through the history needs a step that
  // the model answered with a state (greedy, one thread: the same answer every run).
  const s = await open();
  try {
    const program = join(BROKEN, "unfinished.py");
    const src = await parsePython(readFileSync(program, "utf8"));
    await launch(s, { program, call: "run('1 + 2', verbose=True)", model: shippedModel() });
    const [entry] = await stack(s);
    const scopes = (await s.dc.scopesRequest({ frameId: entry.id })).body.scopes;
    const set = await s.dc.setVariableRequest({ variablesReference: scopes[0].variablesReference, name: "text", value: "'2 * 3'" });
    assert.equal(set.body.value, "'2 * 3'");
    assert.equal((await locals(s, entry.id)).text.value, "'2 * 3'");
    const ev = await s.dc.evaluateRequest({ expression: "text * 2 if verbose else None", frameId: entry.id, context: "watch" });
    assert.equal(ev.body.result, "'2 * 32 * 3'");
    const e = await move(s, (dc) => dc.stepInRequest(THREAD));
    assert.equal(e.event, "stopped", "the step is a predicted state");
    assert.doesNotMatch(s.text(), /Could not go on/);
    const [stepped] = await assertStackValid(s, src, program);
    assert.notDeepEqual([stepped.name, stepped.line], [entry.name, entry.line], "the step moved");
    // Stepping back returns to the (edited) entry from the history, without the model.
    await move(s, (dc) => dc.stepBackRequest(THREAD));
    const [back] = await stack(s);
    assert.deepEqual([back.name, back.line], [entry.name, entry.line], "back at the entry state");
    assert.equal((await locals(s, back.id)).text.value, "'2 * 3'");
  } finally {
    await s.dc.stop();
  }
});

test("pause stops a generation in flight; terminate ends the session at once", T, async () => {
  const s = await open();
  try {
    const program = join(BROKEN, "unfinished.py");
    const src = await parsePython(readFileSync(program, "utf8"));
    await launch(s, { program, call: "run('x')", model: ggufLong });
    const before = await stack(s);
    const stopped = firstOf(s.dc, ["stopped", "terminated"]);
    await s.dc.nextRequest(THREAD);
    await s.dc.pauseRequest(THREAD);
    const e = (await stopped) as DebugProtocol.StoppedEvent;
    assert.equal(e.event, "stopped");
    const frames = await assertStackValid(s, src, program);
    if (e.body.reason === "pause") assert.deepEqual(frames.map((f) => [f.name, f.line]), before.map((f) => [f.name, f.line]), "a paused step stays where it was");
    const ended = firstOf(s.dc, ["terminated"]);
    await s.dc.nextRequest(THREAD);
    await s.dc.terminateRequest();
    await ended;
  } finally {
    await s.dc.stop();
  }
});

test("a missing, corrupt or truncated model ends the launch with a clear error", T, async () => {
  const bytes = readFileSync(gguf);
  const truncated = join(dir, "truncated.gguf");
  writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
  const noKey = Buffer.from(bytes);
  noKey.write("llama.feed_forward_lengtX", bytes.indexOf("llama.feed_forward_length"), "latin1");
  const aborting = join(dir, "no-ffn.gguf");
  writeFileSync(aborting, noKey);
  const cases: [string, RegExp][] = [
    [join(dir, "absent.gguf"), /model file not found/],
    [truncated, /truncated/],
    [aborting, /lacks llama\.feed_forward_length/],
  ];
  for (const [model, re] of cases) {
    const s = await open();
    try {
      const ended = firstOf(s.dc, ["terminated"]);
      await s.dc.initializeRequest({ adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true });
      await assert.rejects(s.dc.launch(base({ program: join(BROKEN, "unfinished.py"), call: "run('x')", model })), (err: Error) => re.test(err.message));
      await ended;
      assert.match(s.text("stderr"), re);
    } finally {
      await s.dc.stop();
    }
  }
});

test("predict mode runs no user code: a program that writes a file leaves no file", T, async () => {
  const work = mkdtempSync(join(dir, "nofile-"));
  const program = join(work, "writes_file.py");
  copyFileSync(join(BROKEN, "writes_file.py"), program);
  const s = await open();
  try {
    await launch(s, { program }, [8]);
    for (const m of [(dc: DebugClient) => dc.stepInRequest(THREAD), (dc: DebugClient) => dc.nextRequest(THREAD), (dc: DebugClient) => dc.continueRequest(THREAD)]) {
      const e = await move(s, m);
      if (e.event === "terminated") break;
    }
    await s.dc.evaluateRequest({ expression: "save('again')", context: "repl" }).catch(() => undefined);
  } finally {
    await s.dc.stop();
  }
  assert.ok(!existsSync(join(work, "ran.txt")), "the program ran");
});

test("ndbg predict prints a state (or the model's error) per action, as ndbg steps does", T, async () => {
  const program = join(BROKEN, "syntax_error.py");
  const src = await parsePython(readFileSync(program, "utf8"));
  const r = spawnSync(process.execPath, [NDBG, "predict", program, "--call", "fine(2)", "--actions", "step_into,step_over,step_back,continue", "--breakpoints", "17", "--model", gguf, "--threads", "1", "--gpu", "cpu", "--json"], { encoding: "utf8", timeout: 120_000 });
  assert.ok(r.status === 0 || r.status === 1, `exit ${r.status}: ${r.stderr}`);
  const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => l.action), ["step_into", "step_over", "step_back", "continue"]);
  for (const l of lines) {
    if (l.error !== undefined) {
      assert.equal(typeof l.raw, "string");
      continue;
    }
    if (l.event === "exit") assert.ok(["normal", "error", "limit"].includes(l.status));
    else assert.ok(src.lines.includes(l.line), `line ${l.line}`);
  }
  assert.match(r.stderr, /model .* on cpu, 1 thread/);
  const bad = spawnSync(process.execPath, [NDBG, "predict", program, "--call", "nope()", "--actions", "step_into", "--model", gguf], { encoding: "utf8", timeout: 60_000 });
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /names nope, which this file does not define/);
  // The shipped model on 3.12: it steps over the comprehension's line, into no frame of its own.
  const comp = join(dir, "comp-cli.py");
  writeFileSync(comp, "def f(xs):\n    ys = [x * 2 for x in xs]\n    return sum(ys)\n");
  const v12 = spawnSync(process.execPath, [NDBG, "predict", comp, "--call", "f([1, 2])", "--actions", "step_into,step_into,step_into", "--model", shippedModel(), "--threads", "1", "--gpu", "cpu", "--json", "--python-version", "3.12"], { encoding: "utf8", timeout: 120_000 });
  assert.equal(v12.status, 0, v12.stderr);
  const funcs = v12.stdout.trim().split("\n").map((l) => JSON.parse(l).func);
  assert.ok(funcs.length === 3 && !funcs.some((f) => /comp>/.test(f ?? "")), funcs.join(", "));
  const badVersion = spawnSync(process.execPath, [NDBG, "predict", program, "--call", "fine(2)", "--actions", "step_into", "--model", gguf, "--python-version", "3.x"], { encoding: "utf8", timeout: 60_000 });
  assert.equal(badVersion.status, 2);
  assert.match(badVersion.stderr, /--python-version must be a Python version such as "3.11" or "3.12"/);
});

test("pythonVersion: the shipped model steps into a list comprehension's frame on 3.11 and never on 3.12; the version is in the model event and the saved trace", T, async () => {
  const program = join(dir, "comp.py");
  writeFileSync(program, "def f(xs):\n    ys = [x * 2 for x in xs]\n    return sum(ys)\n");
  const seen: Record<string, { frames: string[]; python?: string; header: string }> = {};
  for (const pythonVersion of ["3.11", "3.12"]) {
    const s = await open();
    try {
      await launch(s, { program, call: "f([1, 2])", model: shippedModel(), pythonVersion });
      const frames: string[] = [];
      for (let k = 0; k < 4; k++) {
        const e = await move(s, (dc) => dc.stepInRequest(THREAD));
        if (e.event !== "stopped") break;
        frames.push(...(await stack(s)).map((f) => f.name));
      }
      const text = ((await s.dc.customRequest("ndbg/saveTrace")).body as { text: string }).text;
      seen[pythonVersion] = { frames, python: s.events.find((e) => e.body?.python)?.body.python, header: text.split("\n")[0] };
      assert.match(s.text("console"), new RegExp(`Python ${pythonVersion.replace(".", "\\.")} states`));
    } finally {
      await s.dc.stop();
    }
  }
  // 3.11: what the model was trained on, a frame of its own; 3.12 runs the comprehension inline.
  assert.ok(seen["3.11"].frames.some((n) => n.endsWith("<listcomp>")), seen["3.11"].frames.join(", "));
  assert.ok(seen["3.12"].frames.length > 0 && !seen["3.12"].frames.some((n) => /<(list|dict|set)comp>/.test(n)), seen["3.12"].frames.join(", "));
  assert.deepEqual([seen["3.11"].python, seen["3.12"].python], ["3.11", "3.12"]);
  assert.match(seen["3.11"].header, /^#ndbg 2 python3\.11 /);
  assert.match(seen["3.12"].header, /^#ndbg 2 python3\.12 /);
});

test("a bad pythonVersion ends the launch with a message that names it", T, async () => {
  const cases: [unknown, RegExp][] = [
    ["3.x", /"pythonVersion" must be a Python version such as "3.11" or "3.12" \(major.minor\), not "3.x"/],
    [3.12, /"pythonVersion" must be a Python version .* not 3.12$/],
    ["2.7", /"pythonVersion" must be a Python version .* not "2.7"/],
    ["3.12.1", /not "3.12.1"/],
    ["3.7", /"pythonVersion" must be Python 3.8 or newer/],
  ];
  for (const [pythonVersion, re] of cases) {
    const s = await open();
    try {
      await s.dc.initializeRequest({ adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true });
      await assert.rejects(s.dc.launch(base({ program: join(BROKEN, "unfinished.py"), call: "run('x')", pythonVersion })), (err: Error) => re.test(err.message));
    } finally {
      await s.dc.stop();
    }
  }
  // Other modes run or replay real states: the attribute is refused there.
  const s = await open();
  try {
    await s.dc.initializeRequest({ adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true });
    await assert.rejects(s.dc.launch(base({ program: join(BROKEN, "unfinished.py"), mode: "record", trusted: true, pythonVersion: "3.12" })), /"pythonVersion" says which Python's states predict mode predicts; record mode runs or replays real ones/);
  } finally {
    await s.dc.stop();
  }
});
