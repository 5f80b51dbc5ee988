// ndbg steps: records a real run (or reads a trace file) and applies debugger actions to it
// through the engine, as the debug adapter does in record mode; prints the state after each.
import { Engine } from "../../engine/engine.js";
import type { Step } from "../../format/trajectory.js";
import { flags, guarded } from "../args.js";
import { command } from "../flags.js";
import { describe, movesAndLines, recording } from "../actions.js";

const SPEC = command("steps", "FILE|TRACE.ndbg", ["call", ["actions", { required: true }], "breakpoints", "json", "python", "max-events", "timeout"]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

/** A state as the trajectory format holds it (what only a debugger's view of a real run adds, a return's caller and a value just returned, left out). */
function json(name: string, step: Step): string {
  if (step.exit) return JSON.stringify({ action: name, event: "exit", ...step.exit });
  const { caller: _, returned: __, ...frame } = step.frame!;
  return JSON.stringify({ action: name, ...frame });
}

export function run(argv: string[]): Promise<number> {
  return guarded("steps", usage, async () => {
    const { values, positionals } = flags(argv, SPEC);
    const { moves, lines } = movesAndLines(values);
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
