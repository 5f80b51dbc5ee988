// A backend that passed its probe and then crashes the inference process again and again, or
// while loading the model, never strands the session. Over DAP (the built adapter, the bundled
// model, the real host and probe children):
// - a GPU backend whose every decode aborts: after two crashes in a row the model moves to the
//   next backend in chooseBackend's order, the console says where and why, the failure is kept in
//   the verdict cache with the crash's line, and the next adapter does not choose it;
// - the CPU, whose every decode aborts: after three crashes in a row steps are refused with the
//   last crash named, and everything that needs no model still answers;
// - a GPU backend that aborts while loading: the session starts on the next backend and says why.
//
// This machine has no GPU, so the GPU is pretended through the injection hooks: NDBG_PROBE_FAULT
// "cuda=cpu" makes cuda's probe child and the host's load of cuda run the real CPU binary under
// that name (a real probe that passes, a real load and real decodes). The crashes are real
// aborts of the real host, injected by NDBG_HOST_FAULT ("cuda:abort@every": at each of cuda's
// generations; "vulkan:abort@load": in vulkan's load). Each test has its own verdict cache.
import { after, afterEach, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { EVENTS, REQUESTS, type ModelEventBody, type SaveTraceBody, type StatsBody } from "../adapter/protocol.js";
import { ModelPredictor } from "../adapter/predictors/model.js";
import { disposeAll } from "../adapter/model/backend.js";
import type { Verdict } from "../adapter/model/probe.js";
import { ROOT, buildDist } from "./support/dist.js";
import { testEnv } from "./support/env.js";
import { THREAD, launchToFirstStop, openSession, stopAfter, type Session } from "./support/dap.js";

const DEMO = join(ROOT, "examples", "demo.py");
const CALL = "total([3, 1, 4, 1, 5, 9, 2, 6])";
// (compute: false: demo.py's states all follow from the call, and each step here must be a model call)
const T = { timeout: 240_000 };
const env = testEnv(["NDBG_PROBE_FAULT", "NDBG_HOST_FAULT"]);
/** The injected abort's line, as the host's last words. */
const LINE = String.raw`ggml\.c:0: GGML_ASSERT\(injected\) failed: inference fault injected`;

let dir = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-fallback-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  env.restore();
  await disposeAll();
});

/** A fresh verdict cache and these faults, for one test. */
const environment = (faults: Parameters<typeof env.fresh>[1]): string => env.fresh(dir, faults);

function verdicts(cache: string): Verdict[] {
  return Object.values((JSON.parse(readFileSync(join(cache, "ndbg", "backends.json"), "utf8")) as { verdicts: Record<string, Verdict> }).verdicts);
}

interface Launched {
  s: Session;
  /** The ndbg/model events (the status bar's), in order. */
  model: ModelEventBody[];
}

/** A predict session of demo.py on `gpu`, stopped at its entry. */
async function launch(gpu: string): Promise<Launched> {
  const s = await openSession(120_000);
  const model: ModelEventBody[] = [];
  s.dc.on(EVENTS.model, (e: DebugProtocol.Event) => model.push(e.body as ModelEventBody));
  const { first } = await launchToFirstStop(s.dc, { mode: "predict", program: DEMO, call: CALL, gpu, threads: 1, compute: false, stopOnEntry: true }, DEMO);
  assert.equal(first.event, "stopped", s.text());
  return { s, model };
}

/** Steps in; the step's stop comes whether or not the model answered (a failed step stops where it was). */
async function stepIn(s: Session): Promise<void> {
  assert.equal((await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped", s.text());
}

const generations = async (s: Session): Promise<number> => ((await s.dc.customRequest(REQUESTS.stats, {})).body as StatsBody).steps.length;

/** Everything that needs no model answers: threads, stack, scopes, variables, evaluate (from the state), the trace. */
async function assertAnswers(s: Session): Promise<void> {
  assert.equal((await s.dc.threadsRequest()).body.threads.length, 1);
  const frame = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames[0];
  const scopes = (await s.dc.scopesRequest({ frameId: frame.id })).body.scopes;
  const vars = (await s.dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
  const values = vars.find((v) => v.name === "values");
  assert.ok(values, JSON.stringify(vars));
  const result = (await s.dc.evaluateRequest({ expression: "values", frameId: frame.id, context: "watch" })).body.result;
  assert.ok(values.value.startsWith(result.split("  ")[0]), `${result} / ${values.value}`);
  const trace = ((await s.dc.customRequest(REQUESTS.saveTrace, {})).body as SaveTraceBody).text;
  assert.ok(trace.split("\n").length > 1, trace);
}

test("a GPU backend that aborts at every decode: after two crashes in a row the model moves to the next backend, says why, is kept out by the cache, and every request is answered", T, async () => {
  const cache = environment({ NDBG_PROBE_FAULT: "cuda=cpu,vulkan=cpu", NDBG_HOST_FAULT: "cuda:abort@every" });
  const l = await launch("auto");
  try {
    assert.match(l.s.text("console"), /Model .* on cuda, 1 thread/, l.s.text());
    assert.equal(l.model[0].device, "cuda");

    await stepIn(l.s);
    assert.match(l.s.text(), new RegExp(`Could not go on: the inference process ended: killed by SIGABRT \\(${LINE} at decode 1\\); the next step starts it again`));
    await assertAnswers(l.s);
    await stepIn(l.s);
    assert.match(l.s.text(), new RegExp(`killed by SIGABRT \\(${LINE} at decode 2\\); it ended twice in a row on cuda, so the next step moves the model to the next backend`));
    assert.equal(await generations(l.s), 0);
    await assertAnswers(l.s);

    // The next step runs on vulkan, the next in the fallback order (metal is not available here).
    await stepIn(l.s);
    const moved = new RegExp(`The model now runs on vulkan, not on cuda: it failed while serving: the inference process ended twice in a row on it, the last time killed by SIGABRT \\(${LINE} at decode 2\\)`);
    assert.match(l.s.text("console"), moved);
    assert.equal(l.s.text().match(/The model now runs on/g)?.length, 1, "said once");
    assert.equal(l.model.at(-1)?.device, "vulkan", "the status bar follows");
    assert.deepEqual(l.model.at(-1)?.skipped?.map((k) => k.backend), ["metal", "cuda"]);
    assert.equal(await generations(l.s), 1, "a generation on vulkan");
    assert.equal(l.s.text().match(/inference process ended:/g)?.length, 2, "no crash on vulkan: " + l.s.text());
    await assertAnswers(l.s);
    // Back (from the history) and forward twice: the second step is vulkan's second generation.
    assert.equal((await stopAfter(l.s.dc, (dc) => dc.stepBackRequest(THREAD))).event, "stopped");
    await stepIn(l.s);
    await stepIn(l.s);
    assert.equal(await generations(l.s), 2);
  } finally {
    await l.s.dc.stop();
  }

  // The verdict cache: cuda failed with the crash's line; vulkan and cpu as probed.
  const kept = verdicts(cache);
  const cuda = kept.find((v) => v.backend === "cuda")!;
  assert.equal(cuda.ok, false);
  assert.equal(cuda.served, true);
  assert.match(cuda.reason ?? "", new RegExp(`^the inference process ended twice in a row on it, the last time killed by SIGABRT \\(${LINE} at decode 2\\)$`));
  assert.equal(kept.find((v) => v.backend === "vulkan")?.ok, true);

  // A new adapter does not choose cuda, though its probe would pass: the cache says why.
  const next = await launch("auto");
  try {
    const text = next.s.text("console");
    assert.match(text, /Model .* on vulkan, 1 thread/, text);
    assert.match(text, new RegExp(`not on cuda: it failed while serving \\(cached \\d{4}-\\d\\d-\\d\\d; ndbg doctor probes again\\): the inference process ended twice in a row on it, the last time killed by SIGABRT \\(${LINE}`));
    await stepIn(next.s);
    assert.equal(await generations(next.s), 1);
    assert.doesNotMatch(next.s.text(), /inference process ended:/);
  } finally {
    await next.s.dc.stop();
  }
});

test("on the CPU, a host that aborts three times in a row is given up: steps are refused naming the last crash, and the history, stepping back, variables, evaluate and the trace still work", T, async () => {
  // Two steps answered (a history to go back through), then every generation aborts.
  const cache = environment({ NDBG_HOST_FAULT: "abort@3,abort@4,abort@5" });
  const l = await launch("cpu");
  try {
    await stepIn(l.s);
    await stepIn(l.s);
    assert.equal(await generations(l.s), 2);
    const here = (await l.s.dc.stackTraceRequest(THREAD)).body.stackFrames[0];
    for (let i = 0; i < 3; i++) await stepIn(l.s);
    const text = l.s.text();
    assert.equal(text.match(/the next step starts it again/g)?.length, 2, text);
    assert.match(text, new RegExp(`the inference process ended: killed by SIGABRT \\(${LINE} at decode 5\\); it ended 3 times in a row on the CPU, so it is not started again in this session`));
    // No host is started now: the refusal comes at once, and says what still works.
    const t0 = performance.now();
    await stepIn(l.s);
    assert.ok(performance.now() - t0 < 5000, "refused without a restart");
    const refused = new RegExp(
      `Could not go on: the model is not run again in this session: its inference process ended 3 times in a row on the CPU, the last time killed by SIGABRT \\(${LINE} at decode 5\\)\\. The history, stepping back, variables, watches and saving the trace still work`,
      "g",
    );
    assert.equal(l.s.text().match(refused)?.length, 1, l.s.text());
    // Every request is answered: what needs no model as ever, the moves that need it with the refusal.
    await assertAnswers(l.s);
    const where = async () => {
      const f = (await l.s.dc.stackTraceRequest(THREAD)).body.stackFrames[0];
      return [f.name, f.line];
    };
    assert.deepEqual(await where(), [here.name, here.line], "stopped where it was");
    for (const move of [(dc: typeof l.s.dc) => dc.nextRequest(THREAD), (dc: typeof l.s.dc) => dc.continueRequest(THREAD), (dc: typeof l.s.dc) => dc.stepOutRequest(THREAD)])
      assert.equal((await stopAfter(l.s.dc, move)).event, "stopped");
    assert.equal(l.s.text().match(refused)?.length, 4, "each move refused with the same message");
    // Back through the history and forward again to where it was, all without the model.
    assert.equal((await stopAfter(l.s.dc, (dc) => dc.stepBackRequest(THREAD))).event, "stopped");
    assert.notDeepEqual(await where(), [here.name, here.line]);
    await assertAnswers(l.s);
    await stepIn(l.s);
    assert.deepEqual(await where(), [here.name, here.line]);
    assert.equal(l.s.text().match(refused)?.length, 4, "the history needed no model");
    assert.equal(await generations(l.s), 2);
  } finally {
    await l.s.dc.stop();
  }
  // The CPU is not set aside: it is the last resort, and its probe passed.
  assert.deepEqual(verdicts(cache).map((v) => [v.backend, v.ok]), [["cpu", true]]);
});

test("a new session tries the CPU again after the host was given up on there", T, async () => {
  environment({ NDBG_HOST_FAULT: "abort@every" });
  const open = () => ModelPredictor.create({ program: DEMO, call: CALL, gpu: "cpu", threads: 1, compute: false });
  const p = await open();
  const history = [await p.start()];
  for (const next of ["the next step starts it again", "the next step starts it again", "it ended 3 times in a row on the CPU"])
    await assert.rejects(p.predict(history, { kind: "step_into" }), (e: Error) => e.name === "HostEndedError" && e.message.includes(next));
  await assert.rejects(p.predict(history, { kind: "step_into" }), { name: "HostStoppedError" });
  const q = await open();
  try {
    // Tried again (and it aborts again, as the fault says): a crash, not a refusal.
    await assert.rejects(q.predict([await q.start()], { kind: "step_into" }), /the inference process ended: .*the next step starts it again/);
  } finally {
    await p.dispose();
    await q.dispose();
  }
});

test("a GPU backend that aborts while loading the model: the session starts on the next backend, says why and answers every request", T, async () => {
  const cache = environment({ NDBG_PROBE_FAULT: "vulkan=cpu", NDBG_HOST_FAULT: "vulkan:abort@load" });
  const l = await launch("vulkan");
  try {
    const text = l.s.text("console");
    assert.match(text, /Model .* on cpu, 1 thread/, text);
    assert.match(
      text,
      new RegExp(`not on vulkan: the model could not be loaded there: the inference process ended while loading it: killed by SIGABRT \\(${LINE} while loading the model on vulkan\\)`),
    );
    assert.equal(l.model[0].device, "cpu");
    assert.deepEqual(l.model[0].skipped?.map((k) => k.backend), ["vulkan"]);
    await assertAnswers(l.s);
    await stepIn(l.s);
    await stepIn(l.s);
    assert.equal(await generations(l.s), 2);
    assert.equal((await stopAfter(l.s.dc, (dc) => dc.stepBackRequest(THREAD))).event, "stopped");
  } finally {
    await l.s.dc.stop();
  }
  // A load that failed may be this model's (too large for the GPU): vulkan's verdict stays its probe's.
  assert.deepEqual(verdicts(cache).map((v) => [v.backend, v.ok]).sort(), [["cpu", true], ["vulkan", true]]);
});

test("a value of NDBG_HOST_FAULT that cannot be read is a clear error, not a silent run", T, async () => {
  environment({ NDBG_HOST_FAULT: "abort@sometimes" });
  await assert.rejects(
    ModelPredictor.create({ program: DEMO, call: CALL, gpu: "cpu", threads: 1, compute: false }),
    /could not be loaded: the inference process ended while loading it: exited with code 2 \(NDBG_HOST_FAULT: cannot read "abort@sometimes"/,
  );
});
