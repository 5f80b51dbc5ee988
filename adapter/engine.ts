// The debugging session's state machine: history of states, a cursor into it (time travel),
// breakpoints with conditions, the call stack, edits. It asks its predictor for any state it
// does not know yet, and knows nothing of DAP or of which predictor it has.
import type { BreakpointSpec, Predicted, Predictor } from "./predictor.js";
import { FORMAT_VERSION, sameLocals, type Action, type Frame, type Step, type Trajectory } from "./trajectory.js";
import { evaluateCondition, evaluateExpression, ExprError, ExprTooLarge } from "./expr.js";
import { cutText } from "./values.js";

export type { BreakpointSpec };

export interface EngineOptions {
  /** Most predictions one continue may make while skipping hits whose condition is false. */
  maxSteps?: number;
}

type StepKind = "step_into" | "step_over" | "step_return";

const IDENTIFIER = /^[\p{ID_Start}_][\p{ID_Continue}]*$/u;

export class Engine {
  private hist: Predicted[] = [];
  private pos = -1;
  private bps: BreakpointSpec[] = [];
  private readonly maxSteps: number;
  private queue: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private pendingNotes: string[] = [];

  constructor(private readonly predictor: Predictor, opts: EngineOptions = {}) {
    this.maxSteps = Math.max(1, opts.maxSteps ?? 10_000);
  }

  /** The states the session knows, in program order; each later entry carries the forward action that leads to it from the one before. */
  get history(): readonly Predicted[] {
    return this.hist;
  }
  get cursor(): number {
    return this.pos;
  }
  get current(): Predicted {
    const p = this.hist[this.pos];
    if (!p) throw new Error("the session has not started");
    return p;
  }
  /** The current state is the program's exit. */
  get ended(): boolean {
    return this.hist[this.pos]?.step.exit !== undefined;
  }
  get breakpoints(): readonly BreakpointSpec[] {
    return this.bps;
  }

  /** Things the session should tell the user (a condition that could not be evaluated, a bound reached); emptied by reading. */
  takeNotes(): string[] {
    const n = this.pendingNotes;
    this.pendingNotes = [];
    return n;
  }

  start(signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      const first = await abortable(this.predictor.start({ signal }), signal);
      this.commit([first]);
      return this.settle(signal);
    }, false);
  }

  /**
   * A forward step. If the next known state was reached by the same action (after stepping
   * back), it is reused; otherwise the known future is dropped and the predictor asked.
   */
  step(kind: StepKind, signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, () => this.forward({ kind }, signal));
  }

  /** Runs to the next time `line` is about to execute (the breakpoint(line) action); like continue when it never is. */
  runTo(line: number, signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      if (!Number.isInteger(line) || line < 1) throw new RangeError(`bad line ${line}`);
      return this.forward({ kind: "breakpoint", line }, signal);
    });
  }

  /**
   * To the next breakpoint hit whose condition holds, else the exit. Hits whose condition is
   * false are passed (continuing again, at most maxSteps times) and stay in the history, each
   * reached by continue, so the history remains a faithful path. A condition that cannot be
   * evaluated counts as true, with a note.
   */
  continue(signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      if (this.ended) return this.current; // the exit is final
      const base = this.hist.slice(0, this.pos + 1);
      const action: Action = { kind: "continue" };
      const breakpoints = this.bps;
      for (let n = 1; ; n++) {
        const p = await abortable(this.predictor.predict(base, action, { signal, breakpoints }), signal);
        base.push(p);
        if (!this.passes(p.step.frame)) break;
        if (n >= this.maxSteps) {
          this.note(`continue stopped after ${n} breakpoint hits whose condition was false (maxSteps)`);
          break;
        }
      }
      this.commit(base);
      return this.settle(signal);
    });
  }

  /** Back one state: through the history, and at its start the predictor's inv_step_over. */
  stepBack(signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      if (this.pos > 0) return this.hist[--this.pos];
      const first = this.hist[0];
      const p = await abortable(this.predictor.predict([first], { kind: "inv_step_over" }, { signal }), signal);
      if (sameState(p.step, first.step) && p.ref === first.ref) {
        this.note("this is the first state of the program");
        return first;
      }
      // The history stays in program order: the old first state is now reached from the new
      // one going forwards, by step_into when it is a call (nothing steps over into a call), else step_over.
      const link: Action = { kind: first.step.frame?.event === "call" ? "step_into" : "step_over" };
      const earlier: Predicted = { ...p, step: withoutAction(p.step) };
      this.hist = [earlier, { ...first, step: { ...first.step, action: link } }, ...this.hist.slice(1)];
      this.pos = 0;
      return earlier;
    });
  }

  /** Back to the latest earlier known state on a breakpoint line whose condition holds, else the start of the history. */
  reverseContinue(signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      let k = this.pos - 1;
      while (k > 0 && !this.stopsAt(this.hist[k].step.frame)) k--;
      this.pos = Math.max(0, k);
      return this.hist[this.pos];
    });
  }

  setBreakpoints(bps: readonly BreakpointSpec[]): void {
    for (const b of bps) if (!Number.isInteger(b.line) || b.line < 1) throw new RangeError(`bad breakpoint line ${b.line}`);
    this.bps = bps.map((b) => (b.condition?.trim() ? { line: b.line, condition: b.condition.trim() } : { line: b.line }));
  }

  /** Edits a local of the current state (see edit). */
  setVariable(name: string, repr: string): Predicted {
    const cur = this.current;
    const frame = cur.step.frame;
    if (!frame) throw new Error("the program has ended: there are no variables to set");
    if (this.predictor.editRefusal) throw new Error(this.predictor.editRefusal);
    if (!IDENTIFIER.test(name)) throw new Error(`"${cutText(name)}" is not a variable name`);
    // Own names only: "toString" or "__proto__" are in every object, not locals.
    if (!Object.hasOwn(frame.locals, name)) throw new Error(`there is no local named "${name}" here`);
    if (repr.trim() === "") throw new Error("a value is needed");
    const edited: Predicted = { ...cur, step: { ...cur.step, frame: { ...frame, locals: { ...frame.locals, [name]: repr } } } };
    delete edited.confidence;
    return this.edit(edited);
  }

  /**
   * Stands at `state` instead of the current state (a setVariable, a resync): the known future
   * is dropped and later states are predicted from it. Every view reads it from here on.
   */
  edit(state: Predicted): Predicted {
    if (this.pos < 0) throw new Error("the session has not started");
    if (this.inFlight) throw new Error("a step is in progress: change the state when it has stopped");
    return this.standAt(state);
  }

  /**
   * The call stack, innermost first: the current frame, then its callers as the predictor knows
   * them, else each caller's latest state in the history (callers not in it are left out).
   */
  stack(): Frame[] {
    const cur = this.hist[this.pos]?.step.frame;
    if (!cur) return [];
    const known = this.predictor.callers?.(this.hist.slice(0, this.pos + 1));
    if (known) return [cur, ...known];
    const out = [cur];
    let want = cur.depth - 1;
    for (let k = this.pos - 1; k >= 0 && want >= 0; k--) {
      const f = this.hist[k].step.frame;
      if (!f || f.depth > want) continue; // a deeper frame that has finished
      if (f.event === "return") {
        // That frame at this depth had finished: the caller at this depth is not known.
        want = f.depth - 1;
        continue;
      }
      out.push(f);
      want = f.depth - 1;
    }
    return out;
  }

  /** Evaluates an expression over the current locals without running code; the predictor answers what the evaluator cannot. */
  evaluate(expression: string, signal?: AbortSignal): Promise<string> {
    return this.run(signal, async () => {
      const frame = this.current.step.frame;
      let reason = "the program has ended";
      // A value too large to compute is too large for the predictor to write out, too.
      let ask = true;
      if (frame) {
        try {
          return evaluateExpression(expression, frame.locals);
        } catch (e) {
          if (!(e instanceof ExprError)) throw e;
          reason = e.message;
          ask = !(e instanceof ExprTooLarge);
        }
      }
      const answer = ask ? await abortable(this.predictor.evaluate?.(this.hist.slice(0, this.pos + 1), expression, { signal }) ?? Promise.resolve(undefined), signal) : undefined;
      if (answer === undefined) throw new Error(`cannot evaluate "${cutText(expression)}": ${reason}`);
      return answer;
    });
  }

  /** The session's history in the trajectory format. */
  trajectory(meta?: Record<string, unknown>): Trajectory {
    const steps: Step[] = this.hist.map((p, i) => (i === 0 ? withoutAction(p.step) : p.step));
    return meta ? { version: FORMAT_VERSION, meta, source: this.predictor.source, steps } : { version: FORMAT_VERSION, source: this.predictor.source, steps };
  }

  // ---- internals ----

  private async forward(action: Action, signal?: AbortSignal): Promise<Predicted> {
    const next = this.hist[this.pos + 1];
    if (next && sameAction(next.step.action, action)) return this.hist[++this.pos];
    const cur = this.current;
    if (cur.step.exit) return cur; // the exit is final
    const base = this.hist.slice(0, this.pos + 1);
    const p = await abortable(this.predictor.predict(base, action, { signal, breakpoints: this.bps }), signal);
    this.commit([...base, p]);
    return this.settle(signal);
  }

  private commit(hist: Predicted[]): void {
    this.hist = hist;
    this.pos = hist.length - 1;
  }

  /** The predictor catches up with the stop; a state it answers instead replaces the current one, as an edit does. */
  private async settle(signal?: AbortSignal): Promise<Predicted> {
    const instead = await this.predictor.settle?.(this.hist.slice(0, this.pos + 1), { signal, breakpoints: this.bps });
    return instead ? this.standAt(instead) : this.current;
  }

  /** The one way the current state is replaced: what follows it is no longer known. */
  private standAt(state: Predicted): Predicted {
    this.hist = [...this.hist.slice(0, this.pos), state];
    return state;
  }

  /** Breakpoints that a state hits: line events of the main file on a breakpoint line. */
  private hits(f: Frame | undefined): BreakpointSpec[] {
    return f && f.event === "line" && f.file === undefined ? this.bps.filter((b) => b.line === f.line) : [];
  }

  /** A breakpoint hit that continue passes: every condition on its line is false. */
  private passes(f: Frame | undefined): boolean {
    const here = this.hits(f);
    return here.length > 0 && !this.stopsAt(f);
  }

  /** Whether a state is a breakpoint hit where some condition holds (or there is none, or it cannot be evaluated). */
  private stopsAt(f: Frame | undefined): boolean {
    return this.hits(f).some((b) => {
      if (!b.condition) return true;
      try {
        return evaluateCondition(b.condition, f!.locals);
      } catch (e) {
        if (!(e instanceof ExprError)) throw e;
        this.note(`breakpoint condition "${cutText(b.condition)}" on line ${b.line} could not be evaluated (${e.message}); stopping there`);
        return true;
      }
    });
  }

  private note(msg: string): void {
    this.pendingNotes.push(msg);
  }

  /** Runs operations one at a time, so that history and cursor never see two at once. */
  private run<T>(signal: AbortSignal | undefined, op: () => Promise<T>, needsStart = true): Promise<T> {
    this.inFlight++;
    const result = this.queue.then(() => {
      signal?.throwIfAborted();
      if (needsStart && this.pos < 0) throw new Error("the session has not started");
      return op();
    }).finally(() => this.inFlight--);
    this.queue = result.catch(() => undefined);
    return result;
  }
}

function withoutAction(step: Step): Step {
  const { action: _, ...rest } = step;
  return rest;
}

const sameAction = (a: Action | undefined, b: Action): boolean => a?.kind === b.kind && a.line === b.line;

/** The same program state, whatever output was written on the way to it. */
function sameState(a: Step, b: Step): boolean {
  if (a.exit || b.exit) return !!a.exit && !!b.exit && a.exit.status === b.exit.status && a.exit.value === b.exit.value;
  const fa = a.frame!, fb = b.frame!;
  return fa.event === fb.event && fa.line === fb.line && fa.depth === fb.depth && fa.func === fb.func && fa.file === fb.file &&
    fa.value === fb.value && sameLocals(fa.locals, fb.locals);
}

/** Rejects as soon as `signal` aborts, whether or not the work itself stops. */
function abortable<T>(work: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => { signal.removeEventListener("abort", onAbort); resolve(v); },
      (e) => { signal.removeEventListener("abort", onAbort); reject(e); },
    );
  });
}
