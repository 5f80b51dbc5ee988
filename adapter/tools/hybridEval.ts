// How much hybrid mode gains over predict mode on incomplete programs. Each case is a folder with
// the incomplete program (main.py), its completed form (complete.py: the same lines, the missing
// parts appended or an import line swapped in place) whose real run is the truth, and case.json
// ({call, kind, holes: [qualified names], predict?: [names]}). Both modes run the incomplete
// program from the entry call with step_into to the end, free-running as a user would step; each
// is compared with the truth state by state, outside the holes (the holes' own frames, frames of
// other files, and what they call, are left out on every side). The parts of the hybrid run before
// its first hole ran for real: they must agree entirely.
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Engine } from "../engine/engine.js";
import { type TraceOptions, type TraceResult } from "../real/run.js";
import { runTrace } from "../real/hostRun.js";
import { HOST_EXECUTOR, SEALED_EXECUTOR } from "../real/executor.js";
import { normalizeSource, sameExit, sameFrame, type Exit, type Frame } from "../format/trajectory.js";
import { HybridPredictor } from "../predictors/hybrid.js";
import { DataError } from "./programs.js";
import { modelPredictor, type ModelOptions } from "./predicting.js";
import { HoleValueModel } from "../model/holeValue.js";

export const HOLE_KINDS = ["stub", "name", "import", "predict"] as const;
export type HoleKind = (typeof HOLE_KINDS)[number];

export interface HybridCase {
  id: string;
  main: string;
  complete: string;
  call: string;
  kind: HoleKind;
  holes: string[];
  predict: string[];
}

/** Where a hole's value came from: its docstring's example, the model held to the annotated type, the model. */
export const HOLE_SOURCES = ["docstring", "typed model", "model"] as const;
export type HoleSource = (typeof HOLE_SOURCES)[number];
export type BySource = Record<HoleSource, { filled: number; right: number }>;

export interface CaseResult {
  id: string;
  kind: HoleKind;
  /** Truth states outside the holes. */
  steps: number;
  hybrid: number;
  predict: number;
  /** States of the hybrid run before its first hole (outside the holes), and how many agree. */
  ran: number;
  ranAgree: number;
  holesReached: number;
  holesFilled: number;
  /** Filled holes whose value is the completed program's (the return value of the same call). */
  holesRight: number;
  /** The filled holes, and the right ones, by where their value came from. */
  sources: BySource;
  exitHybrid: boolean;
  exitPredict: boolean;
  error?: string;
}

export interface KindFigures {
  cases: number;
  steps: number;
  hybrid: number | null;
  predict: number | null;
  ran: number | null;
  holesReached: number;
  holesFilled: number;
  holesRight: number;
  sources: BySource;
  exitHybrid: number;
  exitPredict: number;
}

export interface HybridReport {
  kinds: Record<HoleKind | "overall", KindFigures>;
  cases: CaseResult[];
  timeMs: number;
}

/** The cases under `dir` (one folder each), checked before anything runs. */
export function readHybridCases(dir: string, limit?: number): HybridCase[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => statSync(join(dir, n)).isDirectory()).sort();
  } catch (e) {
    throw new DataError(`cannot read the cases in ${dir}: ${(e as Error).message}`);
  }
  const cases = names.map((id): HybridCase => {
    const at = join(dir, id);
    let spec: Record<string, unknown>;
    try {
      spec = JSON.parse(readFileSync(join(at, "case.json"), "utf8"));
    } catch (e) {
      throw new DataError(`${id}: case.json: ${(e as Error).message}`);
    }
    const strings = (v: unknown): string[] => (Array.isArray(v) && v.every((x) => typeof x === "string") ? v : []);
    if (typeof spec.call !== "string" || !(HOLE_KINDS as readonly string[]).includes(spec.kind as string) || !strings(spec.holes).length)
      throw new DataError(`${id}: case.json needs "call", "kind" (${HOLE_KINDS.join(", ")}) and "holes"`);
    return { id, main: join(at, "main.py"), complete: join(at, "complete.py"), call: spec.call, kind: spec.kind as HoleKind, holes: strings(spec.holes), predict: strings(spec.predict) };
  });
  if (!cases.length) throw new DataError(`no cases in ${dir}`);
  return limit ? cases.slice(0, limit) : cases;
}

/** The frames outside the holes: no hole function's frames or what they call, no other file's. */
export function outsideHoles(frames: readonly Frame[], holes: readonly string[]): Frame[] {
  const isHole = (func: string): boolean => holes.some((h) => func === h || func.startsWith(h + ".") || func.endsWith("." + h));
  const out: Frame[] = [];
  let inside: number | undefined;
  for (const f of frames) {
    if (inside !== undefined) {
      if (f.depth > inside || (f.depth === inside && f.event !== "call" && isHole(f.func))) continue;
      inside = undefined;
    }
    if (f.file !== undefined) continue;
    if (isHole(f.func)) {
      if (f.event !== "return") inside = f.depth;
      continue;
    }
    out.push(f);
  }
  return out;
}

/**
 * A state as it is compared (sameFrame), without the output written on the way to it. A local
 * holding a module reads "<module>": the missing module's stand-in and the completed program's
 * module are the hole itself, not a value the run computed.
 */
function compared(f: Frame): Frame {
  const { stdout: _, ...state } = f;
  return { ...state, locals: Object.fromEntries(Object.entries(f.locals).map(([k, v]) => [k, v.startsWith("<module ") ? "<module>" : v])) };
}

function agreeing(a: readonly Frame[], truth: readonly Frame[]): number {
  let n = 0;
  for (let i = 0; i < truth.length; i++) if (a[i] && sameFrame(compared(a[i]), compared(truth[i]))) n++;
  return n;
}

/** `executor`: where the incomplete program runs, this machine's Python (hybrid mode) or the sealed CPython (predict mode). */
/** `holeModel`: a chat model's endpoint asked for each hole's value alone (the launch attribute of that name), instead of the model's next state. */
type HybridEvalOptions = ModelOptions & { maxSteps?: number; executor?: "host" | "sealed"; holeModel?: string };

export async function evalHybrid(cases: readonly HybridCase[], o: HybridEvalOptions): Promise<HybridReport> {
  const t0 = performance.now();
  const results: CaseResult[] = [];
  for (const [k, c] of cases.entries()) {
    results.push(await evalCase(c, o).catch((e: Error): CaseResult => ({ ...empty(c), error: e.message })));
    o.onProgress?.(k + 1, cases.length, c.id);
  }
  const figures = (rs: CaseResult[]): KindFigures => {
    const sum = (f: (r: CaseResult) => number): number => rs.reduce((s, r) => s + f(r), 0);
    const steps = sum((r) => r.steps);
    const ran = sum((r) => r.ran);
    return {
      cases: rs.length,
      steps,
      hybrid: steps ? sum((r) => r.hybrid) / steps : null,
      predict: steps ? sum((r) => r.predict) / steps : null,
      ran: ran ? sum((r) => r.ranAgree) / ran : null,
      holesReached: sum((r) => r.holesReached),
      holesFilled: sum((r) => r.holesFilled),
      holesRight: sum((r) => r.holesRight),
      sources: Object.fromEntries(HOLE_SOURCES.map((s) => [s, { filled: sum((r) => r.sources[s].filled), right: sum((r) => r.sources[s].right) }])) as BySource,
      exitHybrid: sum((r) => Number(r.exitHybrid)),
      exitPredict: sum((r) => Number(r.exitPredict)),
    };
  };
  const kinds = Object.fromEntries([...HOLE_KINDS.map((k) => [k, figures(results.filter((r) => r.kind === k))]), ["overall", figures(results)]]) as HybridReport["kinds"];
  return { kinds, cases: results, timeMs: performance.now() - t0 };
}

const noSources = (): BySource => Object.fromEntries(HOLE_SOURCES.map((s) => [s, { filled: 0, right: 0 }])) as BySource;

const empty = (c: HybridCase): CaseResult => ({
  id: c.id,
  kind: c.kind,
  steps: 0,
  hybrid: 0,
  predict: 0,
  ran: 0,
  ranAgree: 0,
  holesReached: 0,
  holesFilled: 0,
  holesRight: 0,
  sources: noSources(),
  exitHybrid: false,
  exitPredict: false,
});

async function evalCase(c: HybridCase, o: HybridEvalOptions): Promise<CaseResult> {
  const r = empty(c);
  const limits = { maxEvents: 2000, timeout: 10, ...(o.python ? { python: o.python } : {}) };
  const truthRun = await traceCompleted(c, limits);
  const truth = outsideHoles(truthRun.frames, c.holes);
  r.steps = truth.length;
  const source = normalizeSource(readFileSync(c.main, "utf8"));
  const maxSteps = Math.min(o.maxSteps ?? 400, truthRun.frames.length + 20);

  const holeModel = o.holeModel;
  const hybrid = await HybridPredictor.create(c.main, {
    call: c.call,
    predict: c.predict,
    ...limits,
    executor: o.executor === "sealed" ? SEALED_EXECUTOR : HOST_EXECUTOR,
    model: (text) => modelPredictor(o, c.main, text),
    ...(holeModel ? { valueModel: () => HoleValueModel.open(holeModel, process.env.NDBG_API_KEY) } : {}),
  });
  try {
    const ran = hybrid.fills.length ? hybrid.frames.slice(0, hybrid.fills[0].at) : hybrid.frames;
    const ranOut = outsideHoles(ran, c.holes);
    const hyb = outsideHoles(hybrid.frames, c.holes);
    r.hybrid = agreeing(hyb, truth);
    r.ran = ranOut.length;
    r.ranAgree = agreeing(ranOut, truth);
    r.holesReached = hybrid.fills.length;
    r.holesFilled = hybrid.fills.filter((f) => f.repr !== undefined).length;
    const truthValues = returnsByFunction(truthRun.frames);
    const nth = new Map<string, number>();
    for (const f of hybrid.fills) {
      const name = lastPart(f.name);
      const k = nth.get(name) ?? 0;
      nth.set(name, k + 1);
      if (f.repr === undefined) continue;
      const right = truthValues.get(name)?.[k] === f.repr;
      const source = r.sources[f.by === "docstring" ? "docstring" : f.type ? "typed model" : "model"];
      source.filled++;
      if (right) {
        r.holesRight++;
        source.right++;
      }
    }
    r.exitHybrid = sameEnd(hybrid.exit, truthRun.exit);
  } finally {
    await hybrid.dispose();
  }

  const model = await modelPredictor(o, c.main, source, c.call);
  try {
    const engine = new Engine(model, { maxSteps });
    const frames: Frame[] = [];
    const first = await engine.start();
    if (first.step.frame) frames.push(first.step.frame);
    let exit = first.step.exit;
    while (!exit && frames.length < maxSteps) {
      let p;
      try {
        p = await engine.step("step_into");
      } catch {
        break; // the model gave no state: the session ends here
      }
      if (p.step.frame) frames.push(p.step.frame);
      exit = p.step.exit;
    }
    r.predict = agreeing(outsideHoles(frames, c.holes), truth);
    r.exitPredict = exit !== undefined && sameEnd(exit, truthRun.exit);
  } finally {
    await model.dispose();
  }
  return r;
}

/**
 * The truth: the completed form run as main.py, in a copy of the case's folder (object reprs name
 * the module, which is the file's stem).
 */
async function traceCompleted(c: HybridCase, limits: Omit<TraceOptions, "call">): Promise<TraceResult> {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-hybrid-truth-"));
  try {
    cpSync(dirname(c.main), dir, { recursive: true });
    copyFileSync(c.complete, join(dir, basename(c.main)));
    return await runTrace(join(dir, basename(c.main)), { call: c.call, ...limits });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const lastPart = (name: string): string => name.split(".").at(-1)!.replace(/\(\)$/, "");

/** The values the outermost calls of each function returned, in order, by the function's last name. */
function returnsByFunction(frames: readonly Frame[]): Map<string, (string | undefined)[]> {
  const out = new Map<string, (string | undefined)[]>();
  const open = new Map<string, number>();
  for (const f of frames) {
    const name = lastPart(f.func);
    if (f.event === "call") open.set(name, (open.get(name) ?? 0) + 1);
    if (f.event !== "return") continue;
    const n = (open.get(name) ?? 1) - 1;
    open.set(name, n);
    if (n === 0) out.set(name, [...(out.get(name) ?? []), f.value]);
  }
  return out;
}

/** The same end: status and value (output aside, as for the states). */
const sameEnd = (a: Exit, b: Exit): boolean => sameExit({ status: a.status, value: a.value ?? "" }, { status: b.status, value: b.value ?? "" });
