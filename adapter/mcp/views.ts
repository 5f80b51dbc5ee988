// A session's states as a tool answers them: structured content an agent can read field by field,
// with the marks the debug adapter shows (adapter/session/marks.ts, the one place that decides what is
// predicted, at what confidence, and what is low), and a short text for clients that read only text.
import type { Engine } from "../engine/engine.js";
import { RETURN_VALUE, type Hole, type Predicted, type Predictor } from "../engine/predictor.js";
import { breakpointCanHit, reachedFrom, type Exit, type Frame, type Objects } from "../format/trajectory.js";
import { cutText, reprToNode } from "../format/values.js";
import { LOW_MARK, Origins, markVariable, scopeName, type Origin } from "../session/marks.js";
import type { LaunchConfig } from "../session/launch.js";
import type { Cause, Moved } from "../session/session.js";

/** What the views read of a session. */
export interface Viewed {
  readonly id: string;
  readonly config: LaunchConfig;
  readonly predictor: Predictor;
  readonly engine: Engine;
}

/** Where a value comes from, as fields: `predicted` always; the rest only for predicted values. */
export interface Marks {
  predicted: boolean;
  /** Computed by the program from a predicted value: as sure as that value, no surer. */
  derived?: boolean;
  /** The model's confidence in the state (0..1), where known. */
  confidence?: number;
  /** Below the session's lowConfidence threshold. */
  lowConfidence?: boolean;
  /** The mark as the debug adapter writes it: "predicted (84%)", "from a predicted value (84%) ⚠ low confidence", "from the docstring (line 4)". */
  mark?: string;
  /** A hole's value read from its docstring's example at this line (exact for this call, not predicted). */
  docstring?: number;
}

export interface VariableView extends Marks {
  name: string;
  /** The value's repr. */
  value: string;
  /** The Python type, where the repr tells it. */
  type?: string;
  /**
   * What the objects reached from it hold, where the program really ran (as the Variables view
   * opens them): by the expression that names each object (`cart`, `cart.items[0]`), its
   * attributes or items, name and repr.
   */
  objects?: Record<string, { name: string; value: string }[]>;
}

export interface FrameView extends Marks {
  /** 0 is the current frame, then its callers. */
  index: number;
  func: string;
  line: number;
  /** call, line, return or exception. */
  event: Frame["event"];
  depth: number;
  /** Another file than the program's, relative to it. */
  file?: string;
  /** The program's text on that line. */
  code?: string;
  /** The return value (a return) or the exception (an exception event). */
  value?: string;
}

export interface OutputView {
  text: string;
  stream: "stdout" | "stderr";
  predicted: boolean;
}

export interface StopView {
  sessionId: string;
  mode: LaunchConfig["mode"];
  /** Why the session stands here. */
  reason: "entry" | "step" | "breakpoint" | "exception" | "hole" | "exit" | "back" | "edited" | "pause";
  /** At a hole the model answered (reason "hole"): its suggestion, to take (continue) or answer (set_variable on `variable`). */
  hole?: Hole;
  /** Where it stands in the states it knows: index (0-based) of count. */
  position: { index: number; known: number };
  frame?: FrameView;
  /** The current frame's variables (see the variables tool for callers and globals). */
  locals?: VariableView[];
  /** How many locals were left out of `locals` (the variables tool pages through them all). */
  localsLeftOut?: number;
  /** The value a function just returned to this frame (as after a step out), with its marks. */
  returned?: VariableView;
  exit?: Marks & { status: Exit["status"]; value?: string };
  /** What the program wrote on the way here. */
  output?: OutputView[];
  /** Log points' messages written on the way here. */
  logs?: { text: string; predicted: boolean }[];
  /** Things the session says: a bound reached, a condition that could not be read, hybrid mode's holes. */
  notes?: string[];
}

/** Locals a stop carries; more are left to the variables tool. */
const STOP_LOCALS = 100;

/**
 * Whether every state of the session is the model's, as the adapter decides it: predict mode,
 * unless the predictor's states are real but for the values it fills in (`guessed`: a sealed or
 * hybrid run), which are then marked one by one.
 */
export const predicts = (s: Viewed): boolean => !s.predictor.guessed && s.config.mode === "predict";

export function marksOf(o: Origin): Marks {
  if (!o.predicted) return o.docstring === undefined ? { predicted: false } : { predicted: false, docstring: o.docstring, mark: markVariable<{ value: string; type?: string }>({ value: "" }, o).type! };
  const m: Marks = { predicted: true };
  if (o.derived) m.derived = true;
  if (o.confidence !== undefined) m.confidence = Math.round(o.confidence * 10_000) / 10_000;
  if (o.confidence !== undefined) m.lowConfidence = o.low;
  // The adapter's own words: the type it gives a marked variable is the mark alone when the value has no type.
  const word = markVariable<{ value: string; type?: string }>({ value: "" }, o).type!;
  m.mark = o.low ? `${word} ${LOW_MARK}` : word;
  return m;
}

/** Where the values of a session's stop come from (adapter/session/marks.ts, as the adapter marks them). */
const origins = (s: Viewed, frames: readonly Frame[] = []): Origins =>
  new Origins({ engine: s.engine, predictor: s.predictor, predicts: predicts(s), threshold: s.config.lowConfidence, frames });

/** Where a state's values come from. */
export const originAt = (s: Viewed, p: Predicted | undefined): Origin => origins(s).of(p);

/** The origin of the frame at `index` of `frames` (the stack at the current state). */
export const frameOrigin = (s: Viewed, frames: readonly Frame[], index: number): Origin => origins(s, frames).frame(index);

/** The origin of one value of the frame at `index` (a local, RETURN_VALUE, or an expression). */
export const valueOrigin = (s: Viewed, frames: readonly Frame[], index: number, name: string): Origin => origins(s, frames).value(index, name);

export function variableView(name: string, repr: string, o: Origin, objects?: Objects): VariableView {
  const type = reprToNode(repr).type;
  const reached = objects && Object.entries(objects).filter(([path]) => reachedFrom(path, name));
  const opened = reached?.length ? { objects: Object.fromEntries(reached.map(([path, children]) => [path, children.map(([n, v]) => ({ name: n, value: v }))])) } : {};
  return { name, value: repr, ...(type ? { type } : {}), ...opened, ...marksOf(o) };
}

/** The text of line `line` of the program, for a frame in the program's own file. */
function codeAt(s: Viewed, f: Frame): string | undefined {
  if (f.file !== undefined) return undefined;
  const text = s.predictor.source.split("\n")[f.line - 1];
  return text === undefined ? undefined : cutText(text.trim(), 200);
}

export function frameView(s: Viewed, frames: readonly Frame[], index: number): FrameView {
  const f = frames[index];
  const code = codeAt(s, f);
  return {
    index,
    func: f.func,
    line: f.line,
    event: f.event,
    depth: f.depth,
    ...(f.file !== undefined ? { file: f.file } : {}),
    ...(code !== undefined ? { code } : {}),
    ...(f.value !== undefined ? { value: f.value } : {}),
    ...marksOf(frameOrigin(s, frames, index)),
  };
}

/**
 * The variables of the frame at `index` as the adapter's Variables view lists them: for the
 * current frame the value a callee just returned ("(return) f"), its own return value
 * ("(return)") or exception ("(exception)"), then the locals; `globals`: the module's names.
 */
export function variablesOf(s: Viewed, frames: readonly Frame[], index: number, globals = false): VariableView[] {
  const out: VariableView[] = [];
  if (globals) {
    const module = frames.at(-1);
    if (!module || module.func !== "<module>" || module.file !== undefined) return [];
    for (const [name, repr] of Object.entries(module.locals)) out.push(variableView(name, repr, valueOrigin(s, frames, frames.length - 1, name), module.objects));
    return out;
  }
  const f = frames[index];
  if (!f) return [];
  if (index === 0) {
    const r = returnedView(s, frames);
    if (r) out.push(r);
    if (f.event === "return" && f.value !== undefined) out.push(variableView(RETURN_VALUE, f.value, valueOrigin(s, frames, 0, RETURN_VALUE)));
    if (f.event === "exception" && f.value !== undefined) out.push(variableView("(exception)", f.value, frameOrigin(s, frames, 0)));
  }
  for (const [name, repr] of Object.entries(f.locals)) out.push(variableView(name, repr, valueOrigin(s, frames, index, name), f.objects));
  return out;
}

/** "(return) f": what a callee returned just before the current state (Engine.returnedBefore), with its marks. */
function returnedView(s: Viewed, frames: readonly Frame[]): VariableView | undefined {
  const r = s.engine.returnedBefore();
  return r && variableView(`(return) ${r.func}`, r.value, origins(s, frames).returned(r.at));
}

/** The scope name the adapter would show for a frame: "Locals", "Predicted locals (84%)". */
export const scopeOf = (s: Viewed, frames: readonly Frame[], index: number, globals = false): string =>
  globals ? scopeName(frameOrigin(s, frames, frames.length - 1), "Globals", "Predicted globals") : scopeName(frameOrigin(s, frames, index));

/** Whether the current state stands on a breakpoint that stops (a log point does not). */
function onBreakpoint(e: Engine): boolean {
  const f = e.current.step.frame;
  return !!f && breakpointCanHit(f) && e.breakpoints.some((b) => b.line === f.line && b.logMessage === undefined);
}

/** The answer to anything that moves the session (or starts it): where it stands now. */
export function stopView(
  s: Viewed,
  moved: Moved,
  cause: Cause,
  extras: { output?: OutputView[]; logs?: StopView["logs"]; notes?: string[] } = {},
): StopView {
  const e = s.engine;
  const cur = e.current;
  const base = { sessionId: s.id, mode: s.config.mode, position: { index: e.cursor, known: e.history.length } };
  const tail = {
    ...(extras.output?.length ? { output: extras.output } : {}),
    ...(extras.logs?.length ? { logs: extras.logs } : {}),
    ...(extras.notes?.length ? { notes: extras.notes } : {}),
  };
  if (cur.step.exit) {
    const x = cur.step.exit;
    return { ...base, reason: "exit", exit: { status: x.status, ...(x.value !== undefined ? { value: x.value } : {}), ...marksOf(originAt(s, cur)) }, ...tail };
  }
  const frames = e.stack();
  const frame = frames[0];
  // The session's cause (Session.cause), as a tool says it: an exception where the session starts is its entry.
  let reason: StopView["reason"] = moved === "continue" ? "step" : moved;
  const hole = cause.kind === "hole" ? cause.hole : undefined;
  if (hole) reason = "hole";
  else if (cause.kind === "exception" && moved !== "entry") reason = "exception";
  else if (moved === "continue" && onBreakpoint(e)) reason = "breakpoint";
  const all = Object.entries(frame.locals).map(([name, repr]) => variableView(name, repr, valueOrigin(s, frames, 0, name)));
  const returned = returnedView(s, frames);
  return {
    ...base,
    reason,
    frame: frameView(s, frames, 0),
    locals: all.slice(0, STOP_LOCALS),
    ...(all.length > STOP_LOCALS ? { localsLeftOut: all.length - STOP_LOCALS } : {}),
    ...(returned ? { returned } : {}),
    ...(hole ? { hole } : {}),
    ...tail,
  };
}

/** A mark as a suffix: " [predicted (84%)]", or nothing for real values. */
export const markSuffix = (m: Marks): string => (m.predicted && m.mark ? ` [${m.mark}]` : "");

/** One or a few lines: where the session stands and what the locals hold. */
export function stopText(v: StopView): string {
  const lines: string[] = [];
  if (v.exit) {
    lines.push(`${v.sessionId}: the program ${v.exit.status === "normal" ? "exited normally" : v.exit.status === "error" ? `ended with an error: ${v.exit.value ?? "(unknown)"}` : `was stopped by a limit${v.exit.value ? `: ${v.exit.value}` : ""}`}${markSuffix(v.exit)}`);
  } else if (v.frame) {
    const f = v.frame;
    const what = f.event === "return" ? ` returning ${f.value ?? "(unwound by an exception)"}` : f.event === "exception" ? ` raising ${f.value ?? ""}` : f.event === "call" ? " (call)" : "";
    lines.push(`${v.sessionId} stopped (${v.reason}) at line ${f.line} in ${f.func}${what}${markSuffix(f)}${f.code ? `: ${f.code}` : ""}`);
    if (v.returned) lines.push(`  ${v.returned.name} = ${v.returned.value}${markSuffix(v.returned)}`);
    if (v.hole) lines.push(`  hole ${v.hole.name}(): the model suggests ${cutText(v.hole.repr ?? "", 200)}; continue takes it, set_variable ${v.hole.variable} answers it`);
    if (v.locals?.length) lines.push(cutText(`  locals: ${v.locals.map((l) => `${l.name}=${l.value}`).join(", ")}`, 600));
  }
  for (const o of v.output ?? []) lines.push(cutText(`  ${o.predicted ? "[predicted output] " : o.stream === "stderr" ? "[stderr] " : "[output] "}${o.text.trimEnd()}`, 300));
  for (const l of v.logs ?? []) lines.push(cutText(`  [log] ${l.text}${l.predicted ? " (predicted)" : ""}`, 300));
  for (const n of v.notes ?? []) lines.push(cutText(`  note: ${n}`, 300));
  return lines.join("\n");
}
