// Predict mode for a run longer than maxEvents (a loop of 200,000 iterations): rather than every
// state of the run, its states are recorded a window of maxEvents at a time, by running the
// program sealed again up to them (a sealed run is a pure function of program, answers and
// input); the events before a window are only counted, on the tracer's fast path. The debugger's
// semantics (real/semantics.ts) answer a move over the windows kept where it lands in one; a
// move forwards past them runs the program to where it lands (a seek: the first event no deeper
// than the frame, the first line on a breakpoint, ...), recording a window from there; a move
// back past them reads a window reaching back from here; past that, a Step Back (reverse Step
// Over) runs the program looking for the latest event no deeper than here, and any other move
// reads the run's skeleton (where each event stands, 7 bytes an event: real/skeleton.ts). The last few windows are kept, so
// stepping back and forth near a stop, and between two stops, runs nothing. States keep the
// run's event indices as refs, as a recording's: everything the engine does over one run's
// events (Step Back, Reverse Continue, data breakpoints) works the same.
import { sameState, type Action, type Exit, type Frame, type Step } from "../format/trajectory.js";
import type { ValueResult } from "../format/values.js";
import { NotHeld, RETURN_VALUE, type Evaluated, type Predicted, type PredictOptions, type Predictor, type RanLine } from "../engine/predictor.js";
import { inspectedValue, runSealed, statementResult, withStatement, type Hold, type Inspect, type SealedResult, type Statement, type Window } from "../real/sealed.js";
import { HeldStop } from "../real/heldStop.js";
import type { HybridOracle, TraceOptions } from "../real/run.js";
import type { RunSkeleton } from "../real/skeleton.js";
import { backOver, placesOf, seekOf, transition, transitionWithin, type Places, type Seek, type SeekPlace } from "../real/semantics.js";
import { cutText } from "../format/values.js";
import { callersAt } from "./recorded.js";

/** The most events a long run may have (its skeleton: 7 bytes an event). */
export const LONG_RUN_EVENTS = 2_000_000;
/** Windows kept: the current one and the last few, so that moving between two stops runs nothing. */
const KEPT_WINDOWS = 3;

export interface LongRunOptions extends Omit<TraceOptions, "hybrid"> {
  /** The holes as the first run met them (none were met in its first maxEvents events): the same program, so the same events. */
  hybrid?: HybridOracle;
  console?: (line: string) => void;
}

interface Stretch {
  /** The run's index of frames[0]. */
  from: number;
  frames: readonly Frame[];
  /** frames[0]'s callers, innermost first. */
  callers: readonly Frame[];
  /** The run ended within it: its exit is event from + frames.length. */
  final?: boolean;
}

/** The run's end, once a run has reached it: its index (the number of events), its exit, and all it printed. */
interface End {
  events: number;
  exit: Exit;
  text: Buffer;
}

/** A window's events at the run's own indices, as the semantics read them. */
const viewOf = (w: Stretch): Places => placesOf(w.from, w.from + w.frames.length, (i) => w.frames[i - w.from]);

/** Where the run stood when it stopped, for a message. */
const endedAs = (r: SealedResult): string => `${r.exit.status}${r.exit.value ? `: ${cutText(r.exit.value, 120)}` : ""}`;

const notHeld = (): never => {
  throw new NotHeld();
};

/** What the run printed up to the `upTo`-th state of a window, inclusive (the first state's holds all before it). */
const textOf = (frames: readonly Frame[], upTo: number): string => frames.slice(0, upTo + 1).map((f) => f.stdout ?? "").join("");
const bytesOf = (frames: readonly Frame[], upTo: number): Buffer => Buffer.from(textOf(frames, upTo), "utf8");

export class LongRunPredictor implements Predictor {
  readonly eventByEvent = true;
  readonly source: string;
  readonly python?: string;
  /** Made at the first move that neither the windows nor a seek can answer (sketch). */
  private skeleton?: RunSkeleton;
  /** Where the last Continue's (or Step Over's) seek landed, and the latest earlier event at its depth (WindowRun's `behind`; a Step Over's start). */
  private behind?: { at: number; before: number };
  /** Where the last Continue's seek landed because a condition held, and what its conditions read there (WindowRun's `held`). */
  private held?: { at: number; values: Map<string, ValueResult> };
  private end?: End;
  /** The windows recorded, the latest first. */
  private windows: Stretch[];
  private statements: Statement[] = [];
  private readonly size: number;
  /** Aborted while a pause is asked: the seek under way lands where the run is (runSealed's `pause`). */
  private pausing = new AbortController();
  /** The run held at the stop the last expression was asked at. */
  private readonly stop = new HeldStop();

  private constructor(
    readonly program: string,
    private readonly opts: LongRunOptions,
    first: SealedResult,
  ) {
    this.source = first.source;
    if (first.python) this.python = first.python;
    this.windows = [{ from: 0, frames: first.frames, callers: [] }];
    this.size = Math.max(2, first.frames.length);
  }

  /** The predictor for a run whose first recording (`first`, from the start) stopped at maxEvents. */
  static create(program: string, opts: LongRunOptions, first: SealedResult): LongRunPredictor {
    opts.console?.(`predict · the run goes past ${first.frames.length.toLocaleString("en-US")} events: its states are recorded that many at a time, by running the program again up to them`);
    return new LongRunPredictor(program, opts, first);
  }

  /** The skeleton of the whole run, with the statements run so far. */
  private async sketch(signal?: AbortSignal): Promise<RunSkeleton> {
    if (this.skeleton) return this.skeleton;
    const result = await this.runWith({ skeleton: true }, { maxEvents: LONG_RUN_EVENTS }, signal);
    if (!result.skeleton) throw new Error(`the run's skeleton did not come back (${endedAs(result)})`);
    const { stdout, ...exit } = result.exit;
    this.end = { events: result.skeleton.length, exit, text: Buffer.from(stdout ?? "", "utf8") };
    this.opts.console?.(`predict · the run has ${result.skeleton.length.toLocaleString("en-US")} events${exit.status === "limit" ? ` before it stopped (${exit.value})` : ""}`);
    return (this.skeleton = result.skeleton);
  }

  private runWith(window: Window, extra: Partial<TraceOptions> & { inspect?: Inspect; hold?: Hold; ahead?: boolean } = {}, signal?: AbortSignal): Promise<SealedResult> {
    const { console: _c, signal: own, ...trace } = this.opts;
    const signals = [own, signal].filter((x): x is AbortSignal => x !== undefined);
    return runSealed(this.program, {
      ...trace,
      ...extra,
      window,
      ...(this.statements.length ? { statements: this.statements } : {}),
      ...(signals.length ? { signal: AbortSignal.any(signals) } : {}),
      pause: this.pausing.signal,
    });
  }

  /** A seek (Continue, or Step Over or Out past the windows) lands where the run is when paused: an event's index is an address as good as a breakpoint's. */
  pause(asked: boolean): boolean {
    if (asked) this.pausing.abort();
    else if (this.pausing.signal.aborted) this.pausing = new AbortController();
    return true;
  }

  /** A window's run kept: the latest first, a few at most; where the run ended within it, its end. */
  private keep(from: number, result: SealedResult): Stretch {
    const ended = !(result.exit.status === "limit" && result.limit === "events");
    const w: Stretch = { from, frames: result.frames, callers: result.callers ?? [], ...(ended ? { final: true } : {}) };
    if (ended) {
      const { stdout, ...exit } = result.exit;
      this.end = { events: from + result.frames.length, exit, text: Buffer.concat([bytesOf(result.frames, result.frames.length), Buffer.from(stdout ?? "", "utf8")]) };
    }
    this.windows = [w, ...this.windows].slice(0, KEPT_WINDOWS);
    return w;
  }

  /** The kept window that holds event `i`'s state. */
  private holding(i: number): Stretch | undefined {
    return this.windows.find((w) => i >= w.from && i < w.from + w.frames.length);
  }

  /** The kept window whose events (or, the run's last, whose exit) include event `i`. */
  private windowOf(i: number): Stretch | undefined {
    return this.holding(i) ?? this.windows.find((w) => w.final === true && i === w.from + w.frames.length);
  }

  /** Where the window around event `i` begins: half a window before it. */
  private aroundFrom(i: number): number {
    return Math.max(0, i - Math.floor(this.size / 2));
  }

  /** The window around event `i`, recorded by running the program again. */
  private async fetch(i: number, signal?: AbortSignal): Promise<Stretch> {
    const from = this.aroundFrom(i);
    const result = await this.runWith({ from }, { maxEvents: this.size }, signal);
    if (result.frames.length === 0 && !(this.end && i === this.end.events)) throw new Error(`the program did not reach its event ${i} again (${endedAs(result)})`);
    return this.keep(from, result);
  }

  async start(opts?: PredictOptions): Promise<Predicted> {
    return this.at(0, undefined, 0, opts?.signal);
  }

  async predict(history: readonly Predicted[], action: Action, opts?: PredictOptions): Promise<Predicted> {
    const from = history.at(-1)?.ref;
    if (from === undefined || !Number.isInteger(from) || from < 0 || (this.end && from > this.end.events)) throw new Error("this state is not one of the run's");
    const signal = opts?.signal;
    const held = opts?.held === true;
    const places = opts?.breakpoints?.map((b) => ({ line: b.line, ...(b.file !== undefined ? { file: b.file } : {}), ...(b.condition ? { condition: b.condition } : {}) }));
    const w = this.windowOf(from) ?? (held ? notHeld() : await this.fetch(from, signal));
    // (what the run had printed by `from`, read before another window may take its place)
    const before = this.offset(from);
    const to = await this.move(w, from, action, places, held, signal);
    if (held && !this.windowOf(to) && to !== this.end?.events) notHeld();
    return this.at(to, action, from, signal, before);
  }

  /**
   * Where `action` leads from event `from` (in window `w`): over the window where it lands there;
   * forwards past it, by a run that seeks where the move lands (semantics.ts's seekOf); back past
   * its start, over a window reaching back from here; else over the run's skeleton.
   */
  private async move(w: Stretch, from: number, action: Action, places: SeekPlace[] | undefined, held: boolean, signal?: AbortSignal): Promise<number> {
    // A Continue to a breakpoint with a condition is one run that seeks where the condition holds,
    // read in the program's frame as it runs: neither a window nor the skeleton knows which hits
    // stop, and each hit's condition asked apart costs a round trip (a run, past the windows).
    if (action.kind === "continue" && places?.some((p) => p.condition !== undefined)) {
      if (held) notHeld();
      return this.seekTo(seekOf(w.frames[from - w.from], from, action, places)!, signal);
    }
    const to = transitionWithin(viewOf(w), from, action, places, w.from);
    if (to !== undefined && (to < w.from + w.frames.length || w.final)) return to;
    if (this.skeleton) return transition(this.skeleton.places, from, action, places);
    if (held) notHeld();
    if (to !== undefined) {
      const here = w.frames[from - w.from];
      const seek = seekOf(here, from, action, places);
      if (seek) {
        const at = await this.seekTo(seek, signal);
        // Back over from where a Step Over landed at its own depth: every event between is
        // deeper, so the latest earlier one at that depth is where it began (never a return).
        const lw = this.windowOf(at);
        const landed = lw?.frames[at - lw.from];
        if (action.kind === "step_over" && landed && here && landed.depth === here.depth && here.event !== "return") this.behind = { at, before: from };
        return at;
      }
    } else {
      // Back over from where a Continue or a Step Over landed: the seek saw the latest earlier
      // event at its depth (never a return: where backOver lands), so no run looks for it.
      if (action.kind === "inv_step_over" && this.behind?.at === from && w.frames[from - w.from]?.event === "line") return this.behind.before >= 0 ? this.behind.before : from - 1;
      if (w.from > this.aroundFrom(from)) {
        const back = await this.fetch(from, signal);
        const t = transitionWithin(viewOf(back), from, action, places, back.from);
        if (t !== undefined) return t;
      }
      // Back over a long call: the latest event no deeper than here, looked for by one run.
      if (action.kind === "inv_step_over") return this.backOverFrom(from, w.frames[from - w.from]?.depth ?? -1, signal);
    }
    return transition((await this.sketch(signal)).places, from, action, places);
  }

  /** inv_step_over from event `from` (at depth `here`), by a run that looks for the latest earlier event no deeper (semantics.ts's backOver). */
  private async backOverFrom(from: number, here: number, signal?: AbortSignal): Promise<number> {
    const result = await this.runWith({ latest: { before: from, depth: here } }, { maxEvents: this.size }, signal);
    if (!result.window || result.window.latest === undefined) throw new Error(`the run did not say where the move back lands (${endedAs(result)})`);
    return backOver(from, here, result.window.latest ?? undefined);
  }

  /** Runs the program to where a forward move lands, recording a window from there; the exit's index where it lands nowhere. */
  private async seekTo(seek: Seek, signal?: AbortSignal): Promise<number> {
    const result = await this.runWith({ seek }, { maxEvents: this.size }, signal);
    const at = result.window?.from;
    if (at === undefined) {
      if (!result.window) throw new Error(`the run did not say where it went (${endedAs(result)})`);
      const { stdout, ...exit } = result.exit;
      this.end = { events: result.window.events, exit, text: Buffer.from(stdout ?? "", "utf8") };
      return result.window.events;
    }
    this.keep(at, result);
    this.behind = result.window?.behind !== undefined ? { at, before: result.window.behind } : undefined;
    this.held = result.window?.held ? { at, values: result.window.held } : undefined;
    // A run to where this move landed begins now, to be held there: the first expression or line
    // asked at this stop then needs no run of its own (any other run stops it first).
    this.stop.ahead(this.stopKey(at), (hold) => this.runWith({ from: at }, { maxEvents: 1, inspect: { at, expressions: [] }, hold, ahead: true }));
    return at;
  }

  /** The name of the stop at event `at` for the held run (HeldStop): the event and the statements that lead there. */
  private stopKey(at: number, statements = this.statements): string {
    return JSON.stringify([at, statements]);
  }

  /** The state of event `to` (the run's end: its exit), reached from `from` by `action`, with what the run printed on the way. */
  private async at(to: number, action: Action | undefined, from: number, signal?: AbortSignal, before = this.offset(from)): Promise<Predicted> {
    // What the run printed on the way (all it printed up to `to`, past all it had printed by
    // `from`; nothing going back); the first state's is its own record's.
    const printed = (text: () => Buffer, own?: string): string | undefined => (!action ? own : to > from ? text().subarray(before).toString("utf8") : undefined) || undefined;
    const step: Step = action ? { action } : {};
    if (this.end && to === this.end.events) {
      const stdout = printed(() => this.end!.text);
      step.exit = { ...this.end.exit, ...(stdout ? { stdout } : {}) };
      return { step, ref: to };
    }
    const w = this.windowOf(to) ?? (await this.fetch(to, signal));
    const { stdout: own, stderr: __, ...frame } = w.frames[to - w.from];
    const stdout = printed(() => bytesOf(w.frames, to - w.from), own);
    step.frame = { ...frame, locals: { ...frame.locals }, ...(stdout ? { stdout } : {}) };
    return { step, ref: to };
  }

  /** Bytes the run printed up to event `i` (what its record's stdout ends with): from a window that holds it, else the skeleton. */
  private offset(i: number): number {
    const w = this.holding(i);
    if (w) return Buffer.byteLength(textOf(w.frames, i - w.from), "utf8");
    if (this.end && i === this.end.events) return this.end.text.length;
    return this.skeleton?.outBefore(i) ?? 0;
  }

  /** Every caller's state at this point of the run: in its window, the latest earlier event at each lower depth; before the window, its first state's callers. */
  callers(history: readonly Predicted[]): Frame[] | undefined {
    const ref = history.at(-1)?.ref;
    const w = ref === undefined ? undefined : this.holding(ref);
    return w && callersAt(w.frames, ref! - w.from, w.callers);
  }

  /** An expression in the program's frame at this state: by the run held there (HeldStop), else the program runs again up to it and stays there. */
  async inspect(history: readonly Predicted[], expression: string, frame: number, opts?: PredictOptions): Promise<Evaluated | undefined> {
    const last = history.at(-1);
    if (!last?.step.frame || last.ref === undefined || !this.same(last)) return undefined;
    const at = last.ref;
    const question = { expressions: [expression], ...(frame ? { up: frame } : {}) };
    const got = await this.stop.ask(this.stopKey(at), question, (hold) => this.runWith({ from: at }, { maxEvents: 1, inspect: { at, ...question }, hold }, opts?.signal));
    const answer = "results" in got ? got.results[0] : got.inspected?.[0];
    if (!answer) throw new Error(`cannot evaluate "${cutText(expression)}": the program did not reach this state again (${"results" in got ? "no answer" : got.exit.status})`);
    return inspectedValue(answer);
  }

  /**
   * Breakpoint conditions where a Continue's seek landed because one held: read there by the run
   * that landed, in the program's frame (an object's attributes and all); undefined elsewhere (the
   * engine reads them over the state's values then).
   */
  async valuesAt(history: readonly Predicted[], expressions: readonly string[]): Promise<ValueResult[] | undefined> {
    const last = history.at(-1);
    const held = this.held;
    if (!held || last?.ref !== held.at || !this.same(last) || !expressions.every((e) => held.values.has(e))) return undefined;
    return expressions.map((e) => held.values.get(e)!);
  }

  /**
   * A line of the Debug Console, its effects kept: it joins the run's input (HybridPredictor.execute).
   * At a line or a call, the run held at this stop runs it (HeldStop: the first line or expression
   * there runs the program to it): the state as the line left it is the stop's new window, and the
   * next move runs the program with the line among its statements. Elsewhere (a return, an
   * exception, whose records hold more than the frame) a window around it is made again with it.
   */
  async execute(history: readonly Predicted[], code: string, frame: number, opts?: PredictOptions): Promise<RanLine | undefined> {
    const last = history.at(-1);
    if (!last?.step.frame || last.ref === undefined || !this.same(last)) return undefined;
    const at = last.ref;
    const kept = this.statements;
    const event = last.step.frame.event;
    if (event === "line" || event === "call") {
      const next = withStatement(kept, at, code, frame);
      const line = { code, ...(frame ? { up: frame } : {}) };
      const got = await this.stop.ask(this.stopKey(at, kept), line, (hold) => this.runWith({ from: at }, { maxEvents: 1, inspect: { at, expressions: [] }, hold }, opts?.signal), this.stopKey(at, next));
      if (!("results" in got) || !got.state || !got.results[0]) throw new Error(`"${cutText(code)}" did not finish in the run's time (${"results" in got ? "no answer" : got.exit.status}): nothing of it was kept`);
      this.statements = next;
      this.forget();
      this.windows = [{ from: at, frames: [got.state], callers: got.callers ?? [] }];
      return { state: { step: { ...last.step, frame: got.state }, ref: at }, result: got.results[0] };
    }
    this.statements = withStatement(kept, at, code, frame);
    const from = this.aroundFrom(at);
    const result = await this.runWith({ from }, { maxEvents: this.size }, opts?.signal);
    const mine = statementResult(result.executed, at);
    const now = result.frames[at - from];
    if (!mine || !now) {
      this.statements = kept;
      throw new Error(`"${cutText(code)}" did not finish in the run's time (${result.exit.status}): nothing of it was kept`);
    }
    this.forget();
    this.keep(from, result);
    return { state: { step: { ...last.step, frame: now }, ref: at }, result: mine };
  }

  /** What the run was before a line of the Debug Console is gone: its windows, its end and its skeleton (made again when a move needs them). */
  private forget(): void {
    this.windows = [];
    this.behind = undefined;
    this.held = undefined;
    this.skeleton = undefined;
    this.end = undefined;
  }

  /** Whether `state` is the run's own (not a value edited away from it). */
  private same(state: Predicted): boolean {
    const ref = state.ref!;
    const w = this.holding(ref);
    const recorded = w?.frames[ref - w.from];
    const frame = state.step.frame!;
    return !recorded || sameState(recorded, frame);
  }

  /** Every value is the program's: none came from the model (a hole past the first window raises). */
  guessed(): undefined {
    return undefined;
  }

  refuseEdit(_state: Predicted, name: string): string | undefined {
    return name === RETURN_VALUE ? "a return value is the function's own: set the values it is computed from" : undefined;
  }

  dispose(): void {
    this.stop.release();
  }
}
