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
import { breakpointCanHit, breakpointHits, reachesBound, type Action, type Bound, type BreakpointPlace, type Frame } from "../format/trajectory.js";

/** What the semantics read of an event: where it stands, not its values (a recording's frames, or a long run's skeleton). */
export type Place = Pick<Frame, "event" | "line" | "depth" | "file">;
/** A run's events in order, as the semantics read them. */
export type Places = ArrayLike<Place>;

/**
 * Events `first`..`length - 1` of a run, read one at a time from where they are kept (a long run's
 * window, its skeleton), at the run's own indices; those before `first` are not there.
 */
export function placesOf(first: number, length: number, at: (i: number) => Place): Places {
  return new Proxy({ length } as Places, {
    get(target, key) {
      if (typeof key === "string" && key !== "length") {
        const i = Number(key);
        if (Number.isInteger(i) && i >= first && i < length) return at(i);
      }
      return Reflect.get(target, key);
    },
  });
}

/** Where `action` leads from state `i` (0 <= i <= frames.length); frames.length is the exit. `until`: a Continue's bound (Bound). */
export function transition(frames: Places, i: number, action: Action, breakpoints?: readonly BreakpointPlace[], until?: Bound): number {
  return transitionWithin(frames, i, action, breakpoints, 0, until)!;
}

/** A breakpoint's place as a Continue's seek looks for it: with its condition, where it has one. */
export type SeekPlace = BreakpointPlace & { condition?: string };

/**
 * A forward move as what it looks for: the first later event that it lands on. A run can look
 * for it as it goes, its events unknown beforehand (a long run: adapter/python/tracer.py's
 * seeks). Undefined for a move that is not one (a move back; a run to a line, which falls back
 * to Continue).
 */
export interface Seek {
  /** The event the move starts from. */
  after: number;
  /** Step Over: the first event no deeper than this. */
  depth?: number;
  /** Step Out: the first event that leaves this depth, or returns at it. */
  returnAt?: number;
  /**
   * Continue: the first line event on one of these places where its condition holds, in the
   * program's frame (none: the exit); with `depth` or `returnAt` (a Bound), that or the first
   * event those land on, whichever comes first.
   */
  places?: readonly SeekPlace[];
  /**
   * Continue: the nth line event on its places instead, no condition read (where a seek with
   * conditions landed on the nth hit of one of its places, the seek of that place alone with
   * this lands there again: WindowRun's `hits`).
   */
  nth?: number;
}

/** What `action` from event `i` (standing at `here`) looks for. */
export function seekOf(here: Place, i: number, action: Action, breakpoints?: readonly SeekPlace[], until?: Bound): Seek | undefined {
  // (from a return the frame is done: its caller's depth)
  const d = here.event === "return" ? here.depth - 1 : here.depth;
  switch (action.kind) {
    case "step_into":
      return { after: i };
    case "step_over":
      return { after: i, depth: d };
    case "step_return":
      return { after: i, returnAt: d };
    case "continue":
      return { after: i, places: breakpoints ?? [], ...until };
    default:
      return undefined;
  }
}

/** Whether a move that looks for `seek` lands on event `f`. */
export function lands(seek: Seek, f: Place): boolean {
  if (seek.places?.some((b) => breakpointHits(f, b))) return true;
  if (seek.depth !== undefined || seek.returnAt !== undefined) return reachesBound(f, seek);
  return !seek.places;
}

/**
 * transition over events known from `first` on (a window of a long run: those before it are not
 * at hand): undefined where a move back would read an event before `first`. A move forwards
 * that meets nothing in `frames` answers frames.length, as at the exit: whether the run ends
 * there is the caller's to know.
 */
export function transitionWithin(frames: Places, i: number, action: Action, breakpoints: readonly BreakpointPlace[] | undefined, first: number, until?: Bound): number | undefined {
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
    case "step_over":
    case "step_return":
    case "continue": {
      // The first later event the move lands on: step_into the very next, whatever it is (into a
      // call, onto a return, into a handler); step_over the next no deeper, step_return the frame's
      // return (both below); continue the next line event on a breakpoint (in the main file or
      // another user file), else the exit.
      const seek = seekOf(frames[i], i, action, breakpoints, until);
      if (!seek) return n;
      for (let j = i + 1; j < n; j++) if (lands(seek, frames[j])) return j;
      return n;
    }
    case "breakpoint": {
      // Run to the next time line L of the main file is about to execute; when the run never
      // gets there it behaves as continue (stopping at the session's breakpoints, else the exit).
      const j = nextLine(frames, i, (line) => line === action.line);
      return j < n ? j : transitionWithin(frames, i, { kind: "continue" }, breakpoints, first);
    }
    case "inv_step_into":
      // The state just before.
      return i - 1 >= first ? i - 1 : undefined;
    case "inv_step_over":
      return invStepOver(frames, i, first);
    case "inv_step_return":
      return invStepReturn(frames, i, first);
    case "inv_breakpoint": {
      // Back to the latest earlier time line L of the main file was about to execute, else the start.
      for (let k = i - 1; k >= first; k--) if (breakpointCanHit(frames[k]) && frames[k].line === action.line) return k;
      return first ? undefined : 0;
    }
    default:
      throw new RangeError(`unknown action ${JSON.stringify((action as Action).kind)}`);
  }
}


function nextLine(frames: Places, i: number, hit: (line: number) => boolean): number {
  for (let j = i + 1; j < frames.length; j++) if (breakpointCanHit(frames[j]) && hit(frames[j].line)) return j;
  return frames.length;
}

/*
 * step_over (seekOf's depth): run until the current frame (depth d) stops again or is left. From a
 * call, line or exception that is the first later state at depth <= d, so a line that calls
 * functions lands on the next line of the same frame, or on its return / exception event (a
 * return is its own stop). From a return (the frame is already finished) it is the caller's next
 * stop: the first later state at depth <= d - 1.
 *
 * step_return (seekOf's returnAt): run until the current frame returns, stopping at its return
 * event (the first later return at depth d; an unwinding exception writes one too). From a
 * return, that frame is done: run to the caller's return (depth d - 1). The scan stops if the
 * trace leaves the frame without a return event, which only a cut-off trace does.
 */

/**
 * inv_step_over (reverse-next): the latest earlier state, no deeper than here, from which
 * step_over leads here, else the state just before (e.g. here is the first line of a call:
 * nothing steps over into it). "No deeper" makes stepping back over a call land on the line
 * that made it, not on the callee's return.
 * step_over(k) = i means depth(i) <= lim(k) < every depth strictly between k and i, with lim(k)
 * = depth(k), or depth(k) - 1 for a return; the exit counts as depth -1. Every event between the
 * latest one no deeper than here and i is deeper, so that one is the only candidate: backOver.
 */
function invStepOver(frames: Places, i: number, first: number): number | undefined {
  const here = i < frames.length ? frames[i].depth : -1;
  for (let k = i - 1; k >= 0; k--) {
    if (k < first) return undefined;
    const f = frames[k];
    if (f.depth <= here) return backOver(i, here, { at: k, event: f.event, depth: f.depth });
  }
  return backOver(i, here, undefined);
}

/**
 * Where inv_step_over from event `i` (at depth `here`) lands, given the latest earlier event no
 * deeper than `here` (none: undefined): there, where it is at `here`'s depth and no return (step_over
 * from it leads to i), else the event just before. A run can look for that event as it goes (a
 * long run's move back: adapter/python/tracer.py's look).
 */
export function backOver(i: number, here: number, latest: { at: number; event: Place["event"]; depth: number } | undefined): number {
  return latest && latest.depth === here && latest.event !== "return" ? latest.at : i - 1;
}

/**
 * inv_step_return: back to the call event that opened this state's frame, where its arguments
 * are; from a return that recovers the call's inputs. From a call event (its frame has just been
 * opened) it is the caller's call, mirroring step_return from a return. From the exit, the
 * outermost frame's call. When the trace has no such call (tracing began inside the frame, as
 * for a module's first line), the earliest recorded state of the frame; with none (a call
 * from untraced code), it stays.
 */
function invStepReturn(frames: Places, i: number, first: number): number | undefined {
  const f = i < frames.length ? frames[i] : undefined;
  const d = !f ? 0 : f.event === "call" ? f.depth - 1 : f.depth;
  let earliest = i;
  for (let k = i - 1; k >= 0; k--) {
    if (k < first) return undefined;
    const g = frames[k];
    if (g.depth < d) break;
    if (g.depth === d) {
      if (g.event === "call") return k;
      earliest = k;
    }
  }
  return earliest;
}
