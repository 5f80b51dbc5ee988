// ndbg bench: times debugger steps over DAP in predict mode against real debugpy, on the bench's
// fixed programs, in one run; prints a table, or with --json one object with every figure (last
// on stdout). Progress goes to stderr.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runBench } from "../../tools/bench/run.js";
import { formatReport } from "../../tools/bench/report.js";
import { formatLongRuns, runLongRuns } from "../../tools/bench/longRuns.js";
import { InputError, flags, gpuFlag, guarded, integer, seconds } from "../args.js";
import { command } from "../flags.js";

const SPEC = command("bench", "", [
  ["sealed", { help: "predict mode as users get it (the program run sealed); without it, the model alone" }],
  ["model", { value: "PATH|URI" }], "steps", "long", "threads", "gpu",
  ["python", { help: "the Python debugpy runs the programs with (default: python3 on PATH)" }], "adapter",
  ["timeout", { help: "seconds each session may take (default 120)" }], "json",
  ["runs", { help: "instead: runs of N line events each, sealed, continued, stepped over and back beside debugpy (with --python, --adapter, --timeout, --json)" }],
]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

const int = (flag: string, text: string | undefined, dflt: number, min: number): number => integer(flag, text, min) ?? dflt;

/** The built adapter: beside the bundled CLI (dist/), or dist/ of the project when run from source. */
function defaultAdapter(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const p of [join(here, "adapter.js"), join(here, "..", "..", "..", "dist", "adapter.js")]) if (existsSync(p)) return p;
  throw new InputError("the built debug adapter (dist/adapter.js) was not found: build it (node scripts/build.mjs) or pass --adapter");
}

export function run(argv: string[]): Promise<number> {
  return guarded("bench", usage, async () => {
    const { values } = flags(argv, SPEC);
    const gpu = gpuFlag(values.gpu);
    const adapter = values.adapter !== undefined ? resolve(values.adapter) : defaultAdapter();
    if (!existsSync(adapter)) throw new InputError(`adapter not found: ${adapter}`);
    // A path is checked here; a URI (hf:..., https://...) is the adapter's to resolve.
    const isUri = (m: string): boolean => /^[a-z][a-z0-9+.-]+:/i.test(m);
    const model = values.model === undefined ? undefined : isUri(values.model) ? values.model : resolve(values.model);
    if (model !== undefined && !isUri(model) && !existsSync(model)) throw new InputError(`model not found: ${model}`);
    const timeoutMs = (values.timeout === undefined ? 120 : seconds("--timeout", values.timeout)) * 1000;
    if (values.runs !== undefined) {
      // Long runs (runs of N line events each) beside debugpy: predict mode as users get it, sealed.
      const sizes = values.runs.split(",").map((x) => integer("--runs", x.trim(), 1)!);
      const r = await runLongRuns({ adapter, sizes, timeoutMs, ...(values.python ? { python: values.python } : {}), log: (line) => process.stderr.write(`ndbg bench: ${line}\n`) });
      process.stdout.write(values.json ? JSON.stringify(r) + "\n" : formatLongRuns(r));
      return 0;
    }
    const result = await runBench({
      adapter,
      ...(model ? { model } : {}),
      steps: int("--steps", values.steps, 20, 1),
      long: int("--long", values.long, 500, 1),
      threads: int("--threads", values.threads, 1, 0),
      gpu,
      ...(values.python ? { python: values.python } : {}),
      // --sealed: predict mode as users get it (the program run sealed, no model call where it has no hole); else the model alone.
      ...(values.sealed ? { extra: { compute: true } } : {}),
      moveTimeoutMs: timeoutMs,
      log: (line) => process.stderr.write(`ndbg bench: ${line}\n`),
    });
    process.stdout.write(values.json ? JSON.stringify(result) + "\n" : formatReport(result));
    return 0;
  });
}
