// Reads a trace file (.ndbg) into what the language server needs: every trajectory with the text
// range of its header, source and steps, and every error with its offset. The structure comes from
// the one parser (parseMany in adapter/trajectory.ts); this module only cuts the text where the
// format itself says things begin (a header line before "<|src_sep|>", each "<|action_sep|>"), so
// that one bad frame costs one diagnostic and the frames after it are still read.
import { HEADER, TOKENS, TrajectoryError, parseMany, parseSteps } from "../trajectory.js";
import type { Action, Exit, Frame } from "../trajectory.js";

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
const HEADER_RE = /^#ndbg (\d+)( \{.*\})?\n/gm;
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

/** Offsets where a real trajectory header starts: "#ndbg N ..." directly followed by "<|src_sep|>". */
function headerStarts(text: string): { index: number; length: number }[] {
  const out: { index: number; length: number }[] = [];
  for (const m of text.matchAll(HEADER_RE)) {
    const after = m.index! + m[0].length;
    if (text.startsWith(SRC_LINE, after)) out.push({ index: m.index!, length: m[0].length });
  }
  return out;
}

export function analyze(text: string): TraceAnalysis {
  const errors: TraceError[] = [];
  const trajectories: TrajectoryInfo[] = [];
  const starts = headerStarts(text);
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
  // Steps, one at a time: each is parsed after the previous frame, which seeds delta locals exactly
  // as the parser does for the whole file; offsets in errors are the document's (base `at`).
  let prev: Frame | undefined;
  let at = sourceEnd;
  while (at < end) {
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
      info.steps.push(s);
      if (step.frame) prev = step.frame;
    } catch (e) {
      const { message, offset } = located(e);
      const inStep = offset === undefined ? 0 : Math.min(Math.max(offset - at, 0), stepText.length);
      errors.push({ ...lineSpan(text, at + inStep, stepEnd), message });
    }
    at = stepEnd;
  }
  return info;
}

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
