// What the user is told about where the values at a stop come from. In predict mode (and on
// compare mode's predicted side) a state is the model's guess unless the program decides it:
// the entry call's frame, bound from the call, and the states the rules compute step by step
// from a known one (adapter/rules/reach.ts: `ahead`) are shown as they are; a state computed from
// a guess says "from a predicted value". VS Code has no "predicted" presentation hint, so the
// mark goes where its UI shows it. The scope's name carries the state's confidence ("Predicted
// locals (84%)"); each variable's `type` says "predicted" (the Variables view shows it on hover,
// and inline with debug.showVariableTypes); below the user's threshold every value ends in a
// "⚠ low confidence" mark; evaluate results (hover, watch, the Debug Console) end in
// "(predicted, 84%)"; predicted stdout goes to the console as labelled lines, never as the
// program's own output. Record and replay values are real: no marks. In hybrid mode states are
// real but for the values the model filled in: those are marked one by one, and so are values
// computed from them ("from a predicted value"), and output written by a line that read one.
import type { Engine } from "../engine/engine.js";
import { RETURN_VALUE, type Guess, type Predicted, type Predictor } from "../engine/predictor.js";
import { mentions } from "../pyread/expressions.js";
import type { Frame } from "../format/trajectory.js";

/**
 * Where a state's values come from: the real program (or the entry call's arguments; `docstring`:
 * a hole's value its docstring's example at that line gives for this very call), or the model.
 */
export type Origin = { predicted: false; docstring?: number } | { predicted: true; confidence?: number; low: boolean; derived?: boolean };

export const REAL: Origin = { predicted: false };

export const LOW_MARK = "⚠ low confidence";
export const OUTPUT_LABEL = "[predicted output] ";
/** Output the program wrote from a value the model filled in (hybrid mode, predict mode's holes). */
export const DERIVED_OUTPUT_LABEL = "[from a predicted value] ";

/**
 * The origin of a state's values. `predicts`: the session shows the model's states (predict
 * mode, or compare mode with the model). A given state (the entry call's frame) is no guess.
 */
export function originOf(p: Predicted | undefined, predicts: boolean, threshold: number): Origin {
  if (!predicts || !p || p.given) return REAL;
  // (a state the program decided from a predicted one: its values are computed from guesses)
  return p.computed ? { ...predicted(p.confidence, threshold), derived: true } : predicted(p.confidence, threshold);
}

/** The origin of a value the model filled into a real state (hybrid mode); a value the user set is theirs. */
export function originOfGuess(g: Guess, threshold: number): Origin {
  if (g.set) return REAL;
  // (exact: the hole's own value says where it was read; what is computed from it is plainly real)
  if (g.docstring !== undefined) return g.derived ? REAL : { predicted: false, docstring: g.docstring };
  const o = predicted(g.confidence, threshold);
  return g.derived ? { ...o, derived: true } : o;
}

/** What a session's stop shows: its history (the engine), its predictor and its stack. */
export interface Shown {
  engine?: Engine;
  predictor?: Predictor;
  /** The session shows the model's states (predict mode, or compare mode with the model); a sealed run's are real but for its holes. */
  predicts: boolean;
  /** The user's low-confidence threshold. */
  threshold: number;
  /** The current stack, innermost first. */
  frames: readonly Frame[];
}

/** Where each value of a session's stop comes from: a state's, a frame's of the stack, one value's. */
export class Origins {
  constructor(private readonly shown: Shown) {}

  /** A state's values. */
  of(p: Predicted | undefined): Origin {
    return originOf(p, this.shown.predicts, this.shown.threshold);
  }

  /** A value the model filled into a real state. */
  guess(g: Guess): Origin {
    return originOfGuess(g, this.shown.threshold);
  }

  /** The values of the frame at `index` of the stack: those of the state it was shown in (a caller's frame is its latest state). */
  frame(index: number): Origin {
    const { engine, predicts, frames } = this.shown;
    if (!engine || !predicts) return REAL;
    if (index === 0) return this.of(engine.current);
    return this.of(engine.history.find((p) => p.step.frame === frames[index]) ?? engine.current);
  }

  /**
   * The value a return gave (`at`: its state, where the history holds it): the return's state's,
   * or the model's where it answered a hole; else, a value the run recorded just before the
   * current state (Frame.returned), as the current state's marks say of "(return)".
   */
  returned(at: Predicted | undefined): Origin {
    const hole = at?.step.frame && this.shown.predictor?.guessed?.(at.step.frame)?.get(RETURN_VALUE);
    return hole ? this.guess(hole) : at ? this.of(at) : this.value(0, RETURN_VALUE);
  }

  /**
   * One value of the frame at `index`: the frame's, or, in a real state (hybrid mode, predict
   * mode's holes), the model's for a value it filled in. `name`: a local, "(return)", or an
   * expression (predicted when it reads a predicted local).
   */
  value(index: number, name: string): Origin {
    const o = this.frame(index);
    const frame = this.shown.frames[index];
    const guesses = frame && !o.predicted ? this.shown.predictor?.guessed?.(frame) : undefined;
    if (!guesses?.size) return o;
    const g = guesses.get(name) ?? [...guesses].find(([n]) => n !== RETURN_VALUE && mentions(name, n))?.[1];
    return g ? this.guess(g) : o;
  }
}

/** "predicted", or for a value computed from one, "from a predicted value". */
export const guessWord = (o: Origin): string => (o.predicted && o.derived ? "from a predicted value" : "predicted");

/** A guess, with the model's confidence where it is known, low below the user's threshold. */
function predicted(c: number | undefined, threshold: number): Extract<Origin, { predicted: true }> {
  return c === undefined ? { predicted: true, low: false } : { predicted: true, confidence: c, low: c < threshold };
}

/** "84%", "41% ⚠ low confidence"; empty when the confidence is not known (a state the user edited). */
export function confidenceText(o: Origin): string {
  if (!o.predicted || o.confidence === undefined) return "";
  return `${Math.round(o.confidence * 100)}%` + (o.low ? ` ${LOW_MARK}` : "");
}

/** A scope's name: `base` as it is for real values, else "Predicted locals (84%)". */
export function scopeName(o: Origin, base = "Locals", predicted = "Predicted locals"): string {
  if (!o.predicted) return base;
  const c = confidenceText(o);
  return c ? `${predicted} (${c})` : predicted;
}

/** A variable of a predicted state: "predicted" in its type, and the low-confidence mark on its value. */
export function markVariable<V extends { value: string; type?: string }>(v: V, o: Origin): V {
  if (!o.predicted) {
    if (o.docstring === undefined) return v;
    const from = `from the docstring (line ${o.docstring})`;
    return { ...v, type: v.type ? `${v.type} · ${from}` : from };
  }
  const mark = `${guessWord(o)}${o.confidence !== undefined ? ` (${Math.round(o.confidence * 100)}%)` : ""}`;
  return { ...v, type: v.type ? `${v.type} · ${mark}` : mark, value: o.low ? `${v.value}  ${LOW_MARK}` : v.value };
}

/** A value the user typed over a marked one (VS Code starts the edit from the value shown): without the mark. */
export const unmarked = (value: string): string => (value.endsWith(LOW_MARK) ? value.slice(0, -LOW_MARK.length).trimEnd() : value);
