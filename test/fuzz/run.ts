// The fuzz suite: seeded families of hostile input to the real adapter (dist/adapter.js over DAP),
// the real tracer, the real model loader and dialect, the real trace language server
// (dist/server.cjs over LSP) and the MCP server (`dist/ndbg.js mcp`, JSON-RPC lines). For each family and in total: requests sent and answered, crashes,
// hangs (a request past its deadline), peak memory of the process under test, and processes and
// files left behind. A case is repeated by its seed and number: each has a generator of its own.
//
//   npm run fuzz -- [--seed N] [--budget N | --budget Ns] [--family NAME[,NAME...]] [--case N]
//
// --budget N runs N cases per family; Ns runs the families for about N seconds in all. Exits 1 when
// anything went wrong, with one line per problem. --case N runs only case N of each family, as a
// problem line names it.
import { mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Gen } from "./gen.js";
import { addTally, emptyTally, type Tally } from "./harness.js";
import { framing } from "./families/framing.js";
import { requests } from "./families/requests.js";
import { launchArgs } from "./families/launch.js";
import { models } from "./families/models.js";
import { outputs } from "./families/outputs.js";
import { programs } from "./families/programs.js";
import { traces } from "./families/traces.js";
import { language } from "./families/language.js";
import { mcp } from "./families/mcp.js";

/** One case: `work` is a folder of its own for the files it makes, `shared` one for the whole run. */
type Family = (g: Gen, label: string, tally: Tally, work: string, shared: string) => Promise<void>;

export const FAMILIES: Record<string, Family> = { framing, requests, launch: launchArgs, models, outputs, programs, traces, language, mcp };

export interface Budget {
  /** Cases per family, or seconds for the whole run. */
  cases?: number;
  seconds?: number;
  /** Only this case of each family (to repeat one a run reported). */
  only?: number;
}

/** A case's own seed: the run's seed, the family and the case number. */
export function caseSeed(seed: number, family: string, i: number): number {
  let h = seed >>> 0;
  for (const c of `${family}#${i}`) h = Math.imul(h ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return h;
}

/** Runs the families; the tally of each, by name. */
export async function runFuzz(seed: number, budget: Budget, families = Object.keys(FAMILIES), log = (_: string) => {}): Promise<Map<string, Tally>> {
  const shared = mkdtempSync(join(tmpdir(), "ndbg-fuzzrun-"));
  const out = new Map<string, Tally>();
  try {
    const start = Date.now();
    for (const [k, name] of families.entries()) {
      const run = FAMILIES[name];
      if (!run) throw new Error(`no fuzz family "${name}" (there are ${Object.keys(FAMILIES).join(", ")})`);
      const tally = emptyTally();
      out.set(name, tally);
      const t0 = Date.now();
      // A seconds budget is shared out among the families still to run.
      const until = budget.seconds !== undefined ? Date.now() + ((budget.seconds * 1000 - (Date.now() - start)) / (families.length - k)) : Infinity;
      for (let i = budget.only ?? 0; budget.only !== undefined ? i === budget.only : budget.cases !== undefined ? i < budget.cases : Date.now() < until; i++) {
        const work = join(shared, `${name}-${i}`);
        mkdirSync(work);
        const label = `${name} case ${i} (--seed ${seed})`;
        await run(new Gen(caseSeed(seed, name, i)), label, tally, work, shared);
        tally.cases++;
        rmSync(work, { recursive: true, force: true });
      }
      tally.seconds = Math.round((Date.now() - t0) / 100) / 10;
      log(row(name, tally));
    }
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
  return out;
}

export function total(tallies: Map<string, Tally>): Tally {
  const t = emptyTally();
  for (const x of tallies.values()) addTally(t, x);
  return t;
}

export const HEADER = `${"family".padEnd(10)} ${"cases".padStart(6)} ${"sent".padStart(6)} ${"answered".padStart(8)} ${"crashes".padStart(7)} ${"hangs".padStart(5)} ${"peak MiB".padStart(8)} ${"left procs".padStart(10)} ${"left files".padStart(10)} ${"seconds".padStart(7)}`;
export const row = (name: string, t: Tally): string =>
  `${name.padEnd(10)} ${String(t.cases).padStart(6)} ${String(t.sent).padStart(6)} ${String(t.answered).padStart(8)} ${String(t.crashes).padStart(7)} ${String(t.hangs).padStart(5)} ${String(t.peakMiB).padStart(8)} ${String(t.leftoverProcesses).padStart(10)} ${String(t.leftoverFiles).padStart(10)} ${t.seconds.toFixed(1).padStart(7)}`;

/** Whether a run went as it must: everything answered, no crash, hang, leftover or other problem. */
export const clean = (t: Tally): boolean => t.answered === t.sent && t.crashes + t.hangs + t.leftoverProcesses + t.leftoverFiles === 0 && t.problems.length === 0;

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string): string | undefined => {
    const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
    if (i < 0) return undefined;
    return argv[i].includes("=") ? argv[i].slice(argv[i].indexOf("=") + 1) : argv[i + 1];
  };
  const seed = Number(flag("seed") ?? 1);
  const b = flag("budget") ?? "3";
  const m = /^(\d+)(s?)$/.exec(b);
  if (!Number.isInteger(seed) || !m) {
    process.stderr.write("usage: npm run fuzz -- [--seed N] [--budget N | --budget Ns] [--family NAME[,NAME...]] [--case N]\n");
    process.exit(2);
  }
  const only = flag("case");
  const budget: Budget = { ...(m[2] ? { seconds: Number(m[1]) } : { cases: Number(m[1]) }), ...(only !== undefined ? { only: Number(only) } : {}) };
  const families = flag("family")?.split(",") ?? Object.keys(FAMILIES);
  const t0 = Date.now();
  console.log(`fuzz: seed ${seed}, budget ${b}${m[2] ? "" : " cases per family"}, families ${families.join(", ")}`);
  console.log(HEADER);
  const tallies = await runFuzz(seed, budget, families, (l) => console.log(l));
  const all = total(tallies);
  console.log(row("total", all));
  console.log(`${Math.round((Date.now() - t0) / 1000)} s`);
  for (const p of all.problems) console.log(`problem: ${p}`);
  process.exit(clean(all) ? 0 : 1);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
