// Probe before use, for real: probe children run this machine's node-llama-cpp on the bundled
// model (the CPU; no GPU device here, so cuda and vulkan fail as a machine without one makes them
// fail), faults are injected in the probe child itself ($NDBG_PROBE_FAULT: one that aborts, one
// that hangs past the timeout), and sessions over DAP (the built adapter) that ask for cuda or
// vulkan fall back to the CPU, say why, answer requests and step. Each test has its own verdict
// cache ($XDG_CACHE_HOME), so every probe is really run unless a test reads the cache on purpose.
import { after, afterEach, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { bundledModel } from "../adapter/model/resolve.js";
import { chooseBackend, probeBackend, reasonLine, verdictFile, verdictFor } from "../adapter/model/probe.js";
import { ROOT, buildDist } from "./support/dist.js";
import { testEnv } from "./support/env.js";
import { THREAD, launchToFirstStop, openSession, stopAfter, type Session } from "./support/dap.js";

const T = { timeout: 180_000 };
const PROGRAM = join(ROOT, "test", "fixtures", "dap", "calls.py");
const env = testEnv(["NDBG_PROBE_FAULT", "NDBG_PROBE_TIMEOUT"]);

let dir = "";
let model = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-probe-"));
  const m = bundledModel();
  assert.ok(m, "the bundled model is in models/");
  model = m;
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh verdict cache, and these probe settings, for one test. */
const environment = (settings: Parameters<typeof env.fresh>[1] = {}): string => env.fresh(dir, settings);

afterEach(() => env.restore());

// ---- the probe itself ----

test("a probe of the CPU loads the model in a child, decodes and times it", T, async () => {
  environment();
  const v = await probeBackend("cpu", model, { threads: 1 });
  assert.equal(v.ok, true, v.reason);
  assert.ok(v.timing && v.timing.generatedTokens > 0 && v.timing.msPerToken > 0 && v.timing.promptTokensPerSecond > 0, JSON.stringify(v.timing));
});

test("a probe child that aborts is a failed verdict with its own error line, not a dead process", T, async () => {
  environment({ NDBG_PROBE_FAULT: "cuda=abort" });
  const v = await probeBackend("cuda", model);
  assert.equal(v.ok, false);
  assert.match(v.reason ?? "", /killed by SIGABRT .*probe fault injected for cuda: simulated error/);
});

test("a probe child that hangs is killed at the timeout and says where it was stuck", T, async () => {
  environment({ NDBG_PROBE_FAULT: "vulkan=hang" });
  const t0 = performance.now();
  const v = await probeBackend("vulkan", model, { timeoutMs: 2000 });
  assert.equal(v.ok, false);
  assert.match(v.reason ?? "", /did not finish within 2 s \(stuck starting its binary\)/);
  assert.ok(performance.now() - t0 < 15_000, "the hang was cut at its timeout");
});

test("a backend with no device or binary here fails its probe with node-llama-cpp's reason", T, async () => {
  environment();
  const cuda = await probeBackend("cuda", model);
  assert.equal(cuda.ok, false);
  assert.match(cuda.reason ?? "", /no usable cuda binary here/);
  // Metal has no Linux build: node-llama-cpp would quietly hand over its CPU binary.
  if (process.platform !== "darwin") assert.match((await probeBackend("metal", model)).reason ?? "", /no metal build of llama\.cpp for .* \(node-llama-cpp offers cpu instead\)/);
});

test("a probe of a truncated or corrupt GGUF fails clearly, and the verdict is not kept against the backend", T, async () => {
  const cache = environment();
  const bytes = readFileSync(model);
  const truncated = join(dir, "truncated.gguf");
  writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length / 2)));
  const corrupt = join(dir, "corrupt.gguf");
  writeFileSync(corrupt, Buffer.concat([bytes.subarray(0, 4), Buffer.alloc(4096, 0xa5)]));
  // llama.cpp's own line about the file, which it logs after the error it throws.
  for (const [file, why] of [
    [truncated, /^loading the model failed: .*data is not within the file bounds, model is corrupted or incomplete/],
    [corrupt, /^loading the model failed: .*Unsupported GGUF version/],
  ] as const) {
    const v = await verdictFor("cpu", file, { threads: 1 });
    assert.equal(v.ok, false, file);
    assert.match(v.reason ?? "", why);
  }
  assert.equal(existsSync(join(cache, "ndbg", "backends.json")), false, "a model's fault is not the backend's");
  // The same backend still passes with a good model.
  assert.equal((await verdictFor("cpu", model, { threads: 1 })).ok, true);
});

test("the reason line is the error, not the backtrace after it", () => {
  // As the prebuilt CUDA binary died on a driver older than its toolchain (ggml's own output).
  const output = [
    "CUDA error: the provided PTX was compiled with an unsupported toolchain.",
    "  current device: 0, in function ggml_cuda_kernel_can_use_pdl at ggml-cuda/common.cuh:1012",
    "  cudaFuncGetAttributes(&attr, kernel)",
    "/home/runner/ggml/src/ggml-cuda/ggml-cuda.cu:88: CUDA error",
    "libggml-base.so(+0x16a4b) [0x7f3c1a2b6a4b]",
    "----- Native stack trace -----",
    " 1: 0xb7f1a4 node::Abort() [node]",
  ].join("\n");
  assert.equal(reasonLine(output), "CUDA error: the provided PTX was compiled with an unsupported toolchain.");
  // Only what came after the last report counts: the load before the decode is not the reason.
  assert.equal(reasonLine(`load: no error here, failed nothing\n[ndbg probe] model\n${output}`), "CUDA error: the provided PTX was compiled with an unsupported toolchain.");
  assert.equal(reasonLine("loading\n  at foo (x.js:1:1)\n"), "loading");
  assert.equal(reasonLine(""), undefined);
});

test("a named backend that fails falls back to the CPU; the second choice reads the cache", T, async () => {
  const cache = environment({ NDBG_PROBE_FAULT: "cuda=abort" });
  const first = await chooseBackend("cuda", model, { threads: 1 });
  assert.equal(first.backend, "cpu");
  assert.equal(first.verdict.cached, undefined);
  assert.deepEqual(first.skipped.map((s) => s.backend), ["cuda"]);
  assert.match(first.skipped[0].reason, /SIGABRT/);
  assert.equal(verdictFile(), join(cache, "ndbg", "backends.json"));
  const kept = JSON.parse(readFileSync(verdictFile(), "utf8")) as { verdicts: Record<string, { backend: string; ok: boolean }> };
  assert.deepEqual(Object.values(kept.verdicts).map((v) => [v.backend, v.ok]).sort(), [["cpu", true], ["cuda", false]]);
  // No fault now: a probe would find no CUDA device instead of an abort, so the abort can only come from the cache.
  delete process.env.NDBG_PROBE_FAULT;
  const second = await chooseBackend("cuda", model, { threads: 1 });
  assert.equal(second.backend, "cpu");
  assert.equal(second.verdict.cached, true);
  assert.match(second.skipped[0].reason, /^its probe failed \(cached .*\): .*SIGABRT/);
  // An unreadable cache is no cache: probed again, and written afresh.
  writeFileSync(verdictFile(), "{ not json");
  const third = await chooseBackend("cuda", model, { threads: 1 });
  assert.equal(third.verdict.cached, undefined);
  assert.match(third.skipped[0].reason, /^its probe failed: no usable cuda binary here/);
  assert.equal(Object.keys((JSON.parse(readFileSync(verdictFile(), "utf8")) as { verdicts: object }).verdicts).length, 2);
});

// ---- sessions over DAP ----

interface Launched {
  s: Session;
  model: DebugProtocol.Event[];
}

/** A predict session of calls.py on `gpu` (the model alone, so that it loads at once), stopped at its entry. */
async function launch(gpu: string): Promise<Launched> {
  const s = await openSession(120_000);
  const model: DebugProtocol.Event[] = [];
  s.dc.on("ndbg/model", (e: DebugProtocol.Event) => model.push(e));
  const { first } = await launchToFirstStop(s.dc, { mode: "predict", compute: false, program: PROGRAM, call: "main(2)", gpu, threads: 1, stopOnEntry: true }, PROGRAM);
  assert.equal(first.event, "stopped", s.text());
  return { s, model };
}

/** The session answers and steps: threads, stack, scopes, variables, a step in. */
async function assertServes({ s }: Launched): Promise<void> {
  assert.equal((await s.dc.threadsRequest()).body.threads.length, 1);
  const frames = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
  assert.equal(frames[0].name, "main");
  const scopes = (await s.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
  const vars = (await s.dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
  assert.deepEqual(vars.map((v) => [v.name, v.value]), [["n", "2"]]);
  const e = await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
  assert.equal(e.event, "stopped", s.text());
}

for (const gpu of ["cuda", "vulkan"]) {
  test(`gpu "${gpu}" falls back to the CPU over DAP, names the backend, says why and steps`, T, async () => {
    environment();
    const l = await launch(gpu);
    try {
      const text = l.s.text("console");
      assert.match(text, /Model .* on cpu, 1 thread/);
      assert.match(text, new RegExp(`not on ${gpu}: its probe failed: no usable ${gpu} binary here`));
      const body = l.model[0]?.body as { device: string; skipped: { backend: string; reason: string }[] };
      assert.equal(body.device, "cpu");
      assert.deepEqual(body.skipped.map((k) => k.backend), [gpu]);
      await assertServes(l);
    } finally {
      await l.s.dc.stop();
    }
  });
}

test("over DAP: an aborting cuda probe and a hanging vulkan probe fall back, and the next adapter reads their verdicts from the cache", T, async () => {
  // The timeout is every probe's, the CPU's too: on 2 cores shared with other test files, loading
  // the model and timing a decode took more than 3 s and the session found no backend at all.
  environment({ NDBG_PROBE_FAULT: "cuda=abort,vulkan=hang", NDBG_PROBE_TIMEOUT: "15" });
  for (const [gpu, why] of [
    ["cuda", /not on cuda: its probe failed: the probe process was killed by SIGABRT while starting its binary: probe fault injected for cuda: simulated error, aborting/],
    ["vulkan", /not on vulkan: its probe failed: the probe did not finish within 15 s \(stuck starting its binary\)/],
  ] as const) {
    const l = await launch(gpu);
    try {
      assert.match(l.s.text("console"), why);
      await assertServes(l);
    } finally {
      await l.s.dc.stop();
    }
  }
  // A new adapter process, no faults: the verdicts come from the cache, so the session starts
  // without a 15 s timeout and still names the abort a probe would not see now.
  delete process.env.NDBG_PROBE_FAULT;
  const t0 = performance.now();
  const l = await launch("cuda");
  try {
    assert.match(l.s.text("console"), /not on cuda: its probe failed \(cached \d{4}-\d\d-\d\d; ndbg doctor probes again\): the probe process was killed by SIGABRT/);
    assert.ok(performance.now() - t0 < 60_000);
    await assertServes(l);
  } finally {
    await l.s.dc.stop();
  }
});

test('gpu "auto" passes over the GPU backends node-llama-cpp finds nothing for, and says so', T, async () => {
  environment();
  const l = await launch("auto");
  try {
    const text = l.s.text("console");
    assert.match(text, /Model .* on cpu/);
    // This machine has no GPU: none is tried, each is named with why in the ndbg/model event (the
    // extension's Output channel and status bar tooltip), not in the Debug Console: no GPU is no news.
    const body = l.model[0]?.body as { skipped: { backend: string; reason: string }[] };
    for (const b of ["cuda", "vulkan", "metal"]) {
      assert.match(body.skipped.find((k) => k.backend === b)?.reason ?? "", /^not available here/);
      assert.doesNotMatch(text, new RegExp(`not on ${b}`));
    }
    await assertServes(l);
  } finally {
    await l.s.dc.stop();
  }
});
