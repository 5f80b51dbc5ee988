// Debugger semantics over a recorded trace: where each action leads from a given state, exactly
// as a real debugger stepping through the same run would stop. The trace is the tracer's list
// of frames (one per call / line / return / exception event, depth = call depth); an index of
// frames.length stands for the program's exit.
//
// The tree of states is implicit in the depths: a frame at depth d lasts from its call event to
// its return event at depth d, and everything deeper in between belongs to its callees. The
// tracer writes a return (without value) for every frame an exception unwinds, so depth only
// ever falls through return events and exceptions need no rule of their own: they propagate by
// the caller's exception event after the callee's return.
import { breakpointCanHit, breakpointHits, type Action, type BreakpointPlace, type Frame } from "../format/trajectory.js";

/** What the semantics read of an event: where it stands, not its values (a recording's frames, or a long run's skeleton). */
export type Place = Pick<Frame, "event" | "line" | "depth" | "file">;
/** A run's events in order, as the semantics read them. */
export type Places = ArrayLike<Place>;

/** Where `action` leads from state `i` (0 <= i <= frames.length); frames.length is the exit. */
export function transition(frames: Places, i: number, action: Action, breakpoints?: readonly BreakpointPlace[]): number {
  const n = frames.length;
  if (!Number.isInteger(i) || i < 0 || i > n) throw new RangeError(`state index ${i} is outside the trace (0..${n})`);
  if ((action.kind === "breakpoint" || action.kind === "inv_breakpoint") && !Number.isInteger(action.line))
    throw new RangeError(`${action.kind} needs a line number`);
  const kind = action.kind;
  if (kind.startsWith("inv_")) {
    // At the first state there is nothing earlier: every inverse action stays.
    if (i === 0) return 0;
  } else if (i === n) {
    // The exit is final: every forward action stays there.
    return n;
  }
  switch (kind) {
    case "step_into":
      // The very next event, whatever it is: into a call, onto a return, into a handler.
      return i + 1;
    case "step_over":
      return stepOver(frames, i);
    case "step_return":
      return stepReturn(frames, i);
    case "breakpoint": {
      // Run to the next time line L of the main file is about to execute; when the run never
      // gets there it behaves as continue (stopping at the session's breakpoints, else the exit).
      const j = nextLine(frames, i, (line) => line === action.line);
      return j < n ? j : transition(frames, i, { kind: "continue" }, breakpoints);
    }
    case "continue": {
      // Run to the next line event on a breakpoint (in the main file or another user file), else to the exit.
      if (!breakpoints?.length) return n;
      for (let j = i + 1; j < n; j++) if (breakpoints.some((b) => breakpointHits(frames[j], b))) return j;
      return n;
    }
    case "inv_step_into":
      // The state just before.
      return i - 1;
    case "inv_step_over":
      return invStepOver(frames, i);
    case "inv_step_return":
      return invStepReturn(frames, i);
    case "inv_breakpoint": {
      // Back to the latest earlier time line L of the main file was about to execute, else the start.
      for (let k = i - 1; k >= 0; k--) if (breakpointCanHit(frames[k]) && frames[k].line === action.line) return k;
      return 0;
    }
    default:
      throw new RangeError(`unknown action ${JSON.stringify((action as Action).kind)}`);
  }
}


function nextLine(frames: Places, i: number, hit: (line: number) => boolean): number {
  for (let j = i + 1; j < frames.length; j++) if (breakpointCanHit(frames[j]) && hit(frames[j].line)) return j;
  return frames.length;
}

/**
 * step_over: run until the current frame (depth d) stops again or is left. From a call, line or
 * exception that is the first later state at depth <= d, so a line that calls functions lands
 * on the next line of the same frame, or on its return / exception event (a return is its own
 * stop). From a return (the frame is already finished) it is the caller's next stop: the first
 * later state at depth <= d - 1.
 */
function stepOver(frames: Places, i: number): number {
  const f = frames[i];
  const limit = f.event === "return" ? f.depth - 1 : f.depth;
  for (let j = i + 1; j < frames.length; j++) if (frames[j].depth <= limit) return j;
  return frames.length;
}

/**
 * step_return: run until the current frame returns, stopping at its return event (the first later
 * return at depth d; an unwinding exception writes one too). From a return, that frame is done:
 * run to the caller's return (depth d - 1). The scan stops if the trace leaves the frame without
 * a return event, which only a cut-off trace does.
 */
function stepReturn(frames: Places, i: number): number {
  const f = frames[i];
  const d = f.event === "return" ? f.depth - 1 : f.depth;
  for (let j = i + 1; j < frames.length; j++) {
    const g = frames[j];
    if (g.depth < d) return j;
    if (g.depth === d && g.event === "return") return j;
  }
  return frames.length;
}

/**
 * inv_step_over (reverse-next): the latest earlier state, no deeper than here, from which
 * step_over leads here, else the state just before (e.g. here is the first line of a call:
 * nothing steps over into it). "No deeper" makes stepping back over a call land on the line
 * that made it, not on the callee's return.
 * step_over(k) = i means depth(i) <= lim(k) < every depth strictly between k and i, with lim(k)
 * = depth(k), or depth(k) - 1 for a return; the exit counts as depth -1. Scanning back while
 * keeping the minimum depth between finds the latest such k, and can stop once that minimum is
 * no deeper than here.
 */
function invStepOver(frames: Places, i: number): number {
  const here = i < frames.length ? frames[i].depth : -1;
  let between = Infinity; // minimum depth strictly between k and i
  for (let k = i - 1; k >= 0; k--) {
    const f = frames[k];
    const lim = f.event === "return" ? f.depth - 1 : f.depth;
    if (here <= lim && lim < between && f.depth <= here) return k;
    between = Math.min(between, f.depth);
    if (between <= here) break;
  }
  return i - 1;
}

/**
 * inv_step_return: back to the call event that opened this state's frame, where its arguments
 * are; from a return that recovers the call's inputs. From a call event (its frame has just been
 * opened) it is the caller's call, mirroring step_return from a return. From the exit, the
 * outermost frame's call. When the trace has no such call (tracing began inside the frame, as
 * for a module's first line), the earliest recorded state of the frame; with none (a call
 * from untraced code), it stays.
 */
function invStepReturn(frames: Places, i: number): number {
  const f = frames[i] as Place | undefined;
  const d = !f ? 0 : f.event === "call" ? f.depth - 1 : f.depth;
  let earliest = i;
  for (let k = i - 1; k >= 0; k--) {
    const g = frames[k];
    if (g.depth < d) break;
    if (g.depth === d) {
      if (g.event === "call") return k;
      earliest = k;
    }
  }
  return earliest;
}
