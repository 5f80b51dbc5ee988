// How a stop is told over DAP: the stopped event for the session's cause (Session.cause) and the
// move that led there, the exception widget's details (exceptionInfo), and the name debugpy gives
// a value a function returned.
import { StoppedEvent } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { RETURN_VALUE, type Hole } from "../engine/predictor.js";
import { dataHitText } from "../engine/watches.js";
import type { Frame } from "../format/trajectory.js";
import { cutText } from "../format/values.js";
import type { Cause } from "../session/session.js";

/** The one thread a Python program's states stand in. */
export const THREAD_ID = 1;

/** How the session came to a stop: each DAP move, "origin" the jump back to where a value was set. */
export type MoveKind = "entry" | "step" | "continue" | "back" | "reverse" | "origin";

/** A hole's stop, said: where, the model's suggestion and how to answer it. */
export function holeText(h: Hole): string {
  const args = Object.entries(h.arguments).map(([k, v]) => `${k}=${cutText(v, 40)}`).join(", ");
  const where = h.kind === "function" ? `${h.name}(${args})` : `${h.name}() at line ${h.line}`;
  const confidence = h.confidence !== undefined ? ` (${Math.round(h.confidence * 100)}%)` : "";
  return `${where} cannot run: the model suggests ${cutText(h.repr ?? "", 120)}${confidence}. Set ${h.variable} to answer it (kept for later launches), or Continue to take the suggestion.`;
}

/** The name debugpy gives a return's value in the caller's Locals: "(return) f" (`func`: the function's qualified name). */
export const returnName = (func: string): string => `${RETURN_VALUE} ${func.split(".").at(-1)}`;

export interface StopFacts {
  /** A pause (a move aborted): told as such, whatever else holds there. */
  override?: string;
  /** Whether the exception at the stop is the model's (asked only at an exception). */
  predicted: () => boolean;
  /** The data breakpoint that stopped it, by its watch (a dataId). */
  dataId: (watchKey: string) => number | undefined;
  /** The line breakpoints at the stop (asked where a Continue, Reverse Continue or a Step Over that ran into one stopped). */
  breakpointIds: () => number[];
  /** A Step Over stopped deeper than it started: at a breakpoint inside the call it stepped over. */
  overStopped: boolean;
}

/** The stopped event for a stop that is no exit. */
export function stoppedEvent(kind: MoveKind, cause: Cause, facts: StopFacts): DebugProtocol.StoppedEvent {
  const ev = new StoppedEvent(facts.override ?? (kind === "entry" ? "entry" : "step"), THREAD_ID) as DebugProtocol.StoppedEvent;
  if (cause.kind === "hole") {
    // A hole stops as an exception does: VS Code shows the description in its exception widget (exceptionInfo).
    ev.body.reason = "exception";
    ev.body.text = "Hole";
    ev.body.description = holeText(cause.hole);
  } else if (cause.kind === "exception") {
    ev.body.reason = "exception";
    ev.body.text = cause.value;
    ev.body.description = `${facts.predicted() ? "Predicted exception" : "Exception"}: ${cause.value ?? ""}`;
  } else if (cause.kind === "data") {
    ev.body.reason = kind === "origin" ? "goto" : "data breakpoint";
    ev.body.description = dataHitText(cause.hit, kind === "origin");
    const id = facts.dataId(JSON.stringify(cause.hit.watch));
    if (id !== undefined && kind !== "origin") ev.body.hitBreakpointIds = [id];
  } else if (!facts.override && (kind === "continue" || kind === "reverse" || facts.overStopped)) {
    const hit = facts.breakpointIds();
    if (hit.length) {
      ev.body.reason = "breakpoint";
      ev.body.hitBreakpointIds = hit;
    }
  }
  ev.body.allThreadsStopped = true;
  return ev;
}

/** The exception widget's details at a hole's stop or an exception's; a message where the stop is neither. */
export function exceptionInfo(hole: Hole | undefined, frame: Frame | undefined, predicted: () => boolean, uncaught: boolean): DebugProtocol.ExceptionInfoResponse["body"] | string {
  if (hole) return { exceptionId: "Hole", description: holeText(hole), breakMode: "always", details: { typeName: "Hole", message: holeText(hole) } };
  if (!frame || frame.event !== "exception") return "not stopped at an exception";
  const repr = frame.value ?? "";
  const type = /^([A-Za-z_][\w.]*)/.exec(repr)?.[1] ?? "Exception";
  // VS Code's exception widget shows the description: a predicted exception says it is one.
  return { exceptionId: type, description: predicted() ? `${repr} (predicted)` : repr, breakMode: uncaught ? "unhandled" : "always", details: { typeName: type, message: repr } };
}
