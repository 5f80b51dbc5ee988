// Launch arguments of the `neural-python` debug type, checked before anything starts. The
// attribute names are those of package.json (contributes.debuggers[0].configurationAttributes.launch);
// a bad argument gets one clear message naming the attribute.
import { statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { checkSingleExpression } from "../pyread/expressions.js";
import { LAYOUTS, type LayoutName } from "../pyread/layout.js";
import { cutText } from "../format/values.js";
import { MAX_TIMEOUT_S } from "../real/run.js";
import { GPU_SETTINGS, type GpuSetting } from "../model/backend.js";
import { isEndpoint } from "../model/endpoint.js";
import { checkPythonVersion } from "../model/pyversion.js";

/** A client's value as a message shows it: strings cut (an argument may be megabytes), containers by kind. */
export function quoted(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(cutText(v, 60));
  if (Array.isArray(v)) return v.length ? `an array of ${v.length}` : "[]";
  if (v !== null && typeof v === "object") return "an object";
  return String(v);
}

export const MODES = ["predict", "record", "compare", "replay", "hybrid"] as const;
export type Mode = (typeof MODES)[number];
/** Modes that run the user's program (the tracer, debugpy): only where the client says the workspace is trusted. */
export const RUNS_PROGRAM: readonly Mode[] = ["record", "compare", "hybrid"];
export const DIALECTS = ["auto", "native", "instruct"] as const;
export type Dialect = (typeof DIALECTS)[number];
/** Compare mode's predicted side: the model, or a recording of the real run (a check of the comparison itself). */
export const PREDICTORS = ["model", "record"] as const;
export type PredictorKind = (typeof PREDICTORS)[number];

export interface LaunchConfig {
  /** Absolute path of the Python file. */
  program: string;
  /** Entry call such as `f([1, 2])`; absent: the file runs as a script. */
  call?: string;
  /** The program's working directory and the project's folder (its .py files are the user's; predict mode's sandbox offers it); absent: the program's folder, and its package's root. */
  cwd?: string;
  mode: Mode;
  model?: string;
  /** Predict and hybrid modes: an OpenAI-compatible endpoint (…/v1) asked for each hole's value alone, instead of the model's next state. */
  holeModel?: string;
  dialect: Dialect;
  /** Predict mode: the program as the model reads it (re-printed as it was trained, or as written). */
  layout: LayoutName;
  /** Where the model runs. */
  gpu: GpuSetting;
  /** CPU threads for inference; 0 chooses from the machine. */
  threads: number;
  stopOnEntry: boolean;
  python?: string;
  /** Predict mode: the program runs sealed and the model fills only its holes (true), or every state is the model's (false: the model alone; compare mode's default). */
  compute: boolean;
  /** Predict mode: the Python version whose states to predict ("3.12"); default: the launch's Python's, else the newest the model knows. */
  pythonVersion?: string;
  resync: boolean;
  /** Compare mode: where the predicted states come from. */
  predictor: PredictorKind;
  /** Hybrid mode: functions to predict rather than run (names or qualified names). */
  predict: string[];
  maxSteps: number;
  /** Seconds. */
  timeout: number;
  maxOutput: number;
  maxRepr: number;
  /** Predicted states whose confidence is below this (0..1) are marked as low confidence. */
  lowConfidence: number;
  /**
   * The client says the workspace is trusted: the extension sets it from VS Code's workspace
   * trust, over whatever launch.json says; another DAP client, run by the user on their own
   * files, sets it (package.json says so, for those clients).
   */
  trusted: boolean;
}

/** The defaults of package.json's schema. */
export const LAUNCH_DEFAULTS = {
  mode: "predict",
  dialect: "auto",
  layout: "canonical",
  gpu: "auto",
  threads: 0,
  stopOnEntry: false,
  resync: false,
  compute: true,
  predictor: "model",
  maxSteps: 10000,
  timeout: 10,
  maxOutput: 1000000,
  maxRepr: 1000,
  // The confidence is calibrated (adapter/model/calibration.ts): below 0.5 a state is more likely wrong than right.
  lowConfidence: 0.5,
  trusted: false,
} as const satisfies Partial<LaunchConfig>;


export type LaunchResult = { ok: true; config: LaunchConfig } | { ok: false; error: string };

const LIMITS = [
  ["maxSteps", true],
  ["timeout", false],
  ["maxOutput", true],
  ["maxRepr", true],
] as const;

/**
 * Checks raw launch arguments. Relative program paths resolve against `cwd` (the client's
 * `cwd` argument where given, else the adapter's working directory).
 */
export function validateLaunch(args: Record<string, unknown> | undefined, cwd = process.cwd()): LaunchResult {
  const fail = (error: string): LaunchResult => ({ ok: false, error });
  if (!args || typeof args !== "object") return fail("launch arguments are missing");
  const a = args;
  const str = (name: string): string | undefined | Error => {
    const v = a[name];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== "string") return new Error(`"${name}" must be a string, not ${quoted(v)}`);
    return v;
  };
  const bool = (name: string, dflt: boolean): boolean | Error => {
    const v = a[name];
    if (v === undefined || v === null) return dflt;
    if (typeof v !== "boolean") return new Error(`"${name}" must be true or false, not ${quoted(v)}`);
    return v;
  };

  const base = str("cwd");
  if (base instanceof Error) return fail(base.message);
  const program = str("program");
  if (program instanceof Error) return fail(program.message);
  if (program === undefined || program.trim() === "") return fail('"program" is required: the Python file to debug');
  const path = isAbsolute(program) ? program : resolve(base ?? cwd, program);
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return fail(`program not found: ${path}`);
  }
  if (!isFile) return fail(`program is not a file: ${path}`);
  let folder: string | undefined;
  if (base !== undefined && base.trim() !== "") {
    folder = resolve(cwd, base);
    let isDir = false;
    try {
      isDir = statSync(folder).isDirectory();
    } catch {
      return fail(`"cwd" not found: ${folder}`);
    }
    if (!isDir) return fail(`"cwd" is not a folder: ${folder}`);
  }

  const isTrace = path.endsWith(".ndbg");
  const mode = str("mode") ?? (isTrace ? "replay" : LAUNCH_DEFAULTS.mode);
  if (mode instanceof Error) return fail(mode.message);
  if (!(MODES as readonly string[]).includes(mode)) return fail(`"mode" must be one of ${MODES.join(", ")}, not ${quoted(mode)}`);
  if (isTrace !== (mode === "replay"))
    return fail(isTrace ? `${path} is a trace file: replay it with "mode": "replay" (${mode} mode debugs a Python file)` : `replay mode replays a trace file (.ndbg), not ${path}`);
  const trusted = bool("trusted", LAUNCH_DEFAULTS.trusted);
  if (trusted instanceof Error) return fail(trusted.message);
  // A second line behind the extension, which refuses these modes in an untrusted workspace: a
  // client that does not say the workspace is trusted gets no program run.
  if ((RUNS_PROGRAM as readonly string[]).includes(mode) && !trusted)
    return fail(`${mode} mode runs the program, which needs a trusted workspace, and the client did not say this one is ("trusted": true); predict and replay modes never run it`);
  const dialect = str("dialect") ?? LAUNCH_DEFAULTS.dialect;
  if (dialect instanceof Error) return fail(dialect.message);
  if (!(DIALECTS as readonly string[]).includes(dialect)) return fail(`"dialect" must be one of ${DIALECTS.join(", ")}, not ${quoted(dialect)}`);

  const layout = str("layout") ?? LAUNCH_DEFAULTS.layout;
  if (layout instanceof Error) return fail(layout.message);
  if (!(LAYOUTS as readonly string[]).includes(layout)) return fail(`"layout" must be one of ${LAYOUTS.join(", ")}, not ${quoted(layout)}`);

  const gpu = str("gpu") ?? LAUNCH_DEFAULTS.gpu;
  if (gpu instanceof Error) return fail(gpu.message);
  if (!(GPU_SETTINGS as readonly string[]).includes(gpu)) return fail(`"gpu" must be one of ${GPU_SETTINGS.join(", ")}, not ${quoted(gpu)}`);
  const threads = a.threads ?? LAUNCH_DEFAULTS.threads;
  if (typeof threads !== "number" || !Number.isInteger(threads) || threads < 0)
    return fail(`"threads" must be a whole number of CPU threads (0 chooses from the machine), not ${quoted(threads)}`);

  const call = str("call");
  if (call instanceof Error) return fail(call.message);
  if (call !== undefined) {
    const problem = checkSingleExpression(call);
    if (problem) return fail(`"call" must be a single expression such as f([1, 2]): ${problem}`);
  }
  const model = str("model");
  if (model instanceof Error) return fail(model.message);
  const holeModel = str("holeModel");
  if (holeModel instanceof Error) return fail(holeModel.message);
  if (holeModel !== undefined && holeModel.trim() !== "") {
    if (!isEndpoint(holeModel)) return fail(`"holeModel" must be an OpenAI-compatible endpoint such as http://127.0.0.1:8080/v1 (llama.cpp's server, Ollama's, vLLM), not ${quoted(holeModel)}`);
    if (mode !== "predict" && mode !== "hybrid") return fail(`"holeModel" answers the holes of predict and hybrid modes; ${mode} mode has none`);
  }
  const python = str("python");
  if (python instanceof Error) return fail(python.message);
  if (python !== undefined && python.trim() === "") return fail('"python" is empty: leave it out to use a Python on PATH');
  let pythonVersion: string | undefined;
  if (a.pythonVersion !== undefined && a.pythonVersion !== null) {
    try {
      pythonVersion = checkPythonVersion(a.pythonVersion);
    } catch (e) {
      return fail((e as Error).message);
    }
    if (mode !== "predict") return fail(`"pythonVersion" says which Python's states predict mode predicts; ${mode} mode runs or replays real ones`);
  }
  // A launch runs to the first breakpoint, as debugpy's does; a replay opens a trace at its first
  // state (nothing runs: there is nothing to wait for).
  const stopOnEntry = bool("stopOnEntry", mode === "replay" || LAUNCH_DEFAULTS.stopOnEntry);
  if (stopOnEntry instanceof Error) return fail(stopOnEntry.message);
  const resync = bool("resync", LAUNCH_DEFAULTS.resync);
  if (resync instanceof Error) return fail(resync.message);
  // Compare mode puts the model beside debugpy: an exact sealed run there would compare nothing.
  const compute = bool("compute", mode === "compare" ? false : LAUNCH_DEFAULTS.compute);
  if (compute instanceof Error) return fail(compute.message);
  const predictor = str("predictor") ?? LAUNCH_DEFAULTS.predictor;
  if (predictor instanceof Error) return fail(predictor.message);
  if (!(PREDICTORS as readonly string[]).includes(predictor)) return fail(`"predictor" must be one of ${PREDICTORS.join(", ")}, not ${quoted(predictor)}`);

  const predict = a.predict ?? [];
  const dotted = /^[\p{ID_Start}_][\p{ID_Continue}]*(\.[\p{ID_Start}_][\p{ID_Continue}]*)*$/u;
  if (!Array.isArray(predict) || predict.length > 1000 || !predict.every((n) => typeof n === "string" && n.length <= 200 && dotted.test(n)))
    return fail(`"predict" must be a list of function names such as ["fetch_user", "Repo.query"], not ${quoted(predict)}`);
  if (predict.length && mode !== "hybrid") return fail(`"predict" lists functions for hybrid mode to predict; ${mode} mode does not use it`);

  const limits = {} as Record<(typeof LIMITS)[number][0], number>;
  for (const [name, integer] of LIMITS) {
    const v = a[name];
    if (v === undefined || v === null) {
      limits[name] = LAUNCH_DEFAULTS[name];
      continue;
    }
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || (integer && !Number.isInteger(v)))
      return fail(`"${name}" must be a positive ${integer ? "whole " : ""}number, not ${quoted(v)}`);
    limits[name] = v;
  }
  if (limits.timeout > MAX_TIMEOUT_S)
    return fail(`"timeout" must be at most ${MAX_TIMEOUT_S} seconds (about ${Math.floor(MAX_TIMEOUT_S / 86_400)} days), not ${quoted(limits.timeout)}`);

  const lowConfidence = a.lowConfidence ?? LAUNCH_DEFAULTS.lowConfidence;
  if (typeof lowConfidence !== "number" || !(lowConfidence >= 0 && lowConfidence <= 1))
    return fail(`"lowConfidence" must be a number from 0 to 1 (a confidence below it is marked), not ${quoted(lowConfidence)}`);

  const config: LaunchConfig = {
    program: path,
    mode: mode as Mode,
    dialect: dialect as Dialect,
    layout: layout as LayoutName,
    gpu: gpu as GpuSetting,
    threads,
    stopOnEntry,
    resync,
    compute,
    predictor: predictor as PredictorKind,
    predict: predict as string[],
    ...limits,
    lowConfidence,
    trusted,
  };
  if (call !== undefined && call.trim() !== "") config.call = call.trim();
  if (folder !== undefined) config.cwd = folder;
  if (model !== undefined && model.trim() !== "") config.model = model;
  if (holeModel !== undefined && holeModel.trim() !== "") config.holeModel = holeModel.trim();
  // Predict mode runs a Python too (python/canonical.py parses the program for the model's layout;
  // it never runs the program), and "python" names the executable: from an untrusted workspace's
  // launch.json that could be any file in it. There the Python on PATH parses instead.
  if (python !== undefined && (trusted || mode !== "predict")) config.python = python;
  if (pythonVersion !== undefined) config.pythonVersion = pythonVersion;
  return { ok: true, config };
}
