// Inference runs in a child process (adapter/model/host.ts): a host that dies after its backend's
// probe passed (llama.cpp aborting on a GPU error, the OOM killer) fails the step it was running
// with its last words, and nothing else. Faults are injected in the real host ($NDBG_HOST_FAULT:
// abort or kill at the adapter's Nth generation), with the bundled model, over the real protocol where a
// session is concerned: the session stays stopped where it was and answers stackTrace,
// variables, evaluate, stepBack and saveTrace; the next step starts a new host; in the warm
// adapter a second session on the same process lives on.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import { REQUESTS, type SaveTraceBody, type StatsBody } from "../adapter/protocol.js";
import { ModelPredictor } from "../adapter/predictors/model.js";
import { disposeAll } from "../adapter/model/backend.js";
import { inferenceHost } from "../adapter/model/remote.js";
import type { Predicted } from "../adapter/engine/predictor.js";
import { ROOT, buildDist } from "./support/dist.js";
import { THREAD, launchToFirstStop, openSession, stopAfter } from "./support/dap.js";
import { connect, startServer, stopServer } from "./support/serve.js";

const DEMO = join(ROOT, "examples", "demo.py");
const CALL = "total([3, 1, 4, 1, 5, 9, 2, 6])";
// (compute: false: demo.py's states all follow from the call, and each step here must be a model call)
const LAUNCH = { mode: "predict", program: DEMO, call: CALL, gpu: "cpu", threads: 1, compute: false, stopOnEntry: true };
const T = { timeout: 180_000 };
const ABORTED = /the inference process ended: killed by SIGABRT \(ggml\.c:0: GGML_ASSERT\(injected\) failed: inference fault injected at decode \d+\); the next step starts it again/g;

before(() => buildDist());
after(() => disposeAll());

/** Runs `f` with `env` set in this process (the adapters and hosts it starts inherit it). */
async function withEnv<R>(env: Record<string, string>, f: () => Promise<R>): Promise<R> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await f();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

const stats = async (dc: DebugClient): Promise<StatsBody> => (await dc.customRequest(REQUESTS.stats, {})).body as StatsBody;
const top = async (dc: DebugClient) => (await dc.stackTraceRequest(THREAD)).body.stackFrames[0];

test("the host aborts at a step: the step fails with its reason, the session keeps its history and answers, and the next step starts a new host", T, async () => {
  const s = await withEnv({ NDBG_HOST_FAULT: "abort@3" }, () => openSession(60_000));
  try {
    const { first } = await launchToFirstStop(s.dc, LAUNCH, DEMO);
    assert.equal(first.event, "stopped");
    for (let i = 0; i < 2; i++) assert.equal((await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped");
    assert.equal((await stats(s.dc)).steps.length, 2, "two generations before the fault");
    const before = await top(s.dc);

    // The third generation aborts the host.
    assert.equal((await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped", "the session stays stopped");
    assert.equal(s.text().match(ABORTED)?.length, 1, s.text());
    const here = await top(s.dc);
    assert.deepEqual([here.name, here.line], [before.name, before.line], "where it was");

    // Everything that needs no model still answers.
    const scopes = (await s.dc.scopesRequest({ frameId: here.id })).body.scopes;
    const vars = (await s.dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
    assert.ok(vars.some((v) => v.name === "values"), JSON.stringify(vars));
    const values = vars.find((v) => v.name === "values")!.value;
    const result = (await s.dc.evaluateRequest({ expression: "values", frameId: here.id, context: "watch" })).body.result;
    assert.ok(values.startsWith(result.split("  ")[0]), `${result} / ${values}`);
    const trace = ((await s.dc.customRequest(REQUESTS.saveTrace, {})).body as SaveTraceBody).text;
    assert.ok(trace.split("\n").length > 3, trace);
    assert.equal((await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD))).event, "stopped");
    // Forward again: the known state comes from the history, then the model runs on a new host.
    assert.equal((await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped");
    assert.deepEqual([(await top(s.dc)).line], [before.line]);
    assert.equal((await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped");
    assert.equal((await stats(s.dc)).steps.length, 3, "a generation on the new host");
    assert.equal(s.text().match(ABORTED)?.length, 1, "no second fault: " + s.text());
    await s.dc.disconnectRequest({});
  } finally {
    await s.dc.stop();
  }
});

test("in the warm adapter, a host that aborts in one session's step leaves the other session and the process alive", T, async () => {
  const server = await startServer(["--preload=", "--gpu=cpu"], { ...process.env, NDBG_HOST_FAULT: "abort@2" });
  try {
    const a = await connect(server, 60_000);
    const b = await connect(server, 60_000);
    await launchToFirstStop(a.dc, LAUNCH, DEMO);
    await launchToFirstStop(b.dc, LAUNCH, DEMO);
    const aOut: string[] = [];
    const bOut: string[] = [];
    a.dc.on("output", (e) => aOut.push(e.body.output));
    b.dc.on("output", (e) => bOut.push(e.body.output));
    assert.equal((await stopAfter(a.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped");
    assert.equal((await stopAfter(b.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped");
    assert.match(bOut.join(""), ABORTED);
    assert.doesNotMatch(aOut.join(""), /inference process ended/, "A was not stepping");
    // A lives on, and steps on a new host.
    assert.equal((await top(a.dc)).name, "total");
    assert.equal((await stopAfter(a.dc, (dc) => dc.stepInRequest(THREAD))).event, "stopped");
    assert.equal((await stats(a.dc)).steps.length, 2);
    assert.equal((await top(b.dc)).name, "total");
    assert.equal(server.proc.exitCode, null, server.stderr());
    assert.match(server.stderr(), /warmed up cpu in \d+ ms/);
    for (const c of [a, b]) {
      await c.dc.disconnectRequest({});
      c.socket.end();
    }
  } finally {
    assert.equal(await stopServer(server), 0);
  }
});

test("a host killed (as by the OOM killer) fails the generation with the signal; the predictor goes on with a new host", T, async () => {
  await withEnv({ NDBG_HOST_FAULT: "kill@2" }, async () => {
    const p = await ModelPredictor.create({ program: DEMO, call: CALL, gpu: "cpu", threads: 1, compute: false });
    try {
      const history: Predicted[] = [await p.start()];
      history.push(await p.predict(history, { kind: "step_into" }));
      await assert.rejects(p.predict(history, { kind: "step_into" }), /^HostEndedError: the inference process ended: killed by SIGKILL; the next step starts it again/);
      const next = await p.predict(history, { kind: "step_into" });
      assert.ok(next.step.frame ?? next.step.exit);
      assert.equal(p.stats.length, 2);
    } finally {
      await p.dispose();
      await disposeAll();
    }
  });
});

test("with no session open for $NDBG_HOST_IDLE seconds the host goes, freeing the weights, and the next session starts one", T, async () => {
  await withEnv({ NDBG_HOST_IDLE: "1" }, async () => {
    const open = () => ModelPredictor.create({ program: DEMO, call: CALL, gpu: "cpu", threads: 1 });
    const p = await open();
    const pid = inferenceHost().pid;
    assert.ok(pid, "a host runs while a session is open");
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(inferenceHost().pid, pid, "an open session keeps it");
    await p.dispose();
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(inferenceHost().pid, undefined, "gone after the idle time");
    const q = await open();
    try {
      const history: Predicted[] = [await q.start()];
      assert.ok((await q.predict(history, { kind: "step_into" })).step);
      assert.notEqual(inferenceHost().pid, pid);
    } finally {
      await q.dispose();
      await disposeAll();
    }
  });
});
