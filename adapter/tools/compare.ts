// `ndbg eval compare`: models side by side on the same sets, through one adapter in one sitting.
// Each set's programs are read once and every model is measured on them in turn (eval steps:
// next-state figures per action; CRUXEval: output and input pass@1), so a before/after table
// never mixes adapters or days. The table is the one model cards carry.
import { ACTION_KINDS } from "../format/trajectory.js";
import { CRUX_METHODS, evalCruxeval, type CruxReport, type CruxTask } from "./cruxeval.js";
import type { ModelOptions } from "./predicting.js";
import { readPrograms } from "./programs.js";
import { evalSteps, type ActionFigures, type StepsReport } from "./steps.js";

export interface CompareSet {
  name: string;
  /** A programs JSONL file or a folder of scripts, as `eval steps --data` takes. */
  data: string;
  limit?: number;
}

export interface CompareOptions extends Omit<ModelOptions, "model" | "onProgress"> {
  /** GGUF paths or URIs, the model before first; "" is the bundled model. */
  models: string[];
  sets: CompareSet[];
  /** CRUXEval output and input pass@1 on this file (every item, or the first `limit`). */
  cruxeval?: { data: string; limit?: number };
  seed?: number;
  onProgress?: (what: string, done: number, total: number) => void;
}

export interface CompareReport {
  models: string[];
  /** reports[i] is models[i]'s. */
  steps: { set: string; data: string; reports: StepsReport[] }[];
  cruxeval: { task: CruxTask; data: string; reports: CruxReport[] }[];
}

const TASKS: readonly CruxTask[] = ["output", "input"];
/** The method a task is compared by: its one jump (maxSteps 1 below). */
const jump = (task: CruxTask): string => CRUX_METHODS[task][0];

export async function compareModels(o: CompareOptions): Promise<CompareReport> {
  const { models, sets, cruxeval, seed, onProgress, ...model } = o;
  const report: CompareReport = { models, steps: [], cruxeval: [] };
  for (const set of sets) {
    const programs = await readPrograms(set.data, set.limit !== undefined ? { limit: set.limit } : {});
    const reports: StepsReport[] = [];
    for (const [i, m] of models.entries())
      // Models are compared on their own answers: a sealed run would give both the same exact states.
      reports.push(await evalSteps(programs, { ...model, sealed: false, model: m, seed: seed ?? 0, onProgress: (d, t) => onProgress?.(`${set.name}, model ${i + 1}`, d, t) }));
    report.steps.push({ set: set.name, data: set.data, reports });
  }
  if (cruxeval) {
    const programs = await readPrograms(cruxeval.data, { needOutput: true, ...(cruxeval.limit !== undefined ? { limit: cruxeval.limit } : {}) });
    for (const task of TASKS) {
      const reports: CruxReport[] = [];
      for (const [i, m] of models.entries())
        reports.push(await evalCruxeval(programs, { ...model, model: m, task, maxSteps: 1, onProgress: (d, t) => onProgress?.(`CRUXEval ${task}, model ${i + 1}`, d, t) }));
      report.cruxeval.push({ task, data: cruxeval.data, reports });
    }
  }
  return report;
}

/** A rate as a percentage with at most one decimal ("58", "46.3"); "-" where nothing was counted. */
const pct = (x: number | null): string => (x === null ? "-" : String(Math.round(1000 * x) / 10));

/** The models' values in order, the last one (the model after) in bold: "40 → **58**". */
const across = (xs: string[], bold: boolean): string => xs.map((x, i) => (bold && i === xs.length - 1 ? `**${x}**` : x)).join(" → ");

/** One cell: exact, line and locals across the models, then the number of cases. */
function cell(fs: ActionFigures[]): string {
  const n = fs[fs.length - 1].count;
  if (!n) return "-";
  return `${across(fs.map((f) => pct(f.exact)), true)} / ${across(fs.map((f) => pct(f.line)), false)} / ${across(fs.map((f) => pct(f.locals)), false)} (${n})`;
}

/** The Markdown tables: next states per action and set, then CRUXEval pass@1 per task. */
export function compareTable(r: CompareReport): string {
  const out = [
    `models, in order: ${r.models.map((m, i) => `${i + 1}. ${m || "the bundled model"}`).join("; ")}`,
    "",
    "each cell: exact next state (the last model's in bold) / line / locals, % across the models, each predicted from the true current state (cases)",
    "",
    `| action | ${r.steps.map((s) => s.set).join(" | ")} |`,
    `|---|${r.steps.map(() => "---|").join("")}`,
  ];
  const rows: [string, (x: StepsReport) => ActionFigures][] = [
    ...ACTION_KINDS.map((a): [string, (x: StepsReport) => ActionFigures] => [a, (x) => x.actions[a]]),
    ["overall", (x) => x.overall],
    ["exception", (x) => x.exceptions],
  ];
  for (const [name, get] of rows) out.push(`| ${name} | ${r.steps.map((s) => cell(s.reports.map(get))).join(" | ")} |`);
  if (r.cruxeval.length) {
    out.push("", "CRUXEval pass@1, each prediction's assert executed", "", "| task | method | pass@1, % | passed | valid predictions |", "|---|---|---|---|---|");
    for (const c of r.cruxeval) {
      const m = c.reports.map((x) => x.methods[jump(c.task)]);
      out.push(
        `| ${c.task} | ${jump(c.task)} | ${across(m.map((f) => pct(f.passAt1)), true)} | ${across(m.map((f) => String(f.passed)), false)} of ${m[m.length - 1].count} | ${across(m.map((f) => String(f.predicted)), false)} |`,
      );
    }
  }
  return out.join("\n");
}
