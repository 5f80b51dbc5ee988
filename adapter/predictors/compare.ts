// Compare mode: the prediction beside the real program under debugpy, step for step. The real side
// (compareReal.ts) follows every action with the same debugger semantics as the prediction, and
// each predicted state is paired with the real state that action reaches (comparePairs.ts).
//
// Resync: with `resync` (or the ndbg/resync request) a mismatching predicted state is replaced
// by the real one, so each step is predicted from the true state (per-step accuracy); without it
// the prediction runs free (horizon accuracy: how many steps until the first divergence). The
// replacement is an edit of the engine's current state, which every view reads; the pairs keep
// each prediction as it was made, so the figures (and a saved session) score the predictor either way.
import type { Predicted, PredictOptions, Predictor } from "../engine/predictor.js";
import { FORMAT_VERSION, type Action, type Frame, type Step, type Trajectory } from "../format/trajectory.js";
import type { Agreement, CompareSnapshot, Observable, PairView, StateView } from "../protocol.js";
import { RealSide, errorMessage, type RealState } from "./compareReal.js";
import { isAbort } from "../system/abort.js";
import { agreementOf, checkPair, describeAgreement, describeDifference, stateLabel, type Pair } from "./comparePairs.js";

// ---------------------------------------------------------------------------------------------
// The compare predictor: the prediction, with the real side beside it

/** A state as the `ndbg/compare` snapshot shows it (its shape: adapter/protocol.ts). */
function stateView(s: Step, real?: RealState): StateView {
  const v: StateView = s.frame
    ? { kind: "frame", event: s.frame.event, line: s.frame.line, func: s.frame.func, depth: s.frame.depth, locals: { ...s.frame.locals }, label: stateLabel(s) }
    : { kind: "exit", status: s.exit!.status, label: stateLabel(s) };
  if (s.frame?.file !== undefined) v.file = s.frame.file;
  const value = s.frame?.value ?? s.exit?.value;
  if (value !== undefined) v.value = value;
  if (real) {
    v.label = stateLabel(s, real.unobserved);
    v.origin = real.origin;
    if (real.unobserved.length) v.unobserved = [...real.unobserved];
    if (real.note) v.note = real.note;
    if (real.origin === "cut") v.label = "no real state";
  }
  return v;
}

export interface CompareOptions {
  resync: boolean;
  program: string;
  call?: string;
}

/**
 * A predictor that is the inner predictor (model or recording) with the real program beside it.
 * Each prediction sets the real side after the same action (with the session's breakpoints,
 * conditions included); when the engine settles at the user action's last state, the real
 * side's target is awaited and made current, and the two states are paired. A
 * resync is the real state handed to the engine to stand at, so the engine's history holds what
 * every view shows; a model predicts on from that history, a recording, which cannot predict
 * from edited states, replays on from its own.
 */
export class ComparePredictor implements Predictor {
  readonly source: string;
  readonly pairs: Pair[] = [];
  /** What the inner predictor produced (or was started from) at each history index. */
  private produced: Predicted[] = [];
  /** The user action in progress: where the real side's move leads, and when its first prediction began. */
  private going?: { real: Promise<number>; t0: number };
  /** The real side's moves, one at a time (a move whose prediction failed may still be running). */
  private realQueue: Promise<unknown> = Promise.resolve();
  private endNoted = false;
  private earlyNoted = false;
  /** Messages for the debug console, emptied by reading. */
  private notes: string[] = [];

  constructor(readonly inner: Predictor, readonly real: RealSide, readonly opts: CompareOptions) {
    this.source = inner.source;
  }

  // ---- Predictor ----

  get editRefusal(): string | undefined {
    return undefined; // the predicted side can always be edited here; a recording then replays on
  }

  async start(opts?: PredictOptions): Promise<Predicted> {
    const p = await this.inner.start(opts);
    this.produced = [p];
    return p;
  }

  /**
   * The real side looks for where the same action leads while the inner predictor works. Asked
   * again within one action (a continue passing a hit whose condition is false), it answers the
   * same target: the real side moves on only when settle commits it.
   */
  async predict(history: readonly Predicted[], action: Action, opts?: PredictOptions): Promise<Predicted> {
    const real = this.realQueue.then(() => this.real.follow(action, opts?.breakpoints ?? [], opts?.signal));
    this.realQueue = real.catch(() => undefined);
    this.going = { real, t0: this.going?.t0 ?? Date.now() };
    try {
      const p = await this.inner.predict(this.forInner(history), action, opts);
      this.produced[history.length] = p;
      this.produced.length = history.length + 1;
      return p;
    } catch (e) {
      this.going = undefined; // the action failed: the engine stays where it was, and so does the real side
      throw e;
    }
  }

  /**
   * Pairs the state the session stopped at with the real one (a failed prediction left the real
   * side where it was: what it ran ahead stays known). Answers the real state when it resyncs.
   */
  async settle(history: readonly Predicted[]): Promise<Predicted | undefined> {
    const index = history.length - 1;
    const predicted = history[index];
    if (!this.pairs.length) return this.resynced(this.record("start", 0, predicted, this.real.current, this.real.lastMs, predicted.ms ?? 0));
    const going = this.going;
    if (!going) return undefined; // nothing was predicted: nothing moved
    this.going = undefined;
    const predictedMs = Date.now() - going.t0;
    let j: number;
    try {
      j = await going.real;
    } catch (e) {
      if (!isAbort(e)) throw e;
      // The prediction got there, the real program did not: it cannot be kept in step any more.
      j = await this.real.abandon("the real program was paused before it reached this step");
    }
    const real = this.real.commit(j);
    const action = predicted.step.action;
    const label = action ? (action.kind === "breakpoint" ? `breakpoint ${action.line}` : action.kind) : "step";
    return this.resynced(this.record(label, index, predicted, real, this.real.lastMs, predictedMs));
  }

  callers(history: readonly Predicted[]): Frame[] | undefined {
    return this.inner.callers?.(this.forInner(history));
  }

  async evaluate(history: readonly Predicted[], expression: string, opts?: PredictOptions): Promise<string | undefined> {
    return this.inner.evaluate?.(this.forInner(history), expression, opts);
  }

  async dispose(): Promise<void> {
    await Promise.allSettled([this.inner.dispose(), this.real.dispose()]);
  }

  // ---- the session's side ----

  /** The predicted state was edited (setVariable): its pair is checked again. */
  edited(predicted: Predicted, index: number): void {
    const pair = this.pairs.at(-1);
    if (!pair || pair.historyIndex !== index) return;
    pair.predicted = predicted.step;
    pair.check = checkPair(predicted.step, pair.real);
    pair.edited = true;
    pair.resynced = false;
    this.notes.push(`compare · step ${pair.index} (edited): ${describeDifference(pair)} · ${describeAgreement(this.agreement())}`);
  }

  /** The real state to stand at instead of the current predicted one (for the engine's edit); the reason there is none, as an Error. */
  resync(): { pair: Pair; state: Predicted } {
    const pair = this.pairs.at(-1);
    if (!pair) throw new Error("nothing to resync yet");
    this.resyncPair(pair);
    return { pair, state: this.resynced(pair)! };
  }

  /** Console messages since the last call. */
  takeNotes(): string[] {
    const n = this.notes;
    this.notes = [];
    return n;
  }

  agreement(): Agreement {
    return agreementOf(this.pairs, this.opts.resync ? "resync" : "free");
  }

  snapshot(): CompareSnapshot {
    const history = this.pairs.map((p) => this.view(p));
    const a = this.agreement();
    const last = this.real.current;
    return {
      mode: a.mode,
      current: history.at(-1) ?? null,
      history,
      firstDivergence: a.firstDivergence,
      agreement: a,
      real: { python: this.real.python, ended: this.real.ended, ...(last.note ? { note: last.note } : {}) },
    };
  }

  /**
   * Both sides as trajectories, predicted first: the session's (the engine's history) with each
   * resynced state back as it was predicted (the engine stood at the real one), so a saved
   * session scores the predictor; then the real side.
   */
  sides(session: (meta: Record<string, unknown>) => Trajectory, meta: Record<string, unknown>): [Trajectory, Trajectory] {
    const paired = this.pairs.map((p) => p.historyIndex);
    const resynced = this.pairs.filter((p) => p.resynced).map((p) => p.historyIndex);
    const predicted = session({ ...meta, side: "predicted", resync: this.opts.resync, paired, resynced });
    for (const p of this.pairs) if (p.resynced && p.historyIndex < predicted.steps.length) predicted.steps[p.historyIndex] = p.predicted;
    return [predicted, this.realTrajectory(meta)];
  }

  /** The real side as a trajectory: one step per user action, to the first end. */
  private realTrajectory(meta: Record<string, unknown> = {}): Trajectory {
    const steps: Step[] = [];
    const unobserved: Record<string, Observable[]> = {};
    for (const p of this.pairs) {
      const s = p.real.step;
      const step: Step = p.index === 0 ? {} : { action: actionOf(p.action) };
      if (s.frame) step.frame = { ...s.frame, locals: { ...s.frame.locals } };
      else step.exit = { ...s.exit! };
      if (p.real.unobserved.length) unobserved[String(steps.length)] = [...p.real.unobserved];
      steps.push(step);
      if (s.exit) break;
    }
    const m: Record<string, unknown> = { ...meta, side: "real", debugger: "debugpy" };
    if (Object.keys(unobserved).length) m.unobserved = unobserved;
    return { version: FORMAT_VERSION, meta: m, source: this.source, steps };
  }

  // ---- internals ----

  private record(action: string, historyIndex: number, predicted: Predicted, real: RealState, realMs: number, predictedMs: number): Pair {
    const pair: Pair = { index: this.pairs.length, action, historyIndex, predicted: predicted.step, real, check: checkPair(predicted.step, real), resynced: false, edited: false, realMs, predictedMs };
    this.pairs.push(pair);
    if (real.step.exit && !this.endNoted) {
      this.endNoted = true;
      this.notes.push(realEndNote(real));
    }
    // A prediction that the program ended where the real one goes on: the session follows the real
    // program to its end, as debugpy would (it stands at each real state, resynced), and each step's
    // prediction is still made and paired.
    const endedEarly = predicted.step.exit !== undefined && real.step.frame !== undefined;
    if (endedEarly && !this.earlyNoted) {
      this.earlyNoted = true;
      this.notes.push("The prediction says the program ended here; the real program goes on: the session follows it to its end, each step still predicted and compared.");
    }
    if ((this.opts.resync || endedEarly) && pair.check && !pair.check.exact && real.step.frame) this.resyncPair(pair);
    return pair;
  }

  private resyncPair(pair: Pair): void {
    const real = pair.real;
    if (!real.step.frame) throw new Error(real.origin === "cut" ? `there is no real state to resync to (${real.note})` : "the real program has ended: there is no state to resync to");
    pair.resynced = true;
  }

  /**
   * A resynced pair's state to stand at: the real frame, with what debugpy did not observe as
   * predicted, the real locals in the predicted order where the names are the same, and the
   * prediction's output (already the session's). Known, not guessed: `given`.
   */
  private resynced(pair: Pair): Predicted | undefined {
    const rf = pair.real.step.frame;
    if (!pair.resynced || !rf) return undefined;
    const pf = pair.predicted.frame;
    const { stdout: _, ...real } = rf;
    const frame: Frame = real;
    const names = [...Object.keys(pf?.locals ?? {}).filter((k) => k in rf.locals), ...Object.keys(rf.locals).filter((k) => !(k in (pf?.locals ?? {})))];
    frame.locals = Object.fromEntries(names.map((k) => [k, rf.locals[k]]));
    const unobserved = pair.real.unobserved;
    if (pf) {
      if (unobserved.includes("locals")) frame.locals = { ...pf.locals };
      if (unobserved.includes("line")) frame.line = pf.line;
      if (unobserved.includes("value") && pf.value !== undefined) frame.value = pf.value;
      if (pf.stdout !== undefined) frame.stdout = pf.stdout;
    }
    const step: Step = pair.predicted.action ? { action: pair.predicted.action, frame } : { frame };
    const state: Predicted = { ...(this.produced[pair.historyIndex] ?? {}), step, given: true };
    delete state.confidence;
    return state;
  }

  /** The history as the inner predictor should see it: the session's (edits and resyncs) for a model, its own states for a recording. */
  private forInner(history: readonly Predicted[]): readonly Predicted[] {
    if (this.inner.editRefusal === undefined) return history;
    return history.map((h, i) => this.produced[i] ?? h);
  }

  private view(p: Pair): PairView {
    return {
      index: p.index,
      action: p.action,
      predicted: stateView(p.predicted),
      real: stateView(p.real.step, p.real),
      check: p.check ?? null,
      resynced: p.resynced,
      edited: p.edited,
      realMs: p.realMs,
      predictedMs: p.predictedMs,
    };
  }
}

function actionOf(label: string): Action {
  const m = /^breakpoint (\d+)$/.exec(label);
  if (m) return { kind: "breakpoint", line: Number(m[1]) };
  return { kind: label as Action["kind"] };
}

function realEndNote(real: RealState): string {
  if (real.origin === "cut") return `The real program's side has ended: ${real.note ?? "it was cut off"}. The prediction goes on.`;
  const e = real.step.exit!;
  if (e.status === "normal") return "The real program exited normally.";
  return `The real program ended with an error${e.value ? `: ${e.value}` : ""}.`;
}

/** Starts compare mode: the real side under debugpy, and the inner predictor (made with that Python). */
export async function startComparison(
  opts: { program: string; call?: string; python: string; cwd?: string; timeout: number; maxRepr: number; maxSteps: number; resync: boolean },
  inner: Promise<Predictor>,
  signal?: AbortSignal,
): Promise<ComparePredictor> {
  const [realR, innerR] = await Promise.allSettled([
    RealSide.start({ python: opts.python, program: opts.program, call: opts.call, cwd: opts.cwd, timeout: opts.timeout, maxRepr: opts.maxRepr, maxMoves: Math.min(opts.maxSteps, 1000) }, signal),
    inner,
  ]);
  if (realR.status === "rejected" || innerR.status === "rejected") {
    if (realR.status === "fulfilled") await realR.value.dispose();
    if (innerR.status === "fulfilled") await innerR.value.dispose();
    const e = realR.status === "rejected" ? realR.reason : (innerR as PromiseRejectedResult).reason;
    throw realR.status === "rejected" ? new Error(`The real debugger could not start: ${errorMessage(e)}`) : e;
  }
  return new ComparePredictor(innerR.value, realR.value, { resync: opts.resync, program: opts.program, call: opts.call });
}
