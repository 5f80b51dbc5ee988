// Reads a trace file (.ndbg) into what the language server needs: every trajectory with the text
// range of its header, source and steps, and every error with its offset. The structure comes from
// the one parser (parseMany in adapter/format/trajectory.ts); this module only cuts the text where the
// format itself says things begin (a header line before "<|src_sep|>", each "<|action_sep|>"), so
// that one bad frame costs one diagnostic and the frames after it are still read.
import { HEADER, TOKENS, TrajectoryError, findHeaders, parseMany, parseSteps, sameFrame } from "../format/trajectory.js";
import type { Action, Exit, Frame } from "../format/trajectory.js";

export interface TraceError {
  start: number;
  end: number;
  message: string;
}

export interface StepInfo {
  /** Offsets of the step's text: its action (if any) through the newline that ends it. */
  start: number;
  end: number;
  action?: Action;
  frame?: Frame;
  exit?: Exit;
  /** The frame before this one in the trajectory (full locals), for "what changed". */
  prev?: Frame;
  /** Offsets of the frame's line number, when the step is a frame. */
  lineNumber?: { start: number; end: number };
  /** Offsets of a breakpoint action's line argument. */
  actionLine?: { start: number; end: number };
}

export interface TrajectoryInfo {
  start: number;
  end: number;
  headerEnd: number;
  meta?: Record<string, unknown>;
  /** Offset of the first source character and of the first token after the source. */
  sourceStart: number;
  sourceEnd: number;
  steps: StepInfo[];
}

export interface TraceAnalysis {
  trajectories: TrajectoryInfo[];
  errors: TraceError[];
}

const SPECIAL_RE = /<\|[a-z_]+\|>/;
const SRC_LINE = TOKENS.src + "\n";

/** Splits a TrajectoryError message into its text and the offset it names, if any. */
function located(err: unknown): { message: string; offset?: number } {
  const message = err instanceof Error ? err.message : String(err);
  if (!(err instanceof TrajectoryError)) return { message };
  const m = / \(offset (\d+)\)$/.exec(message) ?? / at offset (\d+)$/.exec(message);
  return m ? { message: message.slice(0, m.index), offset: Number(m[1]) } : { message };
}

/** From `offset` to the end of its line (at least one character, so editors can show it). */
function lineSpan(text: string, offset: number, limit = text.length): { start: number; end: number } {
  const nl = text.indexOf("\n", offset);
  const end = Math.min(nl < 0 ? text.length : nl, limit);
  return { start: offset, end: Math.max(end, Math.min(offset + 1, text.length)) };
}

export function analyze(text: string): TraceAnalysis {
  const errors: TraceError[] = [];
  const trajectories: TrajectoryInfo[] = [];
  const starts = findHeaders(text);
  if (!starts.length) {
    let message = `a trace starts with a "${HEADER}" line followed by a "${TOKENS.src}" line`;
    try {
      parseMany(text);
    } catch (e) {
      message = located(e).message;
    }
    errors.push({ ...lineSpan(text, 0), message });
    return { trajectories, errors };
  }
  if (starts[0].index > 0) errors.push({ start: 0, end: starts[0].index - 1, message: `unexpected text before the first "${HEADER}" header` });
  for (let k = 0; k < starts.length; k++) {
    const end = k + 1 < starts.length ? starts[k + 1].index : text.length;
    trajectories.push(readTrajectory(text, starts[k].index, starts[k].length, end, errors));
  }
  return { trajectories, errors };
}

function readTrajectory(text: string, start: number, headerLength: number, end: number, errors: TraceError[]): TrajectoryInfo {
  const headerEnd = start + headerLength;
  const sourceStart = headerEnd + SRC_LINE.length;
  const first = text.slice(sourceStart, end).search(SPECIAL_RE);
  const sourceEnd = first < 0 ? end : sourceStart + first;
  const info: TrajectoryInfo = { start, end, headerEnd, sourceStart, sourceEnd, steps: [] };
  // The header and the source alone: version and metadata are checked by the parser.
  try {
    const [t] = parseMany(text.slice(start, sourceEnd));
    if (t?.meta) info.meta = t.meta;
  } catch (e) {
    errors.push({ start, end: headerEnd - 1, message: located(e).message });
  }
  readSteps(text, sourceEnd, end, undefined, info.steps, errors);
  return info;
}

/**
 * Reads steps from `at` (where one starts) to `end`, each parsed after the previous frame, which
 * seeds delta locals exactly as the parser does for the whole file; offsets in errors are the
 * document's. `resync(at, prev)`, asked before each step, may end the reading early (it returns
 * true where what follows is known already).
 */
function readSteps(text: string, at: number, end: number, prev: Frame | undefined, out: StepInfo[], errors: TraceError[], resync?: (at: number, prev: Frame | undefined) => boolean): void {
  while (at < end) {
    if (resync?.(at, prev)) return;
    const next = text.indexOf(TOKENS.action, at + (text.startsWith(TOKENS.action, at) ? 1 : 0));
    const stepEnd = next < 0 || next > end ? end : next;
    const stepText = text.slice(at, stepEnd);
    try {
      const steps = parseSteps(stepText, prev, at);
      const step = steps[0];
      if (!step || steps.length !== 1) throw new TrajectoryError(`expected one step here, found ${steps.length}`);
      if (prev && !step.action) throw new TrajectoryError("steps after the first must start with <|action_sep|>");
      const s: StepInfo = { start: at, end: stepEnd, ...step };
      if (prev) s.prev = prev;
      const lineM = /<\|frame_sep\|><\|[a-z]+_sep\|>(\d+)/d.exec(stepText);
      if (step.frame && lineM?.indices?.[1]) s.lineNumber = { start: at + lineM.indices[1][0], end: at + lineM.indices[1][1] };
      const bpM = /^<\|action_sep\|><\|(?:inv_)?breakpoint\|>(\d+)/d.exec(stepText);
      if (bpM?.indices?.[1]) s.actionLine = { start: at + bpM.indices[1][0], end: at + bpM.indices[1][1] };
      out.push(s);
      if (step.frame) prev = step.frame;
    } catch (e) {
      const { message, offset } = located(e);
      const inStep = offset === undefined ? 0 : Math.min(Math.max(offset - at, 0), stepText.length);
      errors.push({ ...lineSpan(text, at + inStep, stepEnd), message });
    }
    at = stepEnd;
  }
}

// ---- after an edit ----

const shiftSpan = <T extends { start: number; end: number } | undefined>(r: T, d: number): T => (r ? { ...r, start: r.start + d, end: r.end + d } : r);

function shiftStep(s: StepInfo, d: number): StepInfo {
  const out: StepInfo = { ...s, start: s.start + d, end: s.end + d };
  if (s.lineNumber) out.lineNumber = shiftSpan(s.lineNumber, d);
  if (s.actionLine) out.actionLine = shiftSpan(s.actionLine, d);
  return out;
}

function shiftTrajectory(t: TrajectoryInfo, d: number): TrajectoryInfo {
  return { ...t, start: t.start + d, end: t.end + d, headerEnd: t.headerEnd + d, sourceStart: t.sourceStart + d, sourceEnd: t.sourceEnd + d, steps: t.steps.map((s) => shiftStep(s, d)) };
}

/**
 * The analysis of `text`, an edit of `before` whose analysis is `prev`: equal to analyze(text),
 * but where the edit lies among the steps of one trajectory of a file without errors, only the
 * steps from the edit on are read, up to the first step after it that starts as an old one did
 * after the same frame (the rest is the old analysis moved by the edit's length). A keystroke in
 * a trace of a million frames costs milliseconds, not seconds.
 */
export function reanalyze(before: string, prev: TraceAnalysis, text: string): TraceAnalysis {
  const limit = Math.min(before.length, text.length);
  let p = 0;
  while (p < limit && before.charCodeAt(p) === text.charCodeAt(p)) p++;
  let q = 0;
  while (q < limit - p && before.charCodeAt(before.length - 1 - q) === text.charCodeAt(text.length - 1 - q)) q++;
  const d = text.length - before.length;
  const oldEnd = before.length - q;
  // Past the source and its first token (an edit there moves where the source ends).
  const k = prev.trajectories.findIndex((t) => p > t.sourceEnd + TOKEN_ROOM && (oldEnd < t.end || (oldEnd === t.end && t.end === before.length)));
  // A header made or broken by the edit changes the trajectories.
  const touches = (s: string, from: number, to: number): boolean => {
    const near = s.slice(Math.max(0, from - TOKEN_ROOM), to + TOKEN_ROOM);
    return near.includes("#ndbg") || near.includes(TOKENS.src);
  };
  if (prev.errors.length || k < 0 || !prev.trajectories[k].steps.length || touches(before, p, oldEnd) || touches(text, p, text.length - q)) return analyze(text);
  const t = prev.trajectories[k];
  const old = t.steps;
  // The first step the edit reaches: a step ends where the next one's token starts, so an edit
  // inside that token (or just after the step) changes where it ends.
  let i = old.findIndex((s) => s.end + TOKEN_ROOM >= p);
  if (i < 0) i = old.length - 1;
  const steps = old.slice(0, i);
  const errors: TraceError[] = [];
  const end = t.end + d;
  readSteps(text, old[i].start, end, old[i].prev, steps, errors, (at, before) => {
    if (at < text.length - q) return false;
    const j = stepAt(old, at - d);
    if (j < 0 || !sameOrBoth(old[j].prev, before)) return false;
    for (let m = j; m < old.length; m++) steps.push(shiftStep(old[m], d));
    return true;
  });
  const trajectories = prev.trajectories.map((x, n) => (n < k ? x : n > k ? shiftTrajectory(x, d) : { ...t, end, steps }));
  return { trajectories, errors };
}

/** The index of the last step that starts at or before `offset`, or -1 (steps are in document order). */
export function stepBefore(steps: readonly StepInfo[], offset: number): number {
  let lo = 0;
  let hi = steps.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (steps[mid].start <= offset) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi;
}

/** The index of the step that starts at `offset`, or -1. */
function stepAt(steps: readonly StepInfo[], offset: number): number {
  const j = stepBefore(steps, offset);
  return j >= 0 && steps[j].start === offset ? j : -1;
}

/** More than the length of any special token. */
const TOKEN_ROOM = 32;

const sameOrBoth = (a: Frame | undefined, b: Frame | undefined): boolean => (a === undefined ? b === undefined : b !== undefined && sameFrame(a, b));

/** Offsets of the start of every line, for offset <-> position conversions. */
export function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) out.push(i + 1);
  return out;
}

/** The document line (0-based) of source line `line` (1-based) of a trajectory, or undefined. */
export function sourceLineOffset(text: string, t: TrajectoryInfo, line: number): number | undefined {
  if (line < 1) return undefined;
  let at = t.sourceStart;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", at);
    if (nl < 0 || nl + 1 >= t.sourceEnd) return undefined;
    at = nl + 1;
  }
  return at < t.sourceEnd ? at : undefined;
}
