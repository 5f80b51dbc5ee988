// The debugging session's state machine: history of states, a cursor into it (time travel),
// the moves (steps as debugpy takes them, continue and their reverses, to breakpoints, log
// points, data breakpoints and exception stops), evaluations at a stop, edits. It asks its
// predictor for any state it does not know yet, and knows nothing of DAP or of which predictor
// it has. Whether a state stops at a breakpoint is stops.ts's; where a debugger's step ends,
// stepping.ts's; the call stack and the values a state holds, stack.ts's.
import { NotHeld, RETURN_VALUE, type Evaluated, type Hole, type Predicted, type Predictor, type ValueEvaluator } from "./predictor.js";
import { FORMAT_VERSION, reachedFrom, reachesBound, sameState, type Action, type Bound, type Frame, type Step, type Trajectory } from "../format/trajectory.js";
import { cutText } from "../format/values.js";
import { formatLogMessage, parseHitCondition, parseLogMessage } from "./breakpoints.js";
import { WatchTracker, type DataBreakpoint, type DataHit, type Watch } from "./watches.js";
import { BreakpointStops, type BreakpointSpec } from "./breakpointStops.js";
import { namesOf, ownValue, recordedValue, stackAt } from "./stack.js";
import { isRaise, isScriptEntry, MAX_PASSED, passedBy, raisedAt, shownInCaller, type StepKind } from "./stepping.js";

/** Which exceptions a continue stops at: every one where it is raised, or one the program does not catch; and holes the model answered. */
export interface ExceptionStops {
  raised: boolean;
  uncaught: boolean;
  holes?: boolean;
}

/** A log point's message, written when the state it was hit in was reached. */
export interface LogLine {
  text: string;
  state: Predicted;
}

export interface EngineOptions {
  /** Most predictions one continue may make while skipping hits whose condition is false. */
  maxSteps?: number;
  /** Most states one continue may predict going event by event for exception stops (default maxSteps). */
  maxEvents?: number;
  /**
   * Step Over stops at a breakpoint inside the calls it steps over, as debugpy does: with
   * breakpoints set it goes event by event while the predictor's states are no guesses of a
   * model (a recording, a real run, states the program decides); at the first guess it steps
   * over as the model does, in one prediction.
   */
  stepOverStops?: boolean;
  /**
   * What evaluates expressions over a state's values: breakpoint conditions, log messages, the
   * Debug Console where the predictor has no run to ask. Without one, each is "not evaluated".
   */
  evaluator?: ValueEvaluator;
}

/**
 * How far a step goes (the DAP's stepping granularity): a statement (a line: Python runs a line
 * at a time), or the finest there is, one event of the run (an "instruction": a call, a line, a
 * return, an exception).
 */
export type Granularity = "statement" | "line" | "instruction";

const IDENTIFIER = /^[\p{ID_Start}_][\p{ID_Continue}]*$/u;

export class Engine {
  private hist: Predicted[] = [];
  private pos = -1;
  private readonly maxSteps: number;
  private readonly maxEvents: number;
  private readonly stepOverStops: boolean;
  private queue: Promise<unknown> = Promise.resolve();
  private inFlight = 0;
  private pendingNotes: string[] = [];
  private pendingLogs: LogLine[] = [];
  private exceptionStops: ExceptionStops = { raised: false, uncaught: false, holes: false };
  private watches: Watch[] = [];
  private dataHit?: DataHit;
  private readonly evaluator: ValueEvaluator;
  /** The line and data breakpoints, and whether a state stops at one. */
  private readonly stops: BreakpointStops;

  constructor(private readonly predictor: Predictor, opts: EngineOptions = {}) {
    this.maxSteps = Math.max(1, opts.maxSteps ?? 10_000);
    this.maxEvents = Math.max(1, opts.maxEvents ?? this.maxSteps);
    this.stepOverStops = opts.stepOverStops ?? false;
    this.evaluator = opts.evaluator ?? (async (_names, expressions) => expressions.map(() => ({ error: "no evaluator of Python expressions was given to this session" })));
    // Conditions and log messages: read in the program's frame where the predictor's run holds it
    // (one answer with hovers and the Debug Console), else over the state's values rebuilt from reprs.
    this.stops = new BreakpointStops(
      async (path, expressions, signal) => {
        // (a run that cannot be had for it, the values rebuilt from reprs answer instead)
        const live = await abortable(this.predictor.valuesAt?.(path, expressions, { signal }) ?? Promise.resolve(undefined), signal).catch(() => {
          signal?.throwIfAborted();
          return undefined;
        });
        return live ?? abortable(this.evaluator(namesOf(stackAt(path, this.predictor)), expressions, signal), signal);
      },
      (msg) => this.note(msg),
    );
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
    return this.stops.breakpoints;
  }

  /** Things the session should tell the user (a condition that could not be evaluated, a bound reached); emptied by reading. */
  takeNotes(): string[] {
    const n = this.pendingNotes;
    this.pendingNotes = [];
    return n;
  }

  /** Whether the current state is where the exception was raised that ends the run as far as it is known (an uncaught one). */
  get uncaught(): boolean {
    const last = this.hist.at(-1);
    return last?.step.exit?.status === "error" && this.pos < this.hist.length - 1 && raisedAt(this.hist, 0) === this.pos;
  }

  /** Log points' messages written since the last call, in the order their states were reached. */
  takeLogs(): LogLine[] {
    const l = this.pendingLogs;
    this.pendingLogs = [];
    return l;
  }

  start(signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      const first = await abortable(this.predictor.start({ signal }), signal);
      this.commit([first]);
      await this.arrived(this.hist, 0, 0, signal);
      return this.settle(signal);
    }, false);
  }

  /**
   * A forward step. If the next known state was reached by the same action (after stepping
   * back), it is reused; otherwise the known future is dropped and the predictor asked.
   */
  step(kind: StepKind, signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      await this.stepOnce(kind, signal);
      return this.current;
    });
  }

  /**
   * Step Into, Step Over and Step Out as debugpy's user knows them: the action, then on past what
   * debugpy does not stop at (passedBy). So Step Into stops on a body's first line, and at a
   * return (shown in the caller: shownInCaller); Step Over goes on past the return of the frame it
   * steps in, to the caller's next line (the return stays in the history: its value is shown
   * there); Step Out stops at the return. The raw actions stay to be had (step) for the model's
   * trajectories and compare mode.
   */
  stepAsDebugger(kind: StepKind, signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      let stopped = await this.stepOnce(kind, signal);
      for (let n = 0; n < MAX_PASSED && !stopped; n++) {
        const f = this.current.step.frame;
        const on = f && passedBy(f, kind);
        if (!on) break;
        stopped = await this.stepOnce(on, signal);
      }
      return this.current;
    });
  }

  /** One action forwards; Step Over and Step Out stop at the breakpoints and holes they pass (toBreakpoint): then true. */
  private async stepOnce(kind: StepKind, signal?: AbortSignal): Promise<boolean> {
    const way = kind === "step_into" ? undefined : await this.toBreakpoint(kind, signal);
    if (way === "stopped") return true;
    if (way === undefined) await this.forward({ kind }, signal);
    return false;
  }

  /** Runs to the next time `line` is about to execute (the breakpoint(line) action); like continue when it never is. */
  runTo(line: number, signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      if (!Number.isInteger(line) || line < 1) throw new RangeError(`bad line ${line}`);
      return this.forward({ kind: "breakpoint", line }, signal);
    });
  }

  /**
   * To the next breakpoint hit whose condition and hit condition hold, else the exit. Hits that
   * do not stop (a false condition, a log point) are passed (continuing again, at most maxSteps
   * times) and stay in the history, each reached by continue, so the history remains a faithful
   * path. A condition that cannot be evaluated counts as true, with a note. With exception
   * stops the run goes event by event (step_into), since a continue stops at breakpoints only:
   * always for raised exceptions; for uncaught ones only once a continue has ended in an error,
   * to stand where that exception was raised.
   */
  continue(signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      this.dataHit = undefined;
      if (this.ended) return this.current; // the exit is final
      const from = this.pos + 1;
      const base = this.hist.slice(0, from);
      const { raised, uncaught } = this.exceptionStops;
      // Raised exceptions, watched values and holes are seen event by event (data breakpoints: where every event is the run's).
      const stepping = raised || this.watching || this.holesStop;
      let path = await this.runOn(base, { kind: stepping ? "step_into" : "continue" }, signal);
      if (!stepping && uncaught && path.at(-1)!.step.exit?.status === "error") path = await this.runOn(base, { kind: "step_into" }, signal);
      const stop = uncaught && path.at(-1)!.step.exit?.status === "error" ? raisedAt(path, from) : path.length - 1;
      this.commit(path);
      this.pos = stop;
      await this.arrived(path, from, stop, signal);
      return this.settle(signal);
    });
  }
  /**
   * Back one step. Where the states are one run's, event by event (a recording, a run sealed or
   * for real), as the DAP's stepBack asks, "one backward step": a reverse Step Over, to the line
   * that ran just before in this frame, or in its caller from a frame's first line, wherever the
   * history has been (after a Continue, the line before its stop, not the stop before). It passes
   * call events as the forward steps do (stepAsDebugger). At the "instruction" granularity, the
   * event just before. Otherwise (states the model predicts one by one) back through the
   * history, and at its start the predictor's inv_step_over.
   */
  stepBack(signal?: AbortSignal, granularity: Granularity = "statement"): Promise<Predicted> {
    return this.run(signal, async () => {
      // (the finest step: the event just before, whatever it is)
      if (this.predictor.eventByEvent && granularity === "instruction") return this.standEarlier(await this.earlier(this.current, "inv_step_into", signal), signal);
      if (this.predictor.eventByEvent) return this.standEarlier(await this.backOne(this.current, signal), signal);
      if (this.pos > 0) return this.hist[--this.pos];
      const first = this.hist[0];
      const p = await abortable(this.predictor.predict([first], { kind: "inv_step_over" }, { signal }), signal);
      if (sameStep(p.step, first.step) && p.ref === first.ref) {
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

  /**
   * Back to the latest earlier breakpoint hit whose condition holds (with raised-exception stops,
   * a raised exception too), else the start of the program. Where the states are one run's, event
   * by event, the whole run before here is searched (at most maxEvents events); otherwise the history.
   */
  reverseContinue(signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      this.dataHit = undefined;
      if (this.predictor.eventByEvent) {
        let p = this.current;
        // (a caller's values are met going back, at its state before the call)
        const watched = this.watching ? new WatchTracker(this.watches) : undefined;
        watched?.baseline([p]);
        for (let n = 0; n < this.maxEvents; n++) {
          const q = await this.earlier(p, "inv_step_into", signal);
          // (a change seen here is the one this stop is for: back to the one before)
          for (const hit of (q && watched?.backward(q)) || [])
            if (hit.state.ref !== this.current.ref && (await this.stops.dataFires([...this.hist.filter((h) => h.ref !== undefined && h.ref < hit.state.ref!), hit.state], hit, signal))) {
              this.dataHit = hit;
              return this.standEarlier(hit.state, signal);
            }
          // p is raised where the event before it is no frame unwinding into it
          if (this.exceptionStops.raised && p !== this.current && isRaise([q ?? p, p], q ? 1 : 0)) return this.standEarlier(p, signal);
          if (!q) break;
          p = q;
          // (the path to it, for a condition's names and a hit count, only where a breakpoint is hit)
          if (this.stops.hits(p.step.frame).length) {
            const path = [...this.hist.filter((h) => h.ref !== undefined && h.ref < p.ref!), p];
            if (await this.stops.stopsAt(path, path.length - 1, signal)) return this.standEarlier(p, signal);
          }
          if (n === this.maxEvents - 1) this.note(`reverse continue went back ${this.maxEvents} events without a stop and stopped there (maxEvents)`);
        }
        // The start: a script's first line, where a launch that stops on entry stands.
        if (isScriptEntry(p) && !(await this.earlier(p, "inv_step_into", signal))) p = await abortable(this.predictor.predict([p], { kind: "step_into" }, { signal }), signal);
        return p.ref === this.current.ref ? this.current : this.standEarlier(p, signal);
      }
      let k = this.pos - 1;
      while (k > 0 && !(await this.stops.stopsAt(this.hist, k, signal))) k--;
      this.pos = Math.max(0, k);
      return this.hist[this.pos];
    });
  }

  /**
   * Back to the statement that last set a watched value before here (or first bound it, where it
   * was never changed): the state of that line, the change said as a data hit (takeDataHit).
   * Where the states are one run's, event by event; the session stays, with a note, where no
   * statement before here set it.
   */
  valueOrigin(watch: Watch, signal?: AbortSignal): Promise<Predicted> {
    return this.run(signal, async () => {
      this.dataHit = undefined;
      if (!this.predictor.eventByEvent) throw new Error("where a value came from needs every event of the run: predict mode's sealed run, record, replay or hybrid mode");
      const watched = new WatchTracker([watch], true);
      watched.baseline([this.current]);
      let p = this.current;
      for (let n = 0; n < this.maxEvents; n++) {
        const q = await this.earlier(p, "inv_step_into", signal);
        if (!q) break;
        const [hit] = watched.backward(q);
        if (hit) {
          this.dataHit = hit;
          return this.standEarlier(hit.at, signal);
        }
        p = q;
      }
      this.note(`no statement before here set ${watch.path}: it holds this value from the frame's start`);
      return this.current;
    });
  }

  /** The state `kind` (an inverse action) leads to from `from`, going back in the run; undefined at its first state. */
  private async earlier(from: Predicted, kind: "inv_step_over" | "inv_step_into" | "inv_step_return", signal?: AbortSignal): Promise<Predicted | undefined> {
    const p = await abortable(this.predictor.predict([from], { kind }, { signal }), signal);
    return p.ref === from.ref ? undefined : p;
  }

  /**
   * One reverse Step Over from `from`, past call events as stepAsDebugger passes them going
   * forwards (back to the line that made the call); undefined where nothing is earlier. A call
   * with nothing before it is the session's entry (a call's arguments), and stays a stop, but for
   * a script's: its first line is where the session starts (as stopping on entry does).
   */
  private async backOne(from: Predicted, signal?: AbortSignal): Promise<Predicted | undefined> {
    // (a return is shown in its caller: back over the whole call, to its opening, and on before it)
    let p = shownInCaller(from.step.frame) ? await this.earlier(from, "inv_step_return", signal) : await this.earlier(from, "inv_step_over", signal);
    for (let n = 0; p && n < MAX_PASSED && p.step.frame?.event === "call"; n++) {
      const q = await this.earlier(p, "inv_step_into", signal);
      if (!q) return isScriptEntry(p) ? undefined : p;
      p = q;
    }
    return p;
  }

  /**
   * Stands at `p`, a state of the run before the current one (the predictor's refs are the run's
   * event indices, in program order), put into the history where it falls, so that the history
   * stays a path in program order, each entry reached from the one before by the action it
   * carries. Where no one action leads from the state before to `p` (or from `p` to the state
   * after), the history starts (or ends) at `p`: what it drops is still the run's, and going back
   * or forwards finds it again. Undefined: the current state is the first; the session stays.
   */
  private async standEarlier(p: Predicted | undefined, signal?: AbortSignal): Promise<Predicted> {
    if (!p || p.ref === undefined) {
      this.note("this is the first state of the program");
      return this.current;
    }
    let j = this.pos - 1;
    while (j >= 0 && (this.hist[j].ref ?? Infinity) > p.ref) j--;
    if (j >= 0 && this.hist[j].ref === p.ref) {
      this.pos = j;
      return this.hist[j];
    }
    const next = this.hist[j + 1];
    const into = j >= 0 ? await this.link(this.hist[j], p, signal) : undefined;
    const out = await this.link(p, next, signal);
    const placed: Predicted = { ...p, step: into ? { ...withoutAction(p.step), action: into } : withoutAction(p.step) };
    const before = into ? this.hist.slice(0, j + 1) : [];
    const after = out ? [{ ...next, step: { ...next.step, action: out } }, ...this.hist.slice(j + 2)] : [];
    this.hist = [...before, placed, ...after];
    this.pos = before.length;
    // (hit counts along the history have changed from here on)
    this.stops.forgetHits();
    return placed;
  }

  /** The forward action that leads from state `a` to the later state `b` of the same run, where one does. */
  private async link(a: Predicted, b: Predicted, signal?: AbortSignal): Promise<Action | undefined> {
    const line = b.step.frame?.line;
    const actions: Action[] = [{ kind: "step_into" }, { kind: "step_over" }, { kind: "step_return" }, ...(line !== undefined && b.step.frame?.event === "line" ? [{ kind: "breakpoint" as const, line }] : [])];
    for (const action of actions) {
      let q: Predicted;
      try {
        q = await abortable(this.predictor.predict([a], action, { signal, held: true }), signal);
      } catch (e) {
        // (a link that only a run of the program could show is left out: the history starts or ends there)
        if (e instanceof NotHeld) continue;
        throw e;
      }
      if (q.ref === b.ref) return action;
    }
    return undefined;
  }

  /** The breakpoints; a hit condition or log message that cannot be read throws (adapter/engine/breakpoints.ts). */
  setBreakpoints(bps: readonly BreakpointSpec[]): void {
    for (const b of bps) {
      if (!Number.isInteger(b.line) || b.line < 1) throw new RangeError(`bad breakpoint line ${b.line}`);
      if (b.hitCondition?.trim()) parseHitCondition(b.hitCondition);
      if (b.logMessage) parseLogMessage(b.logMessage);
    }
    this.stops.breakpoints = bps.map((b) => {
      const spec: BreakpointSpec = { line: b.line, ...(b.file !== undefined ? { file: b.file } : {}) };
      if (b.condition?.trim()) spec.condition = b.condition.trim();
      if (b.hitCondition?.trim()) spec.hitCondition = b.hitCondition.trim();
      if (b.logMessage !== undefined && b.logMessage !== "") spec.logMessage = b.logMessage;
      return spec;
    });
    // (their first hit evaluates: the evaluator gets ready now, not then)
    if (this.stops.breakpoints.some((b) => b.condition !== undefined || b.logMessage !== undefined)) this.evaluator.warm?.();
  }

  setExceptionStops(stops: ExceptionStops): void {
    this.exceptionStops = { ...stops };
  }

  /**
   * Data breakpoints: Continue stops where a watched value changes, Reverse Continue where it last
   * changed (adapter/engine/watches.ts), where the breakpoint's condition and hit condition hold.
   */
  setDataBreakpoints(breakpoints: readonly DataBreakpoint[]): void {
    this.stops.dataBreakpoints = new Map();
    this.watches = breakpoints.map(({ watch: w, condition, hitCondition }) => {
      if (hitCondition) parseHitCondition(hitCondition); // (a bad one is refused here, with its reason)
      const watch: Watch = { func: w.func, path: w.path, ...(w.file !== undefined ? { file: w.file } : {}), ...(w.object ? { object: { ...w.object } } : {}) };
      if (condition || hitCondition) this.stops.dataBreakpoints.set(watch, { watch, ...(condition ? { condition } : {}), ...(hitCondition ? { hitCondition } : {}) });
      return watch;
    });
  }

  /** Holes stop the run (the exception filter "holes"), where the run has any the model answered. */
  private get holesStop(): boolean {
    return this.exceptionStops.holes === true && this.predictor.eventByEvent === true && this.predictor.holeAnswers?.any === true;
  }

  /** The hole the model answered that stops the run at this state, if holes stop. */
  holeAt(state: Predicted): Hole | undefined {
    return this.exceptionStops.holes ? this.predictor.holeAnswers?.at(state) : undefined;
  }

  /** Watches are followed where every event of the run is known; a model's states are predicted a move at a time. */
  private get watching(): boolean {
    return this.watches.length > 0 && this.predictor.eventByEvent === true;
  }

  /** The data breakpoint the last Continue or Reverse Continue stopped at, if one did; emptied by reading. */
  takeDataHit(): DataHit | undefined {
    const hit = this.dataHit;
    this.dataHit = undefined;
    return hit;
  }

  /**
   * The repr of a Python expression's value over the current frame's values (one typed for a
   * variable, setVariable's), or over none (`alone`: a value written out, such as a function's
   * output given to predict its input), by the evaluator: never in the program's frame, since an
   * edit changes the state, not the run. Throws an Error that says why it has no value.
   */
  async valueFor(expression: string, signal?: AbortSignal, alone = false): Promise<string> {
    const [r] = await abortable(this.evaluator(alone ? {} : namesOf(this.stack()), [expression], signal), signal);
    if ("error" in r) throw new Error(r.error);
    // (a state holds what a run could write: a value whose repr is cut short is no value)
    if (r.cut) throw new Error(`too large to set: its repr is longer than a trace keeps (${cutText(r.value, 60)})`);
    return r.value;
  }

  /**
   * Edits a local of the current state, or its return value (RETURN_VALUE, at a return); see edit.
   * `at`: the frame of the stack whose local it is, the state's own (0) alone can be edited so.
   */
  setVariable(name: string, repr: string, at = 0): Predicted {
    const cur = this.current;
    const frame = cur.step.frame;
    if (!frame) throw new Error("the program has ended: there are no variables to set");
    if (this.predictor.editRefusal) throw new Error(this.predictor.editRefusal);
    const returned = name === RETURN_VALUE;
    if (at !== 0 && !returned) throw new Error(`this stop is ${frame.func}'s return: ${name} can be set at the caller's next stop`);
    if (returned && (frame.event !== "return" || frame.value === undefined)) throw new Error("only a return has a return value to set");
    if (!returned && !IDENTIFIER.test(name)) throw new Error(`"${cutText(name)}" is not a variable name`);
    // Own names only: "toString" or "__proto__" are in every object, not locals.
    if (!returned && !Object.hasOwn(frame.locals, name)) throw new Error(`there is no local named "${name}" here`);
    if (repr.trim() === "") throw new Error("a value is needed");
    // The recorded objects were the old value's: an edited state has none under that name.
    const objects = frame.objects && Object.fromEntries(Object.entries(frame.objects).filter(([path]) => !reachedFrom(path, name)));
    const changed: Frame = returned ? { ...frame, value: repr } : { ...frame, locals: { ...frame.locals, [name]: repr }, ...(objects ? { objects } : {}) };
    const edited: Predicted = { ...cur, step: { ...cur.step, frame: changed } };
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
    return stackAt(this.hist.slice(0, this.pos + 1), this.predictor);
  }

  /**
   * What a callee returned just before the current state, as a debugger shows it at the caller's
   * next stop ("(return) f"): the return before it in the history (`at`, its state), else the one
   * the run recorded just before this event (Frame.returned: a Step Over across the call).
   */
  returnedBefore(): { func: string; value: string; at?: Predicted } | undefined {
    const here = this.current.step.frame;
    if (!here) return undefined;
    const before = this.hist[this.pos - 1];
    const f = before?.step.frame;
    if (f?.event === "return" && f.value !== undefined && f.depth === here.depth + 1) return { func: f.func, value: f.value, at: before };
    return here.returned && { ...here.returned };
  }

  /**
   * Evaluates an expression at the current state, in its frame `at` (0, or the n-th caller's on
   * the stack): in the program's own frame where the predictor can run it there (sealed), else by
   * the evaluator over the values the state holds, the predictor answering (for the current frame)
   * where the expression reads a value the state knows only by its repr.
   */
  evaluate(expression: string, signal?: AbortSignal, at = 0): Promise<Evaluated> {
    return this.run(signal, async () => {
      const frame = this.current.step.frame;
      let reason = "the program has ended";
      let ask = at === 0;
      if (frame) {
        // A local or a local object's path the state holds is its value at this state, as the program's frame would give it: no run.
        const stack = this.stack().slice(at);
        const own = ownValue(stack[0], expression);
        if (own) return own;
        const live = await abortable(this.predictor.inspect?.(this.hist.slice(0, this.pos + 1), expression, at, { signal }) ?? Promise.resolve(undefined), signal);
        if (live) return live;
        const recorded = recordedValue(stack, expression);
        if (recorded) return recorded;
        const [r] = await abortable(this.evaluator(namesOf(stack), [expression], signal), signal);
        if (!("error" in r)) return { value: r.value, ...(r.stdout ? { stdout: r.stdout } : {}) };
        reason = r.error;
        // The predictor answers only for a value the state does not hold (an object known by its repr); CPython's own error is the answer.
        ask &&= r.unknown !== undefined;
      }
      const answer = ask ? await abortable(this.predictor.evaluate?.(this.hist.slice(0, this.pos + 1), expression, { signal }) ?? Promise.resolve(undefined), signal) : undefined;
      if (answer === undefined) throw new Error(`cannot evaluate "${cutText(expression)}": ${reason}`);
      return { value: answer };
    });
  }

  /**
   * Sets a local of the current frame as debugpy does, by running `name = value` in the program's
   * frame (execute): the value is any expression there, and the run goes on from it. Undefined
   * where the predictor cannot (then setVariable).
   */
  async assign(name: string, value: string, signal?: AbortSignal, at = 0): Promise<Evaluated | undefined> {
    const frame = this.current.step.frame && this.stack()[at];
    if (!frame) throw new Error("the program has ended: there are no variables to set");
    // A hole's own answer is set as the hole's (setVariable): the answer is kept for later launches.
    const hole = this.predictor.guessed?.(frame)?.get(name);
    if (!this.executes || name === RETURN_VALUE || (hole && !hole.derived)) return undefined;
    if (!IDENTIFIER.test(name) || !Object.hasOwn(frame.locals, name)) throw new Error(`there is no local named "${cutText(name)}" here`);
    if (value.trim() === "") throw new Error("a value is needed");
    return (await this.execute(`${name} = ${value}`, signal, at)) ?? undefined;
  }

  /** Whether a line of the Debug Console can run with its effects kept (Predictor.execute: predict mode's sealed run). */
  get executes(): boolean {
    return this.predictor.execute !== undefined;
  }

  /**
   * Runs a line of the Debug Console at the current state, in its frame `at`, its effects kept
   * (Predictor.execute): the session stands at the same state of the run that has it, what it knew
   * of the future dropped. Undefined where the predictor cannot run it here (then evaluate).
   * Throws the error the line raised, after standing at the state it left.
   */
  execute(code: string, signal?: AbortSignal, at = 0): Promise<Evaluated | undefined> {
    return this.run(signal, async () => {
      if (!this.current.step.frame) throw new Error("the program has ended");
      // Reading a local or a local object's path the state holds changes nothing: its recorded value, no run.
      const own = ownValue(this.stack()[at], code.trim());
      if (own) return own;
      const ran = await abortable(this.predictor.execute?.(this.hist.slice(0, this.pos + 1), code, at, { signal }) ?? Promise.resolve(undefined), signal);
      if (!ran) return undefined;
      this.standAt(ran.state);
      if ("error" in ran.result) throw Object.assign(new Error(ran.result.error), { stdout: ran.result.stdout });
      return ran.result;
    });
  }

  /** The session's history in the trajectory format. */
  trajectory(meta?: Record<string, unknown>): Trajectory {
    const steps: Step[] = this.hist.map((p, i) => (i === 0 ? withoutAction(p.step) : p.step));
    const python = this.predictor.python;
    return { version: FORMAT_VERSION, ...(python ? { python } : {}), ...(meta ? { meta } : {}), source: this.predictor.source, steps };
  }

  // ---- internals ----

  private async forward(action: Action, signal?: AbortSignal): Promise<Predicted> {
    const next = this.hist[this.pos + 1];
    if (next && sameAction(next.step.action, action)) {
      await this.arrived(this.hist, ++this.pos, this.pos, signal);
      return this.current;
    }
    const cur = this.current;
    if (cur.step.exit) return cur; // the exit is final
    const base = this.hist.slice(0, this.pos + 1);
    const p = await abortable(this.predictor.predict(base, action, { signal, breakpoints: this.stops.breakpoints }), signal);
    this.commit([...base, p]);
    await this.arrived(this.hist, this.pos, this.pos, signal);
    return this.settle(signal);
  }

  /**
   * Step Over and Step Out as debugpy does them where a breakpoint that stops lies inside what
   * they run: event by event (step_into) from the current state until the frame stops again or is
   * left (step_over) or returns (step_return), where the action would land, stopping on the way at
   * a breakpoint hit whose condition holds, or at a hole the model answered (where holes stop).
   * "stopped" at that hit, committed; undefined where there is none, or where a state on the way
   * is a model's guess (stepping event by event would cost a prediction each) or the way is longer
   * than maxEvents: the caller then takes the action in one prediction. A predictor that bounds a
   * Continue (a long run) goes no event by event: "landed" where the move landed with no hit
   * that stops, committed too.
   */
  private async toBreakpoint(kind: "step_over" | "step_return", signal?: AbortSignal): Promise<"stopped" | "landed" | undefined> {
    const cur = this.current;
    const f = cur.step.frame;
    if (!this.stepOverStops || !f || !(this.stops.breakpoints.some((b) => b.logMessage === undefined) || this.holesStop)) return undefined;
    const next = this.hist[this.pos + 1];
    if (next && sameAction(next.step.action, { kind })) return undefined; // known already: forward reuses it
    // The frame's depth (from a return: its caller's), as real/semantics.ts reads it.
    const d = f.event === "return" ? f.depth - 1 : f.depth;
    const until: Bound = kind === "step_over" ? { depth: d } : { returnAt: d };
    const movesTo = (g: Frame): boolean => reachesBound(g, until);
    const from = this.pos + 1;
    const path = this.hist.slice(0, from);
    // A predictor that bounds a Continue runs the program to the first breakpoint hit or the
    // move's landing, whichever comes first, however far (a long run): a Continue so bounded, again
    // from each hit that does not stop.
    if (this.predictor.bounds && !this.holesStop) {
      const run = await this.runOn(path, { kind: "continue" }, signal, until);
      const end = run.at(-1)!;
      // (where it ended where the move lands, no breakpoint stopped it: the move's own state)
      const landed = !end.step.frame || movesTo(end.step.frame);
      if (landed) run[run.length - 1] = { ...end, step: { ...end.step, action: { kind } } };
      this.commit(run);
      await this.arrived(run, from, run.length - 1, signal);
      await this.settle(signal);
      return landed ? "landed" : "stopped";
    }
    for (let n = 0; n < this.maxEvents; n++) {
      const p = await abortable(this.predictor.predict(path, { kind: "step_into" }, { signal, breakpoints: this.stops.breakpoints }), signal);
      if (p.confidence !== undefined && !p.computed && !p.given) return undefined;
      path.push(p);
      const g = p.step.frame;
      if (!g || movesTo(g)) return undefined;
      if (this.holeAt(p) || (await this.stops.stopsAt(path, path.length - 1, signal))) {
        this.commit(path);
        await this.arrived(path, from, path.length - 1, signal);
        await this.settle(signal);
        return "stopped";
      }
    }
    return undefined;
  }

  /**
   * Predicts `action` (continue, or step_into to go event by event) again and again from the
   * end of `base` until a state stops the run: the exit, a breakpoint hit that stops, a continue
   * that stopped off the breakpoints, or going event by event with raised exceptions stopping,
   * a raised exception; at most maxSteps predictions (maxEvents event by event).
   */
  private async runOn(base: readonly Predicted[], action: Action, signal?: AbortSignal, until?: Bound): Promise<Predicted[]> {
    const path = [...base];
    const stepping = action.kind === "step_into";
    const watched = stepping && this.watching ? new WatchTracker(this.watches) : undefined;
    watched?.baseline(stackAt(base, this.predictor).reverse().map((frame) => ({ step: { frame } })));
    for (let n = 1; ; n++) {
      const p = await abortable(this.predictor.predict(path, action, { signal, breakpoints: this.stops.breakpoints, ...(until ? { until } : {}) }), signal);
      path.push(p);
      const i = path.length - 1;
      if (p.step.exit || (await this.stops.stopsAt(path, i, signal))) break;
      // (a Continue bounded as a Step Over: where that lands, a hit that does not stop ends it too)
      if (until && reachesBound(p.step.frame!, until)) break;
      if (stepping && this.exceptionStops.raised && isRaise(path, i)) break;
      if (stepping && this.holeAt(p)) break;
      for (const hit of watched?.forward(p) ?? []) if (!this.dataHit && (await this.stops.dataFires(path, hit, signal))) this.dataHit = hit;
      if (this.dataHit) break;
      // A continue that comes back without a breakpoint hit has stopped for its own reasons.
      if (!stepping && !this.stops.hits(p.step.frame).length) break;
      if (n >= (stepping ? this.maxEvents : this.maxSteps)) {
        this.note(stepping ? `the run went ${n} events without an exception stop and stopped there (maxEvents)` : `continue stopped after ${n} breakpoint hits that did not stop (maxSteps)`);
        break;
      }
    }
    return path;
  }

  /** States path[from..to] have been reached going forwards: the log points they hit write their messages. */
  private async arrived(path: readonly Predicted[], from: number, to = from, signal?: AbortSignal): Promise<void> {
    for (let i = from; i <= to; i++) {
      const f = path[i].step.frame;
      for (const b of this.stops.hits(f))
        if (b.logMessage !== undefined && (await this.stops.fires(path, i, b, signal)))
          this.pendingLogs.push({ text: await formatLogMessage(b.logMessage, (exprs) => this.stops.valuesAt(path, i, exprs, signal)), state: path[i] });
    }
  }

  private commit(hist: Predicted[]): void {
    this.hist = hist;
    this.pos = hist.length - 1;
  }

  /** The predictor catches up with the stop; a state it answers instead replaces the current one, as an edit does. */
  private async settle(signal?: AbortSignal): Promise<Predicted> {
    const instead = await this.predictor.settle?.(this.hist.slice(0, this.pos + 1), { signal, breakpoints: this.stops.breakpoints });
    return instead ? this.standAt(instead) : this.current;
  }

  /** The one way the current state is replaced: what follows it is no longer known. */
  private standAt(state: Predicted): Predicted {
    this.hist = [...this.hist.slice(0, this.pos), state];
    return state;
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

/** The same program state, or the same end, whatever output was written on the way to it. */
function sameStep(a: Step, b: Step): boolean {
  if (a.exit || b.exit) return !!a.exit && !!b.exit && a.exit.status === b.exit.status && a.exit.value === b.exit.value;
  return sameState(a.frame!, b.frame!);
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
