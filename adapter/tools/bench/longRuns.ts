// ndbg bench --runs: long runs beside debugpy, in one sitting. For each size, a script whose
// loop runs about that many line events (`result = work(n)`, then `print(result)` on line 9):
// the first stop (a new adapter, stopped on entry), Continue to a breakpoint after the loop, a
// hover there, Step Back to the call and over it again (ours: debugpy has none), a second later
// two watch expressions that need the program's frame (the first asked at that stop, then
// another), two lines of the Debug Console (a name bound, then read); then in a second session
// from the entry, Step Over the call; in a third, Continue to a breakpoint in the loop whose
// condition holds three quarters of the way through it, and (ours: debugpy has none), in a fourth
// with windows of BACK_WINDOW events, to the same stop, then Step Back again and again past the
// window around it. Each side's peak memory, adapter and all it started. Wall times in ms, one
// sitting: a ratio is read beside the other side's on the same load.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { findDebugpyPython } from "../../real/debugpy.js";
import { TimedDap } from "./dap.js";
import { DapSession, type SideName } from "./sides.js";

export interface LongRunOptions {
  adapter: string;
  /** Line events of each run (about). */
  sizes: readonly number[];
  python?: string;
  timeoutMs: number;
  log: (line: string) => void;
}

export interface LongRunSide {
  /** Adapter spawned to the entry stop. */
  firstStop: number;
  /** Continue from the entry to the breakpoint after the loop. */
  toBreakpoint: number;
  /** Step Over the call (debugpy: in a second session). */
  stepOver: number;
  /** Continue from the entry to the loop's line where `i` is three quarters of its iterations (a third session). */
  toCondition: number;
  /** Step Back from the breakpoint to the call's line (ours only). */
  stepBack?: number;
  /** Step Back after the Step Over, to the call's line (ours only). */
  backOver?: number;
  /** Step Back from the conditional breakpoint in the loop (windows of BACK_WINDOW events; ours only). */
  backInLoop?: number;
  /** The slowest of BACK_STEPS Step Backs after it, one of which goes back past the window around the stop (ours only). */
  backPast?: number;
  /** A hover (evaluate, context "hover") of `result` at the breakpoint. */
  hover: number;
  /** A watch expression that needs the frame (`result + 1`) at the breakpoint: the first asked there, a second after the stop. */
  watch: number;
  /** Another (`result * 2`) right after it. */
  watchAgain: number;
  /** A line of the Debug Console at the breakpoint, after the watches: a name bound (`extra = 1`). */
  console: number;
  /** Another that reads it (`extra + result`) right after it. */
  consoleAgain: number;
  /** Peak resident memory of the adapter and of what it started, MB. */
  memoryMB: number;
}

export interface LongRunRow {
  events: number;
  neural: LongRunSide;
  debugpy: LongRunSide;
}

const BREAKPOINT = 9;
/** How long one looks at a stop before asking an expression there (the watch columns). */
const THINK_MS = 1000;
/** The loop's body, where the conditional breakpoint stands. */
const LOOP_LINE = 4;
/** The fourth session's windows (the launch's maxSteps), and how many times it steps back: past the window around its stop. */
const BACK_WINDOW = 1000;
const BACK_STEPS = 600;
const scriptFor = (iterations: number): string =>
  ["def work(n):", "    total = 0", "    for i in range(n):", "        total += i * i", "    return total", "", "", `result = work(${iterations})`, "print(result)", ""].join("\n");

class LongSession extends DapSession {
  constructor(
    readonly side: SideName,
    dap: TimedDap,
    private readonly timeoutMs: number,
  ) {
    super(dap);
  }

  static async open(side: SideName, cmd: string, args: string[], launch: Record<string, unknown>, program: string, lines: number[], timeoutMs: number): Promise<LongSession> {
    const s = new LongSession(side, new TimedDap(side, cmd, args, { env: { ...process.env, PYTHONHASHSEED: "0" } }), timeoutMs);
    try {
      await s.initialize(side === "neural" ? "neural-python" : "python");
      await s.start(launch, [{ path: program, lines }]);
      return s;
    } catch (e) {
      await s.close();
      throw e;
    }
  }

  /** A move (any DAP stepping request) to its stop; the ms it took and the line it stopped on. */
  async go(command: string): Promise<{ ms: number; line?: number }> {
    const from = this.dap.events.length;
    const r = await this.dap.send(command, { threadId: this.threadId }, this.timeoutMs);
    if (!r.msg.success) throw new Error(`${this.side}: "${command}" failed: ${r.msg.message ?? ""}`);
    const ev = await this.dap.event(["stopped", "terminated"], from, this.timeoutMs);
    const ms = ev.at - r.sent;
    if (ev.msg.event !== "stopped") return { ms };
    return { ms, line: (await this.top()).line };
  }

  async top(): Promise<DebugProtocol.StackFrame> {
    const st = await this.dap.request<DebugProtocol.StackTraceResponse>("stackTrace", { threadId: this.threadId, startFrame: 0, levels: 1 });
    return st.msg.body.stackFrames[0];
  }

  async hover(expression: string, context = "hover", want?: string): Promise<number> {
    const frame = await this.top();
    const t0 = performance.now();
    const r = await this.dap.request<DebugProtocol.EvaluateResponse>("evaluate", { expression, frameId: frame.id, context }, this.timeoutMs);
    const ms = performance.now() - t0;
    if (want !== undefined && r.msg.body?.result !== want) throw new Error(`${this.side}: ${expression} is ${r.msg.body?.result ?? r.msg.message}, not ${want}`);
    return ms;
  }

  peakMB(): number {
    const m = this.memory();
    return ((m.adapter ?? 0) + m.others) / 1e6;
  }
}

/** One side's figures on one run. */
async function measure(side: SideName, o: LongRunOptions, python: string, program: string, iterations: number): Promise<LongRunSide> {
  const neural = side === "neural";
  const [cmd, args] = neural ? [process.execPath, [o.adapter]] : [python, ["-m", "debugpy.adapter"]];
  const launch = neural
    ? { type: "neural-python", request: "launch", name: "bench", program, mode: "predict", stopOnEntry: true }
    : { type: "python", request: "launch", name: "bench", program, cwd: join(program, ".."), python, console: "internalConsole", justMyCode: true, stopOnEntry: true, redirectOutput: true, subProcess: false };
  const check = (what: string, line: number | undefined, want: number): void => {
    if (line !== want) throw new Error(`${side}: ${what} stopped on line ${line ?? "(the end)"}, not ${want}`);
  };
  const a = await LongSession.open(side, cmd, args, launch, program, [BREAKPOINT], o.timeoutMs);
  try {
    const firstStop = a.launch.spawnToStop;
    const cont = await a.go("continue");
    check("Continue", cont.line, BREAKPOINT);
    const hover = await a.hover("result");
    let stepBack: number | undefined;
    if (neural) {
      const back = await a.go("stepBack");
      check("Step Back", back.line, BREAKPOINT - 1);
      stepBack = back.ms;
      check("Step Over after the Step Back", (await a.go("next")).line, BREAKPOINT);
    }
    // At the breakpoint, a second after the stop (as one reads it): expressions that need the
    // program's frame, then lines of the Debug Console.
    await new Promise((resolve) => setTimeout(resolve, THINK_MS));
    const n = BigInt(iterations);
    const result = ((n - 1n) * n * (2n * n - 1n)) / 6n;
    const watch = await a.hover("result + 1", "watch", String(result + 1n));
    const watchAgain = await a.hover("result * 2", "watch", String(result * 2n));
    const consoleFirst = await a.hover("extra = 1", "repl", "");
    const consoleAgain = await a.hover("extra + result", "repl", String(result + 1n));
    let memoryMB = a.peakMB();
    // Step Over the call, in a second session from the entry (where nothing of the run is known yet).
    let stepOver: number;
    let backOver: number | undefined;
    const b = await LongSession.open(side, cmd, args, launch, program, [], o.timeoutMs);
    try {
      check("the entry", (await b.go("next")).line, BREAKPOINT - 1);
      const over = await b.go("next");
      check("Step Over", over.line, BREAKPOINT);
      stepOver = over.ms;
      if (neural) {
        const back = await b.go("stepBack");
        check("Step Back after the Step Over", back.line, BREAKPOINT - 1);
        backOver = back.ms;
      }
      memoryMB = Math.max(memoryMB, b.peakMB());
    } finally {
      await b.close();
    }
    // Continue to a conditional breakpoint in the loop, in a third session from the entry.
    const target = Math.floor((iterations * 3) / 4);
    let toCondition: number;
    const c = await LongSession.open(side, cmd, args, launch, program, [], o.timeoutMs);
    try {
      await c.dap.request("setBreakpoints", { source: { path: program }, breakpoints: [{ line: LOOP_LINE, condition: `i == ${target}` }] }, o.timeoutMs);
      const cond = await c.go("continue");
      check("Continue to the condition", cond.line, LOOP_LINE);
      const frame = await c.top();
      const i = await c.dap.request<DebugProtocol.EvaluateResponse>("evaluate", { expression: "i", frameId: frame.id, context: "watch" }, o.timeoutMs);
      if (i.msg.body?.result !== String(target)) throw new Error(`${side}: the conditional breakpoint stopped at i = ${i.msg.body?.result}, not ${target}`);
      toCondition = cond.ms;
      memoryMB = Math.max(memoryMB, c.peakMB());
    } finally {
      await c.close();
    }
    // Ours: to the same stop in windows of BACK_WINDOW events, then Step Back past the window around it.
    let backInLoop: number | undefined;
    let backPast: number | undefined;
    if (neural) {
      const d = await LongSession.open(side, cmd, args, { ...launch, maxSteps: BACK_WINDOW }, program, [], o.timeoutMs);
      try {
        await d.dap.request("setBreakpoints", { source: { path: program }, breakpoints: [{ line: LOOP_LINE, condition: `i == ${target}` }] }, o.timeoutMs);
        check("Continue to the condition (windows of " + BACK_WINDOW + ")", (await d.go("continue")).line, LOOP_LINE);
        await d.dap.request("setBreakpoints", { source: { path: program }, breakpoints: [] }, o.timeoutMs);
        const steps: number[] = [];
        for (let k = 0; k <= BACK_STEPS && k < 2 * target; k++) {
          const back = await d.go("stepBack");
          // (the loop's test and its body, in turn)
          check(`Step Back ${k + 1} in the loop`, back.line, k % 2 ? LOOP_LINE : LOOP_LINE - 1);
          steps.push(back.ms);
        }
        const frame = await d.top();
        const i = await d.dap.request<DebugProtocol.EvaluateResponse>("evaluate", { expression: "i", frameId: frame.id, context: "watch" }, o.timeoutMs);
        const want = target - Math.ceil(steps.length / 2);
        if (i.msg.body?.result !== String(want)) throw new Error(`${side}: ${steps.length} Step Backs from i = ${target} stopped at i = ${i.msg.body?.result}, not ${want}`);
        backInLoop = steps[0];
        backPast = Math.max(...steps.slice(1));
        memoryMB = Math.max(memoryMB, d.peakMB());
      } finally {
        await d.close();
      }
    }
    return { firstStop, toBreakpoint: cont.ms, stepOver, toCondition, ...(stepBack !== undefined ? { stepBack } : {}), ...(backOver !== undefined ? { backOver } : {}), ...(backInLoop !== undefined ? { backInLoop } : {}), ...(backPast !== undefined ? { backPast } : {}), hover, watch, watchAgain, console: consoleFirst, consoleAgain, memoryMB };
  } finally {
    await a.close();
  }
}

export async function runLongRuns(o: LongRunOptions): Promise<{ python: string; rows: LongRunRow[] }> {
  const python = await findDebugpyPython(o.python);
  const dir = mkdtempSync(join(tmpdir(), "ndbg-bench-runs-"));
  const rows: LongRunRow[] = [];
  try {
    for (const events of o.sizes) {
      const program = join(dir, `run_${events}.py`);
      // Two line events an iteration (the loop's test, its body).
      const iterations = Math.max(1, Math.round(events / 2));
      writeFileSync(program, scriptFor(iterations));
      o.log(`${events.toLocaleString("en-US")} events: ours`);
      const neural = await measure("neural", o, python, program, iterations);
      o.log(`${events.toLocaleString("en-US")} events: debugpy`);
      const debugpy = await measure("debugpy", o, python, program, iterations);
      rows.push({ events, neural, debugpy });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { python, rows };
}

export function formatLongRuns(r: { python: string; rows: LongRunRow[] }): string {
  const ms = (x: number | undefined): string => (x === undefined ? "-" : x < 10 ? x.toFixed(1) : String(Math.round(x)));
  const ratio = (a: number, b: number): string => `${(a / b).toFixed(1)}x`;
  const out = [`Long runs, ours (predict mode, sealed) beside debugpy (${r.python}); wall ms, one sitting`, ""];
  out.push("events      side     first stop  continue to bp  step over  step back  back over  cond. bp  back in loop  back past  hover  watch  watch again  console  console again  memory MB");
  for (const row of r.rows)
    for (const side of ["neural", "debugpy"] as const) {
      const s = row[side];
      out.push(
        [row.events.toLocaleString("en-US").padEnd(11), (side === "neural" ? "ours" : "debugpy").padEnd(8), ms(s.firstStop).padStart(10), ms(s.toBreakpoint).padStart(15), ms(s.stepOver).padStart(10), ms(s.stepBack).padStart(10), ms(s.backOver).padStart(10), ms(s.toCondition).padStart(9), ms(s.backInLoop).padStart(13), ms(s.backPast).padStart(10), ms(s.hover).padStart(6), ms(s.watch).padStart(6), ms(s.watchAgain).padStart(12), ms(s.console).padStart(8), ms(s.consoleAgain).padStart(14), s.memoryMB.toFixed(0).padStart(10)].join(" "),
      );
    }
  out.push("", "ours / debugpy:");
  for (const row of r.rows) out.push(`  ${row.events.toLocaleString("en-US")} events: continue ${ratio(row.neural.toBreakpoint, row.debugpy.toBreakpoint)}, step over ${ratio(row.neural.stepOver, row.debugpy.stepOver)}, conditional breakpoint ${ratio(row.neural.toCondition, row.debugpy.toCondition)}, first stop ${ratio(row.neural.firstStop, row.debugpy.firstStop)}`);
  return out.join("\n") + "\n";
}
