// ndbg data: training examples from programs. Traces every program of a CRUXEval-shaped JSONL
// file (code, input; the call is f(<input>)) for real through one batch tracer process, samples
// debugger sessions on each trace (adapter/tools/sampling.ts) and writes one JSON line per example:
// {"id", "text", "targets": [[start, end], ...]}. It reads only the file it is given.
import { open, rename, rm } from "node:fs/promises";
import { DataError, readPrograms, traceOf } from "../../tools/programs.js";
import { TraceBatch } from "../../real/hostRun.js";
import { ACTION_KINDS, type ActionKind } from "../../format/trajectory.js";
import { DEFAULT_MIX, checkSample, codePointSpans, resolveMix, samplePrograms, type Mix, type SampleOptions } from "../../tools/sampling.js";
import { InputError, flags, guarded, integer, seconds } from "../args.js";
import { command } from "../flags.js";

const SPEC = command("data", "", [
  ["programs", { required: true }],
  ["out", { required: true, value: "OUT.jsonl", help: "the examples, one JSON line each" }], "samples-per-program",
  "max-chars", ["seed", { help: "the seed of the sampling (default 0)" }], "mix", "inverse-call", "limit",
  ["python", { help: "the Python that traces the programs (default: python3 on PATH)" }],
  ["max-events", { help: "events a program may have (default 2000; a longer one is skipped)" }],
  ["timeout", { help: "seconds each program may run (default 5)" }], "check",
]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

const int = (flag: string, text: string | undefined, dflt: number, min = 1): number => integer(flag, text, min) ?? dflt;

const fraction = (flag: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === "" || !(n >= 0 && n <= 1)) throw new InputError(`${flag} needs a number from 0 to 1, not "${text}"`, 2);
  return n;
};

/** "step_into=0.5,step_over=0.3": weights of the named actions, the others 0. */
export function parseMix(text: string): Mix {
  const mix: Partial<Mix> = {};
  for (const item of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const m = /^([a-z_]+)=([0-9.eE+-]+)$/.exec(item);
    if (!m) throw new InputError(`--mix takes ACTION=WEIGHT pairs such as step_into=0.4, not "${item}"`, 2);
    if (!(ACTION_KINDS as readonly string[]).includes(m[1])) throw new InputError(`--mix: unknown action "${m[1]}" (actions: ${ACTION_KINDS.join(", ")})`, 2);
    mix[m[1] as ActionKind] = Number(m[2]);
  }
  try {
    return resolveMix(mix);
  } catch (e) {
    throw new InputError(`--mix: ${(e as Error).message}`, 2);
  }
}

export function run(argv: string[]): Promise<number> {
  return guarded("data", usage, async () => {
    const { values } = flags(argv, SPEC);
    const k = int("--samples-per-program", values["samples-per-program"], 2);
    const seed = int("--seed", values.seed, 0, 0);
    const opts: SampleOptions = { maxChars: int("--max-chars", values["max-chars"], 2400, 200) };
    if (values.mix !== undefined) opts.mix = parseMix(values.mix);
    const inv = fraction("--inverse-call", values["inverse-call"]);
    if (inv !== undefined) opts.inverseCall = inv;
    const limit = int("--limit", values.limit, Number.MAX_SAFE_INTEGER);
    const maxEvents = int("--max-events", values["max-events"], 2000);
    const timeout = values.timeout === undefined ? 5 : seconds("--timeout", values.timeout);

    // Every line is checked first: a bad file is reported before anything is written.
    const programs = await readPrograms(values.programs, { limit }).catch((e: unknown) => {
      throw e instanceof DataError ? new InputError(e.message) : e;
    });
    // Written beside the output and renamed at the end: a failed run leaves no half file.
    const tmp = `${values.out}.part`;
    let sink;
    try {
      sink = await open(tmp, "w");
    } catch (e) {
      throw new InputError(`cannot write ${values.out}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    }
    const batch = new TraceBatch({ python: values.python, maxEvents, timeout });
    const actions = Object.fromEntries(ACTION_KINDS.map((a) => [a, 0])) as Record<ActionKind, number>;
    const skipped: Record<string, number> = {};
    /** Programs traced per Python version: every example's header names its own. */
    const python: Record<string, number> = {};
    let samples = 0, targets = 0, chars = 0, maxLen = 0, events = 0, traced = 0, inverseCalls = 0;
    let traceMs = 0, sampleMs = 0;
    const t0 = performance.now();
    try {
      let buf = "";
      for (const p of programs) {
        const t1 = performance.now();
        const run = await batch.trace(traceOf(p));
        const t2 = performance.now();
        traceMs += t2 - t1;
        if (run.exit.status === "limit" || run.frames.length === 0) {
          const why = run.exit.status === "limit" ? `limit:${run.limit ?? "?"}` : "no-frames";
          skipped[why] = (skipped[why] ?? 0) + 1;
          continue;
        }
        traced++;
        python[run.python ?? "unknown"] = (python[run.python ?? "unknown"] ?? 0) + 1;
        events += run.frames.length;
        const got = samplePrograms(run, k, seed, p.id, opts);
        if (!got.length) skipped["too-long"] = (skipped["too-long"] ?? 0) + 1;
        got.forEach((s, j) => {
          if (values.check) checkSample(run, s);
          buf += JSON.stringify({ id: `${p.id}#${j}`, text: s.text, targets: codePointSpans(s.text, s.targets) }) + "\n";
          samples++;
          targets += s.targets.length;
          chars += s.text.length;
          maxLen = Math.max(maxLen, s.text.length);
          if (s.inverseCall) inverseCalls++;
          for (const a of s.actions) actions[a.kind]++;
        });
        sampleMs += performance.now() - t2;
        if (buf.length > 1 << 20) {
          await sink.write(buf);
          buf = "";
        }
      }
      await sink.write(buf);
      await sink.close();
      await rename(tmp, values.out);
    } catch (e) {
      await sink.close().catch(() => undefined);
      await rm(tmp, { force: true });
      throw e;
    } finally {
      await batch.close();
    }
    const secs = (performance.now() - t0) / 1000;
    const totalActions = Object.values(actions).reduce((a, b) => a + b, 0);
    const summary = {
      programs: programs.length,
      traced,
      python,
      skipped,
      samples,
      inverse_calls: inverseCalls,
      targets,
      actions,
      action_share: Object.fromEntries(ACTION_KINDS.map((a) => [a, +(actions[a] / Math.max(totalActions, 1)).toFixed(3)])),
      mix: opts.mix ?? DEFAULT_MIX,
      events_per_program: +(events / Math.max(traced, 1)).toFixed(1),
      chars: { total: chars, per_sample: Math.round(chars / Math.max(samples, 1)), max: maxLen },
      seconds: { total: +secs.toFixed(2), tracing: +(traceMs / 1000).toFixed(2), sampling: +(sampleMs / 1000).toFixed(2) },
      programs_per_s: +(programs.length / secs).toFixed(1),
      samples_per_s_sampling: +(samples / Math.max(sampleMs / 1000, 1e-9)).toFixed(0),
    };
    process.stderr.write(JSON.stringify(summary, null, 1) + "\n");
    return 0;
  });
}
