// The tracer on this machine's Python (adapter/python/tracer.py under sys.settrace, in a process
// of its own): record and hybrid mode, and the data and evaluation tools. runTrace starts one
// process per program; TraceBatch keeps one `tracer.py --batch` process for many programs (data
// generation, evaluation). Every run ends: the tracer enforces its limits itself, and the process
// is killed (and the run reported as a time limit) when it outlives its timeout by KILL_MARGIN_S.
// What a run is, its records and its holes, is run.ts's, shared with the sealed run.
import { spawn, type ChildProcess } from "node:child_process";
import { killTree, own } from "../system/processes.js";
import type { Socket } from "node:net";
import path from "node:path";
import { normalizeSource } from "../format/trajectory.js";
import { firstPython, runPythonScript } from "./python.js";
import {
  DEFAULT_TIMEOUT_S, KILL_MARGIN_S, MAX_STDERR, Records, answerHole, checkOptions, checkProgram, entryCall, holeRecord, readProgram, tracerScript,
  type HybridOracle, type TraceOptions, type TraceResult,
} from "./run.js";

/** One program of a batch: a file, or text without one (`source`; with `program` too, text shown as that file). */
export interface BatchRequest extends Omit<TraceOptions, "python"> {
  program?: string;
  source?: string;
}

const MIN_PYTHON: [number, number] = [3, 8];

/** A usable Python: its executable and its minor version ("3.11"). */
export interface PythonFound {
  exe: string;
  version: string;
}

const found = new Map<string, Promise<PythonFound>>();

/** Asks a command which Python it is (it runs no user code); rejects with the reason it cannot be used. */
async function probePython(cmd: string): Promise<PythonFound> {
  const out = await runPythonScript(cmd, "import sys; sys.stdout.write('%d %d %s' % (sys.version_info[0], sys.version_info[1], sys.executable))", 10_000);
  const m = /^(\d+) (\d+) (.*)$/s.exec(out);
  if (!m) throw new Error(`it answered ${JSON.stringify(out.slice(0, 80))}, not its version`);
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major !== MIN_PYTHON[0] || minor < MIN_PYTHON[1]) throw new Error(`it is Python ${major}.${minor}; the tracer needs ${MIN_PYTHON.join(".")}+`);
  return { exe: m[3] || cmd, version: `${major}.${minor}` };
}

/**
 * The Python interpreter to trace with, as an executable path: `preferred` (a setting) when given,
 * else python3 then python on PATH, else /usr/bin/python3. Needs Python 3.8+. A preferred
 * interpreter that cannot be used is an error, not a silent fallback.
 */
export async function findPython(preferred?: string): Promise<string> {
  return (await whichPython(preferred)).exe;
}

/** findPython's interpreter with its minor version: what a session on it traces (or predict mode predicts) for. */
export function whichPython(preferred?: string): Promise<PythonFound> {
  return firstPython(preferred, probePython, found, (named, why) =>
    named
      ? new Error(`The configured Python "${named}" cannot be used (${why[0].slice(named.length + 2)})`)
      : new Error(`No Python ${MIN_PYTHON.join(".")}+ found (${why.join("; ")}). Install Python 3 or set the python option.`),
  );
}

const pythonEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  // Deterministic traces: string hashes (set and dict-of-set orders) are the same on every run.
  PYTHONHASHSEED: "0",
  PYTHONIOENCODING: "utf-8",
});

const detached = process.platform !== "win32";

/** Kills the process, its group and everything it started (adapter/system/processes.ts). */
function kill(child: ChildProcess): void {
  killTree(child.pid);
  try {
    child.kill("SIGKILL");
  } catch {
    // already gone
  }
}

/** A batch process keeps Node alive only while it runs a request: an idle one must not. */
function ref(child: ChildProcess, on: boolean): void {
  if (on) child.ref();
  else child.unref();
  for (const s of [child.stdin, child.stdout, child.stderr]) {
    const sock = s as unknown as Socket | null;
    if (on) sock?.ref?.();
    else sock?.unref?.();
  }
}

// ---- one program, one process ----

/** Traces one program. Rejects for a missing program or no usable Python; a program that fails still resolves. */
export async function runTrace(program: string, opts: TraceOptions = {}): Promise<TraceResult> {
  checkOptions(opts);
  const file = await checkProgram(program);
  const source = normalizeSource(await readProgram(file));
  const python = await findPython(opts.python);
  const script = tracerScript();
  const args = ["-B", script, file];
  const call = entryCall(opts.call);
  if (call !== undefined) args.push("--call", call);
  if (opts.maxEvents !== undefined) args.push("--max-events", String(opts.maxEvents));
  if (opts.timeout !== undefined) args.push("--timeout", String(opts.timeout));
  if (opts.maxOutput !== undefined) args.push("--max-output", String(opts.maxOutput));
  if (opts.maxRepr !== undefined) args.push("--max-repr", String(opts.maxRepr));
  if (opts.objects !== undefined) args.push("--objects", String(opts.objects));
  if (opts.root !== undefined) args.push("--root", path.resolve(opts.root));
  const hybrid = opts.hybrid;
  if (hybrid) args.push("--hybrid", JSON.stringify({ predict: hybrid.predict ?? [] }));
  const timeout = opts.timeout ?? DEFAULT_TIMEOUT_S;
  const cwd = opts.cwd ? path.resolve(opts.cwd) : path.dirname(file);

  opts.signal?.throwIfAborted();
  return new Promise<TraceResult>((resolve, reject) => {
    const records = new Records(file, opts.root && path.resolve(opts.root));
    const child = own(spawn(python, args, { cwd, stdio: [hybrid ? "pipe" : "ignore", "pipe", "pipe"], detached, env: pythonEnv() }));
    let killed = false;
    let done = false;
    const { signal } = opts;
    const onAbort = (): void => {
      kill(child);
      finish(null, null, undefined, signal!.reason instanceof Error ? signal!.reason : new Error("the run was cancelled"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    // The kill timer counts the program's time only: it stops while a hole is being filled.
    let left = (timeout + KILL_MARGIN_S) * 1000;
    let since = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      since = performance.now();
      timer = setTimeout(() => {
        killed = true;
        kill(child);
      }, left);
    };
    arm();
    child.stdin?.on("error", () => undefined); // a tracer that is gone: its exit is reported
    const holes = hybrid && new HoleChannel(hybrid, child, records, {
      pause: () => {
        clearTimeout(timer);
        left -= performance.now() - since;
      },
      resume: () => {
        if (!done) arm();
      },
    });
    let grace: NodeJS.Timeout | undefined;
    const finish = (code: number | null, sig: string | null, error?: Error, cancelled?: Error): void => {
      if (done) return;
      done = true;
      signal?.removeEventListener("abort", onAbort);
      clearTimeout(timer);
      if (grace) clearTimeout(grace);
      child.stdout?.destroy();
      child.stderr?.destroy();
      if (cancelled) return reject(cancelled);
      if (error) return reject(new Error(`Cannot start Python "${python}": ${error.message}`));
      if (!records.exit && !killed && records.frames.length === 0) {
        const why = records.stderr.trim().split("\n").slice(-5).join("\n");
        return reject(new Error(`The tracer failed (${sig ? `signal ${sig}` : `exit code ${code}`})${why ? ":\n" + why : ""}`));
      }
      resolve(records.result(source, { killed, code, signal: sig }));
    };
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      if (records.feed(d, holes ? (r) => holes.take(r) : undefined) && records.invalid) {
        kill(child);
        finish(null, null, undefined, records.invalid);
      }
    });
    child.stderr!.setEncoding("utf8").on("data", (d: string) => records.addStderr(d));
    child.on("error", (e) => finish(null, null, e));
    child.on("close", (code, signal) => finish(code, signal));
    // Something the program started may hold stderr open after the tracer is gone.
    child.on("exit", (code, signal) => {
      grace = setTimeout(() => finish(code, signal), 500);
    });
  });
}

/**
 * Hybrid mode's side of the tracer's channel: takes the hole records out of the record stream and
 * answers each fill request on the tracer's stdin, in order (the program waits for each).
 */
class HoleChannel {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly oracle: HybridOracle,
    private readonly child: ChildProcess,
    private readonly records: Records,
    private readonly clock: { pause(): void; resume(): void },
  ) {}

  /** Whether `r` is a frame or exit record (to be added); hole records are handled here. */
  take(r: Record<string, unknown>): boolean {
    const hole = holeRecord(r, this.oracle);
    if (hole === "frame") return true;
    if (hole === "done") return false;
    const { req, ok } = hole;
    // The frames so far, as they stand when the request arrives (later records wait for the answer).
    const frames = this.records.frames.slice();
    this.clock.pause();
    this.queue = this.queue.then(async () => {
      const answer = await answerHole(this.oracle, { req, ok }, frames);
      this.child.stdin?.write(JSON.stringify(answer) + "\n");
      this.clock.resume();
    });
    return false;
  }
}

// ---- many programs, one process ----

interface Pending {
  id: number;
  child: ChildProcess;
  records: Records;
  source: string;
  resolve: (r: TraceResult) => void;
  timer: NodeJS.Timeout;
  killed: boolean;
}

/**
 * Traces many programs through one `tracer.py --batch` process, one at a time, in the order asked.
 * A process that dies (a program that had to be stopped, a crash) or hangs past a request's timeout
 * is replaced for the next request. Options given here are defaults for every request.
 */
export class TraceBatch {
  private child?: ChildProcess;
  private pending?: Pending;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;
  private closed = false;
  private stderr = "";
  /** How many tracer processes were started (a fresh one after each that died). */
  starts = 0;

  constructor(private readonly opts: TraceOptions = {}) {
    checkOptions(opts);
  }

  /** Traces one program; rejects for a missing program, no program or source, or no usable Python. */
  trace(req: BatchRequest): Promise<TraceResult> {
    if (this.closed) return Promise.reject(new Error("TraceBatch is closed"));
    const run = this.queue.then(() => this.run(req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Waits for queued requests, then ends the process. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        kill(child);
        resolve();
      }, 2000);
      child.once("exit", () => {
        clearTimeout(t);
        resolve();
      });
      child.stdin?.end();
    });
  }

  private async run(req: BatchRequest): Promise<TraceResult> {
    const opts = { ...this.opts, ...req };
    checkOptions(opts);
    let file: string | undefined;
    let source: string;
    if (req.program !== undefined) file = await checkProgram(req.program);
    if (typeof req.source === "string") source = req.source;
    else if (file) source = await readProgram(file);
    else throw new Error("A batch request needs a program or a source");
    const child = await this.ensure();
    const id = this.nextId++;
    const message: Record<string, unknown> = { id, program: file, call: entryCall(opts.call), cwd: opts.cwd ? path.resolve(opts.cwd) : file ? path.dirname(file) : undefined };
    if (typeof req.source === "string") message.source = req.source;
    for (const key of ["maxEvents", "timeout", "maxOutput", "maxRepr"] as const) if (opts[key] !== undefined) message[key] = opts[key];
    const timeout = opts.timeout ?? DEFAULT_TIMEOUT_S;
    this.stderr = "";
    return new Promise<TraceResult>((resolve) => {
      const pending: Pending = {
        id,
        child,
        records: new Records(file),
        source: normalizeSource(source),
        resolve,
        killed: false,
        timer: setTimeout(() => {
          pending.killed = true;
          kill(child); // its exit handler reports the time limit
        }, (timeout + KILL_MARGIN_S) * 1000),
      };
      this.pending = pending;
      ref(child, true);
      child.stdin!.write(JSON.stringify(message) + "\n");
    });
  }

  private settle(p: Pending, ended: { killed: boolean; code: number | null; signal: string | null }): void {
    if (this.pending !== p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    ref(p.child, false);
    if (this.stderr) p.records.addStderr(this.stderr);
    p.resolve(p.records.result(p.source, ended));
  }

  private async ensure(): Promise<ChildProcess> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null && !this.child.killed) return this.child;
    const python = await findPython(this.opts.python);
    const child = own(spawn(python, ["-B", tracerScript(), "--batch"], { stdio: ["pipe", "pipe", "pipe"], detached, env: pythonEnv() }));
    this.child = child;
    this.starts++;
    child.stdin!.on("error", () => undefined); // a dead process: its exit handler reports
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      const p = this.pending;
      if (!p || p.child !== child) return;
      let last = false;
      const done = p.records.feed(d, (r) => {
        if (r.id !== p.id) return false;
        if (r.last === true) last = true;
        return true;
      });
      // A process whose watchdog had to stop a program exits after this record: use a new one.
      if (last && this.child === child) this.child = undefined;
      if (p.records.invalid) {
        if (this.child === child) this.child = undefined;
        kill(child);
      }
      if (done) this.settle(p, { killed: false, code: null, signal: null });
    });
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      if (this.stderr.length < MAX_STDERR) this.stderr += d;
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", (e) => reject(new Error(`Cannot start Python "${python}": ${e.message}`)));
    });
    child.on("error", () => undefined); // reported through exit
    child.on("exit", (code, signal) => {
      if (this.child === child) this.child = undefined;
      const p = this.pending;
      if (!p || p.child !== child) return;
      // The last records may still be in the pipe: settle when it ends (or soon after, if it does not).
      const settle = (): void => this.settle(p, { killed: p.killed, code, signal });
      if (child.stdout!.readableEnded) return settle();
      const t = setTimeout(settle, 500);
      child.stdout!.once("end", () => {
        clearTimeout(t);
        settle();
      });
    });
    return child;
  }
}
