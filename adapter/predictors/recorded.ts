// Record mode: states come from a real run recorded by the tracer, and every action is answered
// by the debugger semantics over that recording. Time travel is free: a state's `ref` is its
// index in the trace (frames.length for the exit).
import { SOURCE_LIMIT, TRACE_LIMIT, readTextFile } from "../system/files.js";
import { dirname, isAbsolute, resolve } from "node:path";
import { normalizeSource, parseMany, sameState, type Action, type BreakpointPlace, type Exit, type Frame, type Recording, type Step, type Trajectory } from "../format/trajectory.js";
import type { Predicted, PredictOptions, Predictor } from "../engine/predictor.js";
import { transition } from "../real/semantics.js";

/** A recorded run: what the tracer returns (TraceResult) or what a trace file holds. */
/** Where an action leads from state i of a recording (frames.length: the exit). */
export type Moves = (frames: readonly Frame[], i: number, action: Action, breakpoints?: readonly BreakpointPlace[]) => number;

/**
 * The moves through a saved debugging session: its states are those the session stopped at, not
 * every event, so the semantics cannot be replayed over them. Every forward action goes to the
 * next saved state (continue and breakpoints: the next one on a breakpoint line), every inverse
 * action to the one before.
 */
export const sessionMoves: Moves = (frames, i, action, breakpoints = []) => {
  const n = frames.length;
  const on = (places: readonly BreakpointPlace[], k: number): boolean => k < n && places.some((b) => b.line === frames[k].line && b.file === frames[k].file);
  switch (action.kind) {
    case "continue":
    case "breakpoint": {
      const places = action.kind === "breakpoint" ? [{ line: action.line! }] : breakpoints;
      let k = i + 1;
      while (k < n && !on(places, k)) k++;
      return k;
    }
    case "inv_breakpoint": {
      let k = i - 1;
      while (k > 0 && !on([{ line: action.line! }], k)) k--;
      return Math.max(0, k);
    }
    default:
      return action.kind.startsWith("inv_") ? Math.max(0, i - 1) : Math.min(n, i + 1);
  }
};

export class RecordedPredictor implements Predictor {
  readonly source: string;
  readonly python?: string;
  readonly frames: readonly Frame[];
  readonly exit: Exit;
  /** The trace index a session starts at. */
  readonly first: number;
  /** Every event of a run (the debugger semantics), or the stops of a saved session (sessionMoves). */
  readonly replays: "run" | "session";

  get eventByEvent(): boolean {
    return this.replays === "run";
  }
  /** A trace file's program: as its header names it, and its file where it is still there unchanged. */
  programName?: string;
  sourceFile?: string;
  private readonly moves: Moves;

  /** `first`: where a session starts (default 0, the first event); later states may precede it. */
  constructor(run: Recording, opts: { first?: number; moves?: Moves } = {}) {
    this.source = run.source;
    if (run.python !== undefined) this.python = run.python;
    this.frames = run.frames;
    this.exit = run.exit;
    this.moves = opts.moves ?? transition;
    this.replays = opts.moves && opts.moves !== transition ? "session" : "run";
    this.first = opts.first ?? 0;
    if (!Number.isInteger(this.first) || this.first < 0 || this.first > this.frames.length)
      throw new RangeError(`first state ${this.first} is outside the trace (0..${this.frames.length})`);
  }

  /**
   * A trajectory replayed: a recording of every event (`ndbg trace`: step_into between them) is
   * the run, and the debugger semantics answer every action over it; any other trajectory (a
   * saved debugging session) is replayed stop by stop (sessionMoves). No exit step means the
   * run was cut. States after a step back in a saved session are replayed in the order saved.
   */
  static fromTrajectory(t: Trajectory): RecordedPredictor {
    const frames: Frame[] = [];
    let exit: Exit | undefined;
    t.steps.forEach((s, i) => {
      if (exit) throw new Error(`step ${i} follows the program's exit`);
      if (s.frame) frames.push(s.frame);
      else exit = s.exit;
    });
    const everyEvent = t.steps.every((s, i) => i === 0 || s.action?.kind === "step_into");
    return new RecordedPredictor({ source: t.source, ...(t.python ? { python: t.python } : {}), frames, exit: exit ?? { status: "limit" } }, everyEvent ? {} : { moves: sessionMoves });
  }

  /**
   * A trace file (.ndbg) replayed: its first trajectory (a compare session saves the predicted
   * side first). The program named in its header is shown where it still holds the same source.
   */
  static async fromTraceFile(path: string): Promise<RecordedPredictor> {
    const text = await readTextFile(path, TRACE_LIMIT).catch((e: Error) => {
      throw new Error(`cannot read the trace ${path}: ${e.message}`);
    });
    let ts: Trajectory[];
    try {
      ts = parseMany(text);
    } catch (e) {
      throw new Error(`${path} is not a trace file: ${(e as Error).message}`);
    }
    const t = ts[0];
    if (!t.steps.length || !t.steps[0].frame) throw new Error(`${path} holds no program state to replay`);
    const p = RecordedPredictor.fromTrajectory(t);
    const named = t.meta?.program;
    if (typeof named === "string" && named) {
      p.programName = named;
      const file = isAbsolute(named) ? named : resolve(dirname(path), named);
      // Only a regular file can stand for the program (the header may name a FIFO or a device).
      const current = await readTextFile(file, SOURCE_LIMIT).catch(() => undefined);
      if (current !== undefined && normalizeSource(current) === normalizeSource(t.source)) p.sourceFile = file;
    }
    return p;
  }

  readonly editRefusal = "record mode replays a real run and cannot predict from an edited state: setting variables needs predict mode";

  /** Every caller's state at this point of the run: the latest earlier event at each lower depth. */
  callers(history: readonly Predicted[]): Frame[] | undefined {
    const ref = history.at(-1)?.ref;
    return ref === undefined || !this.frames[ref] ? undefined : callersAt(this.frames, ref);
  }

  async start(opts?: PredictOptions): Promise<Predicted> {
    opts?.signal?.throwIfAborted();
    return this.at(this.first, undefined, this.first);
  }

  async predict(history: readonly Predicted[], action: Action, opts?: PredictOptions): Promise<Predicted> {
    opts?.signal?.throwIfAborted();
    const from = this.indexOf(history);
    const to = this.moves(this.frames, from, action, opts?.breakpoints?.map((b) => ({ line: b.line, ...(b.file !== undefined ? { file: b.file } : {}) })));
    return this.at(to, action, from);
  }

  dispose(): void {}

  /** Where the last history entry stands in the trace; an edited state has no place there. */
  private indexOf(history: readonly Predicted[]): number {
    const last = history.at(-1);
    if (!last) throw new Error("predict needs the current state (history is empty)");
    const ref = last.ref;
    if (ref === undefined || !Number.isInteger(ref) || ref < 0 || ref > this.frames.length)
      throw new Error("this state does not come from the recording (no trace index): record mode replays a real run");
    const rec = this.frames[ref];
    const same = rec ? last.step.frame !== undefined && sameState(last.step.frame, rec) : last.step.exit !== undefined;
    if (!same) throw new Error("the state was edited (setVariable): record mode replays a real run and cannot predict from an edited state");
    return ref;
  }

  /**
   * The state at trace index `to`, reached from `from` by `action` (none: the first state).
   * Its output (stdout and stderr) is what the program wrote on the way: everything after `from`
   * up to it going forwards, nothing going backwards or staying.
   */
  private at(to: number, action: Action | undefined, from: number): Predicted {
    const n = this.frames.length;
    const written = (key: "stdout" | "stderr"): string => {
      let out = "";
      if (!action) out = (to < n ? this.frames[to][key] : this.exit[key]) ?? "";
      else if (to > from) {
        for (let k = from + 1; k <= Math.min(to, n - 1); k++) out += this.frames[k][key] ?? "";
        if (to === n) out += this.exit[key] ?? "";
      }
      return out;
    };
    const out = written("stdout");
    const err = written("stderr");
    const step: Step = action ? { action } : {};
    if (to < n) {
      const { stdout: _, stderr: __, ...frame } = this.frames[to];
      step.frame = { ...frame, locals: { ...frame.locals } };
      if (out) step.frame.stdout = out;
      if (err) step.frame.stderr = err;
    } else {
      const { stdout: _, stderr: __, ...exit } = this.exit;
      step.exit = { ...exit, ...(out ? { stdout: out } : {}), ...(err ? { stderr: err } : {}) };
    }
    return { step, ref: to };
  }
}

/**
 * The callers of `frames[i]`, innermost first: the latest earlier event at each lower depth; where
 * `frames` begins inside the run (a long run's window), `before` holds its first state's callers.
 */
export function callersAt(frames: readonly Frame[], i: number, before: readonly Frame[] = []): Frame[] {
  const out: Frame[] = [];
  let want = frames[i].depth - 1;
  for (let k = i - 1; k >= 0 && want >= 0; k--)
    if (frames[k].depth === want) {
      out.push(frames[k]);
      want--;
    }
  for (const c of before)
    if (want >= 0 && c.depth === want) {
      out.push(c);
      want--;
    }
  return out;
}


