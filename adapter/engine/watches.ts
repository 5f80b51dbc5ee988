// Data breakpoints: a value watched in the frames of one function (a local, or a path from one:
// `total`, `cart.items`, `self.total`), and where it changes along a run. A state holds a frame's
// values at the start of its line, so a change made by line L is seen at the frame's next state:
// a watch stops there (as a hardware watchpoint stops after the instruction that wrote), and names L.
import { valueAtPath } from "../format/values.js";
import type { Frame } from "../format/trajectory.js";
import type { Predicted } from "./predictor.js";

export interface Watch {
  /** The function whose frames hold it (`<module>`: the program's globals), and its file as frames name it. */
  func: string;
  file?: string;
  /** A local's name, or an expression that names a part of one as the Variables view does. */
  path: string;
  /**
   * A child of an object (an attribute, an item), followed wherever the run shows that object: in a
   * method's frame as `self.total` as well as in the caller's as `cart.total`. Its identity
   * (Frame.ids) and the child's name.
   */
  object?: { id: string; child: string };
}

/** A data breakpoint: a watch, and which of its changes stop (as a line breakpoint's condition and hit condition say which hits do). */
export interface DataBreakpoint {
  watch: Watch;
  /** An expression over the names of the state where the new value is first seen. */
  condition?: string;
  /** Which changes (where the condition holds) stop, counted along the run as the session has followed it: "3", ">= 2", "% 2". */
  hitCondition?: string;
}

/** A watched value that changed: from `old` (undefined: unbound) to `value`, by the line `line` of its frame. */
export interface DataHit {
  watch: Watch;
  old?: string;
  value?: string;
  line: number;
  /** The state where the new value is first seen (a data breakpoint stops there). */
  state: Predicted;
  /** The state of the line that changed it (its frame's state before). */
  at: Predicted;
}

/** The watched value in a frame: absent where the frame is not the watch's function; `value` undefined where it holds no such value. */
export function watchedValue(f: Frame, w: Watch): { value?: string } | undefined {
  if (w.object) {
    for (const [path, id] of Object.entries(f.ids ?? {})) {
      if (id !== w.object.id) continue;
      const child = f.objects?.[path]?.find(([name]) => name === w.object!.child);
      if (child) return { value: child[1] };
    }
    return undefined;
  }
  if (f.func !== w.func || f.file !== w.file) return undefined;
  if (Object.hasOwn(f.locals, w.path)) return { value: f.locals[w.path] };
  const node = valueAtPath(f.locals, f.objects, w.path);
  return node ? { value: node.display } : {};
}

/**
 * Follows watched values along a run, state by state, in either direction, frame by frame (a
 * frame is its depth from one call event to the next at that depth). Going forwards a state whose
 * value differs from its frame's state before is a hit; going backwards, a state whose value
 * differs from its frame's state after (the hit is that later state).
 */
export class WatchTracker {
  private readonly seen = new Map<string, { value?: string; state: Predicted }>();

  /** `firstBinding`: a value bound where its frame had none counts as a change (where a value came from). */
  constructor(
    private readonly watches: readonly Watch[],
    private readonly firstBinding = false,
  ) {}

  /** The states known before the search starts (the current state and its callers): each frame's value, no hit. */
  baseline(states: readonly Predicted[]): void {
    for (const s of states) this.feed(s, true, true);
  }

  /** The next state going forwards: the watches that changed there. */
  forward(s: Predicted): DataHit[] {
    return this.feed(s, true, false);
  }

  /** The state before going backwards: the watches that changed between it and their frame's next state. */
  backward(s: Predicted): DataHit[] {
    return this.feed(s, false, false);
  }

  private feed(s: Predicted, forwards: boolean, quiet: boolean): DataHit[] {
    const f = s.step.frame;
    if (!f) return [];
    const hits: DataHit[] = [];
    this.watches.forEach((w, k) => {
      // A name lives in one frame (its depth, from one call to the next there); an object in every frame that shows it.
      const framed = !w.object;
      const key = framed ? `${k}:${f.depth}` : `${k}`;
      // Going forwards a call opens a new frame at this depth: what was seen there was another's.
      if (framed && forwards && f.event === "call") this.seen.delete(key);
      const now = watchedValue(f, w);
      const other = this.seen.get(key);
      if (now) {
        // (a first binding is no change to a data breakpoint: the frame had no such value to watch before)
        const before = forwards ? other?.value : now.value;
        if (!quiet && other && (before !== undefined || this.firstBinding) && other.value !== now.value)
          hits.push(forwards
            ? { watch: w, old: other.value, value: now.value, line: other.state.step.frame!.line, state: s, at: other.state }
            : { watch: w, old: now.value, value: other.value, line: f.line, state: other.state, at: s });
        this.seen.set(key, { ...now, state: s });
      }
      // Going backwards a call is where this frame began: earlier states at this depth are another's.
      if (framed && !forwards && f.event === "call") this.seen.delete(key);
    });
    return hits;
  }
}

/** A watch's words: "total in run()", "RATE (a global)". */
export function watchText(w: Watch): string {
  if (w.object) return `${w.path} (that object's, wherever it is seen)`;
  return w.func === "<module>" && w.file === undefined ? `${w.path} (a global)` : `${w.path} in ${w.func}()`;
}

/** A data breakpoint's dataId read back (the JSON of its watch), or undefined where it is none of ours. */
export function readWatch(dataId: string): Watch | undefined {
  let o: unknown;
  try {
    o = JSON.parse(dataId);
  } catch {
    return undefined;
  }
  const w = (typeof o === "object" && o !== null ? o : {}) as Record<string, unknown>;
  if (typeof w.func !== "string" || typeof w.path !== "string" || !w.path || (w.file !== undefined && typeof w.file !== "string")) return undefined;
  const obj = (typeof w.object === "object" && w.object !== null ? w.object : undefined) as Record<string, unknown> | undefined;
  if (w.object !== undefined && (typeof obj?.id !== "string" || typeof obj.child !== "string")) return undefined;
  return { func: w.func, path: w.path, ...(typeof w.file === "string" ? { file: w.file } : {}), ...(obj ? { object: { id: obj.id as string, child: obj.child as string } } : {}) };
}

/** What a stop at a change says: "total in run() changed: 0 → 2 (line 9)"; where a value came from: "total in run() was set to 2 here". */
export function dataHitText(h: DataHit, origin = false): string {
  if (origin) return `${watchText(h.watch)} was ${h.old === undefined ? "bound" : "set"} to ${h.value ?? "nothing"} here (line ${h.line})`;
  return `${watchText(h.watch)} changed: ${h.old ?? "(unbound)"} → ${h.value ?? "(unbound)"} (line ${h.line})`;
}
