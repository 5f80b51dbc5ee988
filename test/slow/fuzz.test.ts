// The fuzz suite's CI budget (test/fuzz/run.ts; `npm run fuzz` for a large run): a fixed seed and
// a few cases of every family over the real adapter, tracer, model loader, dialect and language
// server. Every request answered, no crash, no hang, nothing left running or on disk, no other
// problem. A failure names the case and its seed: `npm run fuzz -- --seed S --family F` repeats it.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { buildDist } from "../support/dist.js";
import { FAMILIES, HEADER, row, runFuzz, total } from "../fuzz/run.js";

before(() => buildDist());

const SEED = Number(process.env.NDBG_FUZZ_SEED ?? 1);
/** Cases per family: the model families load models and run programs, so they get fewer. */
const CASES: Record<string, number> = { framing: 10, requests: 6, launch: 10, models: 3, outputs: 4, programs: 8, traces: 8, language: 10, mcp: 4 };

test(`fuzz, seed ${SEED}: every request answered, no crash, hang or leftover`, { timeout: 300_000 }, async () => {
  const lines = [HEADER];
  const tallies = new Map();
  for (const name of Object.keys(FAMILIES)) {
    const t = (await runFuzz(SEED, { cases: CASES[name] ?? 2 }, [name])).get(name)!;
    tallies.set(name, t);
    lines.push(row(name, t));
  }
  const all = total(tallies);
  lines.push(row("total", all));
  process.stderr.write(lines.map((l) => `# ${l}\n`).join(""));
  const said = `${lines.join("\n")}\n${all.problems.join("\n")}`;
  assert.ok(all.sent > 100, `only ${all.sent} requests sent`);
  assert.equal(all.answered, all.sent, said);
  assert.equal(all.crashes, 0, said);
  assert.equal(all.hangs, 0, said);
  assert.equal(all.leftoverProcesses, 0, said);
  assert.equal(all.leftoverFiles, 0, said);
  assert.deepEqual(all.problems, []);
});
