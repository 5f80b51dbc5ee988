// `eval steps`: debugger actions sampled on each program's real trace; each next state is predicted
//   from the TRUE current state (the model never builds on its own earlier answers) and scored
//   against the state the debugger semantics give, beside two trivial baselines.
//
// Nothing here knows DAP; the CLI (adapter/cli/commands/eval.ts) prints what these functions return.
import { ModelPredictor } from "../predictors/model.js";
import type { ModelDescription } from "../protocol.js";
import { PySourceError } from "../pyread/source.js";
import { transition } from "../real/semantics.js";
import { hash32, Rng, stateAt } from "./sampling.js";
import { TraceBatch } from "../real/hostRun.js";
import { ACTION_KINDS, breakpointCanHit, sameExit, sameFrame, sameLocals, type Action, type ActionKind, type Frame, type Step } from "../format/trajectory.js";
import { traceOf, type Program } from "./programs.js";
import { predictOne, predictorFor, programFile, programFolder, rate, runsSealed, sealedPredictorFor, TRACE_LIMITS, type ModelOptions } from "./predicting.js";
import type { Predicted, Predictor } from "../engine/predictor.js";
import { HybridPredictor } from "../predictors/hybrid.js";
import { reliability, type Rated, type Reliability } from "./reliability.js";

// ---- steps: sampling actions on a real trace ----

/** One sampled action: from trace state `from` (a frame) to `to` (frames.length: the exit). */
export interface EvalCase {
  action: Action;
  from: number;
  to: number;
}


/** The first k of xs in a seeded random order (all of them when there are fewer). */
function choose<T>(rng: Rng, xs: T[], k: number): T[] {
  const a = xs.slice();
  const m = Math.min(k, a.length);
  for (let i = 0; i < m; i++) {
    const j = i + rng.int(a.length - i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, m);
}

/**
 * Up to k cases of every action kind from one trace, each from a state where the action moves
 * (an action that stays put, e.g. any inverse action at the first state, says nothing). States
 * are frames, never the exit: a predictor answers the exit with itself. A breakpoint's line is one
 * the run reaches later (inv_breakpoint: one it reached earlier), so the jump lands on a line;
 * `continue` runs without breakpoints, to the exit, as in training. Seeded by (seed, id, kind):
 * the same cases whatever else is evaluated.
 */
export function sampleCases(frames: readonly Frame[], k: number, seed: number, id: string): EvalCase[] {
  const n = frames.length;
  const out: EvalCase[] = [];
  for (const kind of ACTION_KINDS) {
    const rng = new Rng(hash32(`${seed}:${id}:${kind}`));
    if (kind === "breakpoint" || kind === "inv_breakpoint") {
      const forward = kind === "breakpoint";
      const mains = frames.map((f, i) => (breakpointCanHit(f) ? i : -1)).filter((i) => i >= 0);
      if (!mains.length) continue;
      const states: number[] = [];
      for (let i = 0; i < n; i++) if (forward ? i < mains[mains.length - 1] : i > mains[0]) states.push(i);
      for (const i of choose(rng, states, k)) {
        const lines = [...new Set(mains.filter((j) => (forward ? j > i : j < i)).map((j) => frames[j].line))].sort((a, b) => a - b);
        const action: Action = { kind, line: rng.pick(lines) };
        out.push({ action, from: i, to: transition(frames, i, action, []) });
      }
      continue;
    }
    const action: Action = { kind };
    const states: number[] = [];
    for (let i = 0; i < n; i++) if (transition(frames, i, action, []) !== i) states.push(i);
    for (const i of choose(rng, states, k)) out.push({ action, from: i, to: transition(frames, i, action, []) });
  }
  return out;
}

// ---- steps: scoring ----

export interface Score {
  /** The whole state: position, locals, value, output (sameFrame / sameExit). */
  exact: boolean;
  /** The line (both exits count as the same place). */
  line: boolean;
  /** All locals equal (both exits: nothing to get wrong). */
  locals: boolean;
}

/** A predicted state against the true one; no prediction (an error) scores nothing. */
export function score(pred: Step | undefined, truth: Step): Score {
  if (pred?.exit && truth.exit) return { exact: sameExit(pred.exit, truth.exit), line: true, locals: true };
  if (pred?.frame && truth.frame) {
    const a = pred.frame;
    const b = truth.frame;
    return { exact: sameFrame(a, b), line: a.line === b.line && a.file === b.file, locals: sameLocals(a.locals, b.locals) };
  }
  return { exact: false, line: false, locals: false };
}

/**
 * The trivial prediction: the next line of the same function call, locals unchanged. Scored
 * like a model's answer, its `line` is the "line + 1" baseline, its `locals` the "locals
 * unchanged" baseline, and its `exact` both at once.
 */
export function baselineStep(current: Frame): Step {
  const f: Frame = { event: "line", line: current.line + 1, depth: current.depth, func: current.func, locals: { ...current.locals } };
  if (current.file !== undefined) f.file = current.file;
  return { frame: f };
}

export interface StepsItem {
  id: string;
  action: ActionKind;
  /** The breakpoint line. */
  line?: number;
  from: number;
  to: number;
  exact: boolean;
  lineOk: boolean;
  localsOk: boolean;
  baseline: Score;
  ms: number;
  tokens: number;
  /** The confidence shown for the answer (calibrated where the model has a calibration); absent where none is shown (an error, a state the program decided). */
  confidence?: number;
  /** The answer's token probabilities before calibration (adapter/model/calibration.ts, StateScore). */
  score?: Predicted["score"];
  /** What the model answered (absent on error) and the true state. */
  predicted?: Step;
  truth: Step;
  error?: string;
}

export interface ActionFigures {
  count: number;
  exact: number | null;
  line: number | null;
  locals: number | null;
  /** "line + 1" (line), "locals unchanged" (locals), both together (exact). */
  baseline: { exact: number | null; line: number | null; locals: number | null };
  /** Answers that were no state of the program (counted as wrong). */
  errors: number;
  msPerPrediction: number | null;
  tokens: number;
  tokensPerPrediction: number | null;
}

export interface StepsReport {
  model: ModelDescription | null;
  seed: number;
  actionsPerProgram: number;
  /** Programs predicted at once. */
  concurrency: number;
  programs: { total: number; evaluated: number; skipped: Record<string, number> };
  actions: Record<ActionKind, ActionFigures>;
  overall: ActionFigures;
  /** The cases whose true next state is an exception being raised or the run's error exit. */
  exceptions: ActionFigures;
  /**
   * Reliability tables over the answers that have a confidence: `shown`, the confidence the
   * debugger shows (calibrated where the model has a calibration, `model.calibration`); `raw`, the
   * mean probability of the answer's tokens, which is what was shown before calibration.
   */
  reliability: { shown: Reliability; raw: Reliability };
  time: { totalMs: number; traceMs: number; predictMs: number; loadMs: number };
  /** Prompt tokens evaluated (not found in the context cache), over all predictions. */
  evaluatedTokens: number;
  items: StepsItem[];
}

/** Whether a true next state is an exception being raised (an exception event) or the error exit. */
const raising = (s: Step): boolean => s.frame?.event === "exception" || s.exit?.status === "error";

/** The figures of a set of scored items. */
export function figures(items: readonly StepsItem[]): ActionFigures {
  const n = items.length;
  const count = (f: (x: StepsItem) => boolean): number => items.filter(f).length;
  const ms = items.reduce((s, x) => s + x.ms, 0);
  const tokens = items.reduce((s, x) => s + x.tokens, 0);
  return {
    count: n,
    exact: rate(count((x) => x.exact), n),
    line: rate(count((x) => x.lineOk), n),
    locals: rate(count((x) => x.localsOk), n),
    baseline: { exact: rate(count((x) => x.baseline.exact), n), line: rate(count((x) => x.baseline.line), n), locals: rate(count((x) => x.baseline.locals), n) },
    errors: count((x) => x.error !== undefined),
    msPerPrediction: n ? ms / n : null,
    tokens,
    tokensPerPrediction: n ? tokens / n : null,
  };
}

export interface StepsOptions extends ModelOptions {
  /** Cases per action kind per program (default 1). */
  actionsPerProgram?: number;
  seed?: number;
  /** Programs predicted at once (default 1): for a model server, which batches them (`ndbg eval steps --concurrency`). */
  concurrency?: number;
}

/** The reliability tables of a run's items (see StepsReport.reliability). */
export function reliabilityOf(items: readonly StepsItem[]): StepsReport["reliability"] {
  const shown: Rated[] = [];
  const raw: Rated[] = [];
  for (const x of items) {
    if (x.confidence !== undefined) shown.push({ confidence: x.confidence, exact: x.exact });
    if (x.score) raw.push({ confidence: x.score.mean, exact: x.exact });
  }
  return { shown: reliability(shown), raw: reliability(raw) };
}

/**
 * The true state as the predictor's history: as it is for the model; for a sealed run, the same
 * state of its own recording (`ref`: at the same index, else its first occurrence), none where the
 * sealed run never reaches it (another Python version's frames, a program that reads the clock).
 */
function fromState(p: Predictor, current: Step, frame: Frame, index: number): Predicted | undefined {
  if (!(p instanceof HybridPredictor)) return { step: current };
  const frames = p.frames;
  const same = (f: Frame | undefined): boolean => f !== undefined && sameFrame({ ...f, stdout: undefined }, { ...frame, stdout: undefined });
  const ref = same(frames[index]) ? index : frames.findIndex(same);
  return ref < 0 ? undefined : { step: current, ref };
}

/**
 * `eval steps`: every program traced for real, actions sampled on its trace (sampleCases), each
 * predicted from the true current state alone (the history is that one state, written in full,
 * as a training window may open) and scored against the true next state.
 */
export async function evalSteps(programs: readonly Program[], opts: StepsOptions = {}): Promise<StepsReport> {
  const k = opts.actionsPerProgram ?? 1;
  const seed = opts.seed ?? 0;
  const t0 = performance.now();
  const batch = new TraceBatch({ ...TRACE_LIMITS, ...(opts.python ? { python: opts.python } : {}) });
  const skipped: Record<string, number> = {};
  const skip = (why: string): void => void (skipped[why] = (skipped[why] ?? 0) + 1);
  const items: StepsItem[] = [];
  let model = null as ModelDescription | null; // set in the workers below
  let traceMs = 0;
  let predictMs = 0;
  let evaluatedTokens = 0;
  let evaluated = 0;
  const sealed = runsSealed(opts) ? await programFolder() : undefined;
  /** Each program's items, in the programs' order whatever order they finish in. */
  const byProgram: StepsItem[][] = programs.map(() => []);
  let finished = 0;
  const one = async (prog: Program, out: StepsItem[]): Promise<void> => {
    const t1 = performance.now();
    const file = sealed && (await programFile(prog, sealed.dir));
    const run = await batch.trace(file ? { ...traceOf(prog), program: file } : traceOf(prog));
    traceMs += performance.now() - t1;
    if (run.exit.status === "limit") skip(`limit:${run.limit ?? "?"}`);
    else if (!run.frames.length) skip("no-frames");
    else {
      const cases = sampleCases(run.frames, k, seed, prog.id);
      let predictor: Predictor | undefined;
      try {
        predictor = file ? await sealedPredictorFor(prog, opts, file) : await predictorFor(prog, opts);
      } catch (e) {
        if (!(e instanceof PySourceError)) throw e;
        skip("unparsed");
      }
      if (predictor) {
        if (predictor instanceof ModelPredictor) model ??= predictor.describe();
        evaluated++;
        try {
          for (const c of cases) {
            const current = stateAt(run, c.from, c.from);
            const truth = stateAt(run, c.to, c.from, c.action);
            const from = fromState(predictor, current, run.frames[c.from], c.from);
            const r = from
              ? await predictOne(predictor, [from], c.action)
              : { error: "the sealed run never reaches this state", ms: 0, tokens: 0, evaluated: 0 };
            predictMs += r.ms;
            evaluatedTokens += r.evaluated;
            const s = score(r.step, truth);
            const item: StepsItem = {
              id: prog.id,
              action: c.action.kind,
              from: c.from,
              to: c.to,
              exact: s.exact,
              lineOk: s.line,
              localsOk: s.locals,
              baseline: score(baselineStep(current.frame!), truth),
              ms: r.ms,
              tokens: r.tokens,
              truth,
            };
            if (c.action.line !== undefined) item.line = c.action.line;
            if (r.confidence !== undefined) item.confidence = r.confidence;
            if (r.score) item.score = r.score;
            if (r.step) item.predicted = r.step;
            if (r.error !== undefined) item.error = r.error;
            out.push(item);
          }
        } finally {
          await predictor.dispose();
        }
      }
    }
    opts.onProgress?.(++finished, programs.length, prog.id);
  };
  try {
    // `concurrency` programs at once (a model server batches their requests); each program's cases in order.
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < programs.length) {
        const i = next++;
        await one(programs[i], byProgram[i]);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 1, programs.length)) }, worker));
  } finally {
    await batch.close();
    await sealed?.done();
  }
  items.push(...byProgram.flat());
  const actions = Object.fromEntries(ACTION_KINDS.map((a) => [a, figures(items.filter((x) => x.action === a))])) as Record<ActionKind, ActionFigures>;
  return {
    model,
    seed,
    actionsPerProgram: k,
    concurrency: Math.max(1, opts.concurrency ?? 1),
    programs: { total: programs.length, evaluated, skipped },
    actions,
    overall: figures(items),
    exceptions: figures(items.filter((x) => raising(x.truth))),
    reliability: reliabilityOf(items),
    time: { totalMs: performance.now() - t0, traceMs, predictMs, loadMs: model?.loadMs ?? 0 },
    evaluatedTokens,
    items,
  };
}
