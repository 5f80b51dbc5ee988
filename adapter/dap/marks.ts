// Where a stop's values come from (adapter/session/marks.ts), as DAP bodies say it: an evaluate
// reply, a log point's message and the program's output, each marked where it is predicted.
import type { DebugProtocol } from "@vscode/debugprotocol";
import { confidenceText, DERIVED_OUTPUT_LABEL, guessWord, markVariable, OUTPUT_LABEL, type Origin } from "../session/marks.js";

/**
 * An evaluate reply. Hover, watch and the Debug Console show `result` alone, so a predicted
 * value says so there; the clipboard and the Variables view's own requests get the bare value.
 */
export function markEvaluation(body: DebugProtocol.EvaluateResponse["body"], o: Origin, context: string | undefined): DebugProtocol.EvaluateResponse["body"] {
  if (!o.predicted) return body;
  const typed = markVariable({ value: body.result, ...(body.type !== undefined ? { type: body.type } : {}) }, o);
  if (context === "clipboard" || context === "variables") return { ...body, type: typed.type };
  const c = confidenceText(o);
  return { ...body, type: typed.type, result: `${body.result}  (${guessWord(o)}${c ? `, ${c}` : ""})` };
}

/** A log point's message as an output event body: in the console, and where its values are predicted, saying so. */
export function logBody(text: string, o: Origin): DebugProtocol.OutputEvent["body"] {
  const c = confidenceText(o);
  return { category: "console", output: (o.predicted ? `${text}  (predicted${c ? `, ${c}` : ""})` : text) + "\n" };
}

/** The output event body for text written on the way to a state: predicted text is labelled, line by line, in the console category. */
export function outputBody(text: string, o: Origin): DebugProtocol.OutputEvent["body"] {
  if (!o.predicted) return { category: "stdout", output: text };
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  const label = o.derived ? DERIVED_OUTPUT_LABEL : OUTPUT_LABEL;
  return { category: "console", output: lines.map((l) => label + l).join("\n") + "\n" };
}
