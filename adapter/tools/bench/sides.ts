// The two debuggers under test, each spoken to over DAP by the bench: our adapter in predict mode
// (`node dist/adapter.js`) and debugpy's own adapter (`python -m debugpy.adapter`). Both open a
// program the same way from the bench's point of view: a session stopped at its start, then
// moves timed from request to response and to the stop that follows.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { TimedDap, childrenOf, cpuMsOf, memoryOf } from "./dap.js";
import { driverFor, type BenchProgram, type MoveName } from "./programs.js";
// The adapter's ndbg/stats request: the bench speaks to the adapter over DAP and loads no model code.
import { REQUESTS, type ModelDescription, type StatsBody, type StepStats } from "../../protocol.js";

/**
 * One model call as the adapter reports it (`ndbg/stats`' `steps`, the predictor's own record);
 * `stop` is "limit" when the answer was cut off (not a whole frame).
 */
export type ModelCall = StepStats;

/** What the adapter says about its model (`ndbg/stats`' `model`). */
export type ModelInfo = ModelDescription;

export interface Move {
  action: MoveName;
  /** Request sent to its response, ms. */
  response: number;
  /** Request sent to the next stopped (or terminated) event, ms. */
  stop: number;
  /** CPU time the debugger's processes used for the move (adapter and what it started), ms. */
  cpu?: number;
  ended: boolean;
  /** The adapter reported that it could not make the move (the model's answer was not a state). */
  failed: boolean;
  /** Model calls the move made (neural side, when the adapter reports them). */
  calls?: ModelCall[];
}

export interface Launch {
  /** Process spawned to the first stop, ms. */
  spawnToStop: number;
  /** Launch request sent to the first stop, ms. */
  launchToStop: number;
}

export interface Session {
  readonly side: SideName;
  readonly launch: Launch;
  move(action: MoveName, timeoutMs: number): Promise<Move>;
  /** stackTrace, scopes and variables of the top frame, as a client asks after each stop; ms. */
  inspect(): Promise<number>;
  /** Peak resident memory of the adapter, and of everything it started (bytes). */
  memory(): { adapter?: number; others: number };
  close(): Promise<void>;
}

export type SideName = "neural" | "debugpy";

const STOP_EVENTS = ["stopped", "terminated"] as const;
const LAUNCH_TIMEOUT = 180_000;

export abstract class DapSession implements Session {
  abstract readonly side: SideName;
  launch: Launch = { spawnToStop: NaN, launchToStop: NaN };
  protected threadId = 1;
  private peakOthers = 0;
  /** The adapter and the processes it started (found at the first stop). */
  private tree: number[] = [];

  constructor(readonly dap: TimedDap) {}

  protected async initialize(adapterID: string): Promise<void> {
    await this.dap.request("initialize", {
      clientID: "ndbg-bench", adapterID, pathFormat: "path", linesStartAt1: true, columnsStartAt1: true,
      supportsVariableType: true, supportsRunInTerminalRequest: false,
    });
  }

  /** launch, breakpoints and configurationDone in the order clients use; resolves at the first stop. */
  protected async start(args: Record<string, unknown>, breakpoints: { path: string; lines: number[] }[]): Promise<void> {
    const from = this.dap.events.length;
    const launched = this.dap.send("launch", args, LAUNCH_TIMEOUT);
    launched.catch(() => undefined);
    const sent = performance.now();
    // A launch that fails is answered before (or instead of) the initialized event.
    const init = this.dap.event(["initialized"], from, LAUNCH_TIMEOUT);
    init.catch(() => undefined);
    const refused = launched.then((r) => (r.msg.success ? new Promise<never>(() => undefined) : r), () => new Promise<never>(() => undefined));
    const first = await Promise.race([init, refused]);
    if ("sent" in first) throw new Error(`${this.dap.label}: launch failed: ${first.msg.message ?? ""}`);
    for (const b of breakpoints) await this.dap.request("setBreakpoints", { source: { path: b.path }, breakpoints: b.lines.map((line) => ({ line })) });
    await this.dap.request("configurationDone", {});
    const r = await launched;
    if (!r.msg.success) throw new Error(`${this.dap.label}: launch failed: ${r.msg.message ?? ""}`);
    const stop = await this.dap.event([...STOP_EVENTS], from, LAUNCH_TIMEOUT);
    if (stop.msg.event !== "stopped") throw new Error(`${this.dap.label}: the session ended before its first stop`);
    this.threadId = (stop.msg as DebugProtocol.StoppedEvent).body.threadId ?? this.threadId;
    this.launch = { spawnToStop: stop.at - this.dap.spawnedAt, launchToStop: stop.at - sent };
    this.sampleOthers();
  }

  async move(action: MoveName, timeoutMs: number): Promise<Move> {
    const cpu0 = cpuMsOf(this.tree);
    const from = this.dap.events.length;
    const r = await this.dap.send(action, { threadId: this.threadId }, timeoutMs);
    if (!r.msg.success) throw new Error(`${this.dap.label}: "${action}" failed: ${r.msg.message ?? ""}`);
    const ev = await this.dap.event([...STOP_EVENTS], from, timeoutMs);
    if (ev.msg.event === "stopped") this.threadId = (ev.msg as DebugProtocol.StoppedEvent).body.threadId ?? this.threadId;
    const failed = this.dap.events.slice(from, ev.index).some((e) => e.msg.event === "output" && /Could not go on/.test((e.msg as DebugProtocol.OutputEvent).body.output));
    const cpu1 = cpuMsOf(this.tree);
    const m: Move = { action, response: r.at - r.sent, stop: ev.at - r.sent, ended: ev.msg.event === "terminated", failed };
    if (cpu0 !== undefined && cpu1 !== undefined) m.cpu = cpu1 - cpu0;
    return m;
  }

  async inspect(): Promise<number> {
    const t0 = performance.now();
    const st = await this.dap.request<DebugProtocol.StackTraceResponse>("stackTrace", { threadId: this.threadId, startFrame: 0, levels: 20 });
    const top = st.msg.body.stackFrames[0];
    if (top) {
      const sc = await this.dap.request<DebugProtocol.ScopesResponse>("scopes", { frameId: top.id });
      const scope = sc.msg.body.scopes[0];
      if (scope) await this.dap.request("variables", { variablesReference: scope.variablesReference });
    }
    return performance.now() - t0;
  }

  /** Finds the processes the adapter started and their peak memory (read while they live: they end with the session). */
  protected sampleOthers(): void {
    const seen = new Set<number>();
    const walk = (pid: number | undefined): number => {
      let sum = 0;
      for (const c of childrenOf(pid)) {
        if (seen.has(c)) continue;
        seen.add(c);
        sum += memoryOf(c)?.peak ?? 0;
        sum += walk(c);
      }
      return sum;
    };
    this.peakOthers = Math.max(this.peakOthers, walk(this.dap.pid));
    this.tree = this.dap.pid ? [this.dap.pid, ...seen] : [];
  }

  memory(): { adapter?: number; others: number } {
    this.sampleOthers();
    return { adapter: memoryOf(this.dap.pid)?.peak, others: this.peakOthers };
  }

  close(): Promise<void> {
    return this.dap.close();
  }
}

export interface NeuralConfig {
  adapter: string;
  model?: string;
  threads: number;
  gpu: string;
  /** Extra launch attributes (e.g. settings the adapter reads for an experiment). */
  extra?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
}

/** Our adapter in predict mode. */
export class NeuralSession extends DapSession {
  readonly side = "neural" as const;
  private seen = 0;
  /** Whether the adapter answers `ndbg/stats` (undefined until asked). */
  statsSupported?: boolean;
  statsProblem?: string;
  model?: ModelInfo;
  /** Draft tokens of speculative decoding accepted and rejected in this session, when the adapter reports them. */
  predictions?: { validated: number; refuted: number };
  /** A launch in the same process after the first (the model is kept warm): restart sent to its stop, ms. */
  warm?: number;
  private args: Record<string, unknown> = {};

  static async open(cfg: NeuralConfig, dir: string, p: BenchProgram): Promise<NeuralSession> {
    const dap = new TimedDap("the neural adapter", process.execPath, [cfg.adapter], { cwd: dir, env: cfg.env ?? process.env });
    const s = new NeuralSession(dap);
    try {
      await s.initialize("neural-python");
      s.args = {
        type: "neural-python", request: "launch", name: "bench", program: join(dir, p.name), call: p.call, mode: "predict",
        // (compute: false: every move a model call, as the bench times the model; the programs are ones the rules decide)
        ...(cfg.model ? { model: cfg.model } : {}), gpu: cfg.gpu, threads: cfg.threads, stopOnEntry: true, compute: false, ...cfg.extra,
      };
      await s.start(s.args, [{ path: join(dir, p.name), lines: p.breakpoint ? [p.breakpoint] : [] }]);
      await s.stats();
      return s;
    } catch (e) {
      await s.close();
      throw e;
    }
  }

  /** Restarts the session in the same adapter process; the time to its first stop (model already loaded). */
  async restart(timeoutMs: number): Promise<number> {
    const from = this.dap.events.length;
    const r = await this.dap.send("restart", { arguments: this.args }, timeoutMs);
    if (!r.msg.success) throw new Error(`the neural adapter: restart failed: ${r.msg.message ?? ""}`);
    const ev = await this.dap.event([...STOP_EVENTS], from, timeoutMs);
    if (ev.msg.event !== "stopped") throw new Error("the neural adapter ended the session on restart");
    this.warm = ev.at - r.sent;
    await this.stats(); // a new session: its calls are counted afresh
    return this.warm;
  }

  override async move(action: MoveName, timeoutMs: number): Promise<Move> {
    const m = await super.move(action, timeoutMs);
    const calls = await this.stats();
    if (calls) m.calls = calls;
    return m;
  }

  /** Model calls since the last time asked; undefined when the adapter does not report them. */
  async stats(): Promise<ModelCall[] | undefined> {
    if (this.statsSupported === false) return undefined;
    const r = await this.dap.send(REQUESTS.stats, {}, 10_000).catch((e: Error) => e);
    if (r instanceof Error || !r.msg.success) {
      this.statsSupported = false;
      this.statsProblem = r instanceof Error ? r.message : r.msg.message ?? "failed";
      return undefined;
    }
    this.statsSupported = true;
    const body = r.msg.body as Partial<StatsBody>;
    if (body.model) this.model = body.model;
    if (body.predictions) this.predictions = { validated: body.predictions.validated, refuted: body.predictions.refuted };
    const all = body.steps ?? [];
    if (all.length < this.seen) this.seen = 0; // a restart began a new session
    const fresh = all.slice(this.seen);
    this.seen = all.length;
    return fresh;
  }
}

export interface DebugpyConfig {
  python: string;
}

/** debugpy's own adapter, running the same program and entry call for real. */
export class DebugpySession extends DapSession {
  readonly side = "debugpy" as const;

  static async open(cfg: DebugpyConfig, dir: string, p: BenchProgram): Promise<DebugpySession> {
    const driver = driverFor(dir, p);
    const driverPath = join(dir, driver.name);
    writeFileSync(driverPath, driver.source);
    const env = { ...process.env, PYTHONHASHSEED: "0", PYTHONDONTWRITEBYTECODE: "1" };
    const dap = new TimedDap("debugpy", cfg.python, ["-m", "debugpy.adapter"], { cwd: dir, env });
    const s = new DebugpySession(dap);
    try {
      await s.initialize("python");
      await s.start(
        {
          type: "python", request: "launch", name: "bench", program: driverPath, cwd: dir, python: cfg.python, console: "internalConsole",
          justMyCode: true, stopOnEntry: false, redirectOutput: true, subProcess: false, env: { PYTHONHASHSEED: "0", PYTHONDONTWRITEBYTECODE: "1" },
        },
        // The session starts on the driver's entry call (as the neural one starts on the call).
        [{ path: driverPath, lines: [driver.entryLine] }, { path: join(dir, p.name), lines: p.breakpoint ? [p.breakpoint] : [] }],
      );
      return s;
    } catch (e) {
      await s.close();
      throw e;
    }
  }
}

