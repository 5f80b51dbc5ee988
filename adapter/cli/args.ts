// The command line's shared helpers: flags, their checks, and user errors as messages with an
// exit code instead of crashes. Every command goes through `guarded`.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { MAX_TIMEOUT_S, type TraceOptions, type TraceResult } from "../real/run.js";
import { runTrace } from "../real/hostRun.js";
import { checkSingleExpression } from "../pyread/expressions.js";
import { GPU_SETTINGS, type GpuSetting } from "../model/backend.js";
import type { CommandSpec, RequiredOf, Use } from "./flags.js";

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

/**
 * Parses a command's flags (flags.ts) and checks what its spec says it needs: its required flags,
 * and one FILE where it takes one, nothing else where it takes none. Usage errors become InputError(…, 2).
 */
export function flags<U extends readonly Use[]>(argv: string[], spec: CommandSpec<U>) {
  const config = { args: argv, options: spec.options, allowPositionals: true, strict: true } as const satisfies ParseArgsConfig;
  let parsed: ReturnType<typeof parseArgs<typeof config>>;
  try {
    parsed = parseArgs(config);
  } catch (e) {
    throw new InputError(e instanceof Error ? e.message : String(e), 2);
  }
  const { values, positionals } = parsed;
  if (spec.file && positionals.length !== 1) throw new InputError(positionals.length ? `one FILE expected, got ${positionals.length}` : "FILE is missing", 2);
  if (!spec.file && positionals.length) throw new InputError(`unexpected argument "${positionals[0]}"`, 2);
  for (const flag of spec.required) if ((values as Record<string, unknown>)[flag] === undefined) throw new InputError(`--${flag} is missing`, 2);
  type Values = typeof values;
  return parsed as typeof parsed & { values: { [K in RequiredOf<U> & keyof Values]-?: NonNullable<Values[K]> } };
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

/** The --gpu flag: auto when left out. */
export function gpuFlag(text: string | undefined): GpuSetting {
  const gpu = (text ?? "auto") as GpuSetting;
  if (!GPU_SETTINGS.includes(gpu)) throw new InputError(`--gpu must be one of ${GPU_SETTINGS.join(", ")}, not "${gpu}"`, 2);
  return gpu;
}
