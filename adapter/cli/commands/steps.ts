// ndbg steps: records a real run (or reads a trace file) and applies debugger actions to it
// through the engine, as the debug adapter does in record mode; prints the state after each.
import { Engine } from "../../engine/engine.js";
import type { Step } from "../../format/trajectory.js";
import { InputError, RUN_FLAGS, flags, guarded } from "../args.js";
import { describe, parseActions, parseLines, recording } from "../actions.js";

export const usage =
  "steps FILE|TRACE.ndbg [--call EXPR] --actions step_into,step_over,step_return,continue,breakpoint:L,step_back,reverse_continue [--breakpoints L,L] [--json] [--python P] [--max-events N] [--timeout S]";

/** A state as the trajectory format holds it (what only a debugger's view of a real run adds, a return's caller and a value just returned, left out). */
function json(name: string, step: Step): string {
  if (step.exit) return JSON.stringify({ action: name, event: "exit", ...step.exit });
  const { caller: _, returned: __, ...frame } = step.frame!;
  return JSON.stringify({ action: name, ...frame });
}

export function run(argv: string[]): Promise<number> {
  return guarded("steps", usage, async () => {
    const { values, positionals } = flags(argv, { ...RUN_FLAGS, actions: { type: "string" }, breakpoints: { type: "string" } });
    if (positionals.length !== 1) throw new InputError(positionals.length ? `one FILE expected, got ${positionals.length}` : "FILE is missing", 2);
    if (values.actions === undefined) throw new InputError("--actions is missing", 2);
    const moves = parseActions(values.actions);
    const lines = values.breakpoints === undefined ? [] : parseLines(values.breakpoints);
    const predictor = await recording(positionals[0], values);
    const engine = new Engine(predictor);
    engine.setBreakpoints(lines.map((line) => ({ line })));
    const out: string[] = [];
    const start = await engine.start();
    if (!values.json) out.push(describe("start", start.step));
    for (const m of moves) {
      const p = await m.apply(engine);
      out.push(values.json ? json(m.name, p.step) : describe(m.name, p.step));
      for (const note of engine.takeNotes()) process.stderr.write(`ndbg steps: ${note}\n`);
    }
    process.stdout.write(out.join("\n") + "\n");
    return 0;
  });
}
