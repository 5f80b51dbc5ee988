// How a debugger's moves read the events of a run: which states debugpy passes over rather than
// stops at (a call event, a frame an exception unwinds, a return after Step Over), which it shows
// in the caller (a return), where a script's run starts, and where an exception was raised. The
// engine's raw actions (the model's trajectories are made of them) move an event at a time; these
// decide where a user's step ends.
import type { Frame } from "../format/trajectory.js";
import type { Predicted } from "./predictor.js";

/** A forward step as the model's trajectories take it: into, over, or out of (return from) a frame. */
export type StepKind = "step_into" | "step_over" | "step_return";

/** Most call events one debugger step passes (a generator's resumption is one too). */
export const MAX_PASSED = 256;

/**
 * Whether a debugger shows this state in its caller, as debugpy shows a return: on the calling
 * line, the caller's values as they stand (Frame.caller, where the run recorded them), the value
 * returned beside them ("(return) f"). A return with no traced caller (the program's outermost
 * frame) is shown in its own frame.
 */
export const shownInCaller = (f: Frame | undefined): boolean => f?.event === "return" && f.depth > 0;

/**
 * What a debugger's move `kind` does at a state it lands on that debugpy does not stop at (the
 * step to take from it), or undefined where it stops: a call event (Step Into stops on the body's
 * first line); a frame an exception unwinds (its caller's exception event is next, where it
 * stops); after a Step Over, the return of the frame it stepped in, on to the caller's next line;
 * the outermost frame's return after a Step Out, on to the program's end.
 */
export function passedBy(f: Frame, kind: StepKind): StepKind | undefined {
  if (f.event === "call") return "step_into";
  if (f.event !== "return") return undefined;
  if (f.depth === 0) return kind === "step_return" ? "step_over" : undefined;
  if (f.value === undefined) return "step_into";
  return kind === "step_over" ? "step_over" : undefined;
}

/** A script's module frame being entered: its first state, which a session passes to stop on the first line. */
export function isScriptEntry(p: Predicted): boolean {
  const f = p.step.frame;
  return f?.event === "call" && f.func === "<module>" && f.depth === 0 && f.file === undefined;
}

/** A raised exception at path[i]: an exception event that is not one passed up from the callee that just unwound. */
export function isRaise(path: readonly Predicted[], i: number): boolean {
  const f = path[i].step.frame;
  if (f?.event !== "exception" || /^(StopIteration|GeneratorExit)\b/.test(f.value ?? "")) return false;
  const prev = path[i - 1]?.step.frame;
  return !(prev?.event === "return" && prev.value === undefined && prev.depth === f.depth + 1);
}

/**
 * Where the exception that ended the run at the end of `path` was raised: back from the exit
 * over the frames it unwound (their exception events and value-less returns) to the first of
 * its exception events. The exit itself when there is none, or when that state comes before
 * `from` (the run started there: it has stopped for this exception already).
 */
export function raisedAt(path: readonly Predicted[], from: number): number {
  const exit = path.length - 1;
  let at = exit;
  for (let k = exit - 1; k >= 0; k--) {
    const f = path[k].step.frame;
    if (f?.event === "exception") at = k;
    else if (!(f?.event === "return" && f.value === undefined)) break;
  }
  return at < from ? exit : at;
}
