// `ndbg doctor` from the built CLI, for real: every backend probed by a child process on this
// machine's node-llama-cpp with the bundled model. There is no GPU here, so the CPU is the one
// backend that works and the others say why not.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DoctorReport } from "../adapter/cli/commands/doctor.js";
import { buildDist, ndbgWithin } from "./support/dist.js";

const T = { timeout: 180_000 };
const ndbg = ndbgWithin(120_000);
const savedCache = process.env.XDG_CACHE_HOME;
let cache = "";

before(() => {
  buildDist();
  cache = mkdtempSync(join(tmpdir(), "ndbg-doctor-"));
  // The CLI inherits it: the verdicts go here, not into the user's cache.
  process.env.XDG_CACHE_HOME = cache;
});

after(() => {
  if (savedCache === undefined) delete process.env.XDG_CACHE_HOME;
  else process.env.XDG_CACHE_HOME = savedCache;
  rmSync(cache, { recursive: true, force: true });
});

test("doctor --json: the machine, the binaries, every backend's verdict, the CPU's timed decode, and the verdicts kept for sessions", T, async () => {
  const r = await ndbg("doctor", "--threads", "1", "--json");
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout) as DoctorReport;
  assert.equal(report.platform.os, process.platform);
  assert.ok(report.cpu.cores >= 1 && report.cpu.model);
  if (process.platform === "linux") assert.ok(Array.isArray(report.cpu.features), "read from /proc/cpuinfo");
  const here = `${process.platform}-${process.arch}`;
  assert.ok(report.binaries.some((b) => b.name === here && b.fitsHere && /^\d+\.\d+\.\d+/.test(b.version)), JSON.stringify(report.binaries));
  assert.ok(Array.isArray(report.gpus));
  assert.equal(report.threads, 1);
  assert.deepEqual(report.backends.map((v) => v.backend), ["cuda", "vulkan", "metal", "cpu"]);
  const cpu = report.backends.find((v) => v.backend === "cpu")!;
  assert.equal(cpu.ok, true, cpu.reason);
  assert.ok(cpu.timing!.msPerToken > 0 && cpu.timing!.promptTokensPerSecond > 0 && cpu.timing!.generatedTokens > 0);
  for (const v of report.backends.filter((x) => !x.ok)) assert.ok(v.reason && v.reason.length > 20, `${v.backend} says why: ${v.reason}`);
  if (!report.gpus.length) assert.ok(report.backends.filter((v) => v.backend !== "cpu").every((v) => !v.ok), "no GPU here: only the CPU works");
  // Progress on stderr, one line per backend.
  assert.match(r.stderr, /ndbg doctor: cpu works/);
  // Sessions read these verdicts.
  assert.equal(report.cache, join(cache, "ndbg", "backends.json"));
  const kept = JSON.parse(readFileSync(report.cache, "utf8")) as { verdicts: Record<string, { backend: string; ok: boolean }> };
  assert.deepEqual(Object.values(kept.verdicts).map((v) => v.backend).sort(), ["cpu", "cuda", "metal", "vulkan"]);
});

test("doctor: the same as text, with the threads a session would use (one, for the small bundled model)", T, async () => {
  const r = await ndbg("doctor");
  assert.equal(r.code, 0, r.stderr);
  for (const line of [/^platform  \S+ \S+ \(.*\), Node v\d+/m, /^cpu       .+, \d+ cores?/m, /^binaries  /m, /^gpus      /m, /^backends  \(probed with .+\.gguf, 1 thread\)$/m, /^  cpu     works: \d+\.\d\d ms\/token, \d+ prompt tokens\/s$/m, /^  cuda    fails: .+/m, /^verdicts saved for sessions in /m])
    assert.match(r.stdout, line);
});

test("doctor: bad input is a clear error", T, async () => {
  const missing = await ndbg("doctor", "--model", join(cache, "nope.gguf"));
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^ndbg doctor: model file not found: .*nope\.gguf$/m);
  const flag = await ndbg("doctor", "--threads", "zero");
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /--threads needs a positive integer, not "zero"\nusage: ndbg doctor/);
  const extra = await ndbg("doctor", "now");
  assert.equal(extra.code, 2);
});
