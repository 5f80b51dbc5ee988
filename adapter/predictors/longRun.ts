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
// events (Step Back, Reverse Continue, data breakpoints) works the same. A Continue, Step Over or
// Step Out past the windows into what no move has reached yet runs fast (sealed.ts's Window: no
// trace function where it cannot land, the events not counted): where it lands is then no known
// index. Its state is shown at once, under a ref of a segment of its own (refs keep the run's
// order; the first segment's are its indices), and the same fast seek, begun again at once, is
// held there for the first expression (runTo). A counting run of the seek finds the landing's
// index (placeLanding) only when a move or a line of the Debug Console needs it: moves within the
// window recorded from there, a Step Back to where the move began and a Step Over again do not.
// Where the seek landed because a condition held, both runs seek that place's nth hit instead,
// reading no condition (landFast).
import { breakpointHits, reachesBound, sameState, type Action, type Bound, type Exit, type Frame, type Step } from "../format/trajectory.js";
import type { ValueResult } from "../format/values.js";
import { NotHeld, RETURN_VALUE, type Evaluated, type Predicted, type PredictOptions, type Predictor, type RanLine } from "../engine/predictor.js";
import { inspectedValue, runSealed, statementResult, withStatement, type Expressions, type HeldAnswer, type Hold, type Inspect, type Inspected, type SealedResult, type Statement, type Window } from "../real/sealed.js";
import { HeldStop } from "../real/heldStop.js";
import { DEFAULT_TIMEOUT_S, type HybridOracle, type TraceOptions } from "../real/run.js";
import type { RunSkeleton } from "../real/skeleton.js";
import { backOver, placesOf, seekOf, transition, transitionWithin, type Places, type Seek, type SeekPlace } from "../real/semantics.js";
import { cutText } from "../format/values.js";
import { callersAt } from "./recorded.js";

/** The most events a long run may have (its skeleton: 7 bytes an event). */
export const LONG_RUN_EVENTS = 2_000_000;
/** Windows kept: the current one and the last few, so that moving between two stops runs nothing. */
const KEPT_WINDOWS = 3;
/** Refs of the k-th segment begin at k times this: more events than any run has within its time limit. */
const SEGMENT = 2 ** 32;
/**
 * The counting run that finds where a fast seek landed has this many times the run's time limit:
 * counting every event is about ten times slower, and the fast run showed that it gets there.
 */
const COUNTING_TIME = 20;

/**
 * Where a fast seek landed: refs from `ref` on name the run's events from its index `at` on,
 * once a counting run has found it (until then, the landing's `find`).
 */
interface Segment {
  ref: number;
  at?: number;
}

/** A fast seek's landing whose index is not known yet: its window (from its first event), what its conditions read, and its index to come. */
interface Landing {
  segment: Segment;
  /** The seek that landed there (or one that lands there again with no condition read: landFast): run fast again, it lands there again (a run held there: runTo); counted, it finds the landing's index. */
  seek: Seek;
  /** The window recorded from there, at the segment's refs (its `from` the segment's first). */
  window: Stretch;
  held?: Map<string, ValueResult>;
  /** The fast run, its window kept as any once the index is known (where no line of the Debug Console ran there). */
  result: SealedResult;
  /** Its index (and what is behind it), found by a counting run of the seek once asked. */
  found?: Promise<Found>;
  /** Where the Step Over that landed here began, where it landed at its own depth: a Step Back goes there, the index to come or not. */
  back?: number;
  /** The furthest of its window's events a state was given for (counted from the landing). */
  reached: number;
  /**
   * Lines of the Debug Console run in its window (a run held there: execute), at their states
   * counted from the landing: the run's statements once its index is known. The window then ends
   * at the last of them, as that line left it.
   */
  lines: Statement[];
}

/** Where a fast seek landed, found by a counting run: its index, what is behind it, and, where that run recorded it, the window just before it. */
interface Found {
  at: number;
  behind?: number;
  before?: Stretch;
}

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

/** A recorded state as a move shows it: with what the run printed on the way instead of its record's own. */
const shownFrame = (f: Frame, stdout: string | undefined): Frame => {
  const { stdout: _, stderr: __, ...frame } = f;
  return { ...frame, locals: { ...frame.locals }, ...(stdout ? { stdout } : {}) };
};

/** Where the run stood when it stopped, for a message. */
const endedAs = (r: SealedResult): string => `${r.exit.status}${r.exit.value ? `: ${cutText(r.exit.value, 120)}` : ""}`;

/** The last segment that `ok` takes (the first always has one: refs and indices from 0). */
const lastOf = (segments: readonly Segment[], ok: (s: Segment) => boolean): Segment => {
  for (let k = segments.length - 1; k > 0; k--) if (ok(segments[k])) return segments[k];
  return segments[0];
};

/**
 * Whether a Continue (with breakpoints that have conditions) that a window shows landing on `f`
 * lands there whatever the conditions read: `f` is no hit of a breakpoint with a condition, or is
 * where the Continue's bound lands (a Step Over's rest). Else only a run that reads them in the
 * program's frame knows.
 */
const unconditioned = (f: Frame, places: readonly SeekPlace[], until?: Bound): boolean => (until !== undefined && reachesBound(f, until)) || !places.some((p) => p.condition !== undefined && breakpointHits(f, p));

/** What a run held at a stop answered to a line of the Debug Console: the state as the line left it (with its callers') and the line's result; else why not, thrown. */
function lineRan(code: string, got: HeldAnswer | SealedResult): { state: Frame; callers?: Frame[]; result: Inspected } {
  if (!("results" in got) || !got.state || !got.results[0]) throw new Error(`"${cutText(code)}" did not finish in the run's time (${"results" in got ? "no answer" : got.exit.status}): nothing of it was kept`);
  return { state: got.state, ...(got.callers ? { callers: got.callers } : {}), result: got.results[0] };
}

/** A seek's landing whose index is to come (LongRunPredictor.landFast). */
const LANDED_FAST = Symbol("landed fast");

const notHeld = (): never => {
  throw new NotHeld();
};

/** What the run printed up to the `upTo`-th state of a window, inclusive (the first state's holds all before it). */
const textOf = (frames: readonly Frame[], upTo: number): string => frames.slice(0, upTo + 1).map((f) => f.stdout ?? "").join("");
const bytesOf = (frames: readonly Frame[], upTo: number): Buffer => Buffer.from(textOf(frames, upTo), "utf8");

export class LongRunPredictor implements Predictor {
  readonly eventByEvent = true;
  /** A Step Over past breakpoints is a bounded Continue (PredictOptions.until): one seek, however deep the breakpoint. */
  readonly bounds = true;
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
  /** The refs' segments, in the run's order (refs are the run's indices in the first). */
  private segments: Segment[] = [{ ref: 0, at: 0 }];
  /** Where the last fast seek landed, until its index is known (placeLanding). */
  private landing?: Landing;
  /** The furthest event a state was given for: a fast seek starts at or past it, so that no ref given lies beyond where it lands. */
  private furthest = 0;

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
    const signal = opts?.signal;
    const held = opts?.held === true;
    const ref = history.at(-1)?.ref;
    const l = this.landing;
    // Back over from where a fast Step Over landed at its own depth: where it began, whose index
    // is known, with no wait for the landing's.
    if (l && ref === l.segment.ref && action.kind === "inv_step_over" && l.back !== undefined && l.window.frames[0].event === "line" && (!held || this.windowOf(l.back))) return this.at(l.back, action, l.back, signal);
    // ... and Step Over from there again: where it landed.
    if (l && l.back !== undefined && ref !== undefined && this.indexNow(ref) === l.back && action.kind === "step_over") return this.landed(action, this.offset(l.back));
    // A move within the window where it landed: over that window, in its refs.
    const within = l && ref !== undefined ? this.withinLanding(l, ref, action, opts) : undefined;
    if (within) return within;
    if (held && l) notHeld();
    await this.placeLanding();
    const from = ref === undefined || !Number.isInteger(ref) || ref < 0 ? undefined : this.indexNow(ref);
    if (from === undefined || (this.end && from > this.end.events)) throw new Error("this state is not one of the run's");
    const places = opts?.breakpoints?.map((b) => ({ line: b.line, ...(b.file !== undefined ? { file: b.file } : {}), ...(b.condition ? { condition: b.condition } : {}) }));
    const w = this.windowOf(from) ?? (held ? notHeld() : await this.fetch(from, signal));
    // (what the run had printed by `from`, read before another window may take its place)
    const before = this.offset(from);
    const to = await this.move(w, from, action, places, held, signal, opts?.until);
    if (to === LANDED_FAST) return this.landed(action, before);
    if (held && !this.windowOf(to) && to !== this.end?.events) notHeld();
    return this.at(to, action, from, signal, before);
  }

  /** The state where a fast seek landed (its ref the first of its segment), with what the run printed since `before` bytes. */
  private landed(action: Action, before: number): Predicted {
    const l = this.landing!;
    return { step: { action, frame: shownFrame(l.window.frames[0], bytesOf(l.window.frames, 0).subarray(before).toString("utf8")) }, ref: l.segment.ref };
  }

  /**
   * `action` from the state `ref` of the window where a fast seek landed, where it lands within
   * that window (no index needed: the window's refs are the segment's first): its state, with what
   * the run printed on the way; else undefined. A Continue whose breakpoints have conditions is a
   * seek (move).
   */
  private withinLanding(l: Landing, ref: number, action: Action, opts?: PredictOptions): Predicted | undefined {
    const w = l.window;
    const end = w.from + w.frames.length;
    if (ref < w.from || ref >= end) return undefined;
    const places = opts?.breakpoints;
    const to = transitionWithin(viewOf(w), ref, action, places, w.from, opts?.until);
    if (to === undefined || to >= end) return undefined;
    if (action.kind === "continue" && places && !unconditioned(w.frames[to - w.from], places, opts?.until)) return undefined;
    l.reached = Math.max(l.reached, to - w.from);
    const text = to > ref ? bytesOf(w.frames, to - w.from).subarray(bytesOf(w.frames, ref - w.from).length).toString("utf8") : undefined;
    return { step: { action, frame: shownFrame(w.frames[to - w.from], text) }, ref: to };
  }

  /** The window that holds the state `ref` names, and its place there: the one where a fast seek landed (at its refs), else a kept one. */
  private located(ref: number): { w: Stretch; k: number } | undefined {
    const landed = this.landing?.window;
    if (landed && ref >= landed.from && ref < landed.from + landed.frames.length) return { w: landed, k: ref - landed.from };
    const i = this.indexNow(ref);
    const w = i === undefined ? undefined : this.holding(i);
    return w && { w, k: i! - w.from };
  }

  /** Where the state `ref` names stands in the window where the last fast seek landed, counted from the landing, while its index is not known. */
  private inLanding(ref: number): number | undefined {
    const l = this.landing;
    const k = l ? ref - l.window.from : -1;
    return l && k >= 0 && k < l.window.frames.length ? k : undefined;
  }

  /** The run's index of the event `ref` names, where known (all are once the landing is placed). */
  private indexNow(ref: number): number | undefined {
    const s = lastOf(this.segments, (x) => x.ref <= ref);
    return s.at === undefined ? undefined : s.at + (ref - s.ref);
  }

  /** The ref of the run's event `i`: in the latest segment that begins at or before it (the landing placed). */
  private refOf(i: number): number {
    const s = lastOf(this.segments, (x) => x.at !== undefined && x.at <= i);
    return s.ref + (i - s.at!);
  }

  /** Where the last fast seek landed is known: its index found by a counting run of its seek, its window then kept as any. */
  private async placeLanding(): Promise<void> {
    const l = this.landing;
    if (!l) return;
    // (one search, whoever asks first; one that failed is asked again the next time)
    l.found ??= this.count(l);
    const { at, behind, before: earlier } = await l.found.catch((e: unknown) => {
      l.found = undefined;
      throw e;
    });
    if (this.landing !== l) return;
    this.landing = undefined;
    l.segment.at = at;
    this.furthest = Math.max(this.furthest, at + l.reached);
    if (l.lines.length) {
      // (lines of the Debug Console were run there: the run's statements from now, as execute keeps them)
      this.statements = [...this.statements, ...l.lines.map((s) => ({ ...s, at: at + s.at }))];
      this.forget();
      this.windows = [{ ...l.window, from: at }];
    } else {
      this.keep(at, l.result);
      this.held = l.held ? { at, values: l.held } : undefined;
    }
    // (the states just before the landing, which no line run there changed, and its window: one
    // window, so that a Step Back from there runs nothing)
    const w = this.windows[0];
    if (earlier && w.from === at) this.windows[0] = { ...w, from: earlier.from, frames: [...earlier.frames, ...w.frames], callers: earlier.callers };
    const before = l.back ?? behind;
    this.behind = before !== undefined ? { at, before } : undefined;
  }

  /**
   * Where `action` leads from event `from` (in window `w`): over the window where it lands there;
   * forwards past it, by a run that seeks where the move lands (semantics.ts's seekOf); back past
   * its start, over a window reaching back from here; else over the run's skeleton.
   */
  private async move(w: Stretch, from: number, action: Action, places: SeekPlace[] | undefined, held: boolean, signal?: AbortSignal, until?: Bound): Promise<number | typeof LANDED_FAST> {
    // A Continue to a breakpoint with a condition is one run that seeks where the condition holds,
    // read in the program's frame as it runs: neither a window nor the skeleton knows which hits
    // stop, and each hit's condition asked apart costs a round trip (a run, past the windows).
    if (action.kind === "continue" && places?.some((p) => p.condition !== undefined)) {
      const to = transitionWithin(viewOf(w), from, action, places, w.from, until);
      if (to !== undefined && to < w.from + w.frames.length && unconditioned(w.frames[to - w.from], places, until)) return to;
      if (held) notHeld();
      return this.seekTo(seekOf(w.frames[from - w.from], from, action, places, until)!, signal);
    }
    const to = transitionWithin(viewOf(w), from, action, places, w.from, until);
    if (to !== undefined && (to < w.from + w.frames.length || w.final)) return to;
    if (this.skeleton) return transition(this.skeleton.places, from, action, places, until);
    if (held) notHeld();
    if (to !== undefined) {
      const here = w.frames[from - w.from];
      if (action.kind === "step_over" && this.behind?.before === from && here?.event !== "return") return this.behind.at;
      const seek = seekOf(here, from, action, places, until);
      if (seek) {
        const at = await this.seekTo(seek, signal);
        // (a Step Over, or a Continue bounded as one: no deeper event lands it)
        const over = here && here.event !== "return" && seek.depth === here.depth;
        if (at === LANDED_FAST) {
          // (Back over from a Step Over landed at its own depth: where it began, as below.)
          const l = this.landing!;
          if (over && l.window.frames[0].depth === here.depth) l.back = from;
          return at;
        }
        // Back over from where a Step Over landed at its own depth: every event between is
        // deeper, so the latest earlier one at that depth is where it began (never a return).
        const lw = this.windowOf(at);
        const landed = lw?.frames[at - lw.from];
        if (over && landed && landed.depth === here.depth) this.behind = { at, before: from };
        return at;
      }
    } else {
      // Back over from where a Continue or a Step Over landed: the seek saw the latest earlier
      // event at its depth (never a return: where backOver lands), so no run looks for it. (Step
      // Over from there again lands where it landed: every event between is deeper, above.)
      if (action.kind === "inv_step_over" && this.behind?.at === from && w.frames[from - w.from]?.event === "line") return this.behind.before >= 0 ? this.behind.before : from - 1;
      if (w.from > this.aroundFrom(from)) {
        const back = await this.fetch(from, signal);
        const t = transitionWithin(viewOf(back), from, action, places, back.from, until);
        if (t !== undefined) return t;
      }
      // Back over a long call: the latest event no deeper than here, looked for by one run.
      if (action.kind === "inv_step_over") return this.backOverFrom(from, w.frames[from - w.from]?.depth ?? -1, signal);
    }
    return transition((await this.sketch(signal)).places, from, action, places, until);
  }

  /** inv_step_over from event `from` (at depth `here`), by a run that looks for the latest earlier event no deeper (semantics.ts's backOver). */
  private async backOverFrom(from: number, here: number, signal?: AbortSignal): Promise<number> {
    const result = await this.runWith({ latest: { before: from, depth: here } }, { maxEvents: this.size }, signal);
    if (!result.window || result.window.latest === undefined) throw new Error(`the run did not say where the move back lands (${endedAs(result)})`);
    return backOver(from, here, result.window.latest ?? undefined);
  }

  /**
   * Runs the program to where a forward move lands, recording a window from there; the exit's
   * index where it lands nowhere. A Continue into what no state was given for yet goes fast
   * (sealed.ts's Window): where it lands is then LANDED_FAST, the landing's index to come.
   */
  private async seekTo(seek: Seek, signal?: AbortSignal): Promise<number | typeof LANDED_FAST> {
    // (a Continue with no breakpoint lands only at the end or where paused, whose index only a counting run has)
    const fast = (!!seek.places?.length || seek.depth !== undefined || seek.returnAt !== undefined) && seek.after >= this.furthest && this.statements.length === 0;
    if (fast) {
      const result = await this.runWith({ seek, fast: true }, { maxEvents: this.size }, signal);
      if (result.window?.fast && result.window.from !== undefined && result.frames.length > 0 && !(result.exit.status === "limit" && result.limit !== "events")) return this.landFast(seek, result);
      // (ran to its end, or was paused, or did not go fast: the exit's index, and any landing's, is a counting run's)
      if (!result.window?.fast) return this.seekLanded(result);
    }
    return this.seekLanded(await this.runWith({ seek }, { maxEvents: this.size }, signal));
  }

  /**
   * A fast seek's landing: a segment of refs of its own, and the same fast seek begun again at
   * once, to be held there for the first expression asked (runTo): its index is not needed for
   * that, only found (placeLanding) when a move or a line of the Debug Console needs it.
   */
  private landFast(seek: Seek, result: SealedResult): typeof LANDED_FAST {
    const segment: Segment = { ref: this.segments.length * SEGMENT };
    this.segments.push(segment);
    // (where the seek saw what is behind the landing, before any event it did not count: an index)
    const back = result.window?.behind;
    // Where it landed because a condition held, at the nth hit of a place, a seek of that place's
    // nth hit lands there again with no condition read (at each hit, a run of Python code in the
    // program's frame): the run held there and the counting one are that seek.
    const hits = result.window?.hits;
    const again: Seek = hits && seek.places?.some((p) => p.condition !== undefined) ? { after: seek.after, places: [hits.place], nth: hits.n } : seek;
    this.landing = { segment, seek: again, window: { from: segment.ref, frames: result.frames, callers: result.callers ?? [] }, ...(result.window?.held ? { held: result.window.held } : {}), result, reached: 0, lines: [], ...(back !== undefined && back >= 0 ? { back } : {}) };
    this.behind = undefined;
    this.held = undefined;
    this.stop.ahead(this.stopKey(segment.ref), (hold) => this.runTo(segment.ref, { expressions: [] }, hold, undefined, true));
    return LANDED_FAST;
  }

  /**
   * The index of where a fast seek landed (and what is behind it), by a counting run of the seek.
   * Where it is a place's nth hit (landFast), the run seeks a hit before it instead, as many hits
   * before as a quarter of the window recorded from the landing holds, and records half a window
   * from there (each state recorded costs about as much as a hundred counted): the landing is the
   * kth hit in it, and the states before it are there for a Step Back (else a run again from the
   * start: a hit rate that changed there, and it seeks the nth hit itself).
   */
  private async count(l: Landing): Promise<Found> {
    const seek = l.seek;
    const timeout = (this.opts.timeout ?? DEFAULT_TIMEOUT_S) * COUNTING_TIME;
    const place = seek.nth !== undefined && seek.places?.length === 1 ? seek.places[0] : undefined;
    const ahead = place ? l.window.frames.slice(1).filter((f) => breakpointHits(f, place)).length : 0;
    const k = place ? Math.min(seek.nth! - 1, Math.floor(ahead / 4)) : 0;
    if (k > 0) {
      const r = await this.runWith({ seek: { ...seek, nth: seek.nth! - k } }, { maxEvents: Math.ceil(this.size / 2), timeout });
      const from = r.window?.from;
      let left = k;
      const j = from === undefined ? -1 : r.frames.findIndex((f, i) => i > 0 && breakpointHits(f, place!) && --left === 0);
      if (j > 0) return { at: from! + j, before: { from: from!, frames: r.frames.slice(0, j), callers: r.callers ?? [] } };
    }
    const r = await this.runWith({ seek }, { maxEvents: 1, timeout });
    if (r.window?.from === undefined) throw new Error(`a counting run did not reach where the move landed (${endedAs(r)}): restart to go on from before it`);
    return { at: r.window.from, ...(r.window.behind !== undefined ? { behind: r.window.behind } : {}) };
  }

  /** Where a counting seek landed (its window kept), or the run's end where it landed nowhere. */
  private seekLanded(result: SealedResult): number {
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
    const ref = this.refOf(at);
    this.stop.ahead(this.stopKey(ref), (hold) => this.runTo(ref, { expressions: [] }, hold, undefined, true));
    return at;
  }

  /**
   * The name of the stop at the state `ref` names for the held run (HeldStop): its ref and the
   * statements that lead there, and the lines run where a fast seek landed, each at its ref (the
   * same name once the landing's index is known and they are statements).
   */
  private stopKey(ref: number, statements = this.statements, lines = this.landing?.lines ?? []): string {
    const from = this.landing?.window.from ?? 0;
    return JSON.stringify([ref, [...statements.map((s) => ({ ...s, at: this.refOf(s.at) })), ...lines.map((s) => ({ ...s, at: from + s.at }))]]);
  }

  /**
   * A run to the state `ref` names, held there (HeldStop) to answer `question`: from its index,
   * or, in the window where a fast seek landed whose index is not known yet, by that seek run
   * fast again (a sealed run is a pure function of its input: it lands on the same event; where
   * lines of the Debug Console were run there, the run is one with them among its statements,
   * from the landing's index). `ahead`: begun before anything is asked there (the sealed child
   * stops it for any request).
   */
  private async runTo(ref: number, question: Expressions, hold: Hold, signal?: AbortSignal, ahead = false): Promise<SealedResult> {
    const l = this.landing;
    const k = this.inLanding(ref);
    if (l && k !== undefined && l.lines.length === 0) return this.runWith({ seek: l.seek, fast: true }, { maxEvents: k + 1, inspect: { landing: k, ...question }, hold, ahead }, signal);
    await this.placeLanding();
    const at = this.indexNow(ref);
    if (at === undefined) throw new Error("this state is not one of the run's");
    return this.runWith({ from: at }, { maxEvents: 1, inspect: { at, ...question }, hold, ahead }, signal);
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
      return { step, ref: this.refOf(to) };
    }
    const w = this.windowOf(to) ?? (await this.fetch(to, signal));
    step.frame = shownFrame(w.frames[to - w.from], printed(() => bytesOf(w.frames, to - w.from), w.frames[to - w.from].stdout));
    this.furthest = Math.max(this.furthest, to);
    return { step, ref: this.refOf(to) };
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
    const at = ref === undefined ? undefined : this.located(ref);
    return at && callersAt(at.w.frames, at.k, at.w.callers);
  }

  /** An expression in the program's frame at this state: by the run held there (HeldStop), else the program runs again up to it and stays there. */
  async inspect(history: readonly Predicted[], expression: string, frame: number, opts?: PredictOptions): Promise<Evaluated | undefined> {
    const last = history.at(-1);
    const ref = last?.ref;
    if (!last?.step.frame || ref === undefined || !this.same(last)) return undefined;
    const question = { expressions: [expression], ...(frame ? { up: frame } : {}) };
    const got = await this.stop.ask(this.stopKey(ref), question, (hold) => this.runTo(ref, question, hold, opts?.signal));
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
    const landing = this.landing;
    const held = landing ? (last?.ref === landing.segment.ref && landing.held && !landing.lines.length ? { values: landing.held } : undefined) : this.held && last?.ref !== undefined && this.indexNow(last.ref) === this.held.at ? this.held : undefined;
    if (!held || !last || !this.same(last) || !expressions.every((e) => held.values.has(e))) return undefined;
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
    const landed = this.landing && history.at(-1)?.ref !== undefined ? await this.atLanding(history.at(-1)!, code, frame, opts?.signal) : undefined;
    if (landed) return landed;
    await this.placeLanding();
    const last = history.at(-1);
    const at = last?.ref === undefined ? undefined : this.indexNow(last.ref);
    if (!last?.step.frame || at === undefined || !this.same(last)) return undefined;
    const kept = this.statements;
    const event = last.step.frame.event;
    if (event === "line" || event === "call") {
      const next = withStatement(kept, at, code, frame);
      const line = { code, ...(frame ? { up: frame } : {}) };
      const got = await this.stop.ask(this.stopKey(last.ref!, kept), line, (hold) => this.runTo(last.ref!, { expressions: [] }, hold, opts?.signal), this.stopKey(last.ref!, next));
      const ran = lineRan(code, got);
      this.statements = next;
      this.forget();
      this.windows = [{ from: at, frames: [ran.state], callers: ran.callers ?? [] }];
      return { state: { step: { ...last.step, frame: ran.state }, ref: last.ref }, result: ran.result };
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
    return { state: { step: { ...last.step, frame: now }, ref: last.ref }, result: mine };
  }

  /**
   * A line of the Debug Console in the window where a fast seek landed, its index not known yet:
   * run by the run held there (the same seek), kept among the landing's lines (placeLanding makes
   * them statements), the window ending at the state as the line left it. Undefined where that
   * cannot be: at a return or an exception (execute), or in a caller's frame past the landing's
   * first state (the window's earlier states would stand for that caller as it was).
   */
  private async atLanding(last: Predicted, code: string, frame: number, signal?: AbortSignal): Promise<RanLine | undefined> {
    const l = this.landing!;
    const ref = last.ref!;
    const k = this.inLanding(ref);
    const event = last.step.frame?.event;
    // (a line after another there is run by the run still held there, else as any: execute)
    if (k === undefined || (event !== "line" && event !== "call") || (frame && k > 0) || (l.lines.length && !this.stop.holds(this.stopKey(ref))) || !this.same(last)) return undefined;
    const lines = withStatement(l.lines, k, code, frame);
    const line = { code, ...(frame ? { up: frame } : {}) };
    const got = await this.stop.ask(this.stopKey(ref), line, (hold) => this.runTo(ref, { expressions: [] }, hold, signal), this.stopKey(ref, this.statements, lines));
    const ran = lineRan(code, got);
    if (this.landing !== l) throw new Error(`"${cutText(code)}" was run while the run moved on: nothing of it was kept`);
    l.lines = lines;
    l.window = { from: l.window.from, frames: [...l.window.frames.slice(0, k), ran.state], callers: k ? l.window.callers : (ran.callers ?? []) };
    return { state: { step: { ...last.step, frame: ran.state }, ref }, result: ran.result };
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
    const at = this.located(state.ref!);
    const recorded = at?.w.frames[at.k];
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
