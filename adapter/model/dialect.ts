// What a prompt dialect does: turn a session (program, states so far, action) into a prompt and
// decoding constraints, and the model's answer back into a state. Two dialects implement it:
// native (our trajectory format, adapter/model/native.ts) and instruct (any chat model, JSON,
// adapter/model/instruct.ts).
import type { Token } from "node-llama-cpp";
import type { Action, Frame, Step } from "../format/trajectory.js";
import type { TypedHole } from "../format/valueType.js";
import type { PySource } from "../pyread/source.js";
import type { ChatTurn } from "./sequence.js";
import { funcLines, scopeOfFunc, type ScopeLines } from "../rules/grammar.js";
import { refusal } from "../rules/refusal.js";
import type { Reach } from "../rules/reach.js";

export type DialectName = "native" | "instruct";

/** The model's answer is not a state of this program: the session shows it and stays where it was. */
export class PredictionError extends Error {
  constructor(
    message: string,
    /** What the model wrote. */
    readonly raw: string,
  ) {
    super(message);
    this.name = "PredictionError";
  }
}

export interface DialectRequest {
  /** The prompt's tokens; empty where the dialect has no vocabulary (a served chat model: `messages`). */
  prompt: Token[];
  /** The same request as a chat, for a server that applies its model's chat template (the instruct dialect). */
  messages?: ChatTurn[];
  /** GBNF text (a LlamaGrammar, checked when built, where the adapter has the model's vocabulary). */
  grammar?: { readonly grammar: string };
  stopTokens: Token[];
  stopText?: string;
  maxTokens: number;
}

export interface Dialect {
  readonly name: DialectName;
  /** The states this program can reach (and those it decides) from each state. */
  readonly reach: Reach;
  /** The prompt for the state `action` leads to from the last step of `steps` (`hole`: its value's declared type, where the dialect's grammar can hold to it). */
  request(steps: readonly Step[], action: Action, hole?: TypedHole): Promise<DialectRequest>;
  /** The state the model wrote; throws PredictionError when it is not one. */
  parse(text: string, steps: readonly Step[], action: Action): Step;
  /** A question about the current state (instruct models); undefined when the dialect has none. */
  question?(steps: readonly Step[], expression: string): Promise<DialectRequest>;
  answer?(text: string): string;
}

/** Checks a parsed frame against the program: a function of this file, standing on one of its lines. */
export function checkFrame(frame: Frame, table: readonly ScopeLines[], raw: string): void {
  if (frame.file !== undefined) return; // another user file: its lines are not ours to check
  const scope = scopeOfFunc(table, frame.func);
  if (!scope) throw new PredictionError(`the model predicted a frame of "${frame.func}", which this program does not define`, raw);
  if (!funcLines(scope, frame.func).includes(frame.line))
    throw new PredictionError(`the model predicted line ${frame.line} in ${frame.func}, which is not an executable line of it`, raw);
  if (frame.event === "exception" && frame.value === undefined) throw new PredictionError("the model predicted an exception without its value", raw);
}

/** Checks a parsed state against the states the program can reach from the last of `steps` by `action`. */
export function checkReachable(reach: Reach, steps: readonly Step[], action: Action, step: Step, raw: string): void {
  const next = reach.next(steps, action);
  const why = next && refusal(next, step, lastFrame(steps));
  if (why) throw new PredictionError(`the model predicted a state this program cannot be in: ${why}`, raw);
}

/** The last frame of a list of steps. */
export function lastFrame(steps: readonly Step[]): Frame | undefined {
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i].frame) return steps[i].frame;
  return undefined;
}

export type { PySource };
