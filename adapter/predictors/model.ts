// Predict mode: a local GGUF model predicts every state. The user's program is never run: its
// text is read by the tolerant parser (adapter/pyread/parse.ts), the first state is built from the
// entry call's arguments, and every later state is the model's answer, constrained to states
// this program can be in and checked before it is returned.
//
// The model reads the program in the layout it was trained on (adapter/pyread/layout.ts: no docstrings,
// comments, blank lines or annotations) and everything it sees or says is in that layout's
// lines; this class maps lines at its boundary, so callers only ever see the user's lines.
import { SOURCE_LIMIT, readTextFile } from "../system/files.js";
import { basename } from "node:path";
import type { Predicted, PredictOptions, Predictor } from "../engine/predictor.js";
import { READ_VERSIONS, type Action, type Frame, type Step } from "../format/trajectory.js";
import { bindCall } from "../pyread/calls.js";
import { parsePython } from "../pyread/parse.js";
import type { PySource } from "../pyread/source.js";
import { loadModel, threadsFor, type GpuSetting, type LoadedModel, type Vocabulary } from "../model/backend.js";
import { isEndpoint } from "../model/endpoint.js";
import { openServed, ServerSequence } from "../model/served.js";
import { resolveModel } from "../model/resolve.js";
import { ModelFileError } from "../model/gguf.js";
import { readCalibration, shownConfidence, type Calibration, type StateScore } from "../model/calibration.js";
import type { Generator, GenerateResult } from "../model/sequence.js";
import type { ModelFileInfo } from "../model/gguf.js";
import { inferenceHost, RemoteSequence } from "../model/remote.js";
import { lastFrame, PredictionError, type Dialect, type DialectName, type DialectRequest } from "../model/dialect.js";
import { NativeDialect } from "../model/native.js";
import { InstructDialect } from "../model/instruct.js";
import { scopeOfFunc, scopeTable, type ScopeLines } from "../rules/grammar.js";
import { canonicalLayout, LayoutError, type CanonicalLayout, type LayoutName } from "../pyread/layout.js";
import { byVersion, checkPythonVersion, modelPython, UNSAID_MODEL_FORMAT, UNSAID_MODEL_PYTHON } from "../model/pyversion.js";
import { whichPython } from "../real/hostRun.js";
import { askPython } from "../real/sealed.js";
import type { TypedHole } from "../format/valueType.js";
import type { ModelDescription, StepStats } from "../protocol.js";

export interface ModelPredictorOptions {
  /** Path of the Python file (read unless `source` is given). */
  program: string;
  source?: string;
  /** Entry call such as `f([1, 2])`; absent: the file runs as a script. */
  call?: string;
  /** GGUF path or URI, or an OpenAI-compatible endpoint (`http://host:port/v1`: model/endpoint.ts); empty: the bundled model. */
  model?: string;
  dialect?: "auto" | DialectName;
  /** A model server's API key (default: $NDBG_API_KEY); false: none is sent (a launch from an untrusted workspace). */
  apiKey?: string | false;
  gpu?: GpuSetting;
  /** CPU threads (0 or absent: from the machine). */
  threads?: number;
  /** Context size in tokens (default: the model's training context, at most 8192). */
  contextSize?: number;
  /** Most tokens one predicted state may take. */
  maxTokens?: number;
  /** Decode native frames without the grammar (answers are then only checked). */
  grammar?: boolean;
  /** Most tokens of history a native prompt keeps (see HISTORY_TOKENS). */
  historyTokens?: number;
  /** Speculative decoding by input lookup (drafts copied from the prompt, verified in a batch). */
  speculative?: boolean;
  /**
   * The program as the model reads it: "canonical" (default) re-printed as the model was trained
   * on it, lines mapped back; "original" as written. Falls back to the original (and says why
   * through `log`) when the canonical layout cannot be had.
   */
  layout?: LayoutName;
  /**
   * States the program decides (adapter/rules/reach.ts: `ahead`) are computed, not predicted
   * (default); false: the model predicts every state, as when measuring the model alone.
   */
  compute?: boolean;
  /** Python that reads the canonical layout (default: see findPython); it never runs the program. Given, it also says the session's Python version (it is asked, see sessionPython). */
  python?: string;
  /** The session's Python version ("3.12"): its states are that Python's (3.12 runs list comprehensions in no frame of their own). */
  pythonVersion?: string;
  /** Where downloaded models are cached. */
  cacheDir?: string;
  /** Relative model paths resolve against this directory. */
  cwd?: string;
  signal?: AbortSignal;
  /** llama.cpp's messages and other diagnostics (never written to stdout). */
  log?: (message: string) => void;
  /** Progress of resolving, downloading and loading the model. */
  onStatus?: (s: ModelStatus) => void;
  /** Called after each generated token with the count so far. */
  onToken?: (generated: number) => void;
}

export type ModelStatus =
  | { stage: "resolving"; model: string }
  | { stage: "downloading"; model: string; downloadedBytes: number; totalBytes: number }
  | { stage: "loading"; path: string }
  | ({ stage: "ready" } & ModelDescription)
  /** The model moved to another backend after crashing its inference process on `from` again and again. */
  | ({ stage: "moved"; from: string; why: string } & ModelDescription);

const DEFAULT_CONTEXT = 8192;

/** Where the model runs, as describe() tells it: read when asked (the inference host may move the model to another backend). */
type Where = () => Pick<ModelDescription, "path" | "name" | "device" | "gpuNames" | "skipped" | "loadMs">;

/** A model ready for a session: what it is, its vocabulary (if here), and how to open its generator. */
interface Opened {
  info: Pick<ModelFileInfo, "name" | "dialect" | "format" | "pythonVersions">;
  /** The model in the inference host; absent on a server. */
  loaded?: LoadedModel;
  where: Where;
  /** The vocabulary the dialects tokenize with; absent for a served chat model. */
  vocab?: Vocabulary;
  /** Why there is no vocabulary here, when there is none. */
  noVocab?: string;
  /** The context size a session gets when it asks for none. */
  context: number;
  /** The model's calibration, stored beside its GGUF (for a server: beside the GGUF it serves, where that file is here). */
  calibration?: { calibration: Calibration; path: string };
  open(contextSize: number, threads: number | undefined, moved: (from: string, why: string) => void): Promise<Generator>;
}

export class ModelPredictor implements Predictor {
  readonly source: string;
  readonly stats: StepStats[] = [];
  /** The scopes of the program the model reads. */
  private readonly table: ScopeLines[];
  /** History steps in the model's lines, one object per step: the native dialect caches each step's tokens by object. */
  private readonly seenSteps = new WeakMap<Step, Step>();
  private readonly first: Frame;
  private disposed = false;
  /** The session's Python version: every state is one that Python's tracer could report. */
  readonly python: string;

  private constructor(
    readonly program: string,
    /** The user's program (the lines every state this predictor returns refers to). */
    readonly src: PySource,
    /** The program as the model reads it: the canonical layout's, else `src`. */
    private readonly seen: PySource,
    /** The line map between the two; undefined when the model reads the program as written. */
    private readonly layout: CanonicalLayout | undefined,
    readonly call: string | undefined,
    private readonly where: Where,
    /** The model in the inference host (undefined on a server). */
    readonly loaded: LoadedModel | undefined,
    readonly dialect: Dialect,
    readonly sequence: Generator,
    first: Frame,
    python: string,
    private readonly onToken?: (generated: number) => void,
    private readonly compute = true,
    /** The model's calibration (adapter/model/calibration.ts); undefined: the confidence shown is the mean token probability. */
    readonly calibration?: { calibration: Calibration; path: string },
  ) {
    this.source = src.source;
    this.python = python;
    this.table = scopeTable(seen, python);
    this.first = this.toUser({ frame: first }).frame!;
  }

  /** Reads and checks the program, resolves and loads the model (shared), and opens a context for this session. */
  static async create(opts: ModelPredictorOptions): Promise<ModelPredictor> {
    const text = opts.source ?? (await readTextFile(opts.program, SOURCE_LIMIT).catch((e: Error) => {
      throw new Error(`cannot read the program ${opts.program}: ${e.message}`);
    }));
    const src = await parsePython(text);
    const layout = opts.layout === "original" ? undefined : await readLayout(text, opts);
    const seen = layout ? await parsePython(layout.text) : src;
    const first = await firstFrame(seen, opts.call);
    const spec = opts.model ?? "";
    opts.onStatus?.({ stage: "resolving", model: spec || "(bundled)" });
    const m = isEndpoint(spec) ? await openEndpoint(spec, opts) : await openLocal(spec, opts);
    const contextSize = Math.max(256, opts.contextSize ?? m.context);
    const name: DialectName = opts.dialect && opts.dialect !== "auto" ? opts.dialect : m.vocab && m.info.dialect === "native" ? "native" : "instruct";
    const what = m.where().path;
    if (name === "native" && !m.vocab) throw new ModelFileError(`the native dialect cannot be used with ${what}: ${m.noVocab ?? "its vocabulary is not here"}`, what);
    if (name === "native" && m.info.format !== undefined && !READ_VERSIONS.includes(m.info.format))
      throw new ModelFileError(`${what} was trained on trajectory format version ${m.info.format}; this debugger speaks versions ${READ_VERSIONS.join(" and ")}`, what);
    const known = m.info.pythonVersions ?? UNSAID_MODEL_PYTHON;
    const python = await sessionPython(opts, known);
    const shownPython = modelPython(known, python);
    if (shownPython !== python) opts.log?.(`the model was trained on Python ${known.join(", ")} traces: it is shown ${shownPython}'s, and only Python ${python}'s frames are admitted`);
    // A native frame is tens of tokens: a low cap makes a model that runs away cheap to stop.
    const maxTokens = Math.min(opts.maxTokens ?? (name === "native" ? 128 : 768), Math.floor(contextSize / 2));
    // The model alone (`compute: false`) is held to what the program can reach (lines, events,
    // frames, names), never to a value CPython computed: the rules get no Python to ask.
    const ask = opts.compute !== false ? askPython : undefined;
    const dialect: Dialect =
      name === "native"
        ? new NativeDialect(m.vocab!, seen, { contextSize, maxTokens, grammar: opts.grammar !== false, ...(opts.historyTokens ? { historyTokens: opts.historyTokens } : {}), python, shownPython, format: m.info.format ?? UNSAID_MODEL_FORMAT, ...(ask ? { ask } : {}) })
        : new InstructDialect(m.vocab, seen, { maxTokens, fileName: basename(opts.program), python, ...(ask ? { ask } : {}) });
    const threads = opts.threads && opts.threads > 0 ? Math.floor(opts.threads) : undefined;
    const sequence = await m.open(contextSize, threads, (from, why) => opts.onStatus?.({ stage: "moved", from, why, ...p.describe() }));
    const p = new ModelPredictor(opts.program, src, seen, layout, opts.call, m.where, m.loaded, dialect, sequence, first, python, opts.onToken, opts.compute !== false, m.calibration);
    opts.onStatus?.({ stage: "ready", ...p.describe() });
    return p;
  }

  describe(): ModelDescription {
    return {
      ...this.where(),
      dialect: this.dialect.name,
      threads: this.sequence.threads,
      contextSize: this.sequence.contextSize,
      layout: this.layout ? "canonical" : "original",
      python: this.python,
      calibration: this.calibration?.path ?? null,
    };
  }

  /** A user's step in the lines the model reads (breakpoint actions included). */
  private toSeen(step: Step): Step {
    const layout = this.layout;
    if (!layout) return step;
    let seen = this.seenSteps.get(step);
    if (!seen) {
      seen = mapStep(step, (l) => layout.toCanonical(l));
      this.seenSteps.set(step, seen);
    }
    return seen;
  }

  /** A step the model wrote, in the user's lines. */
  private toUser(step: Step): Step {
    const layout = this.layout;
    return layout ? mapStep(step, (l) => layout.toUser(l)) : step;
  }

  /** The entry call's frame (its arguments bound from the call), or the script's module frame: no model needed. */
  async start(opts?: PredictOptions): Promise<Predicted> {
    opts?.signal?.throwIfAborted();
    return { step: { frame: structuredClone(this.first) }, confidence: 1, given: true, tokens: 0, ms: 0 };
  }

  async predict(history: readonly Predicted[], action: Action, opts: PredictOptions = {}): Promise<Predicted> {
    if (this.disposed) throw new Error("the model predictor was disposed");
    const steps = history.map((h) => this.toSeen(h.step));
    const last = steps.at(-1);
    if (!last) throw new Error("predict needs the current state (history is empty)");
    if (last.exit) return { step: { action, exit: last.exit }, confidence: 1, tokens: 0, ms: 0 };
    const p = await this.seenPredict(steps, action, opts);
    const step = this.toUser(p.step);
    // The action as asked (a continue answers with the breakpoint it reached, as before).
    if (action.kind !== "continue") step.action = action;
    if (!p.computed) return { ...p, step };
    // Decided by the program from the state before: as sure as that state.
    const before = history.at(-1)!;
    return { ...p, step, ...(before.given ? { given: true } : before.confidence !== undefined ? { confidence: before.confidence } : {}) };
  }

  /**
   * predict in the model's lines: `steps`, the action's line and the breakpoints are all in the
   * lines it reads. What the program decides on the way (adapter/rules/reach.ts: `ahead`) is
   * computed, not predicted: all of it, or the model goes on from the last state decided.
   */
  private async seenPredict(steps: readonly Step[], action: Action, opts: PredictOptions): Promise<Predicted> {
    const t0 = performance.now();
    const layout = this.layout;
    let stops: number[] = [];
    if (action.kind === "continue" && opts.breakpoints?.length) {
      // A breakpoint on a line without a statement (a comment, a docstring) stops at the next statement.
      const lines = opts.breakpoints.map((b) => b.line);
      stops = layout ? lines.map((l) => layout.statementAfter(l)).filter((l) => l !== undefined) : lines;
    }
    const seenAction = this.toSeen({ action }).action!;
    const ahead = this.compute ? await this.dialect.reach.ahead(steps, seenAction, stops, opts.signal) : { passed: [] };
    if ("frame" in ahead) {
      const reached: Action = action.kind === "continue" ? { kind: "breakpoint", line: ahead.frame.line } : seenAction;
      return { step: { action: reached, frame: ahead.frame }, computed: true, tokens: 0, ms: performance.now() - t0 };
    }
    const passed = ahead.passed.at(-1);
    const from = passed ? [...steps, passed] : steps;
    const p = stops.length ? await this.continueTo(from, stops, opts.signal) : await this.step(from, seenAction, opts.signal, opts.hole);
    // The output written on the way, before the model's own.
    const written = ahead.passed.map((s) => s.frame!.stdout ?? "").join("");
    const end = p.step.frame ?? p.step.exit;
    if (written && end) end.stdout = written + (end.stdout ?? "");
    return p;
  }

  /**
   * `continue` with breakpoints: the model knows no breakpoints, so it is asked for
   * `breakpoint L`, L being the breakpoint the program most plausibly reaches first (see
   * breakpointOrder). When the model answers that L is never reached (the exit), the next
   * candidate is asked; when none is reached, the exit stands.
   */
  private async continueTo(steps: readonly Step[], breakpoints: readonly number[], signal?: AbortSignal): Promise<Predicted> {
    const order = breakpointOrder(this.seen, this.table, steps, breakpoints).slice(0, 4);
    let total: Predicted | undefined;
    let tokens = 0;
    let ms = 0;
    for (const line of order) {
      const p = await this.step(steps, { kind: "breakpoint", line }, signal);
      tokens += p.tokens ?? 0;
      ms += p.ms ?? 0;
      total = { ...p, tokens, ms };
      if (p.step.frame) return total;
    }
    const exit = total?.step.exit;
    if (exit) return { ...total!, step: { action: { kind: "continue" }, exit } };
    return this.step(steps, { kind: "continue" }, signal);
  }

  /** Leaves the answer the room the context has left; a prompt that leaves too little is an error the user can act on. */
  private fit(req: DialectRequest): DialectRequest {
    const room = this.sequence.contextSize - req.prompt.length;
    if (room < 32)
      throw new PredictionError(`the prompt takes ${req.prompt.length} tokens of the model's ${this.sequence.contextSize}-token context, leaving no room for an answer: use a model with a longer context or a shorter program`, "");
    return room < req.maxTokens ? { ...req, maxTokens: room } : req;
  }

  private async generate(req: DialectRequest, signal?: AbortSignal): Promise<GenerateResult> {
    return this.sequence.generate(req.prompt, {
      maxTokens: req.maxTokens,
      stopTokens: req.stopTokens,
      ...(req.grammar ? { grammar: req.grammar } : {}),
      ...(req.stopText ? { stopText: req.stopText } : {}),
      ...(signal ? { signal } : {}),
      ...(this.onToken ? { onToken: this.onToken } : {}),
    });
  }

  /** One model call: the state `action` leads to. */
  private async step(steps: readonly Step[], action: Action, signal?: AbortSignal, hole?: TypedHole): Promise<Predicted> {
    const t0 = performance.now();
    const req = this.fit(await this.dialect.request(steps, action, hole));
    const r = await this.generate(req, signal);
    this.stats.push({
      action: action.kind + (action.line !== undefined ? " " + action.line : ""),
      promptTokens: r.promptTokens,
      evaluatedTokens: r.evaluatedTokens,
      generatedTokens: r.tokens.length,
      promptMs: r.promptMs,
      generateMs: r.generateMs,
      confidence: r.confidence,
      minConfidence: r.minConfidence,
      logProb: r.logProb,
      stop: r.stop,
    });
    unfinished(r, req);
    const step = this.dialect.parse(r.text, steps, action);
    step.action = action;
    // The stop token is among the probabilities: one more than the tokens of the answer.
    const score: StateScore = { mean: r.confidence, min: r.minConfidence, logProb: r.logProb, tokens: r.tokens.length + (r.stop === "token" ? 1 : 0) };
    return { step, confidence: shownConfidence(this.calibration?.calibration, score), score, tokens: r.tokens.length, ms: performance.now() - t0 };
  }

  /**
   * An expression that reads a value the state knows only by its repr: a chat model's answer; a
   * native model has none. Never by running code.
   */
  async evaluate(history: readonly Predicted[], expression: string, opts: PredictOptions = {}): Promise<string | undefined> {
    if (!this.dialect.question || !this.dialect.answer) return undefined;
    const steps = history.map((h) => this.toSeen(h.step));
    if (!lastFrame(steps)) return undefined;
    const req = this.fit(await this.dialect.question(steps, expression.trim()));
    const r = await this.generate(req, opts.signal);
    unfinished(r, req);
    return this.dialect.answer(r.text);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.sequence.dispose();
  }
}

/** A GGUF file (a path, a URI downloaded once, or the bundled model), its weights in the inference host. */
async function openLocal(spec: string, opts: ModelPredictorOptions): Promise<Opened> {
  const path = await resolveModel(spec, {
    ...(opts.cacheDir ? { cacheDir: opts.cacheDir } : {}),
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    onProgress: (p) => opts.onStatus?.({ stage: "downloading", model: spec, ...p }),
  });
  opts.signal?.throwIfAborted();
  opts.onStatus?.({ stage: "loading", path });
  const lm = await loadModel(path, { gpu: opts.gpu ?? "auto", ...(opts.log ? { log: opts.log } : {}) });
  const calibration = await readCalibration(path, opts.log);
  return {
    info: lm.info,
    loaded: lm,
    ...(calibration ? { calibration } : {}),
    vocab: lm,
    context: Math.min(DEFAULT_CONTEXT, lm.info.contextLength ?? DEFAULT_CONTEXT),
    where: () => ({ path: lm.path, name: lm.info.name ?? basename(lm.path), device: lm.device, gpuNames: lm.gpuNames, skipped: lm.skipped, loadMs: lm.loadMs }),
    open: (contextSize, threads, moved) =>
      RemoteSequence.open(inferenceHost(), lm, { contextSize, threads: threads ?? threadsFor(lm), speculative: opts.speculative === true }, (from) =>
        moved(from, lm.skipped.find((k) => k.backend === from)?.reason ?? "it failed there"),
      ),
  };
}

/** A model on a server (model/served.ts): its vocabulary here only for the native dialect. */
async function openEndpoint(spec: string, opts: ModelPredictorOptions): Promise<Opened> {
  opts.onStatus?.({ stage: "loading", path: spec });
  const s = await openServed(spec, { apiKey: opts.apiKey === undefined ? process.env.NDBG_API_KEY : opts.apiKey || undefined, ...(opts.signal ? { signal: opts.signal } : {}) });
  const device = `${s.info.kind === "vllm" ? "vLLM" : s.info.kind} server at ${s.endpoint.url}${s.info.build ? ` (${s.info.build})` : ""}`;
  const calibration = s.vocab ? await readCalibration(s.vocab.path, opts.log) : undefined;
  return {
    info: s.vocab?.info ?? { name: s.info.model },
    ...(calibration ? { calibration } : {}),
    ...(s.vocab ? { vocab: s.vocab } : {}),
    ...(s.noVocab ? { noVocab: s.noVocab } : {}),
    context: s.contextSize,
    where: () => ({ path: s.endpoint.url, name: s.vocab?.info.name ?? s.info.model, device, gpuNames: [], skipped: [], loadMs: s.loadMs }),
    open: async (contextSize) => {
      if (contextSize > s.contextSize) throw new ModelFileError(`the server at ${s.endpoint.url} gives a session ${s.contextSize} tokens of context, fewer than the ${contextSize} asked for`, spec);
      return new ServerSequence(s, contextSize);
    },
  };
}

/** The canonical layout of the program, or undefined (and why, through `log`) when it cannot be had. */
/**
 * The session's Python version: the "pythonVersion" launch attribute; else that of the launch's
 * Python, asked (it runs no user code; a launch's "python" reaches here only from a trusted
 * workspace); else, or where that Python cannot be asked (said through `log`), the newest
 * version the model knows.
 */
export async function sessionPython(opts: Pick<ModelPredictorOptions, "python" | "pythonVersion" | "log">, known: readonly string[]): Promise<string> {
  if (opts.pythonVersion !== undefined) return checkPythonVersion(opts.pythonVersion);
  const newest = [...known].sort(byVersion).at(-1)!;
  if (!opts.python) return newest;
  try {
    return (await whichPython(opts.python)).version;
  } catch (e) {
    opts.log?.(`predicting Python ${newest}'s states, the newest the model knows: ${(e as Error).message}`);
    return newest;
  }
}

async function readLayout(text: string, opts: ModelPredictorOptions): Promise<CanonicalLayout | undefined> {
  try {
    return await canonicalLayout(text, opts.python ? { python: opts.python } : {});
  } catch (e) {
    if (!(e instanceof LayoutError)) throw e;
    opts.log?.(`the model reads ${basename(opts.program)} as written, not in the layout it was trained on: ${e.message}`);
    return undefined;
  }
}

/**
 * A step with every line of the program mapped by `f`: its action's target and its frame's line.
 * Frames of other files keep theirs, and so does the <module> call event on line 1 (CPython puts
 * it there whatever the first line holds).
 */
function mapStep(step: Step, f: (line: number) => number): Step {
  const out: Step = { ...step };
  if (step.action?.line !== undefined) out.action = { ...step.action, line: f(step.action.line) };
  const fr = step.frame;
  if (fr && fr.file === undefined && !(fr.event === "call" && fr.func === "<module>" && fr.line === 1)) out.frame = { ...fr, line: f(fr.line) };
  return out;
}

/** An answer cut before its end is an error the user sees, never a state. */
function unfinished(r: GenerateResult, req: DialectRequest): void {
  if (r.stop === "limit") throw new PredictionError(`the model's answer did not end within ${req.maxTokens} tokens`, r.text);
}

/** The first state: the entry call's call event with its bound arguments, or the script's <module> call event. */
async function firstFrame(src: PySource, call: string | undefined): Promise<Frame> {
  if (call && call.trim()) {
    const b = await bindCall(src, call);
    return { event: "call", line: b.func.callLine, depth: 0, func: b.func.qualname, locals: b.locals };
  }
  // As the tracer reports it: a <module> call event stands on the code's first line.
  return { event: "call", line: 1, depth: 0, func: "<module>", locals: {} };
}

/**
 * The order in which `continue` tries breakpoints: first those ahead in the current function,
 * then those earlier in a loop around the current line (the next iteration), then the same for
 * each caller up the stack (after its call site), then every other breakpoint by line. It is
 * the order a run through straight-line code with loops meets them; calls into other functions
 * are what the model itself resolves when a candidate is never reached.
 */
export function breakpointOrder(src: PySource, table: readonly ScopeLines[], steps: readonly Step[], breakpoints: readonly number[]): number[] {
  const bps = [...new Set(breakpoints)].sort((a, b) => a - b);
  const out: number[] = [];
  const add = (ls: number[]): void => {
    for (const l of ls) if (!out.includes(l)) out.push(l);
  };
  // The current frame and its callers (the last known state at each smaller depth).
  const chain: Frame[] = [];
  for (let i = steps.length - 1; i >= 0; i--) {
    const f = steps[i].frame;
    if (f && (chain.length === 0 ? true : f.depth < chain[chain.length - 1].depth)) chain.push(f);
  }
  chain.forEach((f, k) => {
    if (k === 0 && (f.event === "return" || f.event === "exception")) return; // leaving: nothing ahead here
    const scope = scopeOfFunc(table, f.func);
    const inScope = (l: number): boolean => !scope || scope.lines.includes(l);
    add(bps.filter((l) => l > f.line && inScope(l)));
    for (const loop of src.loops.filter((lp) => lp.line <= f.line && f.line <= lp.endLine).sort((a, b) => b.line - a.line))
      add(bps.filter((l) => l >= loop.line && l <= f.line && inScope(l)));
  });
  add(bps);
  return out;
}
