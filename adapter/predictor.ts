// What the engine asks of a source of states. A predictor never knows about DAP; the engine
// never knows which predictor it has (recorded trace, model, ...).
import type { Action, Frame, Step } from "./trajectory.js";

/** A state with what produced it. */
export interface Predicted {
  step: Step;
  /** Mean probability of the generated tokens (model predictors), 0..1. */
  confidence?: number;
  /** Known without a prediction (the entry call's frame, bound from the call): not shown as a guess. */
  given?: boolean;
  /** Tokens generated for this state. */
  tokens?: number;
  /** Time taken, in milliseconds. */
  ms?: number;
  /** The predictor's own handle for the state (e.g. its index in a recorded trace). */
  ref?: number;
}

export interface PredictOptions {
  signal?: AbortSignal;
  /** Breakpoint lines, for `continue`: stop at the first of them reached, else run to the exit. */
  breakpoints?: readonly number[];
}

export interface Predictor {
  /** The program text that line numbers refer to. */
  readonly source: string;
  /** The first state of a session. */
  start(opts?: PredictOptions): Promise<Predicted>;
  /**
   * The state that `action` leads to from the last entry of `history` (the session so far,
   * oldest first). The last entry may have been edited (setVariable): predict from it as it is.
   */
  predict(history: readonly Predicted[], action: Action, opts?: PredictOptions): Promise<Predicted>;
  /** Why states cannot be edited (setVariable) and predicted from, when they cannot. */
  readonly editRefusal?: string;
  /**
   * The callers of the last state of `history`, innermost first, when the predictor knows them
   * (a recording knows every caller's state at any point; a history skips what a continue ran).
   */
  callers?(history: readonly Predicted[]): Frame[] | undefined;
  /** Answers an expression about the last state of `history` without running code; undefined when it cannot. */
  evaluate?(history: readonly Predicted[], expression: string, opts?: PredictOptions): Promise<string | undefined>;
  dispose(): Promise<void> | void;
}
