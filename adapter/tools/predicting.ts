// One prediction for an evaluation: the predictor for a program with the evaluation's model options
// (predict mode as users get it, the program run sealed with the model filling its holes; or the
// model alone), and a prediction from a given history, timed, with its token cost.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Predicted, Predictor } from "../engine/predictor.js";
import { ModelPredictor } from "../predictors/model.js";
import { createSealedPredictor } from "../predictors/sealed.js";
import { callOf } from "./programs.js";
import type { GpuSetting } from "../model/backend.js";
import type { LayoutName } from "../pyread/layout.js";
import { PredictionError } from "../model/dialect.js";
import { whichPython } from "../real/hostRun.js";
import type { Action, Step } from "../format/trajectory.js";
import type { Program } from "./programs.js";

/** The model and how it runs; shared by both evaluations. */
export interface ModelOptions {
  /** GGUF path or URI; empty: the bundled model. */
  model?: string;
  gpu?: GpuSetting;
  /** CPU threads (0: from the machine). */
  threads?: number;
  contextSize?: number;
  /** Most tokens one predicted state may take. */
  maxTokens?: number;
  /** Python for tracing, checking and reading the canonical layout (default: see findPython). */
  python?: string;
  /** The layout the model reads programs in (default canonical; see ModelPredictorOptions.layout). */
  layout?: LayoutName;
  /** False: the model predicts every state, those the program decides too (the model alone; see ModelPredictorOptions.compute). */
  compute?: boolean;
  /**
   * With compute: the program runs sealed and the model fills only its holes (default, predict mode
   * as users get it); false: the model with the hand-written rules of what the program decides
   * (adapter/rules/reach.ts), as predict mode was before the sealed run.
   */
  sealed?: boolean;
  /** llama.cpp's messages. */
  log?: (message: string) => void;
  /** Progress: programs done of all. */
  onProgress?: (done: number, total: number, id: string) => void;
}

export const TRACE_LIMITS = { maxEvents: 2000, timeout: 5 };

export function predictorFor(p: Program, o: ModelOptions): Promise<ModelPredictor> {
  return modelPredictor(o, `${p.id}.py`, p.code);
}

/**
 * A model predictor for one program (`source`, shown as `program`) with the evaluation's model
 * options. Its states are those of the Python the cases are traced with (its version, asked).
 */
export async function modelPredictor(o: ModelOptions, program: string, source: string, call?: string): Promise<ModelPredictor> {
  return ModelPredictor.create({
    pythonVersion: (await whichPython(o.python)).version,
    program,
    source,
    ...(call ? { call } : {}),
    ...(o.model ? { model: o.model } : {}),
    gpu: o.gpu ?? "auto",
    threads: o.threads ?? 0,
    ...(o.contextSize ? { contextSize: o.contextSize } : {}),
    ...(o.maxTokens ? { maxTokens: o.maxTokens } : {}),
    ...(o.layout ? { layout: o.layout } : {}),
    ...(o.compute === false ? { compute: false } : {}),
    ...(o.python ? { python: o.python } : {}),
    ...(o.log ? { log: o.log } : {}),
  });
}

/** Whether an evaluation runs programs sealed (predict mode as users get it). */
export const runsSealed = (o: ModelOptions): boolean => o.compute !== false && o.sealed !== false;

/** The program written to a file in `dir` (a sealed run runs a file; its truth is traced from the same one, so that module names agree). */
export async function programFile(p: Program, dir: string): Promise<string> {
  const file = path.join(dir, `${p.id.replace(/[^\w.-]/g, "_")}.py`);
  await writeFile(file, p.code);
  return file;
}

/**
 * Predict mode as users get it for one program, written at `file` (programFile): run sealed (the
 * model, loaded at the first hole, fills the holes); a program that does not parse gets the model alone.
 */
export async function sealedPredictorFor(p: Program, o: ModelOptions, file: string): Promise<Predictor> {
  const call = p.script ? undefined : callOf(p);
  return createSealedPredictor(file, {
    ...(call ? { call } : {}),
    ...TRACE_LIMITS,
    model: (source) => modelPredictor(o, file, source),
    everyState: () => modelPredictor(o, file, p.code, call),
    ...(o.model ? { modelFile: o.model } : {}),
  });
}

/** A folder for the programs an evaluation runs sealed (they run from files), removed by `done`. */
export async function programFolder(): Promise<{ dir: string; done: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "ndbg-eval-"));
  return { dir, done: () => rm(dir, { recursive: true, force: true }) };
}

/** Model calls made by `p` since its stats had `from` entries: generated and evaluated tokens. */
function costSince(p: Predictor, from: number): { tokens: number; evaluated: number } {
  let tokens = 0;
  let evaluated = 0;
  if (!(p instanceof ModelPredictor)) return { tokens, evaluated };
  for (const s of p.stats.slice(from)) {
    tokens += s.generatedTokens;
    evaluated += s.evaluatedTokens;
  }
  return { tokens, evaluated };
}

/** One prediction from a given history, timed; a PredictionError (an answer that is no state) is a result, not a crash. */
export async function predictOne(
  p: Predictor,
  history: Predicted[],
  action: Action,
): Promise<{ step?: Step; confidence?: number; score?: Predicted["score"]; error?: string; ms: number; tokens: number; evaluated: number }> {
  const before = p instanceof ModelPredictor ? p.stats.length : 0;
  const t0 = performance.now();
  try {
    const r = await p.predict(history, action);
    const conf = r.confidence !== undefined && !r.given ? { confidence: r.confidence } : {};
    return { step: r.step, ...conf, ...(r.score ? { score: r.score } : {}), ms: performance.now() - t0, ...costSince(p, before) };
  } catch (e) {
    if (!(e instanceof PredictionError)) throw e;
    return { error: e.message, ms: performance.now() - t0, ...costSince(p, before) };
  }
}

/** The share k of n; null when n is 0. */
export const rate = (k: number, n: number): number | null => (n ? k / n : null);
