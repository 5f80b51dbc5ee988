// ndbg trace: runs a program under the tracer and prints its real trajectory, every event joined
// by step_into, in the trajectory format (or one JSON object per frame, then the exit record).
import type { TraceResult } from "../../real/run.js";
import { flags, guarded, record, traceOptions } from "../args.js";
import { command } from "../flags.js";
import { FORMAT_VERSION, serialize, type Step, type Trajectory } from "../../format/trajectory.js";

const SPEC = command("trace", "FILE", ["call", "json", "python", "max-events", "timeout"]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

/** A recorded run as a trajectory: every event, step_into between them, then the exit. */
function toTrajectory(run: TraceResult, meta: Record<string, unknown>): Trajectory {
  const steps: Step[] = run.frames.map((frame, i) => (i === 0 ? { frame } : { action: { kind: "step_into" }, frame }));
  steps.push(steps.length ? { action: { kind: "step_into" }, exit: run.exit } : { exit: run.exit });
  return { version: FORMAT_VERSION, ...(run.python ? { python: run.python } : {}), meta, source: run.source, steps };
}

export function run(argv: string[]): Promise<number> {
  return guarded("trace", usage, async () => {
    const { values, positionals } = flags(argv, SPEC);
    const file = positionals[0];
    const opts = traceOptions(values);
    const result = await record(file, opts);
    if (values.json) {
      let out = "";
      for (const f of result.frames) out += JSON.stringify(f) + "\n";
      out += JSON.stringify({ event: "exit", ...result.exit }) + "\n";
      process.stdout.write(out);
    } else {
      const meta: Record<string, unknown> = { program: file };
      if (opts.call) meta.call = opts.call;
      process.stdout.write(serialize(toTrajectory(result, meta)));
    }
    return 0;
  });
}
