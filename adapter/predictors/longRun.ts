// Predict mode for a run longer than maxEvents (a loop of 200,000 iterations): rather than every
// state of the run, the sealed run records where each event stands (its skeleton, a few bytes an
// event: real/skeleton.ts), the debugger's semantics answer every move over it, and the states a
// session stands at are recorded a window of maxEvents at a time, by running the program again
// up to them (a sealed run is a pure function of program, answers and input). A window reaches
// half its length back from the state asked for, and the last few are kept, so stepping back and
// forth near a stop (and between two stops) runs nothing; the skeleton is made at the first move
// that leaves the run's first window. States keep the run's event indices as refs, as a
// recording's: everything the engine does over one run's events (Step Back, Reverse Continue,
// data breakpoints) works the same.
import { type Action, type Exit, type Frame, type Step } from "../format/trajectory.js";
import type { Evaluated, Predicted, PredictOptions, Predictor, RanLine } from "../engine/predictor.js";
import { runSealed, type SealedResult, type Statement, type Window } from "../real/sealed.js";
import type { HybridOracle, TraceOptions } from "../real/tracer.js";
import type { RunSkeleton } from "../real/skeleton.js";
import { transition, type Places } from "../real/semantics.js";
import { cutText } from "../format/values.js";

/** The most events a long run may have (its skeleton: 7 bytes an event). */
export const LONG_RUN_EVENTS = 2_000_000;
/** Windows kept: the current one and the last few, so that moving between two stops runs nothing. */
const KEPT_WINDOWS = 3;

export interface LongRunOptions extends Omit<TraceOptions, "hybrid"> {
  /** The holes as the first run met them (none were met in its first maxEvents events): the same program, so the same events. */
  hybrid?: HybridOracle;
  console?: (line: string) => void;
}

interface Stretch {
  /** The run's index of frames[0]. */
  from: number;
  frames: readonly Frame[];
  /** frames[0]'s callers, innermost first. */
  callers: readonly Frame[];
}

export class LongRunPredictor implements Predictor {
  readonly eventByEvent = true;
  readonly source: string;
  readonly python?: string;
  /** Made at the first move the first window cannot answer (sketch). */
  private skeleton?: RunSkeleton;
  private exit?: Exit;
  /** The run's standard output, as bytes (the skeleton's offsets count bytes). */
  private output = Buffer.alloc(0);
  /** The windows recorded, the latest first; the run's first is kept until the skeleton is made. */
  private windows: Stretch[];
  private statements: Statement[] = [];
  private readonly size: number;

  private constructor(
    readonly program: string,
    private readonly opts: LongRunOptions,
    first: SealedResult,
  ) {
    this.source = first.source;
    if (first.python) this.python = first.python;
    this.windows = [{ from: 0, frames: first.frames, callers: [] }];
    this.size = Math.max(2, first.frames.length);
  }

  /** The predictor for a run whose first recording (`first`, from the start) stopped at maxEvents. */
  static create(program: string, opts: LongRunOptions, first: SealedResult): LongRunPredictor {
    opts.console?.(`predict · the run goes past ${first.frames.length.toLocaleString("en-US")} events: its states are recorded that many at a time, by running the program again up to them`);
    return new LongRunPredictor(program, opts, first);
  }

  /** The skeleton of the whole run, with the statements run so far. */
  private async sketch(signal?: AbortSignal): Promise<RunSkeleton> {
    if (this.skeleton) return this.skeleton;
    const result = await this.runWith({ skeleton: true }, { maxEvents: LONG_RUN_EVENTS }, signal);
    if (!result.skeleton) throw new Error(`the run's skeleton did not come back (${result.exit.status}${result.exit.value ? `: ${cutText(result.exit.value, 120)}` : ""})`);
    const { stdout, ...exit } = result.exit;
    this.exit = exit;
    this.output = Buffer.from(stdout ?? "", "utf8");
    this.opts.console?.(`predict · the run has ${result.skeleton.length.toLocaleString("en-US")} events${exit.status === "limit" ? ` before it stopped (${exit.value})` : ""}`);
    return (this.skeleton = result.skeleton);
  }

  /** The recorded window that holds event `i`, made the latest. */
  private windowOf(i: number): Stretch | undefined {
    const k = this.windows.findIndex((w) => i >= w.from && i < w.from + w.frames.length);
    if (k < 0) return undefined;
    const [w] = this.windows.splice(k, 1);
    this.windows.unshift(w);
    return w;
  }

  private keep(w: Stretch): void {
    this.windows = [w, ...this.windows].slice(0, KEPT_WINDOWS);
  }

  private runWith(window: Window, extra: Partial<TraceOptions> & { inspect?: { at: number; expressions: readonly string[]; up?: number } } = {}, signal?: AbortSignal): Promise<SealedResult> {
    const { console: _c, signal: own, ...trace } = this.opts;
    const signals = [own, signal].filter((x): x is AbortSignal => x !== undefined);
    return runSealed(this.program, {
      ...trace,
      ...extra,
      window,
      ...(this.statements.length ? { statements: this.statements } : {}),
      ...(signals.length ? { signal: AbortSignal.any(signals) } : {}),
    });
  }

  /** The recorded state of event `i`, recording the window around it where no window kept holds it. */
  private async frameAt(i: number, signal?: AbortSignal): Promise<Frame> {
    const w = this.windowOf(i);
    if (w) return w.frames[i - w.from];
    const from = Math.max(0, i - Math.floor(this.size / 2));
    const result = await this.runWith({ from }, { maxEvents: this.size }, signal);
    const frame = result.frames[i - from];
    if (!frame) throw new Error(`the program did not reach its event ${i} again (${result.exit.status}${result.exit.value ? `: ${cutText(result.exit.value, 120)}` : ""})`);
    this.keep({ from, frames: result.frames, callers: result.callers ?? [] });
    return frame;
  }

  async start(opts?: PredictOptions): Promise<Predicted> {
    return this.at(0, undefined, 0, opts?.signal);
  }

  async predict(history: readonly Predicted[], action: Action, opts?: PredictOptions): Promise<Predicted> {
    const from = history.at(-1)?.ref;
    if (from === undefined || !Number.isInteger(from) || from < 0 || (this.skeleton && from > this.skeleton.length)) throw new Error("this state is not one of the run's");
    const places = opts?.breakpoints?.map((b) => ({ line: b.line, ...(b.file !== undefined ? { file: b.file } : {}) }));
    // Over the run's first events, a move that lands among them lands there in the whole run too
    // (going forwards the first match is taken; going back, every earlier event is there).
    const start = this.skeleton ? undefined : this.windows.find((w) => w.from === 0);
    if (start && from < start.frames.length) {
      const to = transition(start.frames, from, action, places);
      if (to < start.frames.length) return this.at(to, action, from, opts?.signal);
    }
    const all: Places = (await this.sketch(opts?.signal)).places;
    return this.at(transition(all, from, action, places), action, from, opts?.signal);
  }

  /** The state of event `to` (the run's length: its exit), reached from `from` by `action`, with what the run printed on the way. */
  private async at(to: number, action: Action | undefined, from: number, signal?: AbortSignal): Promise<Predicted> {
    const step: Step = action ? { action } : {};
    const n = this.skeleton?.length ?? Infinity;
    if (to < n) {
      const { stdout: _, stderr: __, ...frame } = await this.frameAt(to, signal);
      const stdout = this.printed(from, to, action);
      step.frame = { ...frame, locals: { ...frame.locals }, ...(stdout ? { stdout } : {}) };
    } else {
      const stdout = this.printed(from, to, action);
      step.exit = { ...this.exit!, ...(stdout ? { stdout } : {}) };
    }
    return { step, ref: to };
  }

  /** What the run printed on the way from event `from` to `to` (nothing going back); the first state: what came before it. */
  private printed(from: number, to: number, action: Action | undefined): string | undefined {
    if (action && to <= from) return undefined;
    const w = this.windows.find((x) => (action ? from : to) >= x.from && to < x.from + x.frames.length);
    if (w && (!action || from >= w.from)) {
      let out = "";
      for (let k = action ? from + 1 : to; k <= to; k++) out += w.frames[k - w.from].stdout ?? "";
      return out || undefined;
    }
    const skeleton = this.skeleton!;
    const offset = (i: number): number => skeleton.outBefore(i) ?? this.output.length;
    const bytes = this.output.subarray(action ? offset(from) : 0, offset(to));
    return bytes.length ? bytes.toString("utf8") : undefined;
  }

  /** Every caller's state at this point of the run: in its window, the latest earlier event at each lower depth; before the window, its first state's callers. */
  callers(history: readonly Predicted[]): Frame[] | undefined {
    const ref = history.at(-1)?.ref;
    const w = ref === undefined ? undefined : this.windows.find((x) => ref >= x.from && ref < x.from + x.frames.length);
    if (ref === undefined || !w) return undefined;
    const cur = w.frames[ref - w.from];
    const out: Frame[] = [];
    let want = cur.depth - 1;
    for (let k = ref - w.from - 1; k >= 0 && want >= 0; k--)
      if (w.frames[k].depth === want) {
        out.push(w.frames[k]);
        want--;
      }
    for (const c of w.callers) if (c.depth === want && want >= 0) {
      out.push(c);
      want--;
    }
    return out;
  }

  /** An expression in the program's frame at this state: the program runs again up to it, then the expression there. */
  async inspect(history: readonly Predicted[], expression: string, frame: number, opts?: PredictOptions): Promise<Evaluated | undefined> {
    const last = history.at(-1);
    if (!last?.step.frame || last.ref === undefined || !this.same(last)) return undefined;
    const result = await this.runWith({ from: last.ref }, { maxEvents: 1, inspect: { at: last.ref, expressions: [expression], ...(frame ? { up: frame } : {}) } }, opts?.signal);
    const answer = result.inspected?.[0];
    if (!answer) throw new Error(`cannot evaluate "${cutText(expression)}": the program did not reach this state again (${result.exit.status})`);
    if ("error" in answer) throw new Error(answer.error);
    return { value: answer.value, ...(answer.objects ? { objects: answer.objects } : {}), ...(answer.path ? { path: answer.path } : {}), ...(answer.stdout ? { stdout: answer.stdout } : {}) };
  }

  /** A line of the Debug Console, its effects kept: it joins the run's input, and the run's skeleton and window are made again with it (HybridPredictor.execute). */
  async execute(history: readonly Predicted[], code: string, frame: number, opts?: PredictOptions): Promise<RanLine | undefined> {
    const last = history.at(-1);
    if (!last?.step.frame || last.ref === undefined || !this.same(last)) return undefined;
    const at = last.ref;
    const kept = this.statements;
    this.statements = [...kept.filter((s) => s.at <= at), { at, code, ...(frame ? { up: frame } : {}) }];
    const from = Math.max(0, at - Math.floor(this.size / 2));
    const result = await this.runWith({ from }, { maxEvents: this.size }, opts?.signal);
    const mine = result.executed?.filter((e) => e.at === at).at(-1)?.results.at(-1);
    const now = result.frames[at - from];
    if (!mine || !now) {
      this.statements = kept;
      throw new Error(`"${cutText(code)}" did not finish in the run's time (${result.exit.status}): nothing of it was kept`);
    }
    // What the run was before the line is gone: its windows and its skeleton (made again when a move needs it).
    this.windows = [{ from, frames: result.frames, callers: result.callers ?? [] }];
    this.skeleton = undefined;
    return { state: { step: { ...last.step, frame: now }, ref: at }, result: mine };
  }

  /** Whether `state` is the run's own (not a value edited away from it). */
  private same(state: Predicted): boolean {
    const ref = state.ref!;
    const w = this.windows.find((x) => ref >= x.from && ref < x.from + x.frames.length);
    const recorded = w?.frames[ref - w.from];
    const frame = state.step.frame!;
    return !recorded || (recorded.line === frame.line && JSON.stringify(recorded.locals) === JSON.stringify(frame.locals));
  }

  /** Every value is the program's: none came from the model (a hole past the first window raises). */
  guessed(): undefined {
    return undefined;
  }

  refuseEdit(_state: Predicted, name: string): string | undefined {
    return name === "(return)" ? "a return value is the function's own: set the values it is computed from" : undefined;
  }

  dispose(): void {}
}
