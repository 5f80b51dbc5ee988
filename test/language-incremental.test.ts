// The trace language server's re-reading after an edit (reanalyze in adapter/language/analyze.ts)
// against reading the whole text again: seeded random edits (insertions, deletions, replacements
// of a few characters, whole steps cut or repeated) of real traces must give the same analysis,
// and a keystroke in a trace of 100,000 frames must cost a small part of a full reading.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { analyze, reanalyze } from "../adapter/language/analyze.js";
import { FORMAT_VERSION, serialize, type Step } from "../adapter/format/trajectory.js";
import { rng } from "./support/rng.js";

const SEED = Number(process.env.NDBG_FUZZ_SEED ?? 1);
const EDITS = Number(process.env.NDBG_FUZZ_CASES ?? 300);

function generated(n: number): string {
  const steps: Step[] = [{ frame: { event: "call", line: 1, depth: 0, func: "f", locals: { n: "0" } } }];
  for (let i = 1; i < n; i++) steps.push({ action: { kind: "step_into" }, frame: { event: "line", line: 2 + (i % 2), depth: 0, func: "f", locals: { n: String(i), s: "'x'" } } });
  return serialize({ version: FORMAT_VERSION, source: "def f(n):\n    s = 'x'\n    n += 1\n", steps });
}

test("after random edits, re-reading from the edit gives what reading everything gives", () => {
  const r = rng(SEED);
  const texts = [
    readFileSync(join(import.meta.dirname, "golden", "features.ndbg"), "utf8"),
    readFileSync(join(import.meta.dirname, "fixtures", "traces", "demo.ndbg"), "utf8"),
    generated(200),
  ];
  const pieces = ["", "1", "x", "\n", "=", "<|arg_sep|>", "<|action_sep|><|step_into|>\n", "<|arg_sep|>..", "'", "9 0 f"];
  let incremental = 0;
  for (let e = 0; e < EDITS; e++) {
    let text = texts[e % texts.length];
    let a = analyze(text);
    // A few edits in a row, each re-read from the one before.
    for (let k = 0; k < 3; k++) {
      const at = Math.floor(r() * text.length);
      const cut = r() < 0.5 ? 0 : Math.floor(r() * 40);
      const what = r() < 0.2 ? text.slice(at, at + Math.floor(r() * 300)) : pieces[Math.floor(r() * pieces.length)];
      const next = text.slice(0, at) + what + text.slice(at + cut);
      const got = reanalyze(text, a, next);
      const want = analyze(next);
      assert.deepEqual(got, want, `edit ${e}.${k}: at ${at}, cut ${cut}, insert ${JSON.stringify(what)}`);
      if (!a.errors.length) incremental++;
      text = next;
      a = got;
    }
  }
  assert.ok(incremental > EDITS / 2, `${incremental} edits were re-read from the edit`);
});

test("a keystroke in a trace of 100,000 frames is re-read in a small part of a full reading", () => {
  const text = generated(100_000);
  const a = analyze(text);
  const at = text.indexOf("n=50000");
  const next = text.slice(0, at + 2) + "7" + text.slice(at + 2);
  // The fastest of five of each: a single timing on cores shared with other suites measures them.
  const fastest = (f: () => unknown): number =>
    Math.min(...Array.from({ length: 5 }, () => {
      const t0 = performance.now();
      f();
      return performance.now() - t0;
    }));
  const full = fastest(() => analyze(next));
  const part = fastest(() => reanalyze(text, a, next));
  assert.deepEqual(reanalyze(text, a, next), analyze(next));
  assert.ok(part < full / 3, `re-read ${Math.round(part)} ms, full ${Math.round(full)} ms`);
});
