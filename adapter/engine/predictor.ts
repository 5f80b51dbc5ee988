// What the engine asks of a source of states. A predictor never knows about DAP; the engine
// never knows which predictor it has (recorded trace, model, ...).
import type { Action, Bound, Frame, Objects, Step } from "../format/trajectory.js";
import type { ValueResult } from "../format/values.js";
import type { TypedHole } from "../format/valueType.js";

/** A state with what produced it. */
export interface Predicted {
  step: Step;
  /** The confidence shown (model predictors), 0..1: the model's calibrated probability that the state is exact, or without a calibration the mean probability of its tokens. */
  confidence?: number;
  /** What the model's tokens said before calibration (adapter/model/calibration.ts, StateScore): the mean, least and log-summed probability of its tokens. */
  score?: { mean: number; min: number; logProb: number; tokens: number };
  /** Known without a prediction (the entry call's frame, bound from the call; the real state a resync stands at; a state `computed` from a given one): not shown as a guess. */
  given?: boolean;
  /** Decided by the program from the state before, not predicted: as sure as that state (its `confidence`), and no surer. */
  computed?: boolean;
  /** Tokens generated for this state. */
  tokens?: number;
  /** Time taken, in milliseconds. */
  ms?: number;
  /** The predictor's own handle for the state (e.g. its index in a recorded trace). */
  ref?: number;
}

/** An expression's value: its repr, and what the Variables view opens of it where the program computed it. */
export interface Evaluated {
  value: string;
  /** Its objects, rooted at `path` (Frame.objects). */
  objects?: Objects;
  /** The expression as the root of `objects` (parenthesized where it is no plain name). */
  path?: string;
  /** What evaluating it wrote to standard output. */
  stdout?: string;
}

/** A line run with its effects kept (Predictor.execute): the state it leaves, and its value ("" for a statement) or the error it raised. */
export interface RanLine {
  state: Predicted;
  result: Evaluated | { error: string; stdout?: string };
}

/**
 * What evaluates Python expressions over a state's values, names to reprs, one result each:
 * CPython, sealed (`evaluateValues`, adapter/real/sealed.ts), given to the engine by whoever makes it.
 */
export interface ValueEvaluator {
  (names: Record<string, string>, expressions: readonly string[], signal?: AbortSignal): Promise<ValueResult[]>;
  /** Gets ready to evaluate, in the background (the sealed CPython loads in seconds): called when breakpoints that evaluate are set. */
  warm?(): void;
}

/** A breakpoint: a line of the program (or of another user file: `file`, as frames name it), and the condition under which a continue stops there. */
export interface BreakpointSpec {
  line: number;
  file?: string;
  condition?: string;
}

/** The name a return state's value goes by where names are given: in marks, edits and the Variables view. */
export const RETURN_VALUE = "(return)";

/** A value of a real state that the model filled in (hybrid mode): which hole it came from, and the confidence of the answer. */
export interface Guess {
  hole: number;
  confidence?: number;
  /** The user set this hole's value: no longer a guess, but still the hole's (it can be set again). */
  set?: boolean;
  /** The hole's value is the result its docstring's example (at this line) shows for this very call: exact, no guess. */
  docstring?: number;
  /** Computed for real from the hole's value (`q = p`, `s += p`, an argument, a return): not the hole's own answer, so not settable. */
  derived?: boolean;
}

/** A hole the run met (predict mode's sealed run, hybrid mode): what a stop there, or a list of them, shows. */
export interface Hole {
  /** A stub (its return value), or a missing call (the value its result is assigned to). */
  kind: "function" | "call";
  /** The stub's qualified name, or the missing call's dotted name. */
  name: string;
  /** Where the answer is set: "(return)" at the stub's return, the name a missing call's result is assigned to. */
  variable: string;
  /** The line where the hole is (the stub's body, or the call). */
  line: number;
  /** The value it was given (a literal's repr), and by whom (the model's with its confidence); none where none could be had (the program raised there, `error`). */
  repr?: string;
  by: "model" | "docstring" | "user";
  confidence?: number;
  /** A docstring's answer: the example's line. */
  docstring?: number;
  error?: string;
  /** What the answer depends on: the stub's arguments, or the locals where the missing call is made. */
  arguments: Record<string, string>;
}

export interface PredictOptions {
  signal?: AbortSignal;
  /**
   * The session's breakpoints, for `continue`: the prediction stops at the first breakpoint line
   * reached, else runs to the exit. The engine passes hits whose condition is false by asking
   * again (continue, from the hit); a predictor may read the conditions, but need not.
   */
  breakpoints?: readonly BreakpointSpec[];
  /**
   * For `continue`, of a predictor that `bounds` it: it also lands where a Step Over (`depth`) or
   * Step Out (`returnAt`) from where it began lands, the rest of a Step Over or Step Out that
   * stops at the breakpoints in the calls it passes (Engine.toBreakpoint).
   */
  until?: Bound;
  /** The state asked for is a hole's answer whose annotation declares its type: a predictor that cannot hold its answer to it may ignore it. */
  hole?: TypedHole;
  /**
   * Answer only from what the predictor holds, running nothing: a predictor that would have to
   * run the program for the answer (a long run past its windows) rejects with NotHeld. The
   * engine asks so where it only checks how two states it has are linked.
   */
  held?: boolean;
}

/** The answer needs a run of the program, and PredictOptions.held asked for none. */
export class NotHeld extends Error {
  constructor() {
    super("the answer needs a run of the program");
  }
}

export interface Predictor {
  /** The program text that line numbers refer to. */
  readonly source: string;
  /** The minor version of the Python whose states these are ("3.11"), when known. */
  readonly python?: string;
  /** The first state of a session. */
  start(opts?: PredictOptions): Promise<Predicted>;
  /**
   * The state that `action` leads to from the last entry of `history` (the session so far,
   * oldest first). The last entry may have been edited (setVariable): predict from it as it is.
   */
  predict(history: readonly Predicted[], action: Action, opts?: PredictOptions): Promise<Predicted>;
  /**
   * The session has stopped at the last state of `history` (after start, or after a forward
   * move: the one user action's last state, where predict may have been asked several times).
   * A predictor that keeps something in step with the session (compare mode: the real program)
   * catches up here. It may answer the state to stand at instead (a resync: the real state),
   * which the engine takes as an edit.
   */
  settle?(history: readonly Predicted[], opts?: PredictOptions): Promise<Predicted | undefined>;
  /**
   * Its states are one run's, every event of it (a recording; the program run sealed or for real),
   * not predicted one at a time: Step Over can go event by event to a breakpoint inside the call
   * it steps over, as debugpy stops there, at no cost; Step Back and Reverse Continue go back over
   * the run, not the history. Its states' refs are then their indices in the run, in program order.
   */
  readonly eventByEvent?: boolean;
  /**
   * It reads PredictOptions.until (a long run, whose Step Over past its windows runs the program
   * rather than going event by event): Step Over and Step Out stop at a breakpoint however deep
   * into the call, not only within the first maxEvents events of it.
   */
  readonly bounds?: boolean;
  /**
   * A run with holes: `met`, every hole it met, in order; `at`, the hole the model answered whose
   * answer a state of the run first shows (a stub's return, or where a missing call's result was
   * assigned), where a session stops for it; `any`: whether there is one (a Continue then goes
   * event by event where holes stop it).
   */
  readonly holeAnswers?: { at(state: Predicted): Hole | undefined; readonly any: boolean; readonly met: readonly Hole[] };
  /** A replayed trace file: every event of a run, or the stops of a saved debugging session. */
  readonly replays?: "run" | "session";
  /** A replayed trace file's program as its header names it, and its file where it is still there unchanged (its lines are shown from it). */
  readonly programName?: string;
  readonly sourceFile?: string;
  /** Why states cannot be edited (setVariable) and predicted from, when they cannot. */
  readonly editRefusal?: string;
  /** Why the local `name` (or RETURN_VALUE) of `state` cannot be set, when the answer depends on the value (in place of editRefusal). */
  refuseEdit?(state: Predicted, name: string): string | undefined;
  /**
   * The values of a real state (the current one, or a caller's frame) that the model filled in,
   * by local name (RETURN_VALUE: the return value); for predictors whose states are real but for
   * some values (hybrid mode). Predictors whose every state is a guess leave it out.
   */
  guessed?(frame: Frame): ReadonlyMap<string, Guess> | undefined;
  /**
   * The output a state carries (written on the way to it) was written by a line that read a value
   * the model filled in (hybrid mode, predict mode's holes): the guess it depends on. Real output
   * otherwise.
   */
  guessedOutput?(step: Step): Guess | undefined;
  /**
   * The callers of the last state of `history`, innermost first, when the predictor knows them
   * (a recording knows every caller's state at any point; a history skips what a continue ran).
   */
  callers?(history: readonly Predicted[]): Frame[] | undefined;
  /**
   * Answers an expression about the last state of `history` that reads a value the state knows only
   * by its repr (an object), without running code; undefined when it cannot.
   */
  evaluate?(history: readonly Predicted[], expression: string, opts?: PredictOptions): Promise<string | undefined>;
  /**
   * Evaluates an expression in the program's own frame at the last state of `history` (`frame`: 0,
   * or the n-th caller's), as a
   * debugger's console does: by running the program, sealed, up to that state, then the
   * expression there (the program's objects, its functions and methods). The engine asks it
   * before anything else; undefined where the state is not one of the predictor's runs. Rejects
   * with the error the expression raised.
   */
  inspect?(history: readonly Predicted[], expression: string, frame: number, opts?: PredictOptions): Promise<Evaluated | undefined>;
  /**
   * Expressions (breakpoint conditions, a log message's parts) evaluated in the program's own frame
   * at the last state of `history`, where a run that repeats holds it; undefined elsewhere (the
   * engine then evaluates them over the state's values). An expression's error is its result.
   */
  valuesAt?(history: readonly Predicted[], expressions: readonly string[], opts?: PredictOptions): Promise<ValueResult[] | undefined>;
  /**
   * Runs a line of the Debug Console (a statement, or an expression such as a method call) in the
   * program's frame at the last state of `history` (`frame`: 0, or the n-th caller's) with its
   * effects kept, as debugpy's console does: the line becomes part of the run's input and the
   * program runs again with it (predict mode's sealed run is a pure function of its input), so the
   * states after it, and going back over it, stay exact. Answers the same state of the new run and
   * the line's result; undefined where the predictor cannot (the line is then only evaluated).
   */
  execute?(history: readonly Predicted[], code: string, frame: number, opts?: PredictOptions): Promise<RanLine | undefined>;
  /**
   * A pause (`true`): the run that the move under way waits on stops where it is, and the move
   * lands there, as a debugger pauses a running program; until the move is over (`false`). Whether
   * this predictor's moves pause so: each then ends, landed or rejected as aborted (where its run
   * cannot stop: it stays where it began). A move of a predictor that cannot is aborted.
   */
  pause?(asked: boolean): boolean;
  dispose(): Promise<void> | void;
}
