// A program that runs for real, under the tracer, with only its holes predicted (stub functions,
// names bound nowhere, modules that are not installed, input(), functions the launch lists: see
// adapter/python/holes.py). The executor is a choice: this machine's Python (hybrid mode, in a
// trusted workspace) or the sealed CPython (predict mode: adapter/real/sealed.ts); holes, their
// filling, marks and re-runs are the same for both. Each hole is filled where the run reaches it:
// with the user's answer (set in this session, or kept in the project: holeAnswers.ts), else the
// result its docstring's example shows for this very call (exact), else the model's prediction
// from the real state there, held to the return annotation's type; the run goes on with that
// value, and the session moves over the recording as in record mode. Every value that came from
// the model is marked, with the hole's confidence, for as long as it stays unchanged in its frame.
// Setting such a value answers its hole: the program runs again, every other hole answered as
// before, and the answer is kept in the project for later launches.
import { dirname, relative } from "node:path";
import { normalizeSource, sameState, type Action, type Frame, type Step } from "../format/trajectory.js";
import { SOURCE_LIMIT, readTextFile } from "../system/files.js";
import { under } from "../system/paths.js";
import { cutText, type ValueResult } from "../format/values.js";
import { mentions } from "../pyread/expressions.js";
import { RETURN_VALUE, type Evaluated, type Guess, type RanLine, type Hole, type Predicted, type PredictOptions, type Predictor } from "../engine/predictor.js";
import { type LimitReason, type HoleAnswer, type HoleList, type HoleRequest, type TraceOptions } from "../real/run.js";
import { HOST_EXECUTOR, type Executor, type RunRequest } from "../real/executor.js";
import { HeldStop } from "../real/heldStop.js";
import { inspectedValue, SEALED_PYTHON, statementResult, withStatement, type Executed, type SealedResult, type Statement } from "../real/sealed.js";
import type { Written } from "../real/sandboxFs.js";
import type { ValueType } from "../format/valueType.js";
import { RecordedPredictor } from "./recorded.js";
import { HOLE_ANSWERS_FILE, type HoleAnswers } from "./holeAnswers.js";
import type { HoleValueModel } from "../model/holeValue.js";
import { parsePython } from "../pyread/parse.js";
import type { PySource } from "../pyread/source.js";

/** One hole the run reached, in order, and how it was filled. */
export interface HoleFill extends HoleRequest {
  index: number;
  /** Frames recorded before the request: the hole's state is frames[at - 1]. */
  at: number;
  /** The value used (a Python literal's repr), or why there is none (raised in the program). */
  repr?: string;
  confidence?: number;
  error?: string;
  /** The model's answer, a docstring example's result (exact for that call), or a value the user set (`kept`: in an earlier session, read from the project's answers). */
  by: "model" | "docstring" | "user";
  kept?: boolean;
  /** What the value depends on: the stub's arguments, or the locals where the missing call is made. */
  args: Record<string, string>;
}

export interface HybridOptions extends Omit<TraceOptions, "hybrid"> {
  /** Where the program runs (adapter/real/executor.ts): this machine's Python (hybrid mode, the default) or the sealed CPython (predict mode). */
  executor?: Executor;
  /** Functions to predict rather than run. */
  predict?: readonly string[];
  /** The model, loaded at the first hole, for `source`: the program with each stub's body read as `...`. */
  model: (source: string) => Promise<Predictor>;
  /** One line per hole and per run, for the Debug Console. */
  console?: (line: string) => void;
  /** The values the user gave holes, kept in the project: used without asking, and where the user sets one, kept there. */
  answersFile?: HoleAnswers;
  /** A chat model on a server, asked for each hole's value alone (launch attribute `holeModel`), opened at the first hole; else `model` predicts the hole's next state. */
  valueModel?: () => Promise<HoleValueModel>;
}

const STEP_INTO: Action = { kind: "step_into" };

export class HybridPredictor implements Predictor {
  private inner!: RecordedPredictor;
  readonly eventByEvent = true;
  /** The holes of the current run. */
  fills: HoleFill[] = [];
  /** The run held at the stop the last expression was asked at (predict mode). */
  private readonly stop = new HeldStop();
  holes?: HoleList;
  /** Marked values by the recording's frames (and the copies handed out). */
  private guesses = new WeakMap<Frame, Map<string, Guess>>();
  /** The guess the output of a state handed out depends on (by its frame or exit). */
  private outputGuesses = new WeakMap<object, Guess>();
  private marksAt: Map<number, Map<string, Guess>> = new Map();
  /** The states of the run that show a hole the model answered, each its hole: where holes stop (the first state showing each answer). */
  private holeStates = new Map<number, HoleFill>();
  /** The model's answers by hole and state: a re-run asks again only where a state changed. */
  private readonly answers = new Map<string, HoleAnswer>();
  /** Values the user set, by hole index. */
  private readonly overrides = new Map<number, string>();
  private model?: Promise<Predictor>;
  private valueModel?: Promise<HoleValueModel>;
  /** The program's text, read once at the first hole asked (its run is under way: no recording to read it from yet); its functions, for the hole model. */
  private programText?: Promise<string>;
  private programSource?: Promise<PySource>;
  /** The hole model's name, once it answered (for the Debug Console's lines). */
  private valueName?: string;
  private runs = 0;
  /** Which limit ended the last run, where one did (real/run.ts: LimitReason). */
  limit?: LimitReason;
  /** What the user ran at stops (predict mode: the Debug Console, values set), the run's input (Statement). */
  private statements: Statement[] = [];
  /** Expressions evaluated at every line event of a place (`file:line`) of this run, by the record's index (valuesAt). */
  private probed = new Map<string, { asked: string[]; at: Map<number, ValueResult[]> }>();
  /** Their results in the last run. */
  private executed: readonly Executed[] = [];

  private readonly executor: Executor;

  private constructor(
    readonly program: string,
    private readonly opts: HybridOptions,
  ) {
    this.executor = opts.executor ?? HOST_EXECUTOR;
  }

  static async create(program: string, opts: HybridOptions): Promise<HybridPredictor> {
    const p = new HybridPredictor(program, opts);
    await p.record();
    return p;
  }

  get source(): string {
    return this.inner.source;
  }

  /** The word the Debug Console's lines start with: the launch mode. */
  private get say(): string {
    return this.executor.where === "sealed" ? "predict" : "hybrid";
  }

  /** The minor version of the Python that ran the program (the tracer says it before the run). */
  get python(): string | undefined {
    return this.inner.python;
  }

  get frames(): readonly Frame[] {
    return this.inner.frames;
  }

  get exit() {
    return this.inner.exit;
  }

  /** Runs the program, filling its holes; the session then moves over this recording. */
  private async record(): Promise<void> {
    const fills: HoleFill[] = [];
    const { predict, model: _m, console: _c, executor: _e, ...trace } = this.opts;
    const executor = this.executor;
    const run = ++this.runs;
    const sealed = executor.where === "sealed";
    const result = await executor.run(this.program, {
      ...trace,
      ...(this.statements.length ? { statements: this.statements } : {}),
      hybrid: {
        ...(predict ? { predict } : {}),
        fill: (req, frames) => this.fill(req, frames, fills),
        found: (holes) => {
          this.holes = holes;
          if (run === 1) this.opts.console?.(describeHoles(holes, sealed ? (trace.sealedPython ?? SEALED_PYTHON) : undefined));
        },
        standIn: (name) => run === 1 && this.opts.console?.(`${this.say} · module ${name} is not ${sealed ? "in the sandbox" : "installed"}: it stands in, and its calls are predicted`),
      },
    });
    const sandbox = result.sandbox;
    if (run === 1 && sandbox) for (const message of describeSandbox(sandbox, this.opts.cwd ?? dirname(this.program))) this.opts.console?.(`${this.say} · ${message}`);
    this.inner = new RecordedPredictor(result);
    this.probed.clear();
    this.limit = result.limit;
    this.executed = result.executed ?? [];
    this.fills = fills;
    const answered = answerStates(result.frames, fills);
    this.marksAt = markValues(result.frames, fills, result.source, answered);
    this.holeStates = new Map();
    const stopsFor = new Set<number>();
    for (const [i, m] of [...answered].sort(([a], [b]) => a - b))
      for (const g of m.values()) {
        if (fills[g.hole].by !== "model" || stopsFor.has(g.hole)) continue;
        stopsFor.add(g.hole);
        this.holeStates.set(i, fills[g.hole]);
      }
    this.guesses = new WeakMap();
    this.marksAt.forEach((m, i) => this.guesses.set(result.frames[i], m));
    result.frames.forEach((f, i) => {
      const m = f.caller && callerMarks(result.frames, this.marksAt, i);
      if (m) this.guesses.set(f.caller!, m);
    });
  }

  private async fill(req: HoleRequest, frames: readonly Frame[], fills: HoleFill[]): Promise<HoleAnswer> {
    const fill: HoleFill = { ...req, index: fills.length, at: frames.length, by: "model", args: { ...(frames.at(-1)?.locals ?? {}) } };
    fills.push(fill);
    const what = `${req.name}() at line ${req.line}`;
    const set = this.overrides.get(fill.index);
    const kept = this.opts.answersFile?.get({ name: req.name, arguments: fill.args }, req.kind === "call" ? req.line : undefined);
    let answer: HoleAnswer;
    if (set !== undefined) {
      fill.by = "user";
      answer = { repr: set };
    } else if (kept !== undefined) {
      fill.by = "user";
      fill.kept = true;
      answer = { repr: kept };
    } else if (req.docstring) {
      // The function's own docstring shows this very call: its result is the answer, not the model's.
      fill.by = "docstring";
      answer = { repr: req.docstring.repr };
    } else {
      const key = JSON.stringify([req, frames.at(-1)]);
      answer = this.answers.get(key) ?? (await this.ask(req, frames));
      this.answers.set(key, answer);
    }
    if ("repr" in answer) {
      fill.repr = answer.repr;
      if (answer.confidence !== undefined) fill.confidence = answer.confidence;
      const how =
        fill.by === "user"
          ? fill.kept
            ? `your answer, kept in ${HOLE_ANSWERS_FILE}`
            : "set by you"
          : fill.by === "docstring"
            ? `from its docstring, line ${req.docstring!.line}`
            : `predicted${this.valueName ? ` by ${this.valueName}` : ""}${answer.confidence !== undefined ? `, ${Math.round(answer.confidence * 100)}%` : ""}`;
      this.opts.console?.(`${this.say} · ${what} = ${cut(answer.repr)} (${how})`);
    } else {
      fill.error = answer.error;
      this.opts.console?.(`${this.say} · ${what}: not filled (${answer.error}); the program raises there`);
    }
    return answer;
  }

  /**
   * The model's value for a hole: the name the call's result is assigned to (step_over from the
   * caller), else a stub's return value (step_return from its state). A stub whose caller's step
   * gives no value for that name is asked the other way too.
   */
  private async ask(req: HoleRequest, frames: readonly Frame[]): Promise<HoleAnswer> {
    const last = frames.at(-1);
    if (!last) return { error: "no traced state to predict from" };
    if (this.opts.valueModel) return this.askValue(req, frames, this.opts.valueModel);
    // A `raise NotImplementedError` says nothing of the value: the model reads unwritten bodies as `...`.
    this.model ??= this.text().then((text) => this.opts.model(hideBodies(text, this.holes?.bodies ?? [])));
    const model = await this.model;
    // A stub whose result its caller assigns to a name is predicted from the caller's state at the
    // call line (step_over, then that name's value): measured on the hybrid set, this fills more
    // holes, and more of them right, than step_return from the stub's own state, which is the way
    // left for the others.
    if (req.kind === "function" && req.target !== undefined) {
      let k = frames.length - 1;
      while (k > 0 && !(frames[k].event === "call" && frames[k].func === req.name)) k--;
      if (k > 0) {
        const fromCaller = await this.askModel(model, frames.slice(0, k), "call", req.target, last, req.type);
        if ("repr" in fromCaller) return fromCaller;
      }
    }
    return this.askModel(model, frames, req.kind, req.target, last, req.type);
  }

  private text(): Promise<string> {
    this.programText ??= readTextFile(this.program, SOURCE_LIMIT).then(normalizeSource);
    return this.programText;
  }

  /**
   * The value alone, asked of a chat model the user runs: the function's source as written, the
   * call's arguments, the line that called it, and its annotation, which holds the answer's type.
   */
  private async askValue(req: HoleRequest, frames: readonly Frame[], open: () => Promise<HoleValueModel>): Promise<HoleAnswer> {
    this.valueModel ??= open();
    try {
      this.programSource ??= this.text().then(parsePython);
      const [model, text, src] = await Promise.all([this.valueModel, this.text(), this.programSource]);
      const lines = text.split("\n");
      const last = frames.at(-1)!;
      let source = "";
      let call = lines[req.line - 1]?.trim() ?? req.name;
      let caller: string | undefined;
      if (req.kind === "function") {
        const fn = src.functions.find((f) => f.qualname === req.name);
        if (fn) source = lines.slice(fn.callLine - 1, fn.endLine).join("\n");
        call = `${req.name.split(".").at(-1)}(${Object.entries(last.locals).map(([k, v]) => `${k}=${v}`).join(", ")})`;
        let k = frames.length - 2;
        while (k >= 0 && frames[k].depth !== last.depth - 1) k--;
        if (k >= 0 && frames[k].file === undefined) caller = lines[frames[k].line - 1];
      }
      this.valueName = model.name;
      const a = await model.ask({ source, call, ...(caller ? { caller } : {}), ...(req.returns ? { returns: req.returns } : {}), ...(req.type ? { type: req.type } : {}) });
      return { repr: a.repr, confidence: a.confidence };
    } catch (e) {
      return { error: `the hole model gave no value: ${e instanceof Error ? e.message : String(e)}` };
    }
  }

  /** `type`: the stub's annotated return type, which the model's answer is held to (a `-> float` hole gets a float). */
  private async askModel(model: Predictor, frames: readonly Frame[], kind: HoleRequest["kind"], target: string | undefined, last: Frame, type?: ValueType): Promise<HoleAnswer> {
    const history: Predicted[] = frames.map((frame, i) => ({ step: i ? { action: STEP_INTO, frame } : { frame } }));
    const hole = type ? { hole: kind === "function" ? { type } : { type, ...(target !== undefined ? { target } : {}) } } : {};
    let p: Predicted;
    try {
      p = await model.predict(history, kind === "function" ? { kind: "step_return" } : { kind: "step_over" }, hole);
    } catch (e) {
      return { error: `the model gave no state: ${e instanceof Error ? e.message : String(e)}` };
    }
    const f = p.step.frame;
    const conf = p.confidence !== undefined ? { confidence: p.confidence } : {};
    if (kind === "function") {
      if (f?.event === "return" && f.value !== undefined && f.func === last.func) return { repr: f.value, ...conf };
      return { error: `the model predicts ${stateText(p.step)}, not a return value` };
    }
    const v = target !== undefined ? f?.locals[target] : undefined;
    if (v !== undefined) return { repr: v, ...conf };
    return { error: `the model predicts ${stateText(p.step)}, without a value for ${target}` };
  }

  /** The values of a state (or a caller's) that came from the model. */
  guessed(frame: Frame): ReadonlyMap<string, Guess> | undefined {
    return this.guesses.get(frame);
  }

  /** Only a marked value that is a hole's own answer (a stub's return value, or the name it was assigned to) can be set: its hole is then filled with it. */
  refuseEdit(state: Predicted, name: string): string | undefined {
    const frame = state.step.frame;
    const g = frame && this.guesses.get(frame)?.get(name);
    if (g && !g.derived && this.fills[g.hole]?.repr === valueOf(frame, name)) return undefined;
    // Predict mode sets any local by running `name = value` in the program's frame (execute).
    if (this.executor.repeats && name !== RETURN_VALUE) return undefined;
    return g
      ? `${name} is computed from the value of hole ${this.fills[g.hole]?.name}(), not that value itself: set the variable its result is assigned to`
      : this.say === "predict"
        ? "a return value is the function's own: set the values it is computed from (only a stub's predicted return can be set)"
        : `hybrid mode runs the program for real: only a predicted value (marked "predicted") can be set; its hole is then filled with it and the program runs again`;
  }

  async start(opts?: PredictOptions): Promise<Predicted> {
    return this.tag(await this.inner.start(opts));
  }

  async predict(history: readonly Predicted[], action: Action, opts?: PredictOptions): Promise<Predicted> {
    const last = history.at(-1);
    const rerun = last && (await this.rerunFor(last));
    const p = this.tag(await this.inner.predict(rerun ? [...history.slice(0, -1), rerun] : history, action, opts));
    const from = (rerun ?? last)?.ref;
    const g = from !== undefined && p.ref !== undefined ? this.outputGuess(from, p.ref) : undefined;
    const carrier = p.step.frame ?? p.step.exit;
    if (g && carrier) this.outputGuesses.set(carrier, g);
    return p;
  }

  guessedOutput(step: Step): Guess | undefined {
    const carrier = step.frame ?? step.exit;
    return carrier && this.outputGuesses.get(carrier);
  }

  /**
   * Whether the output written between states `from` and `to` of the run came from a line that read
   * a value the model filled in: the line whose state held that value (marked) and names it.
   */
  private outputGuess(from: number, to: number): Guess | undefined {
    const frames = this.inner.frames;
    const lines = this.inner.source.split("\n");
    for (let k = from + 1; k <= to && k <= frames.length; k++) {
      const written = k < frames.length ? frames[k].stdout : this.inner.exit.stdout;
      const writer = frames[k - 1];
      const marks = this.marksAt.get(k - 1);
      if (!written || !writer || !marks || writer.file !== undefined) continue;
      const text = lines[writer.line - 1] ?? "";
      for (const [name, g] of marks) if (!g.set && g.docstring === undefined && (name === RETURN_VALUE ? writer.event === "return" : mentions(text, name))) return { ...g, derived: true };
    }
    return undefined;
  }

  /**
   * An edited state (setVariable on a hole's value): the program runs again with that value, and
   * the state at the same place of the new run stands for it.
   */
  private async rerunFor(last: Predicted): Promise<Predicted | undefined> {
    const ref = last.ref;
    const frame = last.step.frame;
    const old = ref === undefined ? undefined : this.inner.frames[ref];
    if (!frame || !old || frame === old) return undefined;
    const marks = this.marksAt.get(ref!);
    const set = [...(marks ?? [])].find(([name, g]) => !g.derived && valueOf(frame, name) !== undefined && valueOf(frame, name) !== valueOf(old, name));
    if (!set) return undefined; // not a hole's value: the recording refuses it as record mode does
    const [name, g] = set;
    const value = valueOf(frame, name)!;
    this.overrides.set(g.hole, value);
    await this.keep(this.fills[g.hole], value);
    await this.record();
    const now = this.inner.frames[ref!];
    if (!now) throw new Error(`the program ran again with ${name} = ${cut(value)} and ended before this point (${this.inner.exit.status}${this.inner.exit.value ? `: ${cut(this.inner.exit.value)}` : ""}): restart the session to follow the new run`);
    const same = now && now.line === old.line && now.func === old.func && now.depth === old.depth && valueOf(now, name) === value;
    this.opts.console?.(
      same
        ? `${this.say} · the program ran again with ${name} = ${cut(value)}`
        : `${this.say} · the program ran again with ${name} = ${cut(value)}, and went another way before this point: the session goes on from the same step of the new run`,
    );
    return this.tag({ step: { frame: now }, ref: ref! });
  }

  /** A value the user gave a hole, kept in the project's answers (where the session has them) for later launches. */
  private async keep(fill: HoleFill | undefined, value: string): Promise<void> {
    const file = this.opts.answersFile;
    if (!file || !fill) return;
    try {
      await file.set({ name: fill.name, arguments: fill.args }, value, fill.kind === "call" ? fill.line : undefined);
      this.opts.console?.(`${this.say} · ${fill.name}() = ${cut(value)} is kept in ${file.path}: later launches use it without stopping`);
    } catch (e) {
      this.opts.console?.(`${this.say} · ${fill.name}() = ${cut(value)} is used in this session only: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /**
   * The holes the run met, and those the model answered, where the session may stop (the
   * exception filter "holes"): one object for the session, read afresh, since the engine asks
   * `any` and `at` at each event of a Continue.
   */
  readonly holeAnswers: NonNullable<Predictor["holeAnswers"]> = ((self: HybridPredictor) => ({
    get any(): boolean {
      return self.holeStates.size > 0;
    },
    get met(): Hole[] {
      return self.fills.map(holeOf);
    },
    at(state: Predicted): Hole | undefined {
      const fill = state.ref === undefined ? undefined : self.holeStates.get(state.ref);
      const frame = state.step.frame;
      return fill && frame && frame.line === self.inner.frames[state.ref!]?.line ? holeOf(fill) : undefined;
    },
  }))(this);

  callers(history: readonly Predicted[]): Frame[] | undefined {
    return this.inner.callers(history);
  }

  /**
   * Predict mode: the expression in the program's frame at this state, by running the program
   * sealed again up to it, every hole answered as in this run (a sealed run repeats exactly), then
   * the expression there. On the host (hybrid mode) nothing runs again: the engine computes it.
   */
  async inspect(history: readonly Predicted[], expression: string, frame: number, opts?: PredictOptions): Promise<Evaluated | undefined> {
    const last = history.at(-1);
    const ref = last?.ref;
    if (!this.executor.repeats || ref === undefined || !last || !this.ran(last)) return undefined;
    const question = { expressions: [expression], ...(frame ? { up: frame } : {}) };
    // The run held at this stop answers, else one runs to it and stays there (HeldStop).
    const got = await this.stop.ask(JSON.stringify([ref, this.statements, this.fills]), question, (hold) => this.again({ inspect: { at: ref, ...question }, hold }, opts?.signal));
    const answer = "results" in got ? got.results[0] : got.inspected?.[0];
    if (!answer) throw new Error(`cannot evaluate "${cut(expression)}": the program did not reach this state again (${"results" in got ? "no answer" : `${got.exit.status}${got.exit.value ? `: ${cut(got.exit.value)}` : ""}`})`);
    return inspectedValue(answer);
  }

  /**
   * Predict mode: breakpoint conditions and a log message's parts in the program's frame at this
   * state (a line event of this run). One run evaluates them at every event on this line (the
   * sealed run repeats exactly), kept for the next hits; undefined where the state is not one of
   * this run's line events (the engine evaluates over the state's values then).
   */
  async valuesAt(history: readonly Predicted[], expressions: readonly string[], opts?: PredictOptions): Promise<ValueResult[] | undefined> {
    const last = history.at(-1);
    const frame = last?.step.frame;
    if (!this.executor.repeats || !last || last.ref === undefined || frame?.event !== "line" || !this.ran(last)) return undefined;
    const place = `${frame.file ?? ""}:${frame.line}`;
    let probed = this.probed.get(place);
    const fresh = expressions.filter((e) => !probed?.asked.includes(e));
    if (!probed || fresh.length) {
      // (the expressions asked here before, asked again with the new ones: one run holds them all)
      const asked = [...(probed?.asked ?? []), ...new Set(fresh)];
      const result = await this.again({ probes: { places: [[frame.file ?? null, frame.line]], expressions: asked } }, opts?.signal);
      probed = { asked, at: new Map((result.probed ?? []).map((p) => [p.at, p.results])) };
      this.probed.set(place, probed);
    }
    const results = probed.at.get(last.ref);
    return results && expressions.map((e) => results[probed!.asked.indexOf(e)]);
  }

  /** The program run sealed again as this run ran (its statements, every hole answered as before), with what is asked of it. */
  private again(ask: Pick<RunRequest, "inspect" | "hold" | "probes">, signal?: AbortSignal): Promise<SealedResult> {
    const { predict, model: _m, console: _c, executor: _e, ...trace } = this.opts;
    const signals = [trace.signal, signal].filter((x): x is AbortSignal => x !== undefined);
    const fills = this.fills;
    let n = 0;
    return this.executor.run(this.program, {
      ...trace,
      ...(signals.length ? { signal: AbortSignal.any(signals) } : {}),
      ...ask,
      ...(this.statements.length ? { statements: this.statements } : {}),
      hybrid: {
        ...(predict ? { predict } : {}),
        fill: async () => {
          const f = fills[n++];
          return f?.repr !== undefined ? { repr: f.repr } : { error: f?.error ?? "the run went another way" };
        },
      },
    });
  }

  /** Whether `state` is this run's own (not edited away from it: a value set and not yet run again). */
  private ran(state: Predicted): boolean {
    const frame = state.step.frame;
    const recorded = state.ref === undefined ? undefined : this.inner.frames[state.ref];
    return !!frame && !!recorded && sameState(recorded, frame);
  }

  /**
   * Predict mode: a line of the Debug Console (or a value set: `name = value`) run in the program's
   * frame at this state, its effects kept. It joins the run's input (a sealed run is a pure function
   * of program, answers and input); the program runs again, and the answer is the same state of the
   * new run, which shows what the line changed, with the line's result. Lines run later in the run
   * than this state are dropped, as the session drops what it knew of the future.
   */
  async execute(history: readonly Predicted[], code: string, frame: number, opts?: PredictOptions): Promise<RanLine | undefined> {
    if (!this.executor.repeats || !history.length) return undefined;
    opts?.signal?.throwIfAborted();
    // A hole's value set and not yet run: the program runs with it first.
    const last = (await this.rerunFor(history.at(-1)!)) ?? history.at(-1)!;
    if (last.ref === undefined || !this.ran(last)) return undefined;
    const at = last.ref;
    const kept = this.statements;
    this.statements = withStatement(kept, at, code, frame);
    await this.record();
    const mine = statementResult(this.executed, at);
    const now = this.inner.frames[at];
    if (!mine || !now) {
      // It did not finish (a loop: the run's time limit), or the run ended before: nothing of it stays.
      this.statements = kept;
      await this.record();
      throw new Error(`"${cut(code)}" did not finish in the run's time (${this.inner.exit.status}): nothing of it was kept`);
    }
    return { state: this.tag({ step: { ...last.step, frame: now }, ref: at }), result: mine };
  }

  async dispose(): Promise<void> {
    this.stop.release();
    const model = this.model;
    this.model = undefined;
    await (await model?.catch(() => undefined))?.dispose();
  }

  /** Registers the marks of the state handed out (a copy of the recording's frame). */
  private tag(p: Predicted): Predicted {
    const marks = p.ref === undefined ? undefined : this.marksAt.get(p.ref);
    if (marks && p.step.frame) this.guesses.set(p.step.frame, marks);
    return p;
  }
}

/** What a statement's line reads: the right side of a plain assignment (`v = 8` does not read v), the iterable of a `for`, else all of it. */
function readPart(line: string): string {
  const loop = /^\s*(?:async\s+)?for\s+.+?\s+in\s+(.*)$/.exec(line);
  if (loop) return loop[1];
  const assign = /^\s*[^=()[\]{}'"#]+?(?<![=!<>+\-*/%&|^@:])=(?!=)(.*)$/.exec(line);
  return assign ? assign[1] : line;
}

/** A local's value, or the return value (RETURN_VALUE). */
const valueOf = (f: Frame, name: string): string | undefined => (name === RETURN_VALUE ? f.value : f.locals[name]);

/**
 * Where each hole's answer first shows, by state: a stub's return value (and in its caller the
 * names its return changed), a missing call's target where it was assigned.
 */
export function answerStates(frames: readonly Frame[], fills: readonly HoleFill[]): Map<number, Map<string, Guess>> {
  const fresh = new Map<number, Map<string, Guess>>();
  const add = (i: number, name: string, g: Guess): void => {
    let m = fresh.get(i);
    if (!m) fresh.set(i, (m = new Map()));
    m.set(name, g);
  };
  const next = (from: number, ok: (f: Frame) => boolean): number => {
    for (let k = from; k < frames.length; k++) if (ok(frames[k])) return k;
    return -1;
  };
  const prev = (from: number, ok: (f: Frame) => boolean): number => {
    for (let k = from; k >= 0; k--) if (ok(frames[k])) return k;
    return -1;
  };
  for (const fill of fills) {
    const h = fill.at - 1;
    if (fill.repr === undefined || h < 0 || h >= frames.length) continue;
    const g: Guess =
      fill.by === "user"
        ? { hole: fill.index, set: true }
        : fill.by === "docstring"
          ? { hole: fill.index, docstring: fill.docstring!.line }
          : { hole: fill.index, ...(fill.confidence !== undefined ? { confidence: fill.confidence } : {}) };
    if (fill.kind === "function") {
      const d = frames[h].depth;
      const r = next(h + 1, (f) => f.depth <= d);
      if (r < 0 || frames[r].event !== "return" || frames[r].depth !== d) continue;
      add(r, RETURN_VALUE, g);
      const c = next(r + 1, (f) => f.depth <= d - 1);
      const before = prev(h, (f) => f.depth === d - 1);
      if (c < 0 || before < 0 || frames[c].depth !== d - 1) continue;
      for (const [name, v] of Object.entries(frames[c].locals)) if (frames[before].locals[name] !== v) add(c, name, g);
    } else {
      const site = prev(h, (f) => f.line === fill.line && f.event === "line");
      if (site < 0 || fill.target === undefined) continue;
      const d = frames[site].depth;
      const c = next(fill.at, (f) => f.depth <= d);
      if (c >= 0 && frames[c].depth === d && frames[c].locals[fill.target] !== undefined) add(c, fill.target, g);
    }
  }
  return fresh;
}

/**
 * Which values of each frame came from the model: a stub's return value, and in its caller the
 * names its return changed; a missing call's target; and the values computed from those. A mark
 * stays while the value stays the same in that frame (a new call at that depth starts afresh).
 * `source`: the program's text, to tell which statements read a marked value.
 */
export function markValues(frames: readonly Frame[], fills: readonly HoleFill[], source?: string, fresh = answerStates(frames, fills)): Map<number, Map<string, Guess>> {
  // What is marked, frame by frame: each depth keeps its marked values while they stay the same;
  // a value that changes between two events of its frame was written by the statement of the
  // first, and is derived from a marked value when that statement reads one (by name), or when a
  // call in between returned a marked value. A call's arguments equal to a marked value the
  // calling line reads are derived from it too.
  const lines = source?.split("\n");
  const reads = (at: Frame, live: ReadonlyMap<string, { guess: Guess }>): Guess | undefined => {
    const line = at.file === undefined ? lines?.[at.line - 1] : undefined;
    if (!line) return undefined;
    const text = readPart(line);
    for (const [name, t] of live) if (mentions(text, name)) return t.guess;
    return undefined;
  };
  const derive = (g: Guess): Guess => ({ ...g, derived: true });
  const out = new Map<number, Map<string, Guess>>();
  const live: Map<string, { repr: string; guess: Guess }>[] = [];
  const last: number[] = []; // the latest event of each depth
  let returned: Guess | undefined; // the marked value of the return just before, one level down
  frames.forEach((f, i) => {
    const d = f.depth;
    const filled = fresh.get(i);
    const derived = new Map<string, Guess>();
    if (f.event === "call" || !live[d]) {
      const caller = d > 0 ? live[d - 1] : undefined;
      const from = d > 0 ? last[d - 1] : undefined;
      live[d] = new Map();
      if (f.event === "call" && caller?.size && from !== undefined) {
        const g = reads(frames[from], caller);
        if (g) for (const [name, v] of Object.entries(f.locals)) if ([...caller.values()].some((t) => t.repr === v)) derived.set(name, derive(g));
      }
    } else if (last[d] !== undefined) {
      const prev = frames[last[d]];
      const g = reads(prev, live[d]) ?? returned;
      if (g) {
        for (const [name, v] of Object.entries(f.locals)) if (prev.locals[name] !== v && !filled?.has(name)) derived.set(name, derive(g));
        if (f.event === "return" && f.value !== undefined && !filled?.has(RETURN_VALUE)) derived.set(RETURN_VALUE, derive(g));
      }
    }
    live.length = d + 1;
    last.length = d + 1;
    last[d] = i;
    const m = live[d];
    for (const [name, t] of m) if (f.locals[name] !== t.repr) m.delete(name);
    for (const [name, g] of [...derived, ...(filled ?? [])]) if (name !== RETURN_VALUE) m.set(name, { repr: f.locals[name], guess: g });
    const marks = new Map([...m].map(([name, t]) => [name, t.guess]));
    const rv = filled?.get(RETURN_VALUE) ?? derived.get(RETURN_VALUE);
    if (rv) marks.set(RETURN_VALUE, rv);
    // (in the caller just after it, the value a callee returned is shown too: Frame.returned)
    else if (returned && f.event !== "return" && f.event !== "call") marks.set(RETURN_VALUE, returned);
    returned = f.event === "return" ? rv : undefined;
    if (marks.size) out.set(i, marks);
  });
  return out;
}

/**
 * The marks of the caller a return records (Frame.caller): its latest earlier state's (the state
 * before the call), for the names it still has.
 */
function callerMarks(frames: readonly Frame[], marksAt: ReadonlyMap<number, ReadonlyMap<string, Guess>>, i: number): Map<string, Guess> | undefined {
  const caller = frames[i].caller!;
  let k = i - 1;
  while (k >= 0 && frames[k].depth !== caller.depth) k--;
  const marks = k >= 0 ? marksAt.get(k) : undefined;
  if (!marks) return undefined;
  const kept = new Map([...marks].filter(([name]) => name !== RETURN_VALUE && caller.locals[name] !== undefined));
  return kept.size ? kept : undefined;
}

/** A hole as the session tells it. */
function holeOf(f: HoleFill): Hole {
  return {
    kind: f.kind,
    name: f.name,
    variable: f.kind === "call" && f.target !== undefined ? f.target : RETURN_VALUE,
    line: f.line,
    arguments: f.args,
    by: f.by,
    ...(f.repr !== undefined ? { repr: f.repr } : {}),
    ...(f.confidence !== undefined ? { confidence: f.confidence } : {}),
    ...(f.docstring ? { docstring: f.docstring.line } : {}),
    ...(f.error !== undefined ? { error: f.error } : {}),
  };
}

/** Lines of the most text of one written file the Debug Console shows. */
const SHOWN_LINES = 12;

/**
 * The Debug Console's messages on a sealed run's files: what the program met (a bound, a compiled
 * package), then one of each file it wrote or deleted, with the start of its text. Nothing of it
 * is on disk: the program's writes live in the sandbox's memory for the run.
 */
export function describeSandbox(sandbox: { wrote: readonly Written[]; notices: readonly string[] }, cwd: string): string[] {
  if (!sandbox.wrote.length) return [...sandbox.notices];
  const lines: string[] = [];
  const name = (p: string): string => (under(p, cwd) ? relative(cwd, p) : p);
  lines.push(`the program writes ${sandbox.wrote.length === 1 ? "one file" : `${sandbox.wrote.length} files`}, in the sandbox's memory only (nothing on disk):`);
  for (const w of sandbox.wrote) {
    if (w.deleted) {
      lines.push(`  ${name(w.path)}: deleted`);
      continue;
    }
    const size = `${w.size} byte${w.size === 1 ? "" : "s"}`;
    if (w.text === undefined) {
      lines.push(`  ${name(w.path)} (${size}, not text)`);
      continue;
    }
    const text = w.text.split("\n");
    if (text.at(-1) === "") text.pop();
    const shown = text.slice(0, SHOWN_LINES).map((l) => `    ${cut(l)}`);
    const more = text.length > SHOWN_LINES || w.cut ? ["    …"] : [];
    lines.push(`  ${name(w.path)} (${size}):`, ...shown, ...more);
  }
  return [...sandbox.notices, lines.join("\n")];
}

/** The console line that names the holes found before the run; `sealed`: predict mode's sealed run, its CPython's version. */
export function describeHoles(h: HoleList, sealed?: string): string {
  const parts = [
    ...Object.entries(h.functions).map(([q, why]) => `${q}() (${why === "listed" ? "listed in predict" : "not written yet"})`),
    ...h.names.map((n) => `${n} (defined nowhere)`),
  ];
  const unknown = h.unknown.length ? `; listed in predict but not defined: ${h.unknown.join(", ")}` : "";
  if (sealed) {
    const how = `predict · the program runs sealed (CPython ${sealed} in WebAssembly, in a locked-down process: nothing it does reaches this machine); its states are exact`;
    return parts.length
      ? `${how}, and the model predicts only its holes: ${parts.join(", ")}; modules the sandbox lacks stand in as they are imported${unknown}`
      : `${how}; no holes found before the run: modules the sandbox lacks stand in as they are imported, and the model predicts their calls${unknown}`;
  }
  return parts.length
    ? `hybrid · the program runs for real; the model predicts only its holes: ${parts.join(", ")}; modules that are not installed stand in as they are imported${unknown}`
    : `hybrid · no holes found before the run: the program runs for real, and modules that are not installed stand in as they are imported${unknown}`;
}

function stateText(step: Step): string {
  const f = step.frame;
  if (!f) return `the program's exit (${step.exit?.status})`;
  return `a ${f.event} event at line ${f.line}${f.value !== undefined ? ` (${cut(f.value)})` : ""}`;
}

const cut = (s: string): string => cutText(s, 120);

/** The program as the model reads it for hybrid mode: each stub's body (lines `first..last`) reads `...`, as an unwritten body does. */
export function hideBodies(source: string, bodies: readonly (readonly [number, number])[]): string {
  const lines = source.split("\n");
  for (const [first, last] of bodies) {
    const indent = /^\s*/.exec(lines[first - 1] ?? "")?.[0] ?? "";
    for (let l = first; l <= last && l <= lines.length; l++) lines[l - 1] = l === first ? `${indent}...` : "";
  }
  return lines.join("\n");
}
