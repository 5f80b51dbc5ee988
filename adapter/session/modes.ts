// Launch modes: the one place where a launch mode becomes a source of states (a predictor).
// Predict, hybrid and compare modes load what they need only when chosen. Predict mode runs the
// program sealed and asks the model only for its holes; `compute: false` is the model alone.
import { dirname } from "node:path";
import { Engine } from "../engine/engine.js";
import type { Predictor } from "../engine/predictor.js";
import { SEALED_PYTHONS, evaluateValues, sealedPythonFor, valuesEvaluator } from "../real/sealed.js";
import { RecordedPredictor } from "../predictors/recorded.js";
import type { ModelStatus } from "../predictors/model.js";
import { ComparePredictor, startComparison } from "../predictors/compare.js";
import { findDebugpyPython } from "../real/debugpy.js";
import { SESSION_OBJECTS, type TraceOptions } from "../real/run.js";
import { runTrace } from "../real/hostRun.js";
import { HOST_EXECUTOR } from "../real/executor.js";
import { projectRoot } from "../real/workspace.js";
import type { LaunchConfig } from "./launch.js";
import type { HoleAnswers } from "../predictors/holeAnswers.js";
import type { HoleValueModel } from "../model/holeValue.js";

/** What a predictor may tell the session while it is made and used. */
export interface PredictorHooks {
  /** Diagnostics (llama.cpp's messages): for the log, never stdout. */
  log?: (message: string) => void;
  /** Predict mode: resolving, downloading and loading the model, then what was loaded. */
  status?: (s: ModelStatus) => void;
  /** Lines for the user (the Debug Console): hybrid mode's holes. */
  console?: (line: string) => void;
  /** The session ended: a recording in progress is killed. */
  signal?: AbortSignal;
}

/** How record, hybrid and predict mode run the program: the launch's limits, in its cwd (else the program's folder), its project's .py files the user's, ended with the session. */
function runOptions(config: LaunchConfig, hooks: PredictorHooks): TraceOptions {
  return {
    call: config.call,
    python: config.python,
    maxEvents: config.maxSteps,
    timeout: config.timeout,
    maxOutput: config.maxOutput,
    maxRepr: config.maxRepr,
    objects: SESSION_OBJECTS,
    cwd: config.cwd ?? dirname(config.program),
    root: projectRoot(config.program, config.cwd),
    ...(hooks.signal ? { signal: hooks.signal } : {}),
  };
}

/** `source`: predict mode's program text when it is not the file's (hybrid mode's model). */
export async function createPredictor(config: LaunchConfig, hooks: PredictorHooks = {}, source?: string): Promise<Predictor> {
  switch (config.mode) {
    case "record": {
      const trace = await runTrace(config.program, runOptions(config, hooks));
      return new RecordedPredictor(trace);
    }
    case "hybrid":
      return createHoles(config, hooks);
    case "predict":
      return config.compute && source === undefined ? createSealed(config, hooks) : createModel(config, hooks, source);
    case "compare":
      return createComparison(config, hooks);
    case "replay":
      return RecordedPredictor.fromTraceFile(config.program);
  }
}

/** Compare mode's predictor (its pairs, sides and resync), where the session has one. */
export function comparisonOf(p: Predictor): ComparePredictor | undefined {
  return p instanceof ComparePredictor ? p : undefined;
}

/** Predict mode: the program runs sealed and the model fills its holes (adapter/predictors/sealed.ts). */
async function createSealed(config: LaunchConfig, hooks: PredictorHooks): Promise<Predictor> {
  const { createSealedPredictor } = await import("../predictors/sealed.js");
  // The default sealed CPython loads while the user's Python is asked its version (a tenth of a
  // second): the session's runs need it where that is 3.12, its evaluations over values always.
  evaluateValues.warm();
  const sealedPython = await sealedPythonFor(config.pythonVersion, config.python);
  if (config.pythonVersion !== undefined && config.pythonVersion !== sealedPython) {
    const carried = Object.keys(SEALED_PYTHONS).join(" and ");
    hooks.console?.(`predict · the sealed run has CPython ${carried} only: its states are ${sealedPython}'s, not ${config.pythonVersion}'s ("compute": false has the model predict ${config.pythonVersion}'s)`);
  }
  return createSealedPredictor(config.program, {
    ...runOptions(config, hooks),
    sealedPython,
    predict: config.predict,
    answersFile: await answersFile(config, hooks),
    ...holeModel(config),
    model: (source) => createModel({ ...config, call: undefined }, hooks, source),
    everyState: () => createModel(config, hooks),
    ...(config.model !== undefined ? { modelFile: config.model } : {}),
    ...(hooks.console ? { console: hooks.console } : {}),
  });
}

/** Hybrid mode: the program runs on this machine and the model fills its holes. */
async function createHoles(config: LaunchConfig, hooks: PredictorHooks): Promise<Predictor> {
  const { HybridPredictor } = await import("../predictors/hybrid.js");
  return HybridPredictor.create(config.program, {
    ...runOptions(config, hooks),
    executor: HOST_EXECUTOR,
    predict: config.predict,
    answersFile: await answersFile(config, hooks),
    ...holeModel(config),
    model: (source) => createModel({ ...config, call: undefined }, hooks, source),
    ...(hooks.console ? { console: hooks.console } : {}),
  });
}

/** The values the user gave holes, kept in the program's project (adapter/predictors/holeAnswers.ts); a file that cannot be read is said, and left alone. */
async function answersFile(config: LaunchConfig, hooks: PredictorHooks): Promise<HoleAnswers> {
  const { HoleAnswers } = await import("../predictors/holeAnswers.js");
  const file = await HoleAnswers.open(projectRoot(config.program, config.cwd), config.program);
  if (file.problem) hooks.console?.(`${config.mode} · ${file.problem}`);
  return file;
}

/** The chat model a launch names for its holes' values (`holeModel`), opened at the first hole; the user's API key only for a trusted workspace's launch, as for `model`. */
function holeModel(config: LaunchConfig): { valueModel?: () => Promise<HoleValueModel> } {
  const url = config.holeModel;
  if (!url) return {};
  return { valueModel: async () => (await import("../model/holeValue.js")).HoleValueModel.open(url, config.trusted ? process.env.NDBG_API_KEY : undefined) };
}

/** The model predicts every state (`source`: the program as the model reads it, when not the file's text). */
async function createModel(config: LaunchConfig, hooks: PredictorHooks, source?: string): Promise<Predictor> {
  const { ModelPredictor } = await import("../predictors/model.js");
  return ModelPredictor.create({
    program: config.program,
    ...(source !== undefined ? { source } : {}),
    ...(config.call !== undefined ? { call: config.call } : {}),
    ...(config.model !== undefined ? { model: config.model } : {}),
    dialect: config.dialect,
    layout: config.layout,
    ...(config.python !== undefined ? { python: config.python } : {}),
    ...(config.pythonVersion !== undefined ? { pythonVersion: config.pythonVersion } : {}),
    gpu: config.gpu,
    threads: config.threads,
    compute: config.compute,
    // The user's key for a model server goes only where a trusted workspace's launch points: an untrusted one could name any server.
    ...(config.trusted ? {} : { apiKey: false as const }),
    cwd: dirname(config.program),
    ...(hooks.log ? { log: hooks.log } : {}),
    ...(hooks.status ? { onStatus: hooks.status } : {}),
  });
}

/** Compare mode: the predicted side (the model, or a recording made with the same Python) beside debugpy. */
async function createComparison(config: LaunchConfig, hooks: PredictorHooks): Promise<Predictor> {
  const python = await findDebugpyPython(config.python);
  const inner = config.predictor === "record" ? createPredictor({ ...config, mode: "record", python }, hooks) : createModel({ ...config, python }, hooks);
  return startComparison(
    { program: config.program, call: config.call, python, cwd: config.cwd ?? dirname(config.program), timeout: config.timeout, maxRepr: config.maxRepr, maxSteps: config.maxSteps, resync: config.resync },
    inner,
  );
}

/** Most states a continue predicts event by event (exception stops) where a model predicts them: one that circles would predict for minutes. */
const PREDICTED_EVENTS = 300;

/** Whether a model predicts the session's states (predict mode's model alone, compare mode's prediction), not a run. */
export function modelPredicts(config: LaunchConfig | undefined, predictor: Predictor | undefined): boolean {
  if (!config || predictor?.guessed) return false;
  return config.mode === "predict" || (config.mode === "compare" && config.predictor === "model");
}

/**
 * The engine over a launch's predictor, as the adapter and MCP both make it. Step Over stops at
 * breakpoints in the calls it steps over where the states of a run come one by one: record,
 * replay of a run, hybrid, predict mode's sealed run (not compare mode, whose real side follows
 * each action as one, nor a replayed session's saved stops; the model alone is given the
 * breakpoints with every prediction). Expressions over states are CPython's, sealed: the session's
 * minor version where it is one of those carried, else the default.
 */
export function createEngine(predictor: Predictor, config: LaunchConfig): Engine {
  const stepOverStops = config.mode !== "compare" && predictor.eventByEvent === true;
  const maxEvents = modelPredicts(config, predictor) ? PREDICTED_EVENTS : config.maxSteps;
  // (by the session's own minor version where one is carried: the program's Python)
  const python = predictor.python !== undefined && Object.hasOwn(SEALED_PYTHONS, predictor.python) ? predictor.python : undefined;
  return new Engine(predictor, { maxSteps: config.maxSteps, maxEvents, stepOverStops, evaluator: valuesEvaluator(python) });
}
