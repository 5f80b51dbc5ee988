// The confidence shown for a predicted state, calibrated: the probabilities of a state's tokens
// (raw evidence, StateScore) mapped to the chance that the whole state is exact. The map is fitted
// on states of code the model never trained on and no evaluation set holds (`ndbg calibrate`,
// adapter/tools/calibrate.ts), and stored beside the model: `NAME.calibration.json` next to
// `NAME.gguf`. One source of truth, read wherever a model is loaded for states (ModelPredictor), so
// the adapter, ndbg and the MCP server all show the same number.
//
// The map is logistic (Platt scaling): p = 1 / (1 + exp(-(bias + Σ weight·feature))) over features
// of the state's probability P (the product of its tokens' probabilities): ln P, and -ln(-ln P),
// which tells apart the many states whose P is near 1 (ln P alone squeezes them into one point, and
// a logistic on it alone then never says more than about 85%). Every feature grows with P and
// every weight is at least 0, so a surer token never lowers the shown confidence.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { ModelFileError } from "./gguf.js";

/** What a model's tokens say about one predicted state, before calibration. */
export interface StateScore {
  /** Mean probability of its tokens (the stop token included): the confidence shown before calibration. */
  mean: number;
  /** Least probability of one of its tokens. */
  min: number;
  /** ln of the state's probability: the sum of its tokens' log probabilities. */
  logProb: number;
  /** Its tokens, the stop token included. */
  tokens: number;
}

/** The features the map reads, by name (the stored form names them, so a file says what it means). */
export const FEATURES = {
  /** ln P(state). */
  logProb: (s: StateScore): number => s.logProb,
  /** ln of the least sure token's probability. */
  logMin: (s: StateScore): number => Math.log(s.min),
  /** -ln(-ln P(state)): grows without bound as the state's probability nears 1, where most states lie (capped at P = 1 - 1e-9). */
  sureness: (s: StateScore): number => -Math.log(Math.max(1e-9, -s.logProb)),
  /** -ln(-ln min): the same for the least sure token. */
  minSureness: (s: StateScore): number => -Math.log(Math.max(1e-9, -Math.log(s.min))),
} as const;
export type FeatureName = keyof typeof FEATURES;

/** Features below this are read as this: a token the grammar forced at 1e-30 says no more than one at 1e-12. */
const FLOOR = -30;

export const CALIBRATION_FORMAT = "ndbg-calibration";

/** The stored form (`NAME.calibration.json`). */
export interface Calibration {
  format: typeof CALIBRATION_FORMAT;
  version: 1;
  method: "logistic";
  bias: number;
  /** One weight per feature it reads, each >= 0 (none: the same confidence for every state). */
  weights: Partial<Record<FeatureName, number>>;
  /** What it was fitted on, for the card and for whoever refits it. */
  fitted: {
    /** The model file's name (a calibration belongs to one model). */
    model: string;
    data: string[];
    states: number;
    /** Share of those states that were exact. */
    exact: number;
    date: string;
    command?: string;
  };
}

/** The feature value, floored (see FLOOR); a missing or NaN value reads as the floor. */
function feature(name: FeatureName, s: StateScore): number {
  const x = FEATURES[name](s);
  return Number.isFinite(x) ? Math.max(FLOOR, x) : FLOOR;
}

/** The calibrated probability that a state with this score is exact. */
export function calibrated(c: Calibration, s: StateScore): number {
  let z = c.bias;
  for (const [name, w] of Object.entries(c.weights) as [FeatureName, number][]) z += w * feature(name, s);
  return 1 / (1 + Math.exp(-z));
}

/** The confidence to show: calibrated where the model has a calibration, else the mean token probability. */
export function shownConfidence(c: Calibration | undefined, s: StateScore): number {
  return c ? calibrated(c, s) : s.mean;
}

/** Where a model's calibration lies: beside it, `.gguf` replaced by `.calibration.json`. */
export function calibrationPath(modelPath: string): string {
  return modelPath.replace(/\.gguf$/i, "") + ".calibration.json";
}

/** A stored calibration checked field by field; a file that is not one is a ModelFileError that says what is wrong. */
export function parseCalibration(text: string, file: string): Calibration {
  const bad = (why: string): ModelFileError => new ModelFileError(`${file} is not a usable calibration (${why}); refit it with ndbg calibrate or remove it`, file);
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (e) {
    throw bad(`not JSON: ${(e as Error).message}`);
  }
  if (typeof o !== "object" || o === null || Array.isArray(o)) throw bad("not a JSON object");
  const c = o as Record<string, unknown>;
  if (c.format !== CALIBRATION_FORMAT) throw bad(`"format" is not "${CALIBRATION_FORMAT}"`);
  if (c.version !== 1) throw bad(`version ${JSON.stringify(c.version)}; this debugger reads version 1`);
  if (c.method !== "logistic") throw bad(`method ${JSON.stringify(c.method)}; this debugger knows "logistic"`);
  if (typeof c.bias !== "number" || !Number.isFinite(c.bias)) throw bad(`"bias" is not a number`);
  if (typeof c.weights !== "object" || c.weights === null || Array.isArray(c.weights)) throw bad(`"weights" is not an object`);
  const weights = c.weights as Record<string, unknown>;
  for (const [k, w] of Object.entries(weights)) {
    if (!Object.hasOwn(FEATURES, k)) throw bad(`unknown feature "${k}" (known: ${Object.keys(FEATURES).join(", ")})`);
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) throw bad(`the weight of ${k} is not a number >= 0`);
  }
  if (typeof c.fitted !== "object" || c.fitted === null) throw bad(`"fitted" is missing`);
  return o as Calibration;
}

/**
 * The calibration stored beside a model: undefined when there is none (the confidence shown is then
 * the mean token probability, and `note` says so); a file that is there but unusable is an error.
 */
export async function readCalibration(modelPath: string, note?: (message: string) => void): Promise<{ calibration: Calibration; path: string } | undefined> {
  const path = calibrationPath(modelPath);
  if (!existsSync(path)) {
    note?.(`no calibration beside the model (${path}): the confidence shown is the mean probability of the state's tokens, not calibrated`);
    return undefined;
  }
  const text = await readFile(path, "utf8").catch((e: Error) => {
    throw new ModelFileError(`cannot read the calibration ${path}: ${e.message}`, path);
  });
  return { calibration: parseCalibration(text, path), path };
}
