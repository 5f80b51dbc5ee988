// What the stepping commands (steps, predict, hybrid) share: debugger actions read from --actions
// and --breakpoints, the recorded run they step through, and one readable line per state.
import { Engine } from "../engine/engine.js";
import { RecordedPredictor } from "../predictors/recorded.js";
import type { Frame, Step } from "../format/trajectory.js";
import { RETURN_VALUE, type Guess, type Predicted } from "../engine/predictor.js";
import { InputError, record, traceOptions } from "./args.js";

export type Move = { name: string; line?: number; apply: (e: Engine) => Promise<Predicted> };

/** Debugger actions by name; step_back is inv_step_over, the inverse action the engine takes. */
const MOVES: Record<string, (e: Engine, line?: number) => Promise<Predicted>> = {
  step_into: (e) => e.step("step_into"),
  step_over: (e) => e.step("step_over"),
  step_return: (e) => e.step("step_return"),
  continue: (e) => e.continue(),
  breakpoint: (e, line) => e.runTo(line!),
  step_back: (e) => e.stepBack(),
  inv_step_over: (e) => e.stepBack(),
  reverse_continue: (e) => e.reverseContinue(),
};
const TAKES_LINE = new Set(["breakpoint"]);

export function parseActions(text: string): Move[] {
  const names = text.split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (!names.length) throw new InputError("--actions is empty", 2);
  return names.map((item) => {
    const [name, arg, ...extra] = item.split(":");
    const move = Object.hasOwn(MOVES, name) ? MOVES[name] : undefined;
    if (!move) throw new InputError(`unknown action "${item}" (actions: ${Object.keys(MOVES).map((k) => (TAKES_LINE.has(k) ? k + ":LINE" : k)).join(", ")})`, 2);
    if (TAKES_LINE.has(name)) {
      if (arg === undefined || extra.length || !/^\d+$/.test(arg) || Number(arg) < 1) throw new InputError(`${name} needs a line: ${name}:LINE, not "${item}"`, 2);
      const line = Number(arg);
      return { name: item, line, apply: (e) => move(e, line) };
    }
    if (arg !== undefined) throw new InputError(`${name} takes no argument, not "${item}"`, 2);
    return { name, apply: (e) => move(e) };
  });
}

/** A stepping command's moves (--actions) and breakpoint lines (--breakpoints). */
export function movesAndLines(values: { actions: string; breakpoints?: string }): { moves: Move[]; lines: number[] } {
  return { moves: parseActions(values.actions), lines: values.breakpoints === undefined ? [] : parseLines(values.breakpoints) };
}

export function parseLines(text: string): number[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => {
    if (!/^\d+$/.test(s) || Number(s) < 1) throw new InputError(`--breakpoints needs line numbers such as 7,9, not "${s}"`, 2);
    return Number(s);
  });
}

export async function recording(file: string, values: Parameters<typeof traceOptions>[0]): Promise<RecordedPredictor> {
  if (!file.endsWith(".ndbg")) return new RecordedPredictor(await record(file, traceOptions(values)));
  if (values.call !== undefined) throw new InputError("--call applies to a program, not to a trace file", 2);
  try {
    return await RecordedPredictor.fromTraceFile(file);
  } catch (e) {
    throw new InputError((e as Error).message);
  }
}

/**
 * One readable line: the action, where the program stands, its locals (and output), and the model's
 * confidence where there is one; in a real state, the values the model filled in (`guessed`) say so.
 */
export function describe(name: string, step: Step, how: { confidence?: number; computed?: boolean; given?: boolean; guessed?: ReadonlyMap<string, Guess> } = {}): string {
  const head = (name + " ").padEnd(18);
  // (a state the program decided: "computed", after a predicted one with that one's confidence)
  const p = how.confidence !== undefined && !how.given ? `p=${how.confidence.toFixed(2)}` : "";
  const conf = how.computed || p ? `   (${[how.computed ? "computed" : "", p].filter(Boolean).join(", ")})` : "";
  if (step.exit) {
    const e = step.exit;
    return head + `exit ${e.status}` + (e.value !== undefined ? ` ${e.value}` : "") + (e.stdout ? `   output ${JSON.stringify(e.stdout)}` : "") + conf;
  }
  const f = step.frame as Frame;
  const where = `${f.event.padEnd(10)}${"  ".repeat(f.depth)}${f.func}:${f.line}${f.file ? ` (${f.file})` : ""}`;
  const mark = (name: string): string => {
    const g = how.guessed?.get(name);
    return !g ? "" : g.set ? " (set by you)" : g.docstring !== undefined ? (g.derived ? "" : ` (from the docstring, line ${g.docstring})`) : ` (predicted${g.confidence !== undefined ? ` p=${g.confidence.toFixed(2)}` : ""})`;
  };
  const locals = Object.entries(f.locals).map(([k, v]) => `${k}=${v}${mark(k)}`).join(" ");
  const value = f.value !== undefined ? (f.event === "return" ? `  -> ${f.value}${mark(RETURN_VALUE)}` : `  ! ${f.value}`) : "";
  return head + where + (locals ? `   ${locals}` : "") + value + (f.stdout ? `   output ${JSON.stringify(f.stdout)}` : "") + conf;
}

