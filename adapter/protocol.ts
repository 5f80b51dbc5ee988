// The adapter's own part of DAP: the `ndbg/*` custom requests and events and the bodies they
// carry. The adapter (session.ts) answers and sends them; the extension (src/), the bench and the
// tests read them from here. Names and types only, and no imports: the extension bundles this
// file and nothing else of the adapter. Unions that the adapter's own types also spell (a frame's
// event, a dialect's name) are written out here: the protocol is the contract, and the compiler
// checks that what the adapter sends fits it.

/** Custom requests; every one but ndbg/valueOrigin takes `{}` as arguments. */
export const REQUESTS = {
  /** Compare mode: the comparison so far. Body: CompareSnapshot. */
  compare: "ndbg/compare",
  /** Compare mode: the current predicted state is replaced by the real one. Body: the new CompareSnapshot. */
  resync: "ndbg/resync",
  /** The session so far in the trajectory format (in compare mode the predicted and the real one). Body: SaveTraceBody. */
  saveTrace: "ndbg/saveTrace",
  /** Every model call since launch, oldest first (`ndbg bench`); empty for other predictors. Body: StatsBody. */
  stats: "ndbg/stats",
  /**
   * Where a variable's value came from: the session goes back to the statement that last set it
   * (arguments: ValueOriginArguments, as a data breakpoint's info names a variable). Body: none;
   * the stop follows as an event.
   */
  valueOrigin: "ndbg/valueOrigin",
} as const;

/** ndbg/valueOrigin's arguments: a variable of the Variables view (its container's reference and its name). */
export interface ValueOriginArguments {
  variablesReference: number;
  name: string;
}

/**
 * Where a project keeps the values its user gave holes (predict and hybrid modes), relative to the
 * project's folder: written by the adapter, cleared by the extension's "Forget Answered Holes".
 */
export const HOLE_ANSWERS_FILE = ".vscode/neural-python-holes.json";

/** Custom events. */
export const EVENTS = {
  /** The model and where it runs, once loaded; again after each predicted step, with its speed and confidence. Body: ModelEventBody. */
  model: "ndbg/model",
} as const;

// ---- ndbg/saveTrace ----

export interface SaveTraceBody {
  text: string;
}

// ---- ndbg/model ----

export interface ModelEventBody {
  name: string;
  /** "cpu", "cuda", "metal" or "vulkan". */
  device: string;
  dialect: string;
  /** The backends passed over for `device`, each with why. */
  skipped?: { backend: string; reason: string }[];
  /** The Python version whose states are predicted ("3.11"). */
  python?: string;
  /** After a predicted step: its generated tokens per second, and the model's confidence in it. */
  tokensPerSecond?: number;
  confidence?: number;
}

// ---- ndbg/stats ----

/** The model a session loaded. */
export interface ModelDescription {
  path: string;
  name: string;
  dialect: "native" | "instruct";
  /** "cpu", "cuda", "metal" or "vulkan". */
  device: string;
  gpuNames: string[];
  /** The backends passed over for `device`, each with why (its probe's error line, or not available here). */
  skipped: { backend: string; reason: string }[];
  threads: number;
  contextSize: number;
  loadMs: number;
  /** The layout the model reads the program in. */
  layout: "canonical" | "original";
  /** The session's Python version: the states are that Python's. */
  python: string;
  /** The calibration file the confidence shown is mapped through; null: none, the confidence is the mean token probability. */
  calibration?: string | null;
}

/** What one model call cost; `stop` is "limit" when the answer was cut off (not a whole frame). */
export interface StepStats {
  action: string;
  promptTokens: number;
  /** Prompt tokens evaluated (the rest were in the cache). */
  evaluatedTokens: number;
  generatedTokens: number;
  promptMs: number;
  generateMs: number;
  /** Mean and least probability of the generated tokens, before calibration. */
  confidence: number;
  minConfidence: number;
  /** ln of the answer's probability (sum of its tokens' log probabilities). */
  logProb?: number;
  stop: "token" | "text" | "eog" | "limit";
}

export interface StatsBody {
  /** The adapter's process. */
  pid: number;
  /** Absent when the session has no model. */
  model?: ModelDescription;
  steps: StepStats[];
  /** Predictions the context sequence checked against the tokens that followed. */
  predictions?: { validated: number; refuted: number; used: number };
}

// ---- ndbg/compare, ndbg/resync ----

/** Parts of a state that debugpy may not show. */
export type Observable = "line" | "locals" | "value";

/** Where a real state comes from: a debugpy stop, rebuilt from the stops around it, the program's end, or none (the real side was cut off). */
export type RealOrigin = "stop" | "rebuilt" | "end" | "cut";

/** How one predicted state agrees with the real state paired with it. */
export interface PairCheck {
  /** Every compared part agrees. */
  exact: boolean;
  /** Same kind of state (event, or both the exit). */
  event: boolean;
  /** Same function, depth and file. */
  place: boolean;
  /** null: not compared (debugpy did not observe it, or an exit on both sides). */
  line: boolean | null;
  locals: boolean | null;
  value: boolean | null;
  /** Names whose values differ, or that only one side has. */
  differing: string[];
  /** Names compared and how many agree (for per-variable figures). */
  names: { agree: number; total: number };
}

export interface Ratio {
  agree: number;
  total: number;
}

/**
 * Agreement so far, over the states the actions led to (the first state is given, not predicted)
 * that have a real state beside them; lines and locals over those where they were compared.
 */
export interface Agreement {
  /** "resync": each step predicted from the real state (per-step accuracy); "free": the prediction runs free (horizon). */
  mode: "resync" | "free";
  /** Actions so far (pairs after the first). */
  steps: number;
  /** Of those, pairs with a real state. */
  compared: number;
  states: Ratio;
  lines: Ratio;
  locals: Ratio;
  /** Single variables (a name on either side). */
  names: Ratio;
  /** Index (step number) of the first pair after the first state that is not exact, or null. */
  firstDivergence: number | null;
  /** Steps that agreed before the first divergence (all of them while there is none). */
  horizon: number;
  /** Mean milliseconds per mirrored step: the real side (debugpy) and the prediction. */
  realMs: number;
  predictedMs: number;
}

/**
 * The `ndbg/compare` (and `ndbg/resync`) response. Indices count user actions: pair 0 is the
 * first state, pair i the state after action i. `check` is null where there is no real state;
 * unobserved parts of a real state are left out of it.
 */
export interface CompareSnapshot {
  mode: "resync" | "free";
  /** The pair at the current stop (the last of history). */
  current: PairView | null;
  /** Every step so far, oldest first. */
  history: PairView[];
  /** Index (into history) of the first pair that is not exact. */
  firstDivergence: number | null;
  agreement: Agreement;
  real: { python: string; ended: boolean; note?: string };
}

export interface StateView {
  kind: "frame" | "exit";
  event?: "call" | "line" | "return" | "exception";
  line?: number;
  func?: string;
  depth?: number;
  file?: string;
  /** name: repr */
  locals?: Record<string, string>;
  value?: string;
  status?: "normal" | "error" | "limit";
  label: string;
  unobserved?: Observable[];
  origin?: RealOrigin;
  note?: string;
}

export interface PairView {
  index: number;
  action: string;
  predicted: StateView;
  real: StateView;
  check: PairCheck | null;
  resynced: boolean;
  edited: boolean;
  realMs: number;
  predictedMs: number;
}
