// The bench: the same programs and the same moves in predict mode and in debugpy, one after the
// other for each program (so both meet the same machine load), then one long session on each
// side, then the physical limit. Returns one object with every figure.
import { availableParallelism, cpus, loadavg } from "node:os";
import { rmSync, statSync } from "node:fs";
import { ACTIONS, CYCLE, LONG_PROGRAM, PROGRAMS, writePrograms, type BenchProgram, type MoveName } from "./programs.js";
import { DebugpySession, NeuralSession, type DebugpyConfig, type ModelInfo, type Move, type NeuralConfig, type Session, type SideName } from "./sides.js";
import { copyBandwidth, weightsRead } from "./limit.js";
import { findDebugpyPython } from "../../real/debugpy.js";
import { mean, round, summarize, type Summary } from "./stats.js";

export interface BenchOptions {
  adapter: string;
  /** GGUF for predict mode; absent: the adapter's bundled model. */
  model?: string;
  /** Samples per action and side. */
  steps: number;
  /** Moves in the long session. */
  long: number;
  threads: number;
  gpu: string;
  /** Python with debugpy (found when absent). */
  python?: string;
  /** Limit on one move, ms. */
  moveTimeoutMs: number;
  /** Extra launch attributes and environment for the neural adapter (experiments). */
  extra?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  log?: (line: string) => void;
}

export interface SideFigures {
  n: number;
  /** Request to response, ms. */
  response: Summary;
  /** Request to the stop that follows, ms. */
  stop: Summary;
  /** CPU time of the debugger's processes per move, ms (Linux; absent elsewhere). */
  cpu?: Summary;
}

export interface NeuralFigures extends SideFigures {
  /** Moves the adapter could not make (the model's answer was not a state). */
  failed: number;
  /** Stop times of the moves that gave a state (absent when none did). */
  ok?: Summary;
  /** Tokens generated per move (all model calls of the move). */
  tokensPerStep: number;
  /** Generated tokens per second of generation. */
  tokensPerSecond: number;
  /** Model calls per move (continue may ask several). */
  callsPerStep: number;
  /** Prompt tokens evaluated per move (those not already in the cache). */
  evaluatedPerStep: number;
}

export interface ActionFigures {
  neural: NeuralFigures;
  debugpy: SideFigures;
  /** neural.stop.median / debugpy.stop.median */
  ratio: number;
  /** neural.stop.p90 / debugpy.stop.p90 */
  ratioP90: number;
  /** neural.cpu.median / debugpy.cpu.median, where both were measured. */
  cpuRatio?: number;
}

export interface GrowthPoint {
  /** Position of the move in the session (1 = the first move). */
  position: number;
  /** Median stop time of the moves around it (up to two on each side), ms. */
  stop: number;
  /** Median CPU time of the same moves, ms. */
  cpu?: number;
  /** Neural only: the model's time, prompt tokens and evaluated tokens at this position. */
  modelMs?: number;
  promptTokens?: number;
  evaluatedTokens?: number;
  tokens?: number;
}

export interface SpanFigures {
  /** Positions of the first and last move of the stretch. */
  from: number;
  to: number;
  stop: Summary;
  cpu?: Summary;
}

export interface BenchResult {
  bench: 1;
  date: string;
  machine: { cpus: number; cpuModel: string; loadavg: number[]; loadavgAfter: number[]; node: string };
  settings: { steps: number; long: number; threads: number; gpu: string; programs: string[]; python: string };
  /** The model the adapter loaded; none where no move needed one (a sealed run without holes). */
  model?: ModelInfo & { fileBytes: number; params: number; weightBytesPerToken: number };
  actions: Record<MoveName, ActionFigures>;
  /** Every move of the four actions together. */
  all: ActionFigures;
  /** stackTrace + scopes + variables after a stop, ms. */
  inspect: { neural: Summary; debugpy: Summary };
  /** Tokens generated per move and per model call, generation speed, prompt tokens evaluated per move; draft tokens accepted and rejected (speculative decoding, when on). */
  tokens: { perStep: number; perSecond: number; perCall: number; evaluatedPerStep: number; drafts: { validated: number; refuted: number } };
  launch: {
    neural: { cold: Summary & { spawnToStop: number }; warm: Summary };
    debugpy: { cold: Summary & { spawnToStop: number } };
  };
  /** Peak resident memory (VmHWM), MB. */
  memory: { neural: { adapter: number }; debugpy: { adapter: number; program: number } };
  growth: {
    positions: number[];
    neural: GrowthPoint[];
    debugpy: GrowthPoint[];
    /**
     * Over stretches rather than single positions (a step's cost depends on where it falls in
     * the prompt window): moves 2-11 against the last 100, stop and CPU time per side.
     */
    spans: Record<SideName, { first: SpanFigures; last: SpanFigures }>;
    /** Moves each long session made (fewer than asked when the program ended). */
    reached: { neural: number; debugpy: number };
    /** Last position's stop time / first position's, per side; the same for CPU time. */
    ratio: { neural: number; debugpy: number };
    cpuRatio?: { neural: number; debugpy: number };
  };
  /** What the model cannot beat (with a model only). */
  limit?: {
    /** Main-memory copy bandwidth (read + write), GB/s, and at the model's size (caches). */
    bandwidthGBs: number;
    cacheBandwidthGBs: number;
    weightBytesPerToken: number;
    /** Tokens decoded per whole frame (answers cut off at the limit left out), the stop token included. */
    tokensPerFrame: number;
    /** KV-cache bytes read per decoded token at the mean prompt length. */
    kvBytesPerToken: number;
    /** weightBytesPerToken x tokensPerFrame / bandwidth, ms; with the KV cache; at cache bandwidth. */
    stepMs: number;
    stepMsWithKv: number;
    stepMsAtCacheBandwidth: number;
    /** Measured: median model time per whole frame, and median `next` stop over DAP (moves that gave a state), ms; measured step / limit. */
    measuredModelMs: number;
    measuredStepMs: number;
    ratio: number;
  };
  notes: string[];
}

interface Collected {
  moves: Record<SideName, Move[]>;
  inspect: Record<SideName, number[]>;
  launches: Record<SideName, { spawnToStop: number; launchToStop: number }[]>;
  warm: number[];
  memory: { neural: number; debugpyAdapter: number; debugpyProgram: number };
  model?: ModelInfo;
  drafts: { validated: number; refuted: number };
  notes: string[];
}

const MB = 1 << 20;

export async function runBench(o: BenchOptions): Promise<BenchResult> {
  const log = o.log ?? (() => undefined);
  const python = await findDebugpyPython(o.python);
  const load0 = loadavg();
  const dir = writePrograms([...PROGRAMS, LONG_PROGRAM]);
  const c: Collected = {
    moves: { neural: [], debugpy: [] },
    inspect: { neural: [], debugpy: [] },
    launches: { neural: [], debugpy: [] },
    warm: [],
    memory: { neural: 0, debugpyAdapter: 0, debugpyProgram: 0 },
    drafts: { validated: 0, refuted: 0 },
    notes: [],
  };
  const neuralCfg: NeuralConfig = { adapter: o.adapter, threads: o.threads, gpu: o.gpu, ...(o.model ? { model: o.model } : {}), ...(o.extra ? { extra: o.extra } : {}), ...(o.env ? { env: o.env } : {}) };
  const debugpyCfg: DebugpyConfig = { python };
  const open = async (side: SideName, p: BenchProgram): Promise<Session> => {
    const s = side === "neural" ? await NeuralSession.open(neuralCfg, dir, p) : await DebugpySession.open(debugpyCfg, dir, p);
    c.launches[side].push(s.launch);
    if (s instanceof NeuralSession) {
      if (s.statsSupported === false) throw new Error(`the adapter does not report its model calls (the ndbg/stats request: ${s.statsProblem}); the bench needs them`);
      if (s.model) c.model = s.model;
    }
    return s;
  };
  const close = async (s: Session): Promise<void> => {
    const m = s.memory();
    if (s instanceof NeuralSession && s.predictions) {
      c.drafts.validated += s.predictions.validated;
      c.drafts.refuted += s.predictions.refuted;
    }
    if (s.side === "neural") c.memory.neural = Math.max(c.memory.neural, m.adapter ?? 0);
    else {
      c.memory.debugpyAdapter = Math.max(c.memory.debugpyAdapter, m.adapter ?? 0);
      c.memory.debugpyProgram = Math.max(c.memory.debugpyProgram, m.others);
    }
    await s.close();
  };

  try {
    // ---- the moves: each program on each side, until every action has its samples ----
    const quota = Math.max(1, Math.ceil(o.steps / PROGRAMS.length));
    for (const p of PROGRAMS) {
      for (const side of ["neural", "debugpy"] as const) {
        log(`${side}: ${p.name}`);
        let s = await open(side, p);
        try {
          if (s instanceof NeuralSession) c.warm.push(await s.restart(o.moveTimeoutMs));
          const got: Record<MoveName, number> = { next: 0, stepIn: 0, stepOut: 0, continue: 0 };
          let ended = false;
          let guard = quota * CYCLE.length * 4;
          while (ACTIONS.some((a) => got[a] < quota) && guard-- > 0) {
            for (const action of CYCLE) {
              const m = await s.move(action, o.moveTimeoutMs);
              c.moves[side].push(m);
              ended = m.ended;
              if (ended) break;
              got[action]++;
              c.inspect[side].push(await s.inspect());
            }
            if (ended) {
              // The program ended (for real, or as predicted): a new session goes on.
              await close(s);
              s = await open(side, p);
            }
          }
        } finally {
          await close(s);
        }
      }
    }

    // ---- one long session per side: into the function, then next, next, ... ----
    const long: Record<SideName, Move[]> = { neural: [], debugpy: [] };
    for (const side of ["neural", "debugpy"] as const) {
      log(`${side}: ${LONG_PROGRAM.name}, ${o.long} moves`);
      const s = await open(side, LONG_PROGRAM);
      try {
        for (let i = 0; i < o.long; i++) {
          const m = await s.move(i === 0 ? "stepIn" : "next", o.moveTimeoutMs);
          long[side].push(m);
          if (m.ended) break;
          if (i > 0 && i % 100 === 0) log(`${side}: ${LONG_PROGRAM.name} move ${i}`);
        }
      } finally {
        await close(s);
      }
    }
    if (long.neural.length < o.long) c.notes.push(`the predicted long session ended (the model predicted the exit) after ${long.neural.length} of ${o.long} moves`);
    if (long.debugpy.length < o.long) c.notes.push(`the real long session ended after ${long.debugpy.length} of ${o.long} moves`);

    const result = await summarizeAll(o, c, long, python, load0);
    return result;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- figures ----

const calls = (ms: readonly Move[]): NonNullable<Move["calls"]> => ms.flatMap((m) => m.calls ?? []);

function sideFigures(ms: readonly Move[]): SideFigures {
  const done = ms.filter((m) => !m.ended);
  const use = done.length ? done : ms;
  const f: SideFigures = { n: use.length, response: summarize(use.map((m) => m.response))!, stop: summarize(use.map((m) => m.stop))! };
  const cpu = use.map((m) => m.cpu);
  if (cpu.every((x) => x !== undefined)) f.cpu = summarize(cpu as number[]);
  return f;
}

function neuralFigures(ms: readonly Move[]): NeuralFigures {
  const base = sideFigures(ms);
  const use = ms.filter((m) => !m.ended);
  const cs = calls(use);
  const gen = cs.reduce((a, x) => a + x.generatedTokens, 0);
  const genMs = cs.reduce((a, x) => a + x.generateMs, 0);
  const ok = summarize(use.filter((m) => !m.failed).map((m) => m.stop));
  return {
    ...base,
    ...(ok ? { ok } : {}),
    failed: ms.filter((m) => m.failed).length,
    tokensPerStep: round(gen / Math.max(1, use.length)),
    tokensPerSecond: round(genMs > 0 ? (gen / genMs) * 1000 : 0),
    callsPerStep: round(cs.length / Math.max(1, use.length)),
    evaluatedPerStep: round(cs.reduce((a, x) => a + x.evaluatedTokens, 0) / Math.max(1, use.length)),
  };
}

function actionFigures(neural: readonly Move[], debugpy: readonly Move[]): ActionFigures {
  const n = neuralFigures(neural);
  const d = sideFigures(debugpy);
  const a: ActionFigures = { neural: n, debugpy: d, ratio: round(n.stop.median / d.stop.median), ratioP90: round(n.stop.p90 / d.stop.p90) };
  if (n.cpu && d.cpu) a.cpuRatio = round(n.cpu.median / d.cpu.median);
  return a;
}

function growth(moves: readonly Move[], positions: readonly number[]): GrowthPoint[] {
  const out: GrowthPoint[] = [];
  for (const p of positions) {
    if (p > moves.length) continue;
    // The first move enters the function: it is not a `next` and is left out of every window.
    const lo = Math.max(2, p - 2);
    const hi = Math.min(moves.length, p + 2);
    const win = moves.slice(lo - 1, hi).filter((m) => !m.ended);
    if (!win.length) continue;
    const pt: GrowthPoint = { position: p, stop: summarize(win.map((m) => m.stop))!.median };
    if (win.every((m) => m.cpu !== undefined)) pt.cpu = summarize(win.map((m) => m.cpu!))!.median;
    const cs = win.map((m) => m.calls ?? []);
    if (cs.every((x) => x.length)) {
      const med = (f: (c: NonNullable<Move["calls"]>) => number): number => summarize(cs.map(f))!.median;
      pt.modelMs = med((x) => x.reduce((a, y) => a + y.promptMs + y.generateMs, 0));
      pt.promptTokens = med((x) => x[x.length - 1].promptTokens);
      pt.evaluatedTokens = med((x) => x.reduce((a, y) => a + y.evaluatedTokens, 0));
      pt.tokens = med((x) => x.reduce((a, y) => a + y.generatedTokens, 0));
    }
    out.push(pt);
  }
  return out;
}

/** Moves `from`..`to` (1-based, the first move left out) of a long session that gave a stop. */
function span(moves: readonly Move[], from: number, to: number): SpanFigures {
  const lo = Math.max(2, from);
  const hi = Math.max(lo, Math.min(moves.length, to));
  const win = moves.slice(lo - 1, hi).filter((m) => !m.ended);
  const use = win.length ? win : moves.slice(-1);
  const out: SpanFigures = { from: lo, to: hi, stop: summarize(use.map((m) => m.stop))! };
  if (use.every((m) => m.cpu !== undefined)) out.cpu = summarize(use.map((m) => m.cpu!));
  return out;
}

/** The time a step cannot beat: every weight read once per generated token, at the memory's bandwidth, beside the measured step. */
async function physicalLimit(path: string, cs: ReturnType<typeof calls>, measuredStep: number): Promise<{ params: number; figures: NonNullable<BenchResult["limit"]> }> {
  const w = await weightsRead(path);
  const dram = copyBandwidth(256 * MB);
  const cache = copyBandwidth(Math.max(MB, w.perToken));
  // Whole frames only: an answer cut off at the token limit is not a frame.
  const frames = cs.filter((x) => x.stop !== "limit");
  const fc = frames.length ? frames : cs;
  const perFrame = fc.length ? fc.reduce((a, x) => a + x.generatedTokens + 1, 0) / fc.length : NaN;
  const meanPrompt = mean(fc.map((x) => x.promptTokens)) ?? 0;
  const kv = w.kvPerContextToken * meanPrompt;
  const limitMs = (bytes: number, bw: number): number => ((bytes * perFrame) / bw) * 1000;
  const measuredModel = summarize(fc.map((x) => x.promptMs + x.generateMs))?.median ?? NaN;
  const stepMs = limitMs(w.perToken, dram.bytesPerSecond);
  return {
    params: w.params,
    figures: {
      bandwidthGBs: round(dram.bytesPerSecond / 1e9),
      cacheBandwidthGBs: round(cache.bytesPerSecond / 1e9),
      weightBytesPerToken: w.perToken,
      tokensPerFrame: round(perFrame),
      kvBytesPerToken: Math.round(kv),
      stepMs: round(stepMs),
      stepMsWithKv: round(limitMs(w.perToken + kv, dram.bytesPerSecond)),
      stepMsAtCacheBandwidth: round(limitMs(w.perToken, cache.bytesPerSecond)),
      measuredModelMs: round(measuredModel),
      measuredStepMs: measuredStep,
      ratio: round(measuredStep / stepMs),
    },
  };
}

/** 5, 200 and 500 for a session of 500 moves; proportionally for other lengths. */
export function growthPositions(long: number): number[] {
  return [...new Set([Math.min(5, long), Math.max(1, Math.round(long * 0.4)), long])].sort((a, b) => a - b);
}

async function summarizeAll(o: BenchOptions, c: Collected, long: Record<SideName, Move[]>, python: string, load0: number[]): Promise<BenchResult> {
  const model = c.model;
  const by = (side: SideName, a: MoveName): Move[] => c.moves[side].filter((m) => m.action === a);
  const actions = Object.fromEntries(ACTIONS.map((a) => [a, actionFigures(by("neural", a), by("debugpy", a))])) as Record<MoveName, ActionFigures>;
  const all = actionFigures(c.moves.neural, c.moves.debugpy);
  const cs = calls([...c.moves.neural, ...long.neural].filter((m) => !m.ended));
  const gen = cs.reduce((a, x) => a + x.generatedTokens, 0);
  const genMs = cs.reduce((a, x) => a + x.generateMs, 0);
  const nMoves = [...c.moves.neural, ...long.neural].filter((m) => !m.ended).length;

  const positions = growthPositions(o.long);
  const gN = growth(long.neural, positions);
  const gD = growth(long.debugpy, positions);
  const gRatio = (g: GrowthPoint[]): number => (g.length >= 2 ? round(g[g.length - 1].stop / g[0].stop) : NaN);

  const measuredStep = actions.next.neural.ok?.median ?? actions.next.neural.stop.median;
  // The physical limit, where a model ran.
  const limit = model ? await physicalLimit(model.path, cs, measuredStep) : undefined;
  const launchSummary = (xs: { spawnToStop: number; launchToStop: number }[]): Summary & { spawnToStop: number } => ({
    ...summarize(xs.map((x) => x.launchToStop))!,
    spawnToStop: summarize(xs.map((x) => x.spawnToStop))!.median,
  });

  return {
    bench: 1,
    date: new Date().toISOString(),
    machine: { cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? "", loadavg: load0.map(round), loadavgAfter: loadavg().map(round), node: process.version },
    settings: { steps: o.steps, long: o.long, threads: o.threads, gpu: o.gpu, programs: PROGRAMS.map((p) => p.name), python },
    ...(model && limit ? { model: { ...model, fileBytes: statSync(model.path).size, params: limit.params, weightBytesPerToken: limit.figures.weightBytesPerToken } } : {}),
    actions,
    all,
    inspect: { neural: summarize(c.inspect.neural)!, debugpy: summarize(c.inspect.debugpy)! },
    tokens: {
      perStep: round(gen / Math.max(1, nMoves)),
      perSecond: round(genMs > 0 ? (gen / genMs) * 1000 : 0),
      perCall: round(gen / Math.max(1, cs.length)),
      evaluatedPerStep: round(cs.reduce((a, x) => a + x.evaluatedTokens, 0) / Math.max(1, nMoves)),
      drafts: c.drafts,
    },
    launch: {
      neural: { cold: launchSummary(c.launches.neural), warm: summarize(c.warm)! },
      debugpy: { cold: launchSummary(c.launches.debugpy) },
    },
    memory: {
      neural: { adapter: round(c.memory.neural / MB) },
      debugpy: { adapter: round(c.memory.debugpyAdapter / MB), program: round(c.memory.debugpyProgram / MB) },
    },
    growth: {
      positions,
      neural: gN,
      debugpy: gD,
      spans: {
        neural: { first: span(long.neural, 2, 11), last: span(long.neural, long.neural.length - 99, long.neural.length) },
        debugpy: { first: span(long.debugpy, 2, 11), last: span(long.debugpy, long.debugpy.length - 99, long.debugpy.length) },
      },
      reached: { neural: long.neural.length, debugpy: long.debugpy.length },
      ratio: { neural: gRatio(gN), debugpy: gRatio(gD) },
      ...(gN.length >= 2 && gD.length >= 2 && gN.every((p) => p.cpu) && gD.every((p) => p.cpu)
        ? { cpuRatio: { neural: round(gN[gN.length - 1].cpu! / gN[0].cpu!), debugpy: round(gD[gD.length - 1].cpu! / gD[0].cpu!) } }
        : {}),
    },
    ...(limit ? { limit: limit.figures } : {}),
    notes: c.notes,
  };
}
