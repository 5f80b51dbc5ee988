// Whether a state stops a run at a breakpoint: the line breakpoints it hits, each stopping
// where its condition holds over the state's values and its hit condition over its hits so far
// (counted along the path to the state, as debugpy counts them), log points written rather than
// stopped at; and a data breakpoint's condition and hit condition where a watched value changes
// (adapter/engine/watches.ts). The engine's moves ask this at each state they pass; conditions
// and counts are kept per state, since reverse continue and hit counts read the same states again.
import { breakpointHits, type Frame } from "../format/trajectory.js";
import { cutText, type ValueResult } from "../format/values.js";
import { parseHitCondition } from "./breakpoints.js";
import type { BreakpointSpec as PredictorBreakpoint, Predicted } from "./predictor.js";
import { WatchTracker, type DataBreakpoint, type DataHit, type Watch } from "./watches.js";

/** A breakpoint as the engine keeps it: predictors read the line and condition (adapter/engine/breakpoints.ts says what the rest means). */
export interface BreakpointSpec extends PredictorBreakpoint {
  /** Which hits (where the condition holds) stop, counted along the history: "3", ">= 2", "% 2". */
  hitCondition?: string;
  /** A log point: where it is hit this message is written, with {expressions} evaluated, and it does not stop. */
  logMessage?: string;
}

/** The session's breakpoints, and whether a state of a run stops at one. */
export class BreakpointStops {
  /** The line breakpoints and log points, as the engine set them. */
  breakpoints: BreakpointSpec[] = [];
  /** The conditions of the data breakpoints that have any, by watch. */
  dataBreakpoints = new Map<Watch, DataBreakpoint>();
  /** Hits of each breakpoint up to a state of the history (memo of hitCount). */
  private hitMemo = new WeakMap<Predicted, Map<BreakpointSpec, number>>();
  /** Each expression's value over a state's names, evaluated once (conditions are read again by hit counts and reverse continue). */
  private valueMemo = new WeakMap<Predicted, Map<string, ValueResult>>();

  /**
   * `evaluate`: expressions' values at the last state of a path (a history up to that state):
   * the engine's, in the program's frame where a run holds it, else over the state's values
   * (rejecting as soon as a move's signal aborts); `note`: tells the user something (a condition
   * that could not be evaluated).
   */
  constructor(
    private readonly evaluate: (path: readonly Predicted[], expressions: readonly string[], signal?: AbortSignal) => Promise<ValueResult[]>,
    private readonly note: (msg: string) => void,
  ) {}

  /** The history changed before its end (a state put into it): hit counts along it are counted again. */
  forgetHits(): void {
    this.hitMemo = new WeakMap();
  }

  /**
   * Whether a watched value's change (hit), first seen at the end of `path` (the run as the
   * session has followed it to there), stops a run: its breakpoint's condition holds there and,
   * with its changes so far where the condition held (counted along `path`, as a line
   * breakpoint's hits are), its hit condition.
   */
  async dataFires(path: readonly Predicted[], hit: DataHit, signal?: AbortSignal): Promise<boolean> {
    const bp = this.dataBreakpoints.get(hit.watch);
    if (!bp) return true;
    const what = `of the data breakpoint on ${hit.watch.path}`;
    const last = path.length - 1;
    if (bp.condition && !(await this.conditionHolds(bp.condition, what, path, last, true, signal))) return false;
    if (!bp.hitCondition) return true;
    const seen = new WatchTracker([hit.watch]);
    let n = 0;
    for (let k = 0; k <= last; k++) if (seen.forward(path[k]).length && (!bp.condition || (await this.conditionHolds(bp.condition, what, path, k, false, signal)))) n++;
    return parseHitCondition(bp.hitCondition)(n);
  }

  /** Breakpoints that a state hits: line events on a breakpoint's line, in its file. */
  hits(f: Frame | undefined): BreakpointSpec[] {
    return f ? this.breakpoints.filter((b) => breakpointHits(f, b)) : [];
  }

  /** Whether state path[i] stops a run: a breakpoint (not a log point) hit there whose condition and hit condition hold. */
  async stopsAt(path: readonly Predicted[], i: number, signal?: AbortSignal): Promise<boolean> {
    for (const b of this.hits(path[i].step.frame)) if (b.logMessage === undefined && (await this.fires(path, i, b, signal))) return true;
    return false;
  }

  /** Whether breakpoint `b`, hit at path[i], counts there: its condition holds and, with the hit count so far, its hit condition. */
  async fires(path: readonly Predicted[], i: number, b: BreakpointSpec, signal?: AbortSignal): Promise<boolean> {
    if (!(await this.holds(b, path, i, true, signal))) return false;
    return !b.hitCondition || parseHitCondition(b.hitCondition)(await this.hitCount(path, i, b, signal));
  }

  /** Expressions evaluated at path[i] (in its frame where a run holds it, else over its locals and globals), each once per state. */
  async valuesAt(path: readonly Predicted[], i: number, expressions: readonly string[], signal?: AbortSignal): Promise<ValueResult[]> {
    let memo = this.valueMemo.get(path[i]);
    if (!memo) this.valueMemo.set(path[i], (memo = new Map()));
    const fresh = [...new Set(expressions.filter((e) => !memo!.has(e)))];
    if (fresh.length) {
      let results: ValueResult[];
      try {
        results = await this.evaluate(path.slice(0, i + 1), fresh, signal);
      } catch (e) {
        signal?.throwIfAborted();
        // (no evaluator to be had here: a condition then stops, as one that cannot be evaluated does, and says why)
        results = fresh.map(() => ({ error: e instanceof Error ? e.message : String(e) }));
      }
      fresh.forEach((e, k) => memo!.set(e, results[k]));
    }
    return expressions.map((e) => memo!.get(e)!);
  }

  /** Whether `b`'s condition holds at path[i] (or it has none, or it cannot be evaluated: then with a note, when `tell`). */
  private holds(b: BreakpointSpec, path: readonly Predicted[], i: number, tell: boolean, signal?: AbortSignal): Promise<boolean> {
    return b.condition ? this.conditionHolds(b.condition, `on line ${b.line}`, path, i, tell, signal) : Promise.resolve(true);
  }

  /** Whether `condition` (the breakpoint's `what`: "on line 4") holds at path[i]; one that cannot be evaluated holds, with a note when `tell`. */
  private async conditionHolds(condition: string, what: string, path: readonly Predicted[], i: number, tell: boolean, signal?: AbortSignal): Promise<boolean> {
    const [r] = await this.valuesAt(path, i, [condition], signal);
    if (!("error" in r) && r.truth !== undefined) return r.truth;
    if (tell) this.note(`breakpoint condition "${cutText(condition)}" ${what} could not be evaluated (${"error" in r ? r.error : "its truth could not be told"}); stopping there`);
    return true;
  }

  /** How many times `b` has been hit (with its condition holding) along the path up to path[i], path[i] included. */
  private async hitCount(path: readonly Predicted[], i: number, b: BreakpointSpec, signal?: AbortSignal): Promise<number> {
    let k = i;
    while (k >= 0 && this.hitMemo.get(path[k])?.get(b) === undefined) k--;
    let n = k >= 0 ? this.hitMemo.get(path[k])!.get(b)! : 0;
    for (let j = k + 1; j <= i; j++) {
      const f = path[j].step.frame;
      if (f && this.hits(f).includes(b) && (await this.holds(b, path, j, false, signal))) n++;
      let memo = this.hitMemo.get(path[j]);
      if (!memo) this.hitMemo.set(path[j], (memo = new Map()));
      memo.set(b, n);
    }
    return n;
  }
}
