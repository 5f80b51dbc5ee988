// `ndbg predict --compare`: each predicted state above the real state that the same action leads
// to in a recorded run of the program (the debugger semantics, as `ndbg steps` applies them),
// ✓ where the whole state is the same (the evaluation's exact match: place, locals, value,
// output), else ✗ with what differs; then the count. Each side goes on from its own state, as a
// predict session would: after a miss the model predicts from its own (wrong) state.
import type { Engine } from "../../engine/engine.js";
import type { Predicted } from "../../engine/predictor.js";
import { score, type Score } from "../../tools/steps.js";
import { checkPair, describeDifference } from "../../predictors/comparePairs.js";
import type { RealState } from "../../predictors/compareReal.js";
import type { Step } from "../../format/trajectory.js";
import { describe } from "../actions.js";

const WIDTH = 15;
const ok = (b: boolean): string => (b ? "✓" : "✗");

export class SideBySide {
  private readonly scores: Score[] = [];

  constructor(private readonly real: Engine) {}

  setBreakpoints(lines: readonly number[]): void {
    this.real.setBreakpoints(lines.map((line) => ({ line })));
  }

  /** The first states: the entry call's frame (or the script's start) on both sides; given, so not counted. */
  async start(predicted: Predicted): Promise<string> {
    const real = await this.real.start();
    return this.rows("start", predicted, real.step, score(predicted.step, real.step));
  }

  /** After one action: the model's state, or `undefined` when it gave none (then the real run does not move either). */
  async step(name: string, apply: (e: Engine) => Promise<Predicted>, predicted: Predicted | undefined, error?: string): Promise<string> {
    if (!predicted) {
      this.scores.push(score(undefined, this.real.current.step));
      const row = "predicted ".padEnd(18) + `error: ${error ?? "no state"}`;
      return [this.head(name, false) + row, this.pad(describe("real", this.real.current.step) + "   (stays: no prediction)")].join("\n");
    }
    const real = await apply(this.real);
    const s = score(predicted.step, real.step);
    this.scores.push(s);
    return this.rows(name, predicted, real.step, s);
  }

  /** "2 of 4 predicted states exact (line right in 3 of 4, locals in 2 of 4).", and how to read it. */
  summary(): string {
    const n = this.scores.length;
    const count = (f: (s: Score) => boolean): number => this.scores.filter(f).length;
    return (
      `${count((s) => s.exact)} of ${n} predicted states exact (line right in ${count((s) => s.line)} of ${n}, locals in ${count((s) => s.locals)} of ${n}).\n` +
      "The start is given, not predicted; each prediction goes on from the predicted state before it, as in a predict session."
    );
  }

  private head(name: string, exact: boolean): string {
    return `${name} `.padEnd(WIDTH) + ok(exact) + " ";
  }

  private pad(line: string): string {
    return " ".repeat(WIDTH + 2) + line;
  }

  private rows(name: string, predicted: Predicted, real: Step, s: Score): string {
    const rows = [this.head(name, s.exact) + describe("predicted", predicted.step, predicted), this.pad(describe("real", real))];
    if (!s.exact) rows.push(this.pad(`line ${ok(s.line)} · locals ${ok(s.locals)}` + differences(predicted.step, real)));
    return rows.join("\n");
  }
}

/** What differs, as compare mode says it (`x = 3 ≠ real 4`), and the output, which the tracer sees and debugpy does not. */
function differences(predicted: Step, real: Step): string {
  const state: RealState = { step: real, unobserved: [], origin: real.exit ? "end" : "stop" };
  const check = checkPair(predicted, state);
  const parts: string[] = [];
  if (check && !check.exact)
    parts.push(describeDifference({ index: 0, action: "", historyIndex: 0, predicted, real: state, check, resynced: false, edited: false, realMs: 0, predictedMs: 0 }));
  const out = (st: Step): string => st.frame?.stdout ?? st.exit?.stdout ?? "";
  if (out(predicted) !== out(real)) parts.push(`output ${JSON.stringify(out(predicted))} ≠ real ${JSON.stringify(out(real))}`);
  return parts.length ? ` · ${parts.join("; ")}` : "";
}
