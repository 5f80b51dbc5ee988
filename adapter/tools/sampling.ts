// Training examples from a real trace: debugger sessions sampled with a stochastic action policy
// (mostly step_into / step_over, with step_return, breakpoint and continue jumps, and the
// inverse actions), each answered by the debugger semantics over the recording, and written only
// by the trajectory serializer. An example is the program, then a window of one session: its
// first state is context, written in full; every state an action leads to is a target, which the
// model learns to predict from everything before it.
//
// The inverse call: an example may open on a return with its locals removed, and the first action
// is inv_step_return, whose target is the call with its arguments: the model learns to infer a
// function's inputs from its code and its return value (input prediction).
import { transition } from "../real/semantics.js";
import {
  ACTION_KINDS,
  FORMAT_VERSION,
  normalizeSource,
  serialize,
  serializeHead,
  serializeStep,
  breakpointCanHit,
  type Action,
  type ActionKind,
  type Frame,
  type Step,
  type Recording,
  type Trajectory,
} from "../format/trajectory.js";

/** A recorded run, as the tracer returns it. */
/** What an example's header says besides the format: the Python version, where known. */
const headerOf = (run: Recording): { python?: string } => (run.python ? { python: run.python } : {});

export type Mix = Record<ActionKind, number>;

/** Action weights: mostly single steps, some jumps, some steps backwards. */
export const DEFAULT_MIX: Readonly<Mix> = {
  step_into: 0.4,
  step_over: 0.26,
  step_return: 0.06,
  breakpoint: 0.08,
  continue: 0.03,
  inv_step_into: 0.06,
  inv_step_over: 0.06,
  inv_step_return: 0.03,
  inv_breakpoint: 0.02,
};

export interface SampleOptions {
  /** Action weights (any scale; missing kinds weigh 0 when a mix is given). Default DEFAULT_MIX. */
  mix?: Partial<Mix>;
  /** Longest example text, in characters (default 2400). */
  maxChars?: number;
  /** Most actions in one example (default 48). */
  maxSteps?: number;
  /** Chance that a window opens at the first state, as a session does (default 0.35); else anywhere. */
  fromStart?: number;
  /** Chance that an example is an inverse call (default 0.15), where the trace has a return. */
  inverseCall?: number;
  /** Chance of going on backwards once the exit is reached (default 0.4). */
  afterExit?: number;
}

/** One training example. */
export interface Sample {
  text: string;
  /** Character spans [start, end) of the target states: each frame or exit an action led to, without its newline. */
  targets: [number, number][];
  /** The actions taken, in order (one per target). */
  actions: Action[];
  /** Trace index of every state written (frames.length: the exit); refs[0] is the context. */
  refs: number[];
  /** Whether the context state is a return with its locals removed (the inverse call). */
  inverseCall: boolean;
}

/** Sampled too little: a trace with no frame, or a program too long for the budget. */
export class SampleError extends Error {}

// ---- seeded randomness ----

/** A small seeded generator (mulberry32): the same seed gives the same examples everywhere. */
export class Rng {
  private s: number;
  constructor(seed: number | string) {
    this.s = typeof seed === "number" ? seed >>> 0 : hash32(seed);
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** FNV-1a, to derive a program's seed from the run's seed and its id. */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// ---- the policy ----

/** The mix in full, checked: weights are finite and non-negative, and some are positive. */
export function resolveMix(mix?: Partial<Mix>): Mix {
  const out = {} as Mix;
  for (const k of ACTION_KINDS) {
    const w = mix ? (mix[k] ?? 0) : DEFAULT_MIX[k];
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) throw new RangeError(`the weight of ${k} must be a non-negative number, got ${w}`);
    out[k] = w;
  }
  if (mix) for (const k of Object.keys(mix)) if (!(ACTION_KINDS as readonly string[]).includes(k)) throw new RangeError(`unknown action "${k}" in the mix (actions: ${ACTION_KINDS.join(", ")})`);
  if (!ACTION_KINDS.some((k) => out[k] > 0)) throw new RangeError("the action mix gives every action weight 0");
  return out;
}

/** Draws an action kind from the mix, restricted to `allowed` kinds. Undefined when none of them weighs anything. */
export function drawKind(rng: Rng, mix: Mix, allowed: (k: ActionKind) => boolean = () => true): ActionKind | undefined {
  let total = 0;
  for (const k of ACTION_KINDS) if (allowed(k)) total += mix[k];
  if (total <= 0) return undefined;
  let x = rng.next() * total;
  let last: ActionKind | undefined;
  for (const k of ACTION_KINDS) {
    if (!allowed(k) || mix[k] <= 0) continue;
    last = k;
    x -= mix[k];
    if (x < 0) return k;
  }
  return last;
}

const isInverse = (k: ActionKind): boolean => k.startsWith("inv_");

/**
 * The target line of a breakpoint: mostly a line the run reaches later (so the jump lands
 * somewhere), sometimes any line the run executes (which may lie behind: then it runs to the
 * exit, as a breakpoint that is never hit does). inv_breakpoint mirrors it backwards.
 */
function breakpointLine(rng: Rng, frames: readonly Frame[], i: number, inverse: boolean, lines: readonly number[]): number | undefined {
  if (!lines.length) return undefined;
  if (rng.chance(0.8)) {
    const cands: number[] = [];
    if (inverse) {
      for (let k = Math.min(i, frames.length) - 1; k >= 0; k--) if (breakpointCanHit(frames[k])) cands.push(frames[k].line);
    } else {
      for (let k = i + 1; k < frames.length; k++) if (breakpointCanHit(frames[k])) cands.push(frames[k].line);
    }
    if (cands.length) return rng.pick(cands);
  }
  return rng.pick(lines);
}

/** Draws an action that moves from state i (an action that stays put teaches nothing); undefined if none does. */
function drawAction(rng: Rng, mix: Mix, frames: readonly Frame[], i: number, lines: readonly number[]): { action: Action; to: number } | undefined {
  const n = frames.length;
  const allowed = (k: ActionKind): boolean => (i === n ? isInverse(k) : i === 0 ? !isInverse(k) : true);
  for (let attempt = 0; attempt < 8; attempt++) {
    const kind = drawKind(rng, mix, allowed);
    if (!kind) return undefined;
    const action: Action = { kind };
    if (kind === "breakpoint" || kind === "inv_breakpoint") {
      const line = breakpointLine(rng, frames, i, kind === "inv_breakpoint", lines);
      if (line === undefined) continue;
      action.line = line;
    }
    const to = transition(frames, i, action, []);
    if (to !== i) return { action, to };
  }
  return undefined;
}

/**
 * The state at trace index `to` as the debugger shows it after `action` from `from` (none: the
 * first state). Output is what the program wrote on the way: everything after `from` up to it
 * going forwards, nothing going backwards, as record mode replays it.
 */
export function stateAt(run: Recording, to: number, from: number, action?: Action): Step {
  const { frames, exit } = run;
  const n = frames.length;
  let out = "";
  if (!action) out = (to < n ? frames[to].stdout : exit.stdout) ?? "";
  else if (to > from) {
    for (let k = from + 1; k <= Math.min(to, n - 1); k++) out += frames[k].stdout ?? "";
    if (to === n) out += exit.stdout ?? "";
  }
  const step: Step = action ? { action } : {};
  if (to < n) {
    const { stdout: _s, ...frame } = frames[to];
    step.frame = { ...frame, locals: { ...frame.locals } };
    if (out) step.frame.stdout = out;
  } else {
    const { stdout: _s, ...rest } = exit;
    step.exit = out ? { ...rest, stdout: out } : { ...rest };
  }
  return step;
}

// ---- examples ----

/** Lines the run executes in the main file, each once, in order of first execution. */
function executedLines(frames: readonly Frame[]): number[] {
  const seen = new Set<number>();
  for (const f of frames) if (breakpointCanHit(f)) seen.add(f.line);
  return [...seen];
}

/**
 * Samples one example from a recording. Throws SampleError when the trace has no frame or the
 * program with its first state does not fit in maxChars.
 */
export function sampleOne(run: Recording, rng: Rng, opts: SampleOptions = {}): Sample {
  const mix = resolveMix(opts.mix);
  const maxChars = opts.maxChars ?? 2400;
  const maxSteps = opts.maxSteps ?? 48;
  const { frames } = run;
  const n = frames.length;
  if (n === 0) throw new SampleError("the trace has no frame");
  const lines = executedLines(frames);

  // Where the window opens.
  let start = 0;
  let inverseCall = false;
  const returns: number[] = [];
  if (mix.inv_step_return > 0 && rng.chance(opts.inverseCall ?? 0.15)) {
    for (let k = 0; k < n; k++) if (frames[k].event === "return" && frames[k].value !== undefined && frames[k].file === undefined) returns.push(k);
  }
  if (returns.length) {
    // Mostly the outermost call's return (input prediction), sometimes a helper's.
    const outer = returns.filter((k) => frames[k].depth === 0);
    start = outer.length && rng.chance(0.7) ? outer[outer.length - 1] : rng.pick(returns);
    inverseCall = transition(frames, start, { kind: "inv_step_return" }) !== start;
  }
  if (!inverseCall) start = rng.chance(opts.fromStart ?? 0.35) ? 0 : rng.int(n);

  const first = stateAt(run, start, start);
  if (inverseCall) {
    // Code and return value only: the arguments are what the model must infer.
    const { stdout: _s, ...f } = first.frame!;
    first.frame = { ...f, locals: {} };
  }
  const head = serializeHead(run.source, headerOf(run));
  let text = head + serializeStep(first);
  if (text.length > maxChars) throw new SampleError(`the program and its first state take ${text.length} characters, more than ${maxChars}`);

  const steps: Step[] = [first];
  const targets: [number, number][] = [];
  const actions: Action[] = [];
  const refs = [start];
  let i = start;
  let prev = first.frame;
  while (actions.length < maxSteps) {
    if (i === n && !rng.chance(opts.afterExit ?? 0.4)) break;
    const drawn = inverseCall && actions.length === 0 ? { action: { kind: "inv_step_return" } as Action, to: transition(frames, i, { kind: "inv_step_return" }) } : drawAction(rng, mix, frames, i, lines);
    if (!drawn) break;
    const step = stateAt(run, drawn.to, i, drawn.action);
    const piece = serializeStep(step, prev);
    if (text.length + piece.length > maxChars) break;
    // The target is the state after the action line, without the newline that ends it.
    const at = text.length + piece.indexOf("\n") + 1;
    targets.push([at, text.length + piece.length - 1]);
    text += piece;
    steps.push(step);
    actions.push(drawn.action);
    refs.push(drawn.to);
    i = drawn.to;
    prev = step.frame ?? prev;
  }
  return { text, targets, actions, refs, inverseCall };
}

/** The example's trajectory, as the one serializer writes it (sampleOne's text equals serialize of it). */
export function sampleTrajectory(run: Recording, sample: Sample): Trajectory {
  const steps: Step[] = sample.refs.map((to, k) => (k === 0 ? stateAt(run, to, to) : stateAt(run, to, sample.refs[k - 1], sample.actions[k - 1])));
  if (sample.inverseCall && steps[0].frame) {
    const { stdout: _s, ...f } = steps[0].frame;
    steps[0].frame = { ...f, locals: {} };
  }
  return { version: FORMAT_VERSION, ...headerOf(run), source: normalizeSource(run.source), steps };
}

/**
 * K examples of one program, seeded by (seed, id) so that each program's examples do not depend
 * on which other programs are sampled, or in what order. Examples that cannot be made (see
 * SampleError) are left out; an example identical to an earlier one is drawn again (a few tries).
 */
export function samplePrograms(run: Recording, k: number, seed: number, id: string, opts: SampleOptions = {}): Sample[] {
  const rng = new Rng(hash32(`${seed}:${id}`));
  const out: Sample[] = [];
  const seen = new Set<string>();
  for (let tries = 0; out.length < k && tries < k * 3; tries++) {
    let s: Sample;
    try {
      s = sampleOne(run, rng, opts);
    } catch (e) {
      if (e instanceof SampleError) break;
      throw e;
    }
    if (!s.actions.length || seen.has(s.text)) continue;
    seen.add(s.text);
    out.push(s);
  }
  return out;
}

/**
 * Spans in Unicode code points (what Python's str indexes) rather than UTF-16 units: they differ
 * only where the text holds characters outside the Basic Multilingual Plane.
 */
export function codePointSpans(text: string, spans: readonly [number, number][]): [number, number][] {
  if (!/[\uD800-\uDFFF]/.test(text)) return spans.map(([a, b]) => [a, b]);
  const at = new Array<number>(text.length + 1);
  let cp = 0;
  for (let u = 0; u < text.length; u++) {
    at[u] = cp;
    const c = text.charCodeAt(u);
    if (!(c >= 0xd800 && c <= 0xdbff && u + 1 < text.length)) cp++;
  }
  at[text.length] = cp;
  return spans.map(([a, b]) => [at[a], at[b]]);
}

/** A sample's text must be what the serializer writes for its trajectory; checked in tests and by `ndbg data --check`. */
export function checkSample(run: Recording, sample: Sample): void {
  const again = serialize(sampleTrajectory(run, sample));
  if (again !== sample.text) throw new Error("a sampled text differs from the serializer's text of its trajectory");
}
