// ndbg trace: runs a program under the tracer and prints its real trajectory, every event joined
// by step_into, in the trajectory format (or one JSON object per frame, then the exit record).
import { parseArgs, type ParseArgsConfig } from "node:util";
import { MAX_TIMEOUT_S, runTrace, type TraceOptions, type TraceResult } from "../tracer.js";
import { checkSingleExpression } from "../expr.js";
import { FORMAT_VERSION, serialize, type Step, type Trajectory } from "../trajectory.js";

export const usage = "trace FILE [--call EXPR] [--json] [--python P] [--max-events N] [--timeout S]";

/** Flags shared with `steps`: where and how to run the program. */
export const RUN_FLAGS = {
  call: { type: "string" },
  python: { type: "string" },
  "max-events": { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
} as const;

/** A message for the user, not a crash: printed as "ndbg CMD: message", with the exit code. */
export class InputError extends Error {
  constructor(message: string, readonly code = 1) {
    super(message);
  }
}

/** The run options from parsed flags; bad values are usage errors. */
export function traceOptions(values: { call?: string; python?: string; "max-events"?: string; timeout?: string }): TraceOptions {
  const opts: TraceOptions = {};
  if (values.call !== undefined) {
    const bad = checkSingleExpression(values.call);
    if (bad) throw new InputError(`bad --call "${values.call}": ${bad}`, 2);
    opts.call = values.call;
  }
  if (values.python !== undefined) opts.python = values.python;
  if (values["max-events"] !== undefined) opts.maxEvents = positive("--max-events", values["max-events"], true);
  if (values.timeout !== undefined) opts.timeout = seconds("--timeout", values.timeout);
  return opts;
}

/** A timeout flag in seconds, bounded like the launch attribute (a longer timer would fire at once). */
export function seconds(flag: string, text: string): number {
  const n = positive(flag, text, false);
  if (n > MAX_TIMEOUT_S) throw new InputError(`${flag} must be at most ${MAX_TIMEOUT_S} seconds (about ${Math.floor(MAX_TIMEOUT_S / 86_400)} days), not "${text}"`, 2);
  return n;
}

/** A whole-number flag of at least `min`; undefined when the flag is not given. */
export function integer(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === "" || !Number.isInteger(n) || n < min) throw new InputError(`${flag} needs an integer >= ${min}, not "${text}"`, 2);
  return n;
}

export function positive(flag: string, text: string, integer: boolean): number {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new InputError(`${flag} needs a positive ${integer ? "integer" : "number"}, not "${text}"`, 2);
  return n;
}

/** Traces FILE; a run that ends in an error before any traced code ran (bad call, syntax error) is bad input. */
export async function record(file: string, opts: TraceOptions): Promise<TraceResult> {
  let result: TraceResult;
  try {
    result = await runTrace(file, opts);
  } catch (e) {
    throw new InputError(e instanceof Error ? e.message : String(e));
  }
  if (result.frames.length === 0 && result.exit.status === "error") {
    const what = opts.call ? `the call ${opts.call}` : file;
    throw new InputError(`${what} failed before any traced code ran: ${result.exit.value ?? "error"}`);
  }
  return result;
}

/** A recorded run as a trajectory: every event, step_into between them, then the exit. */
export function toTrajectory(run: TraceResult, meta: Record<string, unknown>): Trajectory {
  const steps: Step[] = run.frames.map((frame, i) => (i === 0 ? { frame } : { action: { kind: "step_into" }, frame }));
  steps.push(steps.length ? { action: { kind: "step_into" }, exit: run.exit } : { exit: run.exit });
  return { version: FORMAT_VERSION, ...(run.python ? { python: run.python } : {}), meta, source: run.source, steps };
}

/** Parses flags; usage errors become InputError(…, 2). */
export function flags<O extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new InputError(e instanceof Error ? e.message : String(e), 2);
  }
}

/** Runs a command body, turning InputError into a message on stderr and its exit code. */
export async function guarded(name: string, usageLine: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    process.stderr.write(`ndbg ${name}: ${e.message}\n${e.code === 2 ? `usage: ndbg ${usageLine}\n` : ""}`);
    return e.code;
  }
}

export function run(argv: string[]): Promise<number> {
  return guarded("trace", usage, async () => {
    const { values, positionals } = flags(argv, RUN_FLAGS);
    if (positionals.length !== 1) throw new InputError(positionals.length ? `one FILE expected, got ${positionals.length}` : "FILE is missing", 2);
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
