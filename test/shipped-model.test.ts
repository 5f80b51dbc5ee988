// The shipped model's greedy answers on examples/demo.py, pinned. `ndbg predict` (the built CLI,
// the bundled model, one thread on the CPU, --no-compute: every state the model's, though the
// program decides all of demo.py's from the call) is run with a fixed list of actions and its --json
// lines are compared with test/fixtures/shipped-model/demo-predict.jsonl: every state, value and
// token count exactly, the confidence to 0.01 (a float whose last digits may differ with the
// CPU's kernels). The expected file changes on purpose with a new model: after replacing
// models/*.gguf, regenerate it with
//   NDBG_REGENERATE=1 node --import tsx --test test/shipped-model.test.ts
// (or run the command in ARGS below with --json and save its stdout), and read the diff: it is
// what the new model answers differently.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { NDBG, ROOT, buildDist } from "./support/dist.js";
import { shippedModel } from "./support/models.js";

const EXPECTED = join(ROOT, "test", "fixtures", "shipped-model", "demo-predict.jsonl");
const ARGS = ["predict", "examples/demo.py", "--call", "total([3, 1, 2])", "--actions", "breakpoint:2,step_over,step_over,step_into,step_return,step_back,continue", "--threads", "1", "--gpu", "cpu", "--no-compute", "--json"];

type Line = Record<string, unknown> & { confidence?: number };
const parse = (text: string): Line[] => text.trim().split("\n").map((l) => JSON.parse(l) as Line);
const withoutConfidence = ({ confidence: _, ...rest }: Line): Record<string, unknown> => rest;

test("the shipped model's greedy answers on examples/demo.py are the pinned ones", { timeout: 180_000 }, () => {
  const model = shippedModel();
  buildDist();
  const r = spawnSync(process.execPath, [NDBG, ...ARGS], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, `ndbg predict failed (${r.status}): ${r.stderr}`);
  assert.match(r.stderr, new RegExp(`model ${basename(model).split(".")[0]} .*on cpu, 1 thread`), "the bundled model answered");
  if (process.env.NDBG_REGENERATE) writeFileSync(EXPECTED, r.stdout.trim() + "\n");
  const got = parse(r.stdout);
  const want = parse(readFileSync(EXPECTED, "utf8"));
  const changed = `the model's answers changed (a new model? regenerate: see this file's header)\n--- got\n${r.stdout}`;
  assert.deepEqual(got.map(withoutConfidence), want.map(withoutConfidence), changed);
  got.forEach((g, i) => assert.ok(Math.abs((g.confidence ?? -1) - (want[i].confidence ?? -1)) <= 0.01, `confidence of line ${i + 1}: ${g.confidence} against ${want[i].confidence}`));
});

test("the demo as `npm run demo` runs it: every state of examples/demo.py follows from the call, so each is computed, not predicted, and equals the real run's", { timeout: 180_000 }, () => {
  buildDist();
  const r = spawnSync(process.execPath, [NDBG, "predict", "examples/demo.py", "--call", "total([3, 1, 2])", "--actions", "step_into,step_over,step_over,step_return", "--threads", "1", "--gpu", "cpu", "--compare"], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
  assert.equal(r.status, 0, `ndbg predict failed (${r.status}): ${r.stderr}`);
  const predicted = r.stdout.split("\n").filter((l) => /^\S+\s+[✓✗] predicted/.test(l) && !l.startsWith("start"));
  assert.equal(predicted.length, 4, r.stdout);
  for (const l of predicted) assert.match(l, /✓ predicted .*\(computed\)$/);
  assert.match(r.stdout, /4 of 4 predicted states exact/);
});
