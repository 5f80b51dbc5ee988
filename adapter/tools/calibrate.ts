// Fitting a model's calibration (adapter/model/calibration.ts): the model alone predicts states of
// a fitting set from the true current state (`eval steps --no-compute`, adapter/tools/steps.ts),
// each answer scored exact or not, and a logistic map from its token probabilities to "exact" is
// fitted by maximum likelihood with every weight kept at 0 or more (a surer token never lowers the
// confidence). Three numbers, so a thousand states or so fit it without overfitting; the stored
// form is a few lines of JSON beside the model.
import { CALIBRATION_FORMAT, FEATURES, type Calibration, type FeatureName, type StateScore } from "../model/calibration.js";

/** One fitting state: its score, and whether the answer was exact. */
export interface Sample {
  score: StateScore;
  exact: boolean;
}

/**
 * The features a fit offers (those that would want a negative weight are dropped). On the bundled
 * model's fitting set, ln P with -ln(-ln P) had the lowest cross-validated log loss of the pairs
 * tried (0.331, against 0.350 for -ln(-ln P) alone and 0.382 for ln P alone: docs/MODEL.md,
 * "Confidence"); the least sure token's features (ln min, -ln(-ln min)) wanted negative weights.
 */
export const FIT_FEATURES: readonly FeatureName[] = ["sureness", "logProb"];

/** Solves A x = b (small, dense; Gauss-Jordan with partial pivoting). */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r][c]) > Math.abs(m[p][c])) p = r;
    [m[c], m[p]] = [m[p], m[c]];
    const d = m[c][c];
    if (Math.abs(d) < 1e-300) throw new Error("the fitting states do not determine the calibration (a singular system): give more, or more varied, states");
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r][c] / d;
      for (let k = c; k <= n; k++) m[r][k] -= f * m[c][k];
    }
  }
  return m.map((row, i) => row[n] / row[i]);
}

/**
 * Logistic regression by Newton's method on the given columns (a bias first), with a small ridge
 * on the weights (not the bias) so that a feature that separates the states perfectly still has
 * a finite weight.
 */
function logistic(x: number[][], y: number[], ridge: number): number[] {
  const d = x[0].length;
  let w = new Array<number>(d).fill(0);
  for (let iter = 0; iter < 100; iter++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (let i = 0; i < x.length; i++) {
      const z = x[i].reduce((s, v, j) => s + v * w[j], 0);
      const p = 1 / (1 + Math.exp(-z));
      const r = p * (1 - p);
      for (let j = 0; j < d; j++) {
        g[j] += (p - y[i]) * x[i][j];
        for (let k = 0; k < d; k++) h[j][k] += r * x[i][j] * x[i][k];
      }
    }
    for (let j = 1; j < d; j++) {
      g[j] += ridge * w[j];
      h[j][j] += ridge;
    }
    const step = solve(h, g);
    w = w.map((v, j) => v - step[j]);
    if (Math.max(...step.map(Math.abs)) < 1e-10) break;
  }
  return w;
}

const featureOf = (name: FeatureName, s: StateScore): number => {
  const v = FEATURES[name](s);
  return Number.isFinite(v) ? Math.max(-30, v) : -30;
};

/**
 * The calibration of `samples`: logistic on `features`, each weight >= 0 (a feature whose free fit
 * wants a negative weight is dropped and the rest refitted, until none does).
 */
export function fitCalibration(samples: readonly Sample[], fitted: Omit<Calibration["fitted"], "states" | "exact">, features: readonly FeatureName[] = FIT_FEATURES): Calibration {
  if (samples.length < 20) throw new Error(`${samples.length} fitting states are too few to calibrate on (20 at least; a thousand or so is a good fit)`);
  const exact = samples.filter((s) => s.exact).length;
  if (exact === 0 || exact === samples.length) throw new Error(`the fitting states are all ${exact ? "exact" : "wrong"}: nothing to calibrate against`);
  const y = samples.map((s) => (s.exact ? 1 : 0));
  let used = [...features];
  for (;;) {
    const x = samples.map((s) => [1, ...used.map((f) => featureOf(f, s.score))]);
    const w = logistic(x, y, 1e-3 * samples.length);
    const negative = used.filter((_, j) => w[j + 1] < 0);
    if (!negative.length || !used.length) {
      return {
        format: CALIBRATION_FORMAT,
        version: 1,
        method: "logistic",
        bias: w[0],
        weights: Object.fromEntries(used.map((f, j) => [f, w[j + 1]])),
        fitted: { ...fitted, states: samples.length, exact: exact / samples.length },
      };
    }
    // The most negative goes first; the others may turn positive without it.
    const worst = used.reduce((a, f, j) => (w[j + 1] < w[used.indexOf(a) + 1] ? f : a), negative[0]);
    used = used.filter((f) => f !== worst);
  }
}

/** Mean log loss of a calibration on samples (lower is better): for the fit's report. */
export function logLoss(samples: readonly Sample[], p: (s: StateScore) => number): number {
  let sum = 0;
  for (const s of samples) {
    const q = Math.min(1 - 1e-12, Math.max(1e-12, p(s.score)));
    sum -= s.exact ? Math.log(q) : Math.log(1 - q);
  }
  return sum / samples.length;
}
