// ndbg eval: how good a model is, measured against real runs (adapter/tools/steps.ts and cruxeval.ts).
//   eval steps     next-state accuracy per debugger action, beside the trivial baselines
//   eval cruxeval  CRUXEval output / input prediction, pass@1 by executed asserts
//   eval hybrid    hybrid against predict mode on incomplete programs (adapter/tools/hybridEval.ts)
//   eval compare   models side by side on the same sets, one sitting: the model card's table (adapter/tools/compare.ts)
// A readable table, or with --json one JSON object with every figure (and every item), last on stdout.
import { disposeAll } from "../../model/backend.js";
import { isEndpoint } from "../../model/endpoint.js";
import { ModelFileError } from "../../model/gguf.js";
import { DataError, readPrograms } from "../../tools/programs.js";
import { evalCruxeval, type CruxReport } from "../../tools/cruxeval.js";
import { evalSteps, type ActionFigures, type StepsReport } from "../../tools/steps.js";
import { type ModelOptions } from "../../tools/predicting.js";
import { reliabilityTable } from "../../tools/reliability.js";
import { ACTION_KINDS } from "../../format/trajectory.js";
import { HOLE_KINDS, HOLE_SOURCES, evalHybrid, readHybridCases, type HybridReport } from "../../tools/hybridEval.js";
import { compareModels, compareTable, type CompareSet } from "../../tools/compare.js";
import { LAYOUTS, type LayoutName } from "../../pyread/layout.js";
import { InputError, flags, gpuFlag, guarded, integer, seconds } from "../args.js";
import { command } from "../flags.js";

/** How the model runs and what it is given: every evaluation's flags but its sets. */
const MODEL_RUN = ["layout", "no-compute", "no-sealed", "threads", "gpu", "context", "max-tokens", "python", "json", "verbose"] as const;

const STEPS = command("eval steps", "", [
  ["data", { required: true, multiple: true }], ["model", { value: "PATH|URI|http://HOST:PORT/v1" }], "concurrency",
  ["limit", { help: "the first N programs of each set (where its --data gives no LIMIT)" }], "seed",
  "actions-per-program", ...MODEL_RUN,
]);
const CRUX = command("eval cruxeval", "", [
  ["data", { required: true, value: "FILE.jsonl", help: "CRUXEval-shaped items (code, input, output)" }],
  ["task", { required: true }], "model", "limit",
  ["max-steps", { help: "step_over predictions of one run to its return (default 200)" }], "return-line",
  "check-timeout", ...MODEL_RUN,
]);
const HYBRID = command("eval hybrid", "", [
  ["data", { required: true, value: "DIR", help: "the cases: incomplete programs, each beside its completed one" }],
  "sealed", "model", "hole-model", "limit", ["max-steps", { help: "states compared in each case" }], ...MODEL_RUN,
]);
const COMPARE = command("eval compare", "", [
  ["model", { multiple: true, value: "PATH", help: "a model to compare (default: the bundled one)" }],
  ["set", { multiple: true }], "cruxeval", "cruxeval-limit", "seed", ...MODEL_RUN,
]);

export const usage = "eval steps|cruxeval|hybrid|compare --data FILE.jsonl|DIR ...    (ndbg eval SUBCOMMAND --help for its options)";
/** Its flags (flags.ts), for the check that each subcommand's help lists each one it parses. */
export const specs = [STEPS, CRUX, HYBRID, COMPARE];
export const help = `Usage: ndbg ${usage}\n\n${[STEPS, CRUX, HYBRID, COMPARE].map((c) => `  ndbg ${c.usage}`).join("\n")}\n`;

interface Common {
  data: string;
  limit?: number;
  json: boolean;
  model: ModelOptions;
}

type Values = Record<string, string | string[] | boolean | undefined>;

/** How the model runs: the flags every evaluation shares. */
export function modelOptions(values: Values): ModelOptions {
  const s = (k: string): string | undefined => (typeof values[k] === "string" ? (values[k] as string) : undefined);
  const gpu = gpuFlag(s("gpu"));
  const layout = s("layout") ?? "canonical";
  if (!(LAYOUTS as readonly string[]).includes(layout)) throw new InputError(`--layout must be one of ${LAYOUTS.join(", ")}, not "${layout}"`, 2);
  const contextSize = integer("--context", s("context"), 256);
  const maxTokens = integer("--max-tokens", s("max-tokens"), 8);
  return {
    gpu,
    threads: integer("--threads", s("threads"), 0) ?? 0,
    layout: layout as LayoutName,
    ...(values["no-compute"] === true ? { compute: false } : {}),
    ...(values["no-sealed"] === true ? { sealed: false } : {}),
    ...(s("model") !== undefined ? { model: s("model") } : {}),
    ...(contextSize ? { contextSize } : {}),
    ...(maxTokens ? { maxTokens } : {}),
    ...(s("python") !== undefined ? { python: s("python") } : {}),
    log: (m) => {
      if (values.verbose) process.stderr.write(m + "\n");
    },
  };
}

function common(name: string, values: Values): Common {
  if (typeof values.data !== "string") throw new InputError("--data is missing", 2);
  const model: ModelOptions = { ...modelOptions(values), onProgress: progress(name) };
  const limit = integer("--limit", typeof values.limit === "string" ? values.limit : undefined, 1);
  return { data: values.data, json: values.json === true, model, ...(limit !== undefined ? { limit } : {}) };
}

/** A progress line on stderr about every tenth of the way (every item on a terminal). */
export function progress(name: string): (done: number, total: number, id: string) => void {
  const tty = process.stderr.isTTY === true;
  return (done, total, id) => {
    if (tty) process.stderr.write(`\rndbg eval ${name}: ${done}/${total} ${id}`.padEnd(60) + (done === total ? "\n" : ""));
    else if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0) process.stderr.write(`ndbg eval ${name}: ${done}/${total}\n`);
  };
}

const pct = (x: number | null): string => (x === null ? "-" : (100 * x).toFixed(1) + "%");
const num = (x: number | null, d = 1): string => (x === null ? "-" : x.toFixed(d));
const secs = (ms: number): string => (ms / 1000).toFixed(1) + " s";

function modelLine(m: StepsReport["model"]): string {
  return m
    ? `model ${m.name} (${m.dialect}, ${m.layout} layout) on ${m.device}, ${m.threads} thread${m.threads === 1 ? "" : "s"}, loaded in ${Math.round(m.loadMs)} ms`
    : "no model was loaded";
}

function stepsTable(r: StepsReport): string {
  const head = ["action", "count", "exact", "line", "locals", "base exact", "line+1", "unchanged", "errors", "ms/pred", "tok/pred"];
  const row = (name: string, f: ActionFigures): string[] => [
    name,
    String(f.count),
    pct(f.exact),
    pct(f.line),
    pct(f.locals),
    pct(f.baseline.exact),
    pct(f.baseline.line),
    pct(f.baseline.locals),
    String(f.errors),
    num(f.msPerPrediction),
    num(f.tokensPerPrediction),
  ];
  const rows = [head, ...ACTION_KINDS.map((a) => row(a, r.actions[a])), row("overall", r.overall), row("exception", r.exceptions)];
  const widths = head.map((_, i) => Math.max(...rows.map((x) => x[i].length)));
  const fmt = (x: string[]): string => x.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  const skipped = Object.entries(r.programs.skipped).map(([k, v]) => `${k} ${v}`).join(", ");
  return [
    modelLine(r.model),
    `programs: ${r.programs.evaluated} evaluated of ${r.programs.total}${skipped ? ` (skipped: ${skipped})` : ""}; ${r.actionsPerProgram} case(s) per action per program, seed ${r.seed}`,
    "next state predicted from the true current state; baselines: \"line+1\" = next line, \"unchanged\" = same locals, base exact = both",
    "",
    ...rows.slice(0, -1).map(fmt),
    fmt(rows[rows.length - 1]) + "   (the cases whose true next state is an exception or the error exit)",
    "",
    reliabilityTable(r.reliability.shown, `reliability of the confidence shown (${r.model?.calibration ? `calibrated by ${r.model.calibration}` : "not calibrated: the mean token probability"})`),
    "",
    reliabilityTable(r.reliability.raw, "reliability of the mean token probability (before calibration)"),
    "",
    `time: ${secs(r.time.totalMs)} in all (tracing ${secs(r.time.traceMs)}, predicting ${secs(r.time.predictMs)}${r.concurrency > 1 ? `, ${r.concurrency} programs at once` : ""}); ${r.overall.tokens} tokens generated; ${num(r.overall.count / (r.time.totalMs / 1000))} cases/s`,
  ].join("\n");
}

function cruxTable(r: CruxReport): string {
  const label: Record<string, string> = {
    step_return: "step_return from the call (jump to the return)",
    step_over: "step_over from the call until f returns",
    inv_step_return: "inv_step_return from f's return (inverse call)",
  };
  const lines = [modelLine(r.model), `CRUXEval-${r.task === "output" ? "O" : "I"} (${r.task} prediction) on ${r.count} item${r.count === 1 ? "" : "s"}`, ""];
  for (const [m, f] of Object.entries(r.methods))
    lines.push(`  ${(label[m] ?? m).padEnd(48)} pass@1 ${pct(f.passAt1).padStart(6)} (${f.passed}/${f.count})   predicted ${f.predicted}   ${num(f.msPerItem, 0)} ms/item   ${f.tokens} tokens`);
  lines.push("", `time: ${secs(r.time.totalMs)} in all (tracing ${secs(r.time.traceMs)}, predicting ${secs(r.time.predictMs)}, checking ${secs(r.time.checkMs)})`);
  return lines.join("\n");
}

/** "PATH" or "PATH:LIMIT" (the first LIMIT programs): a set of `eval steps` or `calibrate`. */
export function dataFlag(text: string): { data: string; limit?: number } {
  const m = /^(.+?)(?::(\d+))?$/.exec(text)!;
  const limit = integer("--data's limit", m[2], 1);
  return { data: m[1], ...(limit !== undefined ? { limit } : {}) };
}

async function steps(argv: string[]): Promise<number> {
  const { values } = flags(argv, STEPS);
  // --data repeats: the sets are evaluated as one (one report, one reliability table).
  const sets = (values.data ?? []).map(dataFlag);
  const c = common("steps", { ...values, data: sets.length ? sets.map((d) => d.data).join(", ") : undefined });
  const seed = integer("--seed", values.seed, 0) ?? 0;
  const k = integer("--actions-per-program", values["actions-per-program"], 1) ?? 1;
  const concurrency = integer("--concurrency", values.concurrency, 1) ?? 1;
  // The inference host runs one decode at a time: only a server has something to batch.
  if (concurrency > 1 && !isEndpoint(c.model.model ?? ""))
    throw new InputError("--concurrency sends several programs' cases at once to a model server, which batches them: it needs --model http://HOST:PORT/v1", 2);
  const programs = [];
  for (const d of sets) programs.push(...(await readPrograms(d.data, { ...((d.limit ?? c.limit) !== undefined ? { limit: d.limit ?? c.limit } : {}) })));
  const r = await evalSteps(programs, { ...c.model, seed, actionsPerProgram: k, concurrency });
  const data = (values.data ?? []).join(", ");
  process.stdout.write((c.json ? JSON.stringify({ command: "eval steps", data, ...r }) : stepsTable(r)) + "\n");
  return 0;
}

async function cruxeval(argv: string[]): Promise<number> {
  const { values } = flags(argv, CRUX);
  if (values.task !== "output" && values.task !== "input") throw new InputError(values.task === undefined ? "--task is missing (output or input)" : `--task must be output or input, not "${values.task}"`, 2);
  const returnLine = values["return-line"] ?? "code";
  if (returnLine !== "code" && returnLine !== "trace") throw new InputError(`--return-line must be code or trace, not "${returnLine}"`, 2);
  const checkTimeout = values["check-timeout"] === undefined ? undefined : seconds("--check-timeout", values["check-timeout"]);
  const c = common("cruxeval", values);
  const maxSteps = integer("--max-steps", values["max-steps"], 1);
  const programs = await readPrograms(c.data, { needOutput: true, ...(c.limit !== undefined ? { limit: c.limit } : {}) });
  const r = await evalCruxeval(programs, {
    ...c.model,
    task: values.task,
    returnLine,
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    ...(checkTimeout !== undefined ? { checkTimeout } : {}),
  });
  process.stdout.write((c.json ? JSON.stringify({ command: "eval cruxeval", data: c.data, ...r }) : cruxTable(r)) + "\n");
  return 0;
}

function hybridTable(r: HybridReport): string {
  const head = ["holes", "cases", "states", "hybrid", "predict", "ran part", "holes reached", "filled", "right", "exit hybrid", "exit predict"];
  const rows = [head, ...[...HOLE_KINDS, "overall" as const].map((k) => {
    const f = r.kinds[k];
    return [k, String(f.cases), String(f.steps), pct(f.hybrid), pct(f.predict), pct(f.ran), String(f.holesReached), String(f.holesFilled), String(f.holesRight), `${f.exitHybrid}/${f.cases}`, `${f.exitPredict}/${f.cases}`];
  })];
  const widths = head.map((_, i) => Math.max(...rows.map((x) => x[i].length)));
  const fmt = (x: string[]): string => x.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  const failed = r.cases.filter((c) => c.error).map((c) => `${c.id}: ${c.error}`);
  const sources = HOLE_SOURCES.map((s) => `${s} ${r.kinds.overall.sources[s].right}/${r.kinds.overall.sources[s].filled}`).join(", ");
  return [
    "agreement with the completed program's real run, state by state from the entry call (step_into to the end), outside the holes;",
    "\"ran part\": the hybrid run's states before its first hole, which ran for real; \"right\": holes filled with the completed program's value",
    "",
    ...rows.map(fmt),
    "",
    `holes right / filled, by where the value came from: ${sources}`,
    ...(failed.length ? ["", "not evaluated:", ...failed] : []),
    "",
    `time: ${secs(r.timeMs)}`,
  ].join("\n");
}

async function hybrid(argv: string[]): Promise<number> {
  const { values } = flags(argv, HYBRID);
  const c = common("hybrid", values);
  const maxSteps = integer("--max-steps", values["max-steps"], 1);
  const holeModel = values["hole-model"];
  if (holeModel !== undefined && !isEndpoint(holeModel)) throw new InputError(`--hole-model must be an OpenAI-compatible endpoint (http://HOST:PORT/v1), not "${holeModel}"`, 2);
  const r = await evalHybrid(readHybridCases(c.data, c.limit), {
    ...c.model,
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    executor: values.sealed ? "sealed" : "host",
    ...(holeModel !== undefined ? { holeModel } : {}),
  });
  process.stdout.write((c.json ? JSON.stringify({ command: "eval hybrid", data: c.data, ...r }) : hybridTable(r)) + "\n");
  return 0;
}

/** "NAME=PATH" or "NAME=PATH:LIMIT": a set of `eval compare`. */
function setFlag(text: string): CompareSet {
  const m = /^([^=]+)=(.+?)(?::(\d+))?$/.exec(text);
  if (!m) throw new InputError(`--set wants NAME=PATH or NAME=PATH:LIMIT, not "${text}"`, 2);
  const limit = integer("--set's limit", m[3], 1);
  return { name: m[1], data: m[2], ...(limit !== undefined ? { limit } : {}) };
}

async function compare(argv: string[]): Promise<number> {
  const { values } = flags(argv, COMPARE);
  const sets = (values.set ?? []).map(setFlag);
  if (!sets.length && values.cruxeval === undefined) throw new InputError("nothing to compare on: give --set NAME=PATH[:LIMIT] (repeatable) or --cruxeval FILE", 2);
  const model = modelOptions({ ...values, model: undefined }); // the models are the run's subject, not an option
  const cruxLimit = integer("--cruxeval-limit", values["cruxeval-limit"], 1);
  const r = await compareModels({
    ...model,
    models: values.model?.length ? values.model : [""],
    sets,
    ...(values.cruxeval !== undefined ? { cruxeval: { data: values.cruxeval, ...(cruxLimit !== undefined ? { limit: cruxLimit } : {}) } } : {}),
    seed: integer("--seed", values.seed, 0) ?? 0,
    onProgress: (what, done, total) => progress(`compare: ${what}`)(done, total, ""),
  });
  process.stdout.write((values.json === true ? JSON.stringify({ command: "eval compare", ...r }) : compareTable(r)) + "\n");
  return 0;
}

const SUBCOMMANDS = {
  steps: { run: steps, spec: STEPS },
  cruxeval: { run: cruxeval, spec: CRUX },
  hybrid: { run: hybrid, spec: HYBRID },
  compare: { run: compare, spec: COMPARE },
};

export function helpOf(argv: string[]): string {
  const sub = argv[0];
  return sub !== undefined && Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub as keyof typeof SUBCOMMANDS].spec.help : help;
}

export function run(argv: string[]): Promise<number> {
  return guarded("eval", usage, async () => {
    const [sub, ...rest] = argv;
    const chosen = sub !== undefined && Object.hasOwn(SUBCOMMANDS, sub) ? SUBCOMMANDS[sub as keyof typeof SUBCOMMANDS] : undefined;
    if (!chosen)
      throw new InputError(sub === undefined ? "which evaluation? steps, cruxeval, hybrid or compare" : `unknown evaluation "${sub}" (steps, cruxeval, hybrid or compare)`, 2);
    const body = async (): Promise<number> => {
      try {
        return await chosen.run(rest);
      } catch (e) {
        if (e instanceof DataError || e instanceof ModelFileError) throw new InputError(e.message);
        throw e;
      }
    };
    try {
      return await guarded(`eval ${sub}`, chosen.spec.usage, body);
    } finally {
      await disposeAll();
    }
  });
}
