// ndbg bench over the real boundaries: the built CLI spawns the built adapter (predict mode, a
// tiny random-weight GGUF run by node-llama-cpp on the CPU) and debugpy's own adapter, and speaks
// DAP to both. A random model's answers are garbage and timings depend on the machine, so this
// checks the report's structure and arithmetic only: every figure present and positive, and the
// ratios recomputed from the figures they come from.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchResult } from "../adapter/tools/bench/run.js";
import { growthPositions } from "../adapter/tools/bench/run.js";
import { NDBG, ROOT, buildDist } from "./support/dist.js";
import { randomModel } from "./support/models.js";

const LONG = 15;

let dir = "";
let gguf = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-bench-test-"));
  // Seed 0 writes until its answers are cut off: every move costs a full model call and the
  // state never reaches the exit, so the long session runs to its end.
  gguf = randomModel(join(dir, "random.gguf"), 0);
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const positive = (x: unknown, what: string): void => {
  assert.equal(typeof x, "number", `${what} is a number (${JSON.stringify(x)})`);
  assert.ok(Number.isFinite(x as number) && (x as number) > 0, `${what} is positive (${x})`);
};

/** The rounded ratio matches the one recomputed from its rounded parts. */
const ratioOf = (ratio: number, num: number, den: number, what: string): void => {
  positive(ratio, what);
  assert.ok(Math.abs(ratio - num / den) <= 0.01 * (num / den) + 0.01, `${what}: ${ratio} vs ${num} / ${den} = ${num / den}`);
};

function summary(s: { n: number; median: number; p90: number } | undefined, what: string): void {
  assert.ok(s, `${what} is present`);
  positive(s.n, `${what}.n`);
  positive(s.median, `${what}.median`);
  positive(s.p90, `${what}.p90`);
  assert.ok(s.p90 >= s.median, `${what}: p90 ${s.p90} >= median ${s.median}`);
}

test("ndbg bench --json: one object with every figure, neural against debugpy, ratios that add up", { timeout: 600_000 }, () => {
  const r = spawnSync(process.execPath, [NDBG, "bench", "--model", gguf, "--steps", "2", "--long", String(LONG), "--threads", "1", "--gpu", "cpu", "--json"], {
    cwd: ROOT, encoding: "utf8", timeout: 540_000,
  });
  assert.equal(r.status, 0, `exit ${r.status}: ${r.stderr}`);
  const last = r.stdout.trim().split("\n").pop()!;
  const parsed = JSON.parse(last) as BenchResult;
  // The model alone (the bench's default): every move a model call, so the model and its limit are reported.
  assert.ok(parsed.model && parsed.limit, "the model and the physical limit are reported");
  const b = parsed as BenchResult & Required<Pick<BenchResult, "model" | "limit">>;

  assert.equal(b.bench, 1);
  assert.equal(b.model.device, "cpu");
  assert.equal(b.model.threads, 1);
  assert.equal(typeof b.model.name, "string");
  for (const k of ["contextSize", "params", "fileBytes", "weightBytesPerToken"] as const) positive(b.model[k], `model.${k}`);
  positive(b.machine.cpus, "machine.cpus");
  assert.equal(b.machine.loadavg.length, 3);
  assert.deepEqual(b.settings.programs.length > 0, true);

  for (const [name, a] of [...Object.entries(b.actions), ["all", b.all] as const]) {
    for (const side of ["neural", "debugpy"] as const) {
      summary(a[side].response, `${name}.${side}.response`);
      summary(a[side].stop, `${name}.${side}.stop`);
    }
    assert.equal(typeof a.neural.failed, "number");
    positive(a.neural.tokensPerStep, `${name}.neural.tokensPerStep`);
    positive(a.neural.tokensPerSecond, `${name}.neural.tokensPerSecond`);
    positive(a.neural.callsPerStep, `${name}.neural.callsPerStep`);
    ratioOf(a.ratio, a.neural.stop.median, a.debugpy.stop.median, `${name}.ratio`);
    if (process.platform === "linux") {
      // CPU time per move, read from /proc: present on Linux.
      summary(a.neural.cpu, `${name}.neural.cpu`);
      summary(a.debugpy.cpu, `${name}.debugpy.cpu`);
      ratioOf(a.cpuRatio!, a.neural.cpu!.median, a.debugpy.cpu!.median, `${name}.cpuRatio`);
    }
    ratioOf(a.ratioP90, a.neural.stop.p90, a.debugpy.stop.p90, `${name}.ratioP90`);
  }
  assert.deepEqual(Object.keys(b.actions).sort(), ["continue", "next", "stepIn", "stepOut"]);

  summary(b.inspect.neural, "inspect.neural");
  summary(b.inspect.debugpy, "inspect.debugpy");
  for (const k of ["perStep", "perSecond", "perCall", "evaluatedPerStep"] as const) positive(b.tokens[k], `tokens.${k}`);

  summary(b.launch.neural.cold, "launch.neural.cold");
  positive(b.launch.neural.cold.spawnToStop, "launch.neural.cold.spawnToStop");
  summary(b.launch.neural.warm, "launch.neural.warm");
  summary(b.launch.debugpy.cold, "launch.debugpy.cold");
  positive(b.memory.neural.adapter, "memory.neural.adapter");
  positive(b.memory.debugpy.adapter, "memory.debugpy.adapter");
  positive(b.memory.debugpy.program, "memory.debugpy.program");

  const g = b.growth;
  assert.deepEqual(g.positions, growthPositions(LONG));
  assert.equal(g.positions.length, 3);
  for (const side of ["neural", "debugpy"] as const) {
    assert.equal(g.reached[side], LONG, `${side} long session ran to its end`);
    assert.deepEqual(g[side].map((p) => p.position), g.positions);
    for (const p of g[side]) {
      positive(p.stop, `growth.${side}@${p.position}.stop`);
      if (process.platform === "linux") positive(p.cpu, `growth.${side}@${p.position}.cpu`);
    }
    ratioOf(g.ratio[side], g[side][g[side].length - 1].stop, g[side][0].stop, `growth.ratio.${side}`);
  }
  for (const side of ["neural", "debugpy"] as const)
    for (const which of ["first", "last"] as const) {
      const sp = g.spans[side][which];
      summary(sp.stop, `growth.spans.${side}.${which}.stop`);
      assert.ok(sp.from >= 2 && sp.to >= sp.from && sp.to <= LONG, `growth.spans.${side}.${which}: moves ${sp.from}-${sp.to}`);
    }
  for (const p of g.neural) {
    positive(p.modelMs, `growth.neural@${p.position}.modelMs`);
    positive(p.promptTokens, `growth.neural@${p.position}.promptTokens`);
    positive(p.tokens, `growth.neural@${p.position}.tokens`);
  }

  const l = b.limit;
  for (const k of ["bandwidthGBs", "cacheBandwidthGBs", "weightBytesPerToken", "tokensPerFrame", "kvBytesPerToken", "stepMs", "stepMsWithKv", "stepMsAtCacheBandwidth", "measuredModelMs", "measuredStepMs"] as const)
    positive(l[k], `limit.${k}`);
  assert.equal(l.weightBytesPerToken, b.model.weightBytesPerToken);
  ratioOf(l.stepMs, (l.weightBytesPerToken * l.tokensPerFrame) / (l.bandwidthGBs * 1e9) * 1000, 1, "limit.stepMs");
  assert.ok(l.stepMsWithKv > l.stepMs, "the KV cache adds to the bytes read");
  ratioOf(l.ratio, l.measuredStepMs, l.stepMs, "limit.ratio");
  assert.ok(Array.isArray(b.notes));
});

test("ndbg bench refuses bad input with a clear message", { timeout: 60_000 }, () => {
  const bad = spawnSync(process.execPath, [NDBG, "bench", "--steps", "0"], { encoding: "utf8", timeout: 30_000 });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--steps needs an integer >= 1/);
  const missing = spawnSync(process.execPath, [NDBG, "bench", "--model", join(dir, "absent.gguf")], { encoding: "utf8", timeout: 30_000 });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /model not found: .*absent\.gguf/);
  const table = spawnSync(process.execPath, [NDBG, "bench", "--help"], { encoding: "utf8", timeout: 30_000 });
  assert.equal(table.status, 0);
  assert.match(table.stdout, /bench \[--sealed\] \[--model PATH\|URI\]/);
  assert.match(table.stdout, /\n  --runs N,N,\.\.\. +instead: runs of N line events each/);
});
