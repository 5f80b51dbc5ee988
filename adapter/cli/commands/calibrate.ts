// ndbg calibrate: fits a model's calibration (adapter/tools/calibrate.ts) and writes it beside the
// model (NAME.calibration.json), where every session that loads the model reads it. Run it after
// each training, on a fitting set that is neither training data nor an evaluation set
// (training/README.md, "Calibration"). The states come from the model alone (`eval steps
// --no-compute`) on each --data, or from the items of such runs saved with --json (--report).
import { readFile, writeFile } from "node:fs/promises";
import { basename } from "node:path";
import { disposeAll } from "../../model/backend.js";
import { ModelFileError } from "../../model/gguf.js";
import { calibrated, calibrationPath, type StateScore } from "../../model/calibration.js";
import { resolveModel } from "../../model/resolve.js";
import { DataError, readPrograms } from "../../tools/programs.js";
import { evalSteps, type StepsItem, type StepsReport } from "../../tools/steps.js";
import { fitCalibration, logLoss, type Sample } from "../../tools/calibrate.js";
import { reliability, reliabilityTable } from "../../tools/reliability.js";
import { InputError, flags, guarded, integer } from "../args.js";
import { command } from "../flags.js";
import { dataFlag, modelOptions, progress } from "./eval.js";

const SPEC = command("calibrate", "", [
  ["data", { multiple: true, help: "the fitting programs, the model alone predicting on them (this or --report)" }],
  ["report", { multiple: true }], ["model", { value: "PATH" }],
  ["out", { help: "where the calibration goes (default: beside the model, NAME.calibration.json)" }], "seed",
  "actions-per-program", "threads", "gpu",
  ["python", { help: "the Python that runs the programs for the real states (default: python3 on PATH)" }], "json",
  "verbose",
]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

/** The fitting samples of a run: every answer the model gave alone, with its token probabilities. */
function samplesOf(items: readonly StepsItem[]): Sample[] {
  return items.filter((x) => x.score !== undefined).map((x) => ({ score: x.score as StateScore, exact: x.exact }));
}

async function calibrate(argv: string[]): Promise<number> {
  const { values } = flags(argv, SPEC);
  const data = (values.data ?? []).map(dataFlag);
  const reports = values.report ?? [];
  if (!data.length && !reports.length) throw new InputError("nothing to fit on: give --data FILE.jsonl|DIR[:LIMIT] (repeatable) or --report EVAL.json (an `ndbg eval steps --no-compute --json` run)", 2);
  const model = await resolveModel(values.model ?? "", { cwd: process.cwd() });
  const samples: Sample[] = [];
  const names: string[] = [];
  for (const file of reports) {
    const r = JSON.parse(await readFile(file, "utf8").catch((e: Error) => Promise.reject(new InputError(`cannot read ${file}: ${e.message}`)))) as Partial<StepsReport> & { command?: string; data?: string };
    if (r.command !== "eval steps" || !Array.isArray(r.items)) throw new InputError(`${file} is not the --json output of ndbg eval steps`);
    if (!r.model || basename(r.model.path) !== basename(model)) throw new InputError(`${file} measured ${r.model ? basename(r.model.path) : "no model"}, not ${basename(model)}`);
    const got = samplesOf(r.items);
    if (r.items.some((x) => x.predicted && x.score === undefined))
      throw new InputError(`${file} has states the model did not predict alone: run eval steps with --no-compute`);
    samples.push(...got);
    names.push(r.data ?? file);
  }
  const seed = integer("--seed", values.seed, 0) ?? 0;
  const k = integer("--actions-per-program", values["actions-per-program"], 1) ?? 1;
  for (const d of data) {
    const programs = await readPrograms(d.data, d.limit !== undefined ? { limit: d.limit } : {});
    const opts = { ...modelOptions({ ...values, model: model }), compute: false, onProgress: progress("calibrate") };
    const r = await evalSteps(programs, { ...opts, seed, actionsPerProgram: k });
    samples.push(...samplesOf(r.items));
    names.push(d.limit !== undefined ? `${d.data}:${d.limit}` : d.data);
  }
  const cal = fitCalibration(samples, {
    model: basename(model),
    data: names,
    date: new Date().toISOString().slice(0, 10),
    command: ["ndbg", "calibrate", ...argv.filter((a) => a !== "--json")].join(" "),
  });
  const out = values.out ?? calibrationPath(model);
  await writeFile(out, JSON.stringify(cal, null, 2) + "\n");
  const before = reliability(samples.map((s) => ({ confidence: s.score.mean, exact: s.exact })));
  const after = reliability(samples.map((s) => ({ confidence: calibrated(cal, s.score), exact: s.exact })));
  const loss = { before: logLoss(samples, (s) => s.mean), after: logLoss(samples, (s) => calibrated(cal, s)) };
  if (values.json === true) process.stdout.write(JSON.stringify({ command: "calibrate", out, calibration: cal, logLoss: loss, reliability: { before, after } }) + "\n");
  else
    process.stdout.write(
      [
        `wrote ${out}: p = 1 / (1 + exp(-(${cal.bias.toFixed(4)} ${Object.entries(cal.weights).map(([f, w]) => `+ ${w.toFixed(4)}·${f}`).join(" ")})))`,
        `fitted on ${samples.length} states of ${names.join(", ")} (${(100 * cal.fitted.exact).toFixed(1)}% exact); log loss ${loss.before.toFixed(3)} → ${loss.after.toFixed(3)}`,
        "(the tables below are of the fitting states themselves: measure on an evaluation set with ndbg eval steps --no-compute)",
        "",
        reliabilityTable(before, "before: the mean token probability"),
        "",
        reliabilityTable(after, "after: calibrated"),
      ].join("\n") + "\n",
    );
  return 0;
}

export function run(argv: string[]): Promise<number> {
  return guarded("calibrate", usage, async () => {
    try {
      return await calibrate(argv);
    } catch (e) {
      if (e instanceof DataError || e instanceof ModelFileError) throw new InputError(e.message);
      if (e instanceof Error && /fitting states|singular system/.test(e.message)) throw new InputError(e.message);
      throw e;
    } finally {
      await disposeAll();
    }
  });
}
