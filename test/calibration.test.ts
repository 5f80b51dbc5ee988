// The calibration of the confidence shown (adapter/model/calibration.ts, fitted by
// adapter/tools/calibrate.ts), on states whose truth is known: a fit recovers a miscalibration
// made on purpose, the map is monotone and never learns a negative weight, the stored form
// round-trips, a malformed file is a clear error and a missing one falls back to the mean token
// probability with a note; the bundled model ships its calibration, which the loader finds; and
// end to end, `ndbg eval steps --json` shows the calibrated confidence with its reliability table,
// from which `ndbg calibrate --report` fits what the fit itself gives on those states.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { calibrated, calibrationPath, parseCalibration, readCalibration, shownConfidence, type StateScore } from "../adapter/model/calibration.js";
import { ModelFileError } from "../adapter/model/gguf.js";
import { bundledModel } from "../adapter/model/resolve.js";
import { fitCalibration, logLoss, type Sample } from "../adapter/tools/calibrate.js";
import { reliability } from "../adapter/tools/reliability.js";
import { reliabilityOf, type StepsReport } from "../adapter/tools/steps.js";
import { rng } from "./support/rng.js";
import { buildDist, ndbgWithin } from "./support/dist.js";

const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

/**
 * States whose chance of being exact is sigmoid(bias + a·logProb + b·ln min), and whose mean token
 * probability (the raw confidence) is far surer than that: the overconfidence the calibration undoes.
 */
function synthetic(seed: number, n: number, truth: { bias: number; logProb: number; logMin: number }): Sample[] {
  const r = rng(seed);
  const out: Sample[] = [];
  for (let i = 0; i < n; i++) {
    const tokens = 10 + Math.floor(r() * 60);
    const min = Math.exp(-8 * r() * r());
    const logProb = Math.log(min) + Math.log(0.9 + 0.1 * r()) * (tokens / 4) * r();
    const score: StateScore = { mean: 1 - (1 - min) / tokens, min, logProb, tokens };
    const p = sigmoid(truth.bias + truth.logProb * logProb + truth.logMin * Math.log(min));
    out.push({ score, exact: r() < p });
  }
  return out;
}

const FIT = { model: "test.gguf", data: ["synthetic"], date: "2026-01-01" };

test("a fit recovers a known miscalibration: its weights, and bins within a few points of their confidence", () => {
  const truth = { bias: 1.2, logProb: 0.3, logMin: 0.8 };
  const samples = synthetic(7, 6000, truth);
  const raw = reliability(samples.map((s) => ({ confidence: s.score.mean, exact: s.exact })));
  assert.ok(raw.ece! > 0.2, `the raw confidence is far off (ECE ${raw.ece})`);
  const cal = fitCalibration(samples, FIT, ["logProb", "logMin"]);
  assert.ok(Math.abs(cal.bias - truth.bias) < 0.25, `bias ${cal.bias}`);
  assert.ok(Math.abs(cal.weights.logProb! - truth.logProb) < 0.1, `logProb weight ${cal.weights.logProb}`);
  assert.ok(Math.abs(cal.weights.logMin! - truth.logMin) < 0.15, `logMin weight ${cal.weights.logMin}`);
  assert.equal(cal.fitted.states, 6000);
  // Judged on fresh states of the same kind: every bin of 30+ within 10 points, the ECE small.
  const fresh = synthetic(8, 6000, truth);
  const after = reliability(fresh.map((s) => ({ confidence: calibrated(cal, s.score), exact: s.exact })));
  assert.equal(after.off, 0, JSON.stringify(after.bins));
  assert.ok(after.ece! < 0.03, `ECE ${after.ece}`);
  assert.ok(logLoss(fresh, (s) => calibrated(cal, s)) < logLoss(fresh, (s) => s.mean));
});

test("the map is monotone: a surer token never lowers the confidence, and a feature that wants a negative weight is dropped", () => {
  // Exactness falls as the least sure token grows surer: a free fit would weigh logMin below 0.
  const r = rng(3);
  const samples: Sample[] = [];
  for (let i = 0; i < 3000; i++) {
    const logProb = -10 * r();
    const min = Math.exp(-5 * r());
    samples.push({ score: { mean: 0.9, min, logProb, tokens: 20 }, exact: r() < sigmoid(2 + 0.5 * logProb - 0.7 * Math.log(min)) });
  }
  const cal = fitCalibration(samples, FIT, ["logProb", "logMin"]);
  assert.equal(cal.weights.logMin, undefined, "logMin dropped");
  assert.ok(cal.weights.logProb! > 0);
  for (const w of Object.values(cal.weights)) assert.ok(w! >= 0);
  const base: StateScore = { mean: 0.9, min: 0.3, logProb: -4, tokens: 20 };
  let last = -1;
  for (let lp = -30; lp <= 0; lp += 0.5) {
    const p = calibrated(cal, { ...base, logProb: lp });
    assert.ok(p >= last, `monotone in logProb at ${lp}`);
    last = p;
  }
  // The default features (ln P and -ln(-ln P)): monotone in P up to 1 - 1e-9.
  const byDefault = fitCalibration(synthetic(6, 2000, { bias: 0.5, logProb: 0.3, logMin: 0.4 }), FIT);
  for (const w of Object.values(byDefault.weights)) assert.ok(w! >= 0);
  last = -1;
  for (let e = 1.5; e >= -9; e -= 0.05) {
    const p = calibrated(byDefault, { ...base, logProb: -(10 ** e) });
    assert.ok(p >= last, `monotone in P at ln P = ${-(10 ** e)}`);
    last = p;
  }
  const fitted = fitCalibration(synthetic(5, 2000, { bias: 0.5, logProb: 0.2, logMin: 0.6 }), FIT, ["logProb", "logMin"]);
  last = -1;
  for (let m = 0.001; m <= 1; m += 0.01) {
    const p = calibrated(fitted, { ...base, min: m });
    assert.ok(p >= last, `monotone in min at ${m}`);
    last = p;
  }
});

test("too few states, or all of one kind, are refused with the reason", () => {
  const s = synthetic(1, 10, { bias: 0, logProb: 0.1, logMin: 0.1 });
  assert.throws(() => fitCalibration(s, FIT), /too few/);
  const all = synthetic(1, 50, { bias: 0, logProb: 0.1, logMin: 0.1 }).map((x) => ({ ...x, exact: true }));
  assert.throws(() => fitCalibration(all, FIT), /all exact/);
});

test("the stored form round-trips, and a malformed one is a ModelFileError that says what is wrong", () => {
  const cal = fitCalibration(synthetic(2, 1500, { bias: 1, logProb: 0.3, logMin: 0.5 }), FIT);
  const back = parseCalibration(JSON.stringify(cal, null, 2), "x.calibration.json");
  assert.deepEqual(back, cal);
  for (const s of synthetic(4, 50, { bias: 0, logProb: 0.1, logMin: 0.1 })) assert.equal(calibrated(back, s.score), calibrated(cal, s.score));
  const bad = (text: string, why: RegExp): void =>
    assert.throws(
      () => parseCalibration(text, "m.calibration.json"),
      (e: unknown) => e instanceof ModelFileError && why.test(e.message) && /m\.calibration\.json/.test(e.message),
      text,
    );
  bad("{", /not JSON/);
  bad("[]", /not a JSON object/);
  bad(JSON.stringify({ ...cal, format: "other" }), /"format"/);
  bad(JSON.stringify({ ...cal, version: 2 }), /version 2/);
  bad(JSON.stringify({ ...cal, method: "isotonic" }), /method "isotonic"/);
  bad(JSON.stringify({ ...cal, bias: "1" }), /"bias"/);
  bad(JSON.stringify({ ...cal, weights: { logProb: -1 } }), /weight of logProb/);
  bad(JSON.stringify({ ...cal, weights: { entropy: 1 } }), /unknown feature "entropy"/);
  bad(JSON.stringify({ ...cal, fitted: undefined }), /"fitted"/);
});

test("beside the model: a missing calibration shows the mean token probability, with a note; a damaged one is an error", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-calibration-"));
  try {
    const model = join(dir, "m.q8_0.gguf");
    assert.equal(calibrationPath(model), join(dir, "m.q8_0.calibration.json"));
    const notes: string[] = [];
    assert.equal(await readCalibration(model, (m) => notes.push(m)), undefined);
    assert.match(notes.join("\n"), /no calibration beside the model .*mean probability/);
    const s: StateScore = { mean: 0.99, min: 0.2, logProb: -3, tokens: 30 };
    assert.equal(shownConfidence(undefined, s), 0.99);
    writeFileSync(calibrationPath(model), "{ not json");
    await assert.rejects(readCalibration(model), (e: unknown) => e instanceof ModelFileError && /not a usable calibration/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the bundled model ships its calibration, fitted for it, and the loader finds it", async () => {
  const model = bundledModel();
  assert.ok(model, "a bundled model");
  const found = await readCalibration(model);
  assert.ok(found, `a calibration beside ${model}`);
  assert.equal(found.calibration.fitted.model, basename(model));
  assert.ok(found.calibration.fitted.states >= 1000, `fitted on ${found.calibration.fitted.states} states`);
  // A state the model is sure of token by token is not shown as certain any more.
  const sure: StateScore = { mean: 0.995, min: 0.9, logProb: -0.2, tokens: 40 };
  const unsure: StateScore = { mean: 0.95, min: 0.05, logProb: -6, tokens: 40 };
  assert.ok(calibrated(found.calibration, sure) > calibrated(found.calibration, unsure));
  assert.ok(calibrated(found.calibration, unsure) < 0.5);
});

test("the reliability table: bins of 10 points, counts, mean confidence and exact share; bins of 30+ judged", () => {
  const pts = [
    ...Array.from({ length: 40 }, (_, i) => ({ confidence: 0.85, exact: i < 34 })),
    ...Array.from({ length: 40 }, (_, i) => ({ confidence: 0.15, exact: i < 20 })),
    { confidence: 1, exact: true },
    { confidence: 0.55, exact: false },
  ];
  const r = reliability(pts);
  assert.equal(r.states, 82);
  assert.equal(r.bins.length, 10);
  assert.deepEqual(r.bins.map((b) => b.count), [0, 40, 0, 0, 0, 1, 0, 0, 40, 1]);
  assert.equal(r.bins[8].exact, 0.85);
  assert.equal(r.bins[1].exact, 0.5);
  assert.equal(r.off, 1, "the 10-20% bin is 35 points off; the 50-60% bin has too few states to judge");
});

test("ndbg eval steps shows the shipped calibration's confidence and its reliability; ndbg calibrate fits a report's states", { timeout: 240_000 }, async () => {
  buildDist();
  const dir = mkdtempSync(join(tmpdir(), "ndbg-calibrate-"));
  const ndbg = ndbgWithin(200_000);
  try {
    // Three scripts of the fitting set, the model alone: 27 states, a few seconds each on one thread.
    const r = await ndbg("eval", "steps", "--data", "training/heldout/calibration-scripts.jsonl:3", "--no-compute", "--threads", "1", "--json");
    assert.equal(r.code, 0, r.stderr);
    const rep = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as StepsReport & { command: string };
    const model = bundledModel()!;
    const shipped = (await readCalibration(model))!.calibration;
    assert.equal(rep.model?.calibration, calibrationPath(model));
    const answered = rep.items.filter((x) => x.predicted);
    assert.ok(answered.length >= 20, `${answered.length} answers`);
    for (const x of answered) {
      assert.ok(x.score, `${x.id} ${x.action}: the raw token probabilities`);
      assert.equal(x.confidence, calibrated(shipped, x.score!), `${x.id} ${x.action}: the confidence is the shipped calibration's`);
    }
    assert.deepEqual(rep.reliability, reliabilityOf(rep.items));
    assert.equal(rep.reliability.shown.states, answered.length);
    assert.equal(rep.reliability.shown.bins.reduce((s, b) => s + b.count, 0), answered.length);
    const report = join(dir, "eval.json");
    writeFileSync(report, r.stdout.trim().split("\n").at(-1)!);
    const out = join(dir, "fit.calibration.json");
    const c = await ndbg("calibrate", "--report", report, "--out", out);
    if (answered.every((x) => x.exact) || answered.every((x) => !x.exact)) {
      assert.notEqual(c.code, 0);
      assert.match(c.stderr, /nothing to calibrate against/);
      return;
    }
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^wrote .*fit\.calibration\.json/);
    assert.match(c.stdout, /^90-100% +\d+ /m);
    const written = parseCalibration(readFileSync(out, "utf8"), out);
    const expected = fitCalibration(answered.map((x) => ({ score: x.score!, exact: x.exact })), written.fitted);
    assert.deepEqual(written, expected);
    assert.equal(written.fitted.model, basename(model));
    assert.equal(written.fitted.states, answered.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
