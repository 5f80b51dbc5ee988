// The model predictor over real node-llama-cpp (CPU, one thread) and a real GGUF: a tiny llama
// with random weights and our BPE tokenizer, written by training/gguf.py --random in the test
// setup. A random model writes garbage, so these tests check protocol and validity, never
// accuracy: every answer is a state of the program or a clean PredictionError.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModelPredictor, breakpointOrder, type ModelPredictorOptions } from "../adapter/predictors/model.js";
import { disposeAll, getBackend } from "../adapter/model/backend.js";
import { ModelFileError, checkModelFile } from "../adapter/model/gguf.js";
import { PredictionError } from "../adapter/model/dialect.js";
import { literalGrammar, nativeGrammar, jsonGrammar, scopeTable } from "../adapter/rules/grammar.js";
import type { ValueType } from "../adapter/format/valueType.js";
import { HISTORY_TOKENS } from "../adapter/model/native.js";
import { resolveModel } from "../adapter/model/resolve.js";
import { parsePython } from "../adapter/pyread/parse.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { evaluateValues } from "../adapter/real/sealed.js";
import type { Predicted } from "../adapter/engine/predictor.js";
import { Engine } from "../adapter/engine/engine.js";
import type { Action, Frame, Step } from "../adapter/format/trajectory.js";
import { randomModel } from "./support/models.js";

const BROKEN = join(import.meta.dirname, "fixtures", "broken");
const T = { timeout: 120_000 };

let dir = "";
let gguf = "";

before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-model-"));
  gguf = randomModel(join(dir, "random.gguf"), 0);
});

after(async () => {
  await disposeAll();
  rmSync(dir, { recursive: true, force: true });
});

const create = (opts: Partial<ModelPredictorOptions> & { program: string }): Promise<ModelPredictor> =>
  // (compute: false: these tests are about model calls, and the program decides many of these states itself)
  ModelPredictor.create({ model: gguf, gpu: "cpu", threads: 1, compute: false, ...opts });

/** A real run of a program as a session history: every event, joined by step_into. */
async function recordedHistory(program: string, call?: string): Promise<Predicted[]> {
  const run = await runTrace(program, { ...(call ? { call } : {}), timeout: 20 });
  return run.frames.map((frame, i) => ({ step: i === 0 ? { frame } : { action: { kind: "step_into" }, frame } }));
}

/** The prediction, or the PredictionError it was rejected with: anything else fails the test. */
async function attempt(p: ModelPredictor, history: readonly Predicted[], action: Action, opts: { breakpoints?: number[]; signal?: AbortSignal } = {}): Promise<Predicted | PredictionError> {
  try {
    return await p.predict(history, action, { ...opts, breakpoints: opts.breakpoints?.map((line) => ({ line })) });
  } catch (e) {
    if (e instanceof PredictionError) return e;
    throw e;
  }
}

/** Every frame stands on a line where its function can stop, in a function of the file. */
function assertValid(p: ModelPredictor, step: Step): void {
  if (step.exit) {
    assert.ok(["normal", "error", "limit"].includes(step.exit.status));
    return;
  }
  const f = step.frame as Frame;
  assert.ok(["call", "line", "return", "exception"].includes(f.event));
  if (f.func === "<module>" && f.event === "call") assert.equal(f.line, 1);
  else assert.ok(p.src.lines.includes(f.line), `line ${f.line} is not an executable line (${p.src.lines.join(",")})`);
  const funcs = [...p.src.functions, ...p.src.classes].map((x) => x.qualname);
  assert.ok(f.func.startsWith("<") || funcs.some((q) => f.func === q || f.func.startsWith(q + ".")), `unknown function ${f.func}`);
  for (const [k, v] of Object.entries(f.locals)) {
    assert.match(k, /^[A-Za-z_][A-Za-z0-9_]*$/);
    assert.equal(typeof v, "string");
  }
}

test("the model file is checked, loaded on the CPU and described; native dialect from its metadata", T, async () => {
  const info = await checkModelFile(gguf);
  assert.equal(info.dialect, "native");
  assert.equal(info.architecture, "llama");
  const p = await create({ program: join(BROKEN, "unfinished.py"), call: "run('1 + 2')" });
  try {
    const d = p.describe();
    assert.equal(d.device, "cpu");
    assert.equal(d.dialect, "native");
    assert.equal(d.threads, 1);
    assert.ok(d.contextSize >= 256);
    const llama = await getBackend({ gpu: "cpu" });
    assert.equal(llama.gpu, false);
  } finally {
    await p.dispose();
  }
});

test("start is the entry call's frame, built from the call without the model; a script starts at its <module> call", T, async () => {
  const p = await create({ program: join(BROKEN, "syntax_error.py"), call: "fine(3, scale=4)" });
  try {
    const s = await p.start();
    assert.deepEqual(s.step, { frame: { event: "call", line: 14, depth: 0, func: "fine", locals: { n: "3", scale: "4", rest: "()", opts: "{}" } } });
    assert.equal(s.tokens, 0);
  } finally {
    await p.dispose();
  }
  const q = await create({ program: join(BROKEN, "writes_file.py") });
  try {
    assert.deepEqual((await q.start()).step, { frame: { event: "call", line: 1, depth: 0, func: "<module>", locals: {} } });
  } finally {
    await q.dispose();
  }
});

test("start and several actions on programs that cannot run give valid states or clean errors", T, async () => {
  const cases: [string, string | undefined][] = [
    ["unfinished.py", "run('x', verbose=True)"],
    ["missing_import.py", "mean([1, 2, 3])"],
    ["syntax_error.py", "total([1, 2])"],
    ["half_written.py", "fib(5)"],
    ["writes_file.py", undefined],
  ];
  const actions: Action[] = [{ kind: "step_into" }, { kind: "step_over" }, { kind: "step_into" }, { kind: "step_return" }, { kind: "step_over" }, { kind: "inv_step_over" }];
  let states = 0;
  let errors = 0;
  for (const [file, call] of cases) {
    const p = await create({ program: join(BROKEN, file), ...(call ? { call } : {}) });
    try {
      const history: Predicted[] = [await p.start()];
      assertValid(p, history[0].step);
      for (const action of actions) {
        const r = await attempt(p, history, action);
        if (r instanceof PredictionError) {
          errors++;
          assert.ok(r.message.length > 0);
          assert.equal(typeof r.raw, "string");
          continue;
        }
        states++;
        assert.deepEqual(r.step.action, action);
        assertValid(p, r.step);
        assert.ok(r.confidence! > 0 && r.confidence! <= 1, `confidence ${r.confidence}`);
        assert.ok(r.tokens! >= 1);
        if (r.step.exit) break;
        history.push(r);
      }
      for (const s of p.stats) assert.ok(s.promptTokens <= p.describe().contextSize);
    } finally {
      await p.dispose();
    }
  }
  assert.ok(states + errors > 0);
});

test("the KV cache holds the session: a step evaluates its new tokens only, far fewer than the prompt", T, async () => {
  const program = join(import.meta.dirname, "fixtures", "programs", "recursion.py");
  const history = await recordedHistory(program, "fact(4)");
  assert.ok(history.length > 12);
  const p = await create({ program, call: "fact(4)" });
  try {
    const n = 6;
    await attempt(p, history.slice(0, n), { kind: "step_into" });
    await attempt(p, history.slice(0, n + 1), { kind: "step_into" });
    await attempt(p, history.slice(0, n + 2), { kind: "step_over" });
    const [cold, warm, warm2] = p.stats;
    assert.equal(cold.evaluatedTokens, cold.promptTokens, "the first prompt is evaluated in full");
    assert.ok(warm.promptTokens > cold.promptTokens, "the prompt grows with the session");
    assert.ok(warm.evaluatedTokens < warm.promptTokens / 3, `a step re-evaluated ${warm.evaluatedTokens} of ${warm.promptTokens} tokens`);
    assert.ok(warm2.evaluatedTokens < warm2.promptTokens / 3, `a step re-evaluated ${warm2.evaluatedTokens} of ${warm2.promptTokens} tokens`);
    // Without reuse a step costs its whole prompt: a fresh predictor shows it.
    const fresh = await create({ program, call: "fact(4)" });
    try {
      await attempt(fresh, history.slice(0, n + 2), { kind: "step_over" });
      assert.equal(fresh.stats[0].evaluatedTokens, warm2.promptTokens);
      assert.equal(fresh.stats[0].promptTokens, warm2.promptTokens);
    } finally {
      await fresh.dispose();
    }
  } finally {
    await p.dispose();
  }
});

test("an edited history (setVariable, step back) rolls the cache back and predicts as a cold run does", T, async () => {
  const program = join(import.meta.dirname, "fixtures", "programs", "recursion.py");
  const history = await recordedHistory(program, "fact(3)");
  const base = history.slice(0, 5);
  const last = base[base.length - 1].step.frame!;
  const name = Object.keys(last.locals)[0];
  const edited: Predicted[] = [...base.slice(0, -1), { step: { ...base[base.length - 1].step, frame: { ...last, locals: { ...last.locals, [name]: "12345" } } } }];
  const p = await create({ program, call: "fact(3)" });
  const cold = await create({ program, call: "fact(3)" });
  try {
    await attempt(p, history.slice(0, 8), { kind: "step_into" }); // a longer session first
    const r = await attempt(p, edited, { kind: "step_over" });
    const stat = p.stats[1];
    assert.ok(stat.evaluatedTokens < stat.promptTokens / 2, `rollback re-evaluated ${stat.evaluatedTokens} of ${stat.promptTokens}`);
    const c = await attempt(cold, edited, { kind: "step_over" });
    assert.equal(cold.stats[0].evaluatedTokens, cold.stats[0].promptTokens);
    // Greedy decoding from the rolled-back cache equals decoding from scratch.
    if (r instanceof PredictionError) {
      assert.ok(c instanceof PredictionError);
      assert.equal(r.raw, c.raw);
    } else {
      assert.ok(!(c instanceof PredictionError));
      assert.deepEqual(r.step, c.step);
      assert.ok(Math.abs(r.confidence! - c.confidence!) < 1e-3, `confidence ${r.confidence} vs cold ${c.confidence}`);
    }
    // Back to an earlier point of the history, then forward again: still consistent.
    const back = await attempt(p, history.slice(0, 3), { kind: "step_into" });
    const backCold = await attempt(cold, history.slice(0, 3), { kind: "step_into" });
    assert.equal(back instanceof PredictionError ? back.raw : JSON.stringify(back.step), backCold instanceof PredictionError ? backCold.raw : JSON.stringify(backCold.step));
  } finally {
    await p.dispose();
    await cold.dispose();
  }
});

test("a long session keeps a bounded history: old steps are dropped in large jumps, most steps reuse the cache", T, async () => {
  const dirp = mkdtempSync(join(dir, "long-"));
  const program = join(dirp, "loop.py");
  writeFileSync(program, "def f(n):\n    s = 0\n    for i in range(n):\n        s += i * i\n    return s\n");
  const history = await recordedHistory(program, "f(60)");
  assert.ok(history.length > 100, `${history.length} states`);
  const p = await create({ program, call: "f(60)" });
  try {
    const ctx = p.describe().contextSize;
    for (let k = 100; k < 120; k++) await attempt(p, history.slice(0, k), { kind: "step_over" });
    const seen = JSON.stringify(p.stats.map((s) => [s.promptTokens, s.evaluatedTokens]));
    for (const s of p.stats) assert.ok(s.promptTokens < ctx, `prompt of ${s.promptTokens} tokens in a ${ctx}-token context`);
    // The prompt holds the program and at most HISTORY_TOKENS of steps (and the action): flat.
    const sizes = p.stats.map((s) => s.promptTokens);
    assert.ok(Math.max(...sizes) - Math.min(...sizes) <= HISTORY_TOKENS, seen);
    // Between drops the window stays put: those steps evaluate only what is new.
    const cached = p.stats.slice(1).filter((s) => s.evaluatedTokens < s.promptTokens / 2);
    assert.ok(cached.length >= (p.stats.length - 1) * 0.6, seen);
  } finally {
    await p.dispose();
  }
});

test("a current state larger than the history budget goes in whole, also when it is the session's only step", T, async () => {
  const dirp = mkdtempSync(join(dir, "big-"));
  const program = join(dirp, "sum.py");
  writeFileSync(program, "def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n");
  const call = `f([${Array.from({ length: 80 }, (_, i) => 1000 + i).join(", ")}])`;
  const p = await create({ program, call });
  try {
    const start = await p.start();
    const alone = await attempt(p, [start], { kind: "step_into" });
    assert.ok(!(alone instanceof PredictionError && /context/.test(alone.message)), String(alone instanceof PredictionError ? alone.message : ""));
    assert.ok(p.stats[0].promptTokens > HISTORY_TOKENS * 2, `prompt of ${p.stats[0].promptTokens} tokens`);
    // Later in the session the window moves to the newest state, alone again.
    const history = await recordedHistory(program, call);
    const later = await attempt(p, history.slice(0, 6), { kind: "step_over" });
    assert.ok(!(later instanceof PredictionError && /context/.test(later.message)), String(later instanceof PredictionError ? later.message : ""));
  } finally {
    await p.dispose();
  }
});

test("an abort stops generation at once; the session goes on afterwards", T, async () => {
  const program = join(BROKEN, "unfinished.py");
  const ac = new AbortController();
  let seen = 0;
  const p = await create({ program, call: "run('1')", onToken: (n) => { seen = n; if (n === 1) ac.abort(); } });
  try {
    const history = [await p.start()];
    await assert.rejects(p.predict(history, { kind: "step_into" }, { signal: ac.signal }), (e: Error) => e.name === "AbortError");
    // The cancel crosses from this process to the inference host, so a few tokens made in flight
    // are expected on a loaded machine (three in one CI run); without the abort this answer runs
    // far longer (asserted below).
    const stoppedAt = seen;
    assert.ok(stoppedAt <= 16, `generation went on for ${stoppedAt} tokens after the abort`);
    // An abort before anything is evaluated.
    const pre = new AbortController();
    pre.abort();
    await assert.rejects(p.predict(history, { kind: "step_over" }, { signal: pre.signal }), (e: Error) => e.name === "AbortError");
    seen = 0;
    const r = await attempt(p, history, { kind: "step_over" });
    if (!(r instanceof PredictionError)) assertValid(p, r.step);
    assert.ok(seen > 16, `an answer left alone runs past the bound above (${seen} tokens)`);
  } finally {
    await p.dispose();
  }
});

test("continue with breakpoints asks for the most plausible breakpoint first", T, async () => {
  const src = await parsePython("def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n        if t > 3:\n            t = 0\n    return t\n\ndef g():\n    y = f([1, 2])\n    return y\n");
  const table = scopeTable(src);
  const at = (line: number, func = "f", depth = 0, event: Frame["event"] = "line"): Step => ({ frame: { event, line, depth, func, locals: {} } });
  assert.deepEqual(breakpointOrder(src, table, [at(4)], [2, 6, 7, 10]), [6, 7, 2, 10], "ahead in f, then the rest");
  assert.deepEqual(breakpointOrder(src, table, [at(6)], [4, 2, 7]), [7, 4, 2], "ahead, then back around the loop");
  assert.deepEqual(breakpointOrder(src, table, [at(10, "g"), at(1, "f", 1, "call"), at(7, "f", 1, "return")], [4, 11]), [11, 4], "a returning frame: its caller first");

  const program = join(BROKEN, "syntax_error.py");
  const p = await create({ program, call: "fine(3)" });
  try {
    const history = [await p.start()];
    const r = await attempt(p, history, { kind: "continue" }, { breakpoints: [17, 18] });
    if (!(r instanceof PredictionError)) {
      assertValid(p, r.step);
      if (r.step.frame) assert.deepEqual(r.step.action, { kind: "breakpoint", line: 17 }, "the first candidate");
      else assert.deepEqual(r.step.action, { kind: "continue" });
    }
    assert.equal(p.stats[0].action, "breakpoint 17");
  } finally {
    await p.dispose();
  }
});

test("evaluate answers from the state through the engine (its values, by CPython, sealed); a native model answers nothing else", T, async () => {
  const p = await create({ program: join(BROKEN, "syntax_error.py"), call: "fine(3, 'a', scale=2)" });
  try {
    const engine = new Engine(p, { evaluator: evaluateValues });
    const history = [await engine.start()];
    assert.equal((await engine.evaluate("n")).value, "3");
    assert.equal((await engine.evaluate("rest")).value, "('a',)");
    assert.equal((await engine.evaluate("n * scale + len(rest)")).value, "7");
    await assert.rejects(engine.evaluate("open('x')"), /cannot evaluate "open\('x'\)"/);
    assert.equal(await p.evaluate(history, "n"), undefined, "the engine computes what it can; the predictor is asked only for the rest");
  } finally {
    await p.dispose();
  }
});

test("the instruct dialect (chat prompt, JSON grammar) on the same model gives valid states or clean errors", T, async () => {
  const p = await create({ program: join(BROKEN, "missing_import.py"), call: "mean([2, 4])", dialect: "instruct", contextSize: 2048, maxTokens: 160 });
  try {
    assert.equal(p.describe().dialect, "instruct");
    const history: Predicted[] = [await p.start()];
    for (const action of [{ kind: "step_into" }, { kind: "step_over" }] as Action[]) {
      const r = await attempt(p, history, action);
      if (r instanceof PredictionError) continue;
      assertValid(p, r.step);
      if (r.step.exit) break;
      history.push(r);
    }
    assert.ok(p.stats.length === 2);
    assert.ok(p.stats[1].evaluatedTokens < p.stats[1].promptTokens, "the system message (the program) stays cached");
    const answer = await p.evaluate(history, "weights.count(1)").catch((e) => (e instanceof PredictionError ? e : Promise.reject(e)));
    if (!(answer instanceof PredictionError)) assert.equal(typeof answer, "string");
  } finally {
    await p.dispose();
  }
});

test("a context too small for the prompt is a clean error", T, async () => {
  const p = await create({ program: join(BROKEN, "unfinished.py"), call: "run('x')", dialect: "instruct" });
  try {
    const history = [await p.start()];
    await assert.rejects(p.predict(history, { kind: "step_into" }), (e: unknown) => e instanceof PredictionError && /context/.test(e.message));
  } finally {
    await p.dispose();
  }
});

test("a frame's locals are bounded by the file's names in the grammar", async () => {
  const src = await parsePython("def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n");
  const g = nativeGrammar(src, (t) => JSON.stringify(t));
  assert.match(g, new RegExp(`^locs ::= \\("<\\|arg_sep\\|>" nm "=" txt\\)\\{0,${src.names.length}\\}$`, "m"));
});

test("grammars built from the program parse in llama.cpp, and name only the comprehensions and lambdas it has", T, async () => {
  const llama = await getBackend({ gpu: "cpu" });
  for (const f of ["unfinished.py", "syntax_error.py", "half_written.py", "writes_file.py", "missing_import.py"]) {
    const src = await parsePython(readFileSync(join(BROKEN, f), "utf8"));
    await llama.createGrammar({ grammar: nativeGrammar(src, (t) => JSON.stringify(t), { depth: 0, func: src.functions[0].qualname }) });
    await llama.createGrammar({ grammar: jsonGrammar(src) });
  }
  // Comprehensions and lambdas: only those the program has, on the lines they span, in the scope that runs them.
  const src = await parsePython("key = lambda s: s[0]\n\ndef f(xs, n=sorted([1], key=lambda v: -v)):\n    ys = [x + 1\n          for x in xs]\n    return sum(y for y in ys)\n\nclass C:\n    sq = {k: k * k for k in range(3)}\n");
  const g = nativeGrammar(src, (t) => JSON.stringify(t), { depth: 1, func: "f.<locals>.<listcomp>" });
  const header = (func: string): string | undefined => g.split("\n").find((l) => l.endsWith(` ${JSON.stringify(func)}`));
  const lines = (func: string): string[] => {
    const rule = header(func)?.match(/::= (l[0-9-]+) /)?.[1];
    return (g.split("\n").find((l) => l.startsWith(`${rule} ::= `)) ?? "").split(" ::= ")[1]?.split(" | ").map((x) => JSON.parse(x)) ?? [];
  };
  assert.deepEqual(lines("f.<locals>.<listcomp>"), ["4", "5"]);
  assert.deepEqual(lines("f.<locals>.<genexpr>"), ["6"]);
  assert.deepEqual(lines("<lambda>"), ["1", "3"], "the module's lambda, and the one in f's defaults (run where f is defined)");
  assert.deepEqual(lines("C.<dictcomp>"), ["9"]);
  for (const absent of ["f.<locals>.<lambda>", "f.<locals>.<dictcomp>", "<listcomp>", "C.<listcomp>"]) assert.equal(header(absent), undefined, absent);
  assert.match(g, /dh ::= l[0-9-]+ " 1 f\.<locals>\.<listcomp>"/, "a delta inside a comprehension stands on its lines");
  await llama.createGrammar({ grammar: g });
  await llama.createGrammar({ grammar: jsonGrammar(src) });
});

test("the literal grammars of annotated types parse in llama.cpp", T, async () => {
  const llama = await getBackend({ gpu: "cpu" });
  const types: (ValueType | null)[] = [
    ["int"], ["float"], ["bool"], ["str"], ["bytes"], ["None"], null,
    ["list", ["str"]], ["set", ["int"]], ["frozenset", null], ["dict", ["str"], ["int"]], ["dict", null, null],
    ["tuple"], ["tuple", ["int"]], ["tuple", ["int"], ["str"], null], ["tuple...", ["float"]],
    ["union", ["int"], ["None"]], ["list", ["dict", ["str"], ["union", ["float"], ["None"]]]], ["class", "Point"],
  ];
  for (const t of types) {
    const g = literalGrammar(t);
    await llama.createGrammar({ grammar: `root ::= ${g} "\\n"\ntc ::= [^<\\n] | "<"+ [^<|\\n]` });
  }
});

test("missing, corrupt and truncated model files give clear errors, and the process lives on", T, async () => {
  const program = join(BROKEN, "unfinished.py");
  const expectError = async (model: string, re: RegExp): Promise<void> => {
    await assert.rejects(create({ program, model }), (e: unknown) => {
      assert.ok(e instanceof ModelFileError, `expected a ModelFileError, got ${String(e)}`);
      assert.match(e.message, re);
      return true;
    });
  };
  await expectError(join(dir, "absent.gguf"), /model file not found/);
  const text = join(dir, "text.gguf");
  writeFileSync(text, "this is not a model, just text that is long enough\n");
  await expectError(text, /is not a GGUF model/);
  const bytes = readFileSync(gguf);
  const truncated = join(dir, "truncated.gguf");
  writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
  await expectError(truncated, /truncated/);
  const header = join(dir, "header.gguf");
  writeFileSync(header, bytes.subarray(0, 200));
  await expectError(header, /truncated/);
  // A missing llama.feed_forward_length makes llama.cpp abort the process: it must never get there.
  const i = bytes.indexOf("llama.feed_forward_length");
  assert.ok(i > 0);
  const noKey = Buffer.from(bytes);
  noKey.write("llama.feed_forward_lengtX", i, "latin1");
  const abort = join(dir, "no-ffn.gguf");
  writeFileSync(abort, noKey);
  await expectError(abort, /lacks llama\.feed_forward_length/);
  await assert.rejects(resolveModel("hf:nobody/nothing:Q4_K_M", { cacheDir: join(dir, "cache") }), (e: unknown) => e instanceof ModelFileError && /could not be fetched/.test(e.message));
  // The process is alive and the good model still loads.
  const p = await create({ program, call: "run('x')" });
  await p.dispose();
});

test("predict mode never runs the program: a program that writes a file leaves no file", T, async () => {
  const work = mkdtempSync(join(dir, "nofile-"));
  const program = join(work, "writes_file.py");
  copyFileSync(join(BROKEN, "writes_file.py"), program);
  const sentinel = join(work, "ran.txt");
  const p = await create({ program });
  try {
    const history: Predicted[] = [await p.start()];
    for (const action of [{ kind: "step_into" }, { kind: "step_over" }, { kind: "step_into" }, { kind: "continue" }] as Action[]) {
      const r = await attempt(p, history, action, { breakpoints: [8] });
      if (r instanceof PredictionError) continue;
      if (r.step.exit) break;
      history.push(r);
    }
    await p.evaluate(history, "save('again')");
  } finally {
    await p.dispose();
  }
  assert.ok(!existsSync(sentinel), "the program ran");
  // The check means something: running the program for real does write the file.
  await runTrace(program, { timeout: 20 });
  assert.ok(existsSync(sentinel));
});

test("the model alone is held to what the program can reach, never to a value CPython computed", T, async () => {
  // With compute on, the rules ask CPython (sealed) what `x = a * 789` gives and the grammar admits
  // only that value; the model alone (compute: false) must write it itself.
  const program = join(dir, "product.py");
  writeFileSync(program, "def scale(a):\n    x = a * 789\n    return x\n\nr = scale(123456)\n");
  const steps = (await recordedHistory(program, "scale(123456)")).slice(0, 2).map((h) => h.step);
  assert.equal(steps[1].frame?.line, 2);
  const grammarOf = async (compute: boolean): Promise<string> => {
    const p = await create({ program, call: "scale(123456)", layout: "original", compute });
    try {
      const g = (await p.dialect.request(steps, { kind: "step_over" })).grammar?.grammar;
      assert.ok(g, "the native dialect decodes under a grammar");
      return g;
    } finally {
      await p.dispose();
    }
  };
  assert.match(await grammarOf(true), /97406784/, "with compute on, CPython's product is in the grammar");
  assert.doesNotMatch(await grammarOf(false), /97406784/, "the model alone is not handed the product");
});
