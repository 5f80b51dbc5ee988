// What a session says as it goes, as DAP output: the output each state wrote and the log points'
// messages, in the run's order (predicted output labelled: marks.ts); the model's progress and
// where it runs (the Debug Console, and the `ndbg/model` event the status bar shows); the program's end.
import type { DebugProtocol } from "@vscode/debugprotocol";
import type { Guess, Predicted } from "../engine/predictor.js";
import type { Step, Exit } from "../format/trajectory.js";
import type { ModelStatus } from "../predictors/model.js";
import type { ModelDescription, ModelEventBody } from "../protocol.js";
import type { Origin, Origins } from "../session/marks.js";
import { logBody, outputBody } from "./marks.js";

type Body = DebugProtocol.OutputEvent["body"];

/**
 * The output written on the way to the current state (`states`: those reached since it was last
 * told, Session.unseen) and the log points' messages, each after the output written before its state.
 */
export function outputBodies(states: readonly Predicted[], logs: { text: string; state: Predicted }[], origins: Origins, guessedOutput?: (step: Step) => Guess | undefined): Body[] {
  const out: Body[] = [];
  const logsAt = (p: Predicted | undefined): void => {
    for (const l of logs.filter((l) => p === undefined || l.state === p)) out.push(logBody(l.text, origins.of(l.state)));
    if (p) logs.splice(0, logs.length, ...logs.filter((l) => l.state !== p));
  };
  for (const p of states) {
    const text = p.step.frame?.stdout ?? p.step.exit?.stdout;
    const guess = text ? guessedOutput?.(p.step) : undefined;
    if (text) out.push(outputBody(text, guess ? origins.guess(guess) : origins.of(p)));
    // A real run's standard error (record mode), in order with its output and stops.
    const err = p.step.frame?.stderr ?? p.step.exit?.stderr;
    if (err) out.push({ category: "stderr", output: err });
    logsAt(p);
  }
  logsAt(undefined);
  return out;
}

/** The program's end in the Debug Console: a predicted end is the model's guess, and says how sure it is. */
export function exitLine(exit: Exit, o: Origin): { text: string; category: "console" | "stderr" } {
  const guess = o.predicted ? (o.confidence !== undefined ? ` (predicted, ${Math.round(o.confidence * 100)}% sure)` : " (predicted)") : "";
  if (exit.status === "normal") return { text: `Program exited normally${guess}.`, category: "console" };
  if (exit.status === "error") return { text: `Program ended with an error: ${exit.value ?? "(unknown)"}${guess}`, category: "stderr" };
  return { text: `Program stopped by a limit (events, time or output)${exit.value ? `: ${exit.value}` : ""}${guess}.`, category: "stderr" };
}

/** Predict mode's model as the session tells it: progress in the Debug Console, what runs where as the `ndbg/model` event. */
export class ModelNews {
  private model?: { name: string; device: string; dialect: string; skipped: ModelDescription["skipped"]; python: string };
  private downloaded = -1;

  /** The lines to say for a status, and the event to send where the model is placed (`gpu`: the backend the launch named). */
  status(s: ModelStatus, gpu: string | undefined): { lines: string[]; event?: ModelEventBody } {
    if (s.stage === "downloading") {
      const pct = s.totalBytes ? Math.floor((100 * s.downloadedBytes) / s.totalBytes) : 0;
      return pct >= this.downloaded + 10 || pct === 100 ? { lines: [`Downloading ${s.model}: ${(this.downloaded = pct)}%`] } : { lines: [] };
    }
    if (s.stage === "loading") return { lines: [`Loading the model ${s.path}`] };
    if (s.stage !== "ready" && s.stage !== "moved") return { lines: [] };
    this.model = { name: s.name, device: s.device, dialect: s.dialect, skipped: s.skipped, python: s.python };
    if (s.stage === "moved") return { lines: [`The model now runs on ${s.device}, not on ${s.from}: ${s.why}`], event: { ...this.model } };
    const lines = [
      `Model ${s.name} (${s.dialect} prompts) on ${s.device}${s.gpuNames.length ? ` (${s.gpuNames.join(", ")})` : ""}, ${s.threads ? `${s.threads} thread${s.threads === 1 ? "" : "s"}, ` : ""}${s.contextSize}-token context, Python ${s.python} states`,
    ];
    // A backend this machine does not have is no news: the extension's Output channel (from the
    // ndbg/model event) and the status bar's tooltip name it. One the user named, or one found
    // here that failed, is said here.
    for (const k of s.skipped) if (k.backend === gpu || !k.reason.startsWith("not available here")) lines.push(`  not on ${k.backend}: ${k.reason}`);
    return { lines, event: { ...this.model } };
  }

  /** After a predicted step: its speed and confidence, for the status bar. */
  speed(p: Predicted): ModelEventBody | undefined {
    return this.model && p.tokens && p.ms ? { ...this.model, tokensPerSecond: p.tokens / (p.ms / 1000), confidence: p.confidence } : undefined;
  }
}
