// The sealed executor: the program runs under the tracer in CPython compiled to WebAssembly
// (Pyodide), in a locked-down child process (sealedWorker.ts, built as dist/sealed.mjs; its header
// lists the layers). Nothing the program does reaches this machine: no file outside the sandbox's
// memory, no socket, no process. `runSealed` is `runTrace` with another executor: the same options,
// the same records (tracer.py writes them inside the sandbox), the same holes (holes.py) answered by
// the same oracle; a hole with no answer yet ends that run, and the program runs again from the
// start with one more answer (a sealed run is a pure function of program, call and answers).
//
// One child per process (the adapter's, the CLI's), started at its first use or by `warm()`, kept
// warm between runs; killed when a run outlives its time (a loop in C code) and started again.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { killTree, own } from "../system/processes.js";
import { cacheRoot, under } from "../system/paths.js";
import { normalizeSource, type EventKind, type Frame, type Objects } from "../format/trajectory.js";
import type { Answer, Evaluation, PythonAsk, ValueResult } from "../format/values.js";
import { DEFAULT_TIMEOUT_S, KILL_MARGIN_S, Records, TRACE_LIMITS, answerHole, checkObjects, checkOptions, checkProgram, entryCall, holeRecord, readProgram, tracerScript, type HoleAnswer, type TraceOptions, type TraceResult } from "./run.js";
import { findPython, whichPython } from "./hostRun.js";
import type { FsRequest, Written } from "./sandboxFs.js";
import { SEALED_PYTHON_FILES } from "./sealedFiles.js";
import { RunSkeleton } from "./skeleton.js";
import type { Seek, SeekPlace } from "./semantics.js";
import { SandboxFiles, projectRoot, sitePackages, type SandboxRoot } from "./workspace.js";

/**
 * The sealed CPythons carried, by minor version, each an npm package of Pyodide's: 0.27 is CPython
 * 3.12, 0.29 is 3.13 (0.28 too; 0.29 is that line's newest). Pyodide 314 (3.14) runs the tracer,
 * but its WebAssembly module holds its memory itself: the cap on a program's memory (layer 5)
 * cannot reach it, so it is not carried.
 */
export const SEALED_PYTHONS: Readonly<Record<string, string>> = { "3.12": "pyodide", "3.13": "pyodide-313" };
/** The sealed CPython where the session's Python is none of those carried. */
export const SEALED_PYTHON = "3.12";

/**
 * The sealed CPython of a session: the minor version it names (`named`), else that of the user's
 * Python (`python`, as findPython finds it: the run reads its packages), where one of
 * SEALED_PYTHONS; else SEALED_PYTHON.
 */
export async function sealedPythonFor(named: string | undefined, python?: string): Promise<string> {
  const version = named ?? (await whichPython(python).then((p) => p.version, () => undefined));
  return version !== undefined && Object.hasOwn(SEALED_PYTHONS, version) ? version : SEALED_PYTHON;
}

/** How long a run asked to pause may go without polling (it polls every 50 ms) before it is killed: a loop in C code. */
const PAUSE_SILENCE_MS = 1_000;
/** WebAssembly memory a program may use (MiB): past it, MemoryError in the program. */
const MEMORY_MIB = 512;
/** JavaScript heap of the child (MiB). */
const HEAP_MIB = 256;
/** How long loading Pyodide may take (seconds): 5 s on a quiet core, 15 s on a busy machine. */
const LOAD_TIMEOUT_S = 60;
/** An idle child goes after this long (ms; NDBG_HOST_IDLE seconds, as the inference host), freeing its memory. */
const IDLE_MS = (Number(process.env.NDBG_HOST_IDLE) || 15 * 60) * 1000;
/** Holes one run may reach: each is a run from the start. */
const MAX_HOLES = 200;

/** Why the sealed run cannot be had here (no Pyodide, a Node without the permission model, ...). */
export class SealedUnavailableError extends Error {}

export interface SealedInfo {
  /** The minor version of the CPython inside ("3.12"). */
  python: string;
  pyodide: string;
  /** How the interpreter came up: from the kept snapshot ("loaded"), making it ("made"), or neither ("none", "failed: WHY"). */
  snapshot?: string;
}

type SealedRequest = RunRequest | { evaluate: { names: Record<string, string>; expressions: readonly Evaluation[]; reads?: boolean; hidden?: readonly string[] } };

interface RunRequest {
  program: string;
  source: string;
  call?: string;
  opts: Record<string, number>;
  /** The user's folders the worker mounts for the run (sandboxFs.ts), the working directory, the project's folder, the libraries' folders. */
  mounts?: string[];
  cwd?: string;
  root?: string;
  paths?: string[];
  hybrid?: { predict: readonly string[] };
  answers?: HoleAnswer[];
  inspect?: Inspect & { hold?: true };
  statements?: readonly Statement[];
  probes?: Probes;
  /** As the tracer reads it: a seek's places as [file, line] (seekRequest). */
  window?: { from: number } | { seek: Record<string, unknown>; fast?: true } | { latest: Latest } | { skeleton: true };
}

/**
 * A run longer than maxEvents, a window at a time: the states from the `from`-th event on
 * (maxEvents of them), or from the first event a forward move lands on (`seek`, semantics.ts),
 * or no state but the skeleton of the whole run (skeleton.ts). A Continue's seek may go `fast`:
 * with no trace function where no breakpoint is (CPython 3.12+: sys.monitoring), its events
 * not counted, so that where it lands is no event's index (WindowRun's `fast`).
 */
export type Window = { from: number } | { seek: Seek; fast?: true } | { latest: Latest } | { skeleton: true };

/** A move back's run: no state, but the latest event before `before` no deeper than `depth` (WindowRun's `latest`). */
export interface Latest {
  before: number;
  depth: number;
}

/** A window's run: where its states begin (none: its seek met nothing), and how many events the run had by its end. */
export interface WindowRun {
  from?: number;
  events: number;
  /** A move back's: the latest event it looked for (null: none). */
  latest?: { at: number; event: EventKind; depth: number } | null;
  /** A Continue's seek: the latest event before where it landed at the landing's depth, never a return (-1: none). */
  behind?: number;
  /** A Continue's seek that landed where a condition held: each condition read there, in the program's frame, by its text. */
  held?: Map<string, ValueResult>;
  /** The seek went fast: `from` and `events` are no event's index (the same seek, counted, finds them). */
  fast?: true;
  /** A seek that landed on a hit of one of its places: which, and its hits there past where it began (Seek's `nth`). */
  hits?: { place: SeekPlace; n: number };
}

/**
 * Expressions to evaluate in the frame of the run's `at`-th state (its index in the frames), or
 * of the `landing`-th state from where the run's seek lands (a fast seek's landing, which has no
 * index), or in the `up`-th traced caller's; the run stops there.
 */
export type Inspect = Expressions & ({ at: number } | { landing: number });

/** Expressions to evaluate in the frame of a state, or its `up`-th traced caller's. */
export interface Expressions {
  expressions: readonly string[];
  up?: number;
}

/** What a run held at a stop is asked there: expressions, or a line of the Debug Console run with its effects kept (a Statement, at the stop). */
export type Question = Expressions | Omit<Statement, "at">;

/** A held run's answer: each expression's value, or the line's result and the state as the line left it (with its callers'). */
export interface HeldAnswer {
  results: Inspected[];
  state?: Frame;
  callers?: Frame[];
}

/**
 * A run held where it inspects (runSealed's `hold`): given each answer there, the next question
 * in its live frames, or undefined to let the run go (heldStop.ts).
 */
export type Hold = (answer: HeldAnswer) => Promise<Question | undefined>;
/** A Hold as the child's channel gives it the answer: its line, parsed (runSealed reads it). */
type RawHold = (answer: Record<string, unknown>) => Promise<Question | undefined>;

/**
 * A line the user ran at a stop (the Debug Console, a value set): part of the run's input, run in
 * the frame of the run's `at`-th state (or its `up`-th traced caller's) before that state is
 * recorded, at every run, so that the states after it (and going back over it) stay exact.
 */
export interface Statement {
  at: number;
  code: string;
  up?: number;
}

/** The statements kept when `code` is run at state `at` (in the `up`-th caller's frame): those run at a later state belong to a future that is gone. */
export function withStatement(kept: readonly Statement[], at: number, code: string, up: number): Statement[] {
  return [...kept.filter((s) => s.at <= at), { at, code, ...(up ? { up } : {}) }];
}

/** The result of the last statement run at state `at`, where the run got there. */
export function statementResult(executed: readonly Executed[] | undefined, at: number): Inspected | undefined {
  return executed?.filter((e) => e.at === at).at(-1)?.results.at(-1);
}

/** An inspect answer as an evaluation's value (its repr, objects, path and output), or the error the expression raised, thrown. */
export function inspectedValue(answer: Inspected): { value: string; objects?: Objects; path?: string; stdout?: string } {
  if ("error" in answer) throw new Error(answer.error);
  return { value: answer.value, ...(answer.objects ? { objects: answer.objects } : {}), ...(answer.path ? { path: answer.path } : {}), ...(answer.stdout ? { stdout: answer.stdout } : {}) };
}

/** One expression's value in the program's frame (Evaluated's fields), or the error it raised ("NameError: name 'x' is not defined"). */
export type Inspected = { value: string; type?: string; path?: string; objects?: Objects; stdout?: string } | { error: string; stdout?: string };

/** A held run's answer as its line on the channel gives it ({"results": [...], "state"?: RECORD}): an object with results, else undefined. */
function heldLine(line: unknown): Record<string, unknown> | undefined {
  try {
    const r = JSON.parse(String(line)) as unknown;
    return typeof r === "object" && r !== null && Array.isArray((r as { results?: unknown }).results) ? (r as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A held run's answer, checked: its results as the inspect record's, its state and callers as a window's records. */
function heldAnswer(r: Record<string, unknown>, file: string, root: string): HeldAnswer {
  if (typeof r.state !== "object" || r.state === null) return { results: readInspected(r) };
  const { callers, ...record } = r.state as Record<string, unknown>;
  const [state] = callerFrames([record], file, root);
  return { results: readInspected(r), ...(state ? { state, callers: callerFrames(callers, file, root) } : {}) };
}

/** The inspect record's results, each checked: the program shares the channel and could write one. */
function readInspected(r: Record<string, unknown>): Inspected[] {
  const results = Array.isArray(r.results) ? r.results : [];
  return results.map((x): Inspected => {
    const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
    const str = (k: string): string | undefined => (typeof o[k] === "string" ? (o[k] as string) : undefined);
    const stdout = str("stdout");
    const out = stdout ? { stdout } : {};
    if (str("error") !== undefined || str("value") === undefined) return { error: str("error") ?? "no value came back", ...out };
    let objects: Objects | undefined;
    try {
      if (o.objects !== undefined) {
        checkObjects(o.objects);
        objects = o.objects;
      }
    } catch {
      objects = undefined;
    }
    return { value: str("value")!, ...(str("type") ? { type: str("type") } : {}), ...(str("path") ? { path: str("path") } : {}), ...(objects ? { objects } : {}), ...out };
  });
}

/** A move back's answer, checked (the program shares the channel). */
function readLatest(x: unknown): WindowRun["latest"] {
  const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
  const kinds: readonly unknown[] = ["call", "line", "return", "exception"];
  return Number.isInteger(o.at) && Number.isInteger(o.depth) && kinds.includes(o.event) ? { at: o.at as number, event: o.event as EventKind, depth: o.depth as number } : null;
}

/** A seek as the tracer reads it (Run.seeks): places as [file, line], the program's own file "". */
function seekRequest(s: Seek): Record<string, unknown> {
  return {
    after: s.after,
    ...(s.depth !== undefined ? { depth: s.depth } : {}),
    ...(s.returnAt !== undefined ? { returnAt: s.returnAt } : {}),
    ...(s.places ? { places: s.places.map((p) => (p.condition ? [p.file ?? "", p.line, p.condition] : [p.file ?? "", p.line])) } : {}),
    ...(s.nth !== undefined ? { nth: s.nth } : {}),
  };
}

/** A window's callers, read as records are (none where one is not valid). */
function callerFrames(raw: unknown, file: string, root: string): Frame[] {
  if (!Array.isArray(raw)) return [];
  const records = new Records(file, root);
  records.feed(raw.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return records.invalid ? [] : records.frames;
}

/** The files of the sandbox: Pyodide's folder, the worker and the tracer's Python. */
function locate(version: string): { pyodide: string; worker: string; python: string } {
  const dirs: string[] = [];
  try {
    dirs.push(path.dirname(fileURLToPath(import.meta.url)));
  } catch {
    // a CommonJS bundle has no import.meta.url
  }
  if (typeof __dirname !== "undefined") dirs.push(__dirname);
  let worker: string | undefined;
  for (const dir of dirs)
    for (const rel of ["sealed.mjs", "../../dist/sealed.mjs", "../dist/sealed.mjs"]) {
      const p = path.resolve(dir, rel);
      if (!worker && existsSync(p)) worker = p;
    }
  if (!worker) throw new SealedUnavailableError(`the sealed executor is not built (dist/sealed.mjs not found beside ${dirs.join(", ")}): run npm run build`);
  let pyodide: string;
  try {
    pyodide = path.dirname(createRequire(worker).resolve(`${SEALED_PYTHONS[version]}/package.json`));
  } catch {
    throw new SealedUnavailableError(`Pyodide is not installed (the npm package ${SEALED_PYTHONS[version]}): the sealed run of CPython ${version} needs it`);
  }
  return { pyodide, worker, python: path.dirname(tracerScript()) };
}

/** The biggest snapshot read back (its size is the interpreter's memory at load: about 20 MB). */
const MAX_SNAPSHOT = 256 * 1024 * 1024;

/**
 * Where the interpreter's memory just after Pyodide loads and the runner is imported is kept
 * between adapters: in the user's cache, named for this Pyodide, this worker (whose options make
 * it) and the runner's Python files (which it holds compiled), so that another build never reads
 * it. The worker makes it the first time (it loads in 0.3 s from it, against 1.6 s).
 */
export function snapshotFile(where: { pyodide: string; worker: string; python: string }): string | undefined {
  try {
    const version = (JSON.parse(readFileSync(path.join(where.pyodide, "package.json"), "utf8")) as { version?: string }).version ?? "unknown";
    const hash = createHash("sha256").update(readFileSync(where.worker));
    for (const name of SEALED_PYTHON_FILES) hash.update(readFileSync(path.join(where.python, name)));
    const worker = hash.digest("hex").slice(0, 16);
    return path.join(cacheRoot(), "sealed", `pyodide-${version}-${worker}.snapshot`);
  } catch {
    return undefined;
  }
}

/** The snapshot's bytes, where one was kept and can be read. */
function readSnapshot(file: string | undefined): Buffer | undefined {
  try {
    if (!file || statSync(file).size > MAX_SNAPSHOT) return undefined;
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Keeps the snapshot the worker made (a new file, renamed into place: no reader meets half of it);
 * a cache that cannot be written only costs the next start its speed. The same Pyodide's snapshots
 * of other builds go (20 MB each: one a version of the extension), each made again by its build
 * should it still run.
 */
function keepSnapshot(file: string, base64: string): void {
  try {
    const dir = path.dirname(file);
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, Buffer.from(base64, "base64"), { flag: "wx" });
    renameSync(tmp, file);
    const name = path.basename(file);
    const same = name.replace(/[0-9a-f]{16}\.snapshot$/, "");
    for (const old of readdirSync(dir)) if (old !== name && old.startsWith(same) && /^[0-9a-f]{16}\.snapshot$/.test(old.slice(same.length))) rmSync(path.join(dir, old), { force: true });
  } catch {
    // (a read-only cache, a race with another adapter: the next start makes it again)
  }
}

/** Node's flag for its permission model: experimental in Node 20 and 21, stable after. */
function permissionFlag(): string {
  return process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission";
}

/** One child process: the worker with Pyodide loaded, answering one request at a time. */
class SealedProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<SealedInfo>;
  private buffer: string[] = [];
  private waiting?: { resolve: (line: string) => void; reject: (e: Error) => void };
  private lines: string[] = [];
  exited = false;
  private lastWords = "";

  private readonly snapshot?: string;
  /** It was given the kept snapshot. */
  private readonly loading: boolean;

  constructor(version: string) {
    const where = locate(version);
    this.snapshot = snapshotFile(where);
    const kept = readSnapshot(this.snapshot);
    this.loading = kept !== undefined;
    const args = [
      permissionFlag(),
      `--allow-fs-read=${where.pyodide}${path.sep}*`,
      `--allow-fs-read=${where.python}${path.sep}*`,
      `--allow-fs-read=${where.worker}`,
      "--disallow-code-generation-from-strings",
      `--max-old-space-size=${HEAP_MIB}`,
      "--no-warnings",
      where.worker,
      where.pyodide,
      where.python,
      String(MEMORY_MIB),
      kept ? "load" : this.snapshot ? "make" : "none",
    ];
    // No environment but Electron's two switches: run as Node (where this is Electron: desktop VS
    // Code), and no ASAR archive reading, whose own file handle would pass Node's permission model
    // (harmless under plain Node); no standard streams; fds 3 and 4 are the channel.
    const env: NodeJS.ProcessEnv = { ...(process.versions.electron ? { ELECTRON_RUN_AS_NODE: "1" } : {}), ELECTRON_NO_ASAR: "1" };
    this.child = own(spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], env, detached: process.platform !== "win32" }));
    this.child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      this.lastWords = (this.lastWords + d).slice(-2000);
    });
    (this.child.stdio[3] as NodeJS.WritableStream).on("error", () => undefined);
    // The snapshot goes first on the channel: a line with its size, then its bytes.
    if (kept) (this.child.stdio[3] as NodeJS.WritableStream).write(Buffer.concat([Buffer.from(JSON.stringify({ snapshot: kept.length }) + "\n"), kept]));
    const out = this.child.stdio[4] as NodeJS.ReadableStream;
    out.setEncoding("utf8");
    out.on("data", (d: string) => {
      // A line may be tens of MB (a long run's skeleton): its chunks are kept apart and joined once.
      let nl: number;
      while ((nl = d.indexOf("\n")) >= 0) {
        const line = this.buffer.join("") + d.slice(0, nl);
        this.buffer = [];
        d = d.slice(nl + 1);
        const w = this.waiting;
        this.waiting = undefined;
        if (w) w.resolve(line);
        else this.lines.push(line);
      }
      if (d) this.buffer.push(d);
    });
    this.child.on("exit", (code, signal) => {
      this.exited = true;
      const w = this.waiting;
      this.waiting = undefined;
      w?.reject(new Error(`the sealed process ended (${signal ? `signal ${signal}` : `exit code ${code}`})${this.lastWords.trim() ? `: ${this.lastWords.trim().split("\n").slice(-3).join(" ")}` : ""}`));
    });
    this.child.on("error", (e) => {
      this.exited = true;
      this.waiting?.reject(e);
      this.waiting = undefined;
    });
    // An idle child keeps no process alive (the CLI exits when done); a run's or the load's timer does while it waits.
    this.child.unref();
    for (const stream of [this.child.stdio[2], this.child.stdio[3], this.child.stdio[4]]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
    this.ready = this.start();
    this.ready.catch(() => this.kill());
  }

  private async start(): Promise<SealedInfo> {
    const timer = setTimeout(() => this.kill(), LOAD_TIMEOUT_S * 1000);
    try {
      type Started = { event?: string; python?: string; pyodide?: string; error?: string; data?: unknown; snapshot?: unknown };
      let first = JSON.parse(await this.line()) as Started;
      if (first.event === "snapshot") {
        if (this.snapshot && typeof first.data === "string") keepSnapshot(this.snapshot, first.data);
        first = JSON.parse(await this.line()) as Started;
      }
      if (first.event !== "ready" || typeof first.python !== "string") throw new SealedUnavailableError(`the sealed executor did not start: ${first.error ?? JSON.stringify(first).slice(0, 200)}`);
      // A snapshot Pyodide refused: gone, and the next start makes it again.
      if (typeof first.snapshot === "string" && first.snapshot.startsWith("failed")) this.dropSnapshot();
      return { python: first.python, pyodide: String(first.pyodide), ...(typeof first.snapshot === "string" ? { snapshot: first.snapshot } : {}) };
    } catch (e) {
      throw e instanceof SealedUnavailableError ? e : new SealedUnavailableError(`the sealed executor did not start: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Removes the snapshot it was given (it did not start from it); whether there was one. */
  dropSnapshot(): boolean {
    if (!this.loading || !this.snapshot) return false;
    rmSync(this.snapshot, { force: true });
    return true;
  }

  /** The next line the worker writes. */
  line(): Promise<string> {
    const queued = this.lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.exited) return Promise.reject(new Error("the sealed process has ended"));
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  send(request: SealedRequest | object): void {
    (this.child.stdio[3] as NodeJS.WritableStream).write(JSON.stringify(request) + "\n");
  }

  kill(): void {
    // Gone from now on: the next run starts another, without waiting for the exit to be reported
    // (which an idle process, holding nothing else, might never see: the child is unreferenced).
    this.exited = true;
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(new Error("the sealed process was stopped"));
    killTree(this.child.pid);
    try {
      this.child.kill("SIGKILL");
    } catch {
      // gone
    }
  }
}

/** What one run of the worker gave: its records (with what it wrote and what the Debug Console should say), or how the process ended it. */
type WorkerRun = { records: string; wrote: Written[]; notices: string[] } | { killed: true } | { died: string };

/** The sealed child of this process: one warm locked-down process, one run at a time. */
export class SealedChild {
  private proc?: SealedProcess;
  /** The minor version of its CPython (SEALED_PYTHONS). */
  constructor(readonly version: string = SEALED_PYTHON) {}

  private queue: Promise<unknown> = Promise.resolve();
  /** How many child processes were started (a new one after each that was killed or died). */
  starts = 0;

  /** The child process's id, while one is up. */
  get pid(): number | undefined {
    return this.proc && !this.proc.exited ? this.proc.child.pid : undefined;
  }

  private ready?: Promise<SealedInfo>;

  /** Starts the child (if none is up) and waits until Pyodide has loaded. */
  warm(): Promise<SealedInfo> {
    if (!this.proc || this.proc.exited) {
      const proc = (this.proc = new SealedProcess(this.version));
      this.starts++;
      // A kept snapshot that kills the worker as it loads (a damaged file: Pyodide aborts the
      // process) is removed, and another worker starts, making it anew.
      this.ready = proc.ready.catch((e: unknown) => {
        if (!proc.dropSnapshot()) throw e;
        this.proc = new SealedProcess(this.version);
        this.starts++;
        return this.proc.ready;
      });
    }
    return this.ready!;
  }

  /** Runs one request; the time limit kills the child (a new one serves the next run). `files` answers the run's requests for the user's files. */
  run(request: SealedRequest, timeoutS: number, signal?: AbortSignal, files?: SandboxFiles, pause?: AbortSignal, hold?: RawHold, ahead = false): Promise<WorkerRun> {
    // A run held at a stop holds this child: it goes on to its end for the next request (and one
    // that comes to its stop after this request is not held there); one begun ahead of a question
    // (`ahead`) and still on its way there stops at its next poll, or does not start.
    const n = ++this.asked;
    this.letGo?.();
    const job = this.queue.then(() => (ahead && this.asked !== n ? Promise.resolve({ died: "another request came first" }) : this.runNow(request, timeoutS, signal, files, pause, hold, ahead, n)));
    this.queue = job.catch(() => undefined);
    return job;
  }

  /**
   * Starts the child ahead of its first run, where one is sure to come (a breakpoint's condition is
   * evaluated at its first hit): Pyodide loads in seconds. Closed when idle, as after a run.
   */
  prepare(): void {
    this.warm().catch(() => undefined); // (the run that needs it says why it cannot be had)
    if (!this.running) this.closeWhenIdle();
  }

  private idle?: NodeJS.Timeout;
  private running = false;
  /** Lets the run held at a stop go on (runWarm), while one is. */
  private letGo?: () => void;
  /** Requests so far: a run held, or begun ahead of a question, gives way to any later one. */
  private asked = 0;

  private closeWhenIdle(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.close(), IDLE_MS);
    this.idle.unref();
  }

  private async runNow(request: SealedRequest, timeoutS: number, signal: AbortSignal | undefined, files: SandboxFiles | undefined, pause: AbortSignal | undefined, hold: RawHold | undefined, ahead: boolean, n: number): Promise<WorkerRun> {
    signal?.throwIfAborted();
    clearTimeout(this.idle);
    this.running = true;
    try {
      return await this.runWarm(request, timeoutS, signal, files, pause, hold, ahead, n);
    } finally {
      this.running = false;
      this.closeWhenIdle();
    }
  }

  /**
   * `pause`, once aborted: the run's seek lands where the run is at its next poll past where the
   * move began (sealedWorker.ts's pollAnswer; the run polls every 50 ms however it goes). A run
   * that does not poll for PAUSE_SILENCE_MS once a pause is asked (a loop in C code) is killed,
   * and rejects as aborted: the move stays where it began. `n`: this request's number (`asked`):
   * a later request stops a run begun `ahead` of a question, and lets a held one go.
   */
  private async runWarm(request: SealedRequest, timeoutS: number, signal: AbortSignal | undefined, files: SandboxFiles | undefined, pause: AbortSignal | undefined, hold: RawHold | undefined, ahead: boolean, n: number): Promise<WorkerRun> {
    await this.warm();
    const proc = this.proc!;
    let killed = false;
    let silent = false;
    const stop = (): void => {
      killed = true;
      proc.kill();
    };
    const arm = (): NodeJS.Timeout => setTimeout(stop, (timeoutS + KILL_MARGIN_S) * 1000);
    let timer = arm();
    signal?.addEventListener("abort", stop, { once: true });
    let silence: NodeJS.Timeout | undefined;
    const listen = (): void => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        silent = true;
        stop();
      }, PAUSE_SILENCE_MS);
    };
    if (pause?.aborted) listen();
    else pause?.addEventListener("abort", listen, { once: true });
    try {
      files?.startRun();
      proc.send(request);
      for (;;) {
        const answer = JSON.parse(await proc.line()) as { event?: string; records?: unknown; error?: unknown; wrote?: unknown; notices?: unknown };
        // The program opens or imports a file of the user's: answered here, path checked (workspace.ts).
        if (answer.event === "fs") {
          proc.send(files ? files.answer(answer as unknown as FsRequest) : { errno: "ENOENT" });
          continue;
        }
        if (answer.event === "poll") {
          if (pause?.aborted) listen();
          proc.send({ pause: pause?.aborted === true, ...(ahead && this.asked !== n ? { stop: true } : {}) });
          continue;
        }
        // Held at a stop: the next question waits for the debugger (no time limit while it does),
        // or the next request lets the run go (letGo).
        if (answer.event === "held") {
          const answers = hold && heldLine((answer as { line?: unknown }).line);
          if (!answers) {
            proc.send({});
            continue;
          }
          clearTimeout(timer);
          const next = await new Promise<Question | undefined>((resolve) => {
            this.letGo = () => resolve(undefined);
            hold(answers).then(resolve, () => resolve(undefined));
            // (a request came since this one: its answer is given, and the run goes on to its end)
            if (this.asked !== n) resolve(undefined);
          });
          this.letGo = undefined;
          timer = arm();
          proc.send(next ? { question: next } : {});
          continue;
        }
        if (answer.event === "done" && typeof answer.records === "string")
          return { records: answer.records, wrote: readWritten(answer.wrote), notices: [...(files?.notices ?? []), ...strings(answer.notices)] };
        proc.kill();
        return { died: String(answer.error ?? "an answer that is not a run") };
      }
    } catch (e) {
      signal?.throwIfAborted();
      if (silent) throw new DOMException("the run did not pause (it spends its time in code that runs no Python line)", "AbortError");
      if (killed) return { killed: true };
      return { died: e instanceof Error ? e.message : String(e) };
    } finally {
      clearTimeout(timer);
      clearTimeout(silence);
      pause?.removeEventListener("abort", listen);
      signal?.removeEventListener("abort", stop);
    }
  }

  close(): void {
    clearTimeout(this.idle);
    this.proc?.kill();
    this.proc = undefined;
  }
}

const shared = new Map<string, SealedChild>();
/** The sealed child of this process for CPython `version` (SEALED_PYTHONS), shared by its sessions. */
export function sealedChild(version = SEALED_PYTHON): SealedChild {
  if (!Object.hasOwn(SEALED_PYTHONS, version)) throw new SealedUnavailableError(`the sealed run has no CPython ${version} (it has ${Object.keys(SEALED_PYTHONS).join(" and ")})`);
  let child = shared.get(version);
  if (!child) shared.set(version, (child = new SealedChild(version)));
  return child;
}

/** Closes every sealed child of this process (a command that is done). */
export function closeSealedChildren(): void {
  for (const child of shared.values()) child.close();
}

/** How long one batch of expressions over values may take (seconds): past it the child is killed. */
const EVALUATE_TIMEOUT_S = 5;

/**
 * Evaluations over a state's values, by CPython, sealed: each name's value is rebuilt from its
 * repr (a literal; any other repr is no value, and what reads it gets an error saying so), then
 * each entry evaluated over them (python/sealed.py, `evaluate`), with what it read. The one
 * evaluator of Python where no run of the program is there to ask. Rejects
 * (SealedUnavailableError) where the sealed CPython cannot be had.
 */
export const askPython: PythonAsk = (names, entries, opts = {}) => askPythonIn(SEALED_PYTHON, names, entries, opts);

/** askPython by the sealed CPython `version` (SEALED_PYTHONS). */
async function askPythonIn(version: string, ...[names, entries, opts = {}]: Parameters<PythonAsk>): Promise<Answer[]> {
  if (!entries.length) return [];
  const executor = sealedChild(version);
  const request = { evaluate: { names, expressions: entries, reads: true, ...(opts.hidden?.length ? { hidden: opts.hidden } : {}) } };
  const ran = await executor.run(request, EVALUATE_TIMEOUT_S, opts.signal);
  if ("killed" in ran) return entries.map(() => ({ error: `the evaluation took longer than ${EVALUATE_TIMEOUT_S} s` }));
  if ("died" in ran) return entries.map(() => ({ error: `the sealed interpreter failed: ${ran.died}` }));
  const answer = JSON.parse(ran.records) as unknown;
  return entries.map((_, i) => readAnswer(Array.isArray(answer) ? answer[i] : undefined));
};

/**
 * Expressions over a state's values (askPython, expressions only) by the sealed CPython `version`
 * (a session's own minor version where one is carried, SEALED_PYTHONS): the engine's evaluator of
 * conditions, log messages and the Debug Console.
 */
export const valuesEvaluator =
  (version = SEALED_PYTHON) =>
  async (names: Record<string, string>, expressions: readonly string[], signal?: AbortSignal): Promise<ValueResult[]> => {
    const answers = await askPythonIn(version, names, expressions, { signal });
    return answers.map((a) => ("value" in a || "error" in a ? a : { error: "no value came back" }));
  };

/** valuesEvaluator of the default CPython; `warm` starts it ahead. */
export const evaluateValues = Object.assign(valuesEvaluator(), { warm: (): void => sealedChild().prepare() });

/** One answer of `evaluate`, checked (an expression can print, but never writes the channel: still, trust nothing). */
function readAnswer(x: unknown): Answer {
  const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
  const stdout = typeof o.stdout === "string" && o.stdout ? { stdout: o.stdout } : {};
  const r = o.reads as Record<string, unknown> | undefined;
  const flags = r && typeof r.methods === "boolean" && typeof r.set === "boolean" && typeof r.scopes === "boolean";
  const reads = flags && strings(r.names) && strings(r.calls) ? { reads: { names: r.names, calls: r.calls, methods: r.methods as boolean, set: r.set as boolean, scopes: r.scopes as boolean } } : {};
  if (typeof o.value === "string" && typeof o.str === "string" && typeof o.type === "string")
    return { value: o.value, str: o.str, type: o.type, ...(typeof o.truth === "boolean" ? { truth: o.truth } : {}), ...(o.cut === true ? { cut: true } : {}), ...reads, ...stdout };
  if (typeof o.names === "object" && o.names !== null && Object.values(o.names).every((v) => typeof v === "string")) return { names: o.names as Record<string, string>, ...reads, ...stdout };
  if (strings(o.items)) return { items: o.items, ...(o.more === true ? { more: true } : {}), ...reads, ...stdout };
  return { error: typeof o.error === "string" ? o.error : "no value came back", ...(typeof o.unknown === "string" ? { unknown: o.unknown } : {}), ...stdout };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** The worker's report of the files a run wrote, checked (the worker is trusted no more than the program). */
function readWritten(v: unknown): Written[] {
  if (!Array.isArray(v)) return [];
  return v.flatMap((x): Written[] => {
    const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
    if (typeof o.path !== "string") return [];
    if (o.deleted === true) return [{ path: o.path, deleted: true }];
    return [{ path: o.path, size: typeof o.size === "number" ? o.size : 0, ...(typeof o.text === "string" ? { text: o.text } : {}), ...(o.cut === true ? { cut: true } : {}) }];
  });
}

/**
 * The folders of the sandbox for a program: its project (`root`, else the launch's cwd, else the
 * program's folder up to its package's root; the program's own folder and the cwd too where the
 * project does not hold them) and the site-packages of the launch's Python (asked of it; none
 * where it cannot be had).
 */
export async function sandboxFiles(program: string, opts: { root?: string; cwd?: string; python?: string } = {}): Promise<SandboxFiles> {
  const roots: SandboxRoot[] = [];
  const add = (folder: string): void => {
    const held = roots.some((r) => folder === r.path || under(folder, r.path));
    if (!held) roots.push({ path: folder, kind: "project" });
  };
  add(opts.root ? path.resolve(opts.root) : projectRoot(program, opts.cwd));
  add(projectRoot(program));
  if (opts.cwd) add(path.resolve(opts.cwd));
  const python = await findPython(opts.python).catch(() => undefined);
  for (const dir of python ? await sitePackages(python) : []) roots.push({ path: dir, kind: "library" });
  return new SandboxFiles(roots);
}

/**
 * Expressions evaluated in the program's frame at every line event on some places (a place: a
 * frame's file, null the program's, and a line): breakpoint conditions and log messages, read
 * where the run stands rather than rebuilt from reprs.
 */
export interface Probes {
  places: [string | null, number][];
  expressions: string[];
}

/** The probes' values at one line event of the run (its record's index), in the order asked. */
export interface Probed {
  at: number;
  results: ValueResult[];
}

/** A window record's "held": {"conditions": [TEXT, ...], "results": [...]} (probe results), by condition. */
function readHeld(held: unknown): { held?: Map<string, ValueResult> } {
  if (typeof held !== "object" || held === null) return {};
  const { conditions } = held as { conditions?: unknown };
  if (!Array.isArray(conditions)) return {};
  const results = readProbed(held as Record<string, unknown>);
  return { held: new Map(conditions.flatMap((c, k): [string, ValueResult][] => (typeof c === "string" && results[k] ? [[c, results[k]]] : []))) };
}

/** A window record's `hits`, checked: the place a seek landed on ([FILE, LINE], FILE "" the program's) and its hits there. */
function readHits(hits: unknown): { hits?: { place: SeekPlace; n: number } } {
  const h = (typeof hits === "object" && hits !== null ? hits : {}) as { place?: unknown; n?: unknown };
  const [file, line] = Array.isArray(h.place) ? h.place : [];
  if (typeof file !== "string" || !Number.isInteger(line) || !Number.isInteger(h.n) || (h.n as number) < 1) return {};
  return { hits: { place: { line: line as number, ...(file ? { file } : {}) }, n: h.n as number } };
}

function readProbed(r: Record<string, unknown>): ValueResult[] {
  const results = Array.isArray(r.results) ? r.results : [];
  return results.map((x): ValueResult => {
    const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
    if (typeof o.value !== "string" || typeof o.error === "string") return { error: typeof o.error === "string" ? o.error : "no value came back" };
    const str = typeof o.str === "string" ? o.str : o.value;
    return { value: o.value, str, type: typeof o.type === "string" ? o.type : "object", ...(typeof o.truth === "boolean" ? { truth: o.truth } : {}) };
  });
}

/** A sealed run's result: the trace, and what the run did to the sandbox's files (nothing of it on disk) and met there. */
export type SealedResult = TraceResult & {
  inspected?: Inspected[];
  probed?: Probed[];
  executed?: Executed[];
  /** A window's: its first state's callers, innermost first. */
  callers?: Frame[];
  window?: WindowRun;
  skeleton?: RunSkeleton;
  sandbox?: { wrote: Written[]; notices: string[] };
};

/** The results of the statements run at one state of the run. */
export interface Executed {
  at: number;
  results: Inspected[];
}

/**
 * Traces one program in the sealed executor, as runTrace does on the host: same options (`python`
 * aside: the sealed CPython is `sealedPython`, one of SEALED_PYTHONS), same result. With `hybrid`,
 * holes are answered by its oracle; each answer costs a run from the start. `pause`, once aborted:
 * a window's seek under way lands where the run is at its next poll. Rejects when the sealed run
 * cannot be had here (SealedUnavailableError) or for a missing program.
 */
export async function runSealed(program: string, opts: TraceOptions & { inspect?: Inspect; hold?: Hold; ahead?: boolean; statements?: readonly Statement[]; probes?: Probes; window?: Window; pause?: AbortSignal } = {}, child: SealedChild = sealedChild(opts.sealedPython)): Promise<SealedResult> {
  checkOptions(opts);
  const file = await checkProgram(program);
  const text = await readProgram(file);
  const source = normalizeSource(text);
  // Pyodide loads (seconds, the first time) while the launch's Python is asked for its libraries.
  try {
    child.warm().catch(() => undefined);
  } catch {
    // (cannot be had here: the run below says why)
  }
  const files = await sandboxFiles(file, { ...(opts.root ? { root: opts.root } : {}), ...(opts.cwd ? { cwd: opts.cwd } : {}), ...(opts.python ? { python: opts.python } : {}) });
  const where = {
    mounts: files.mounts,
    cwd: opts.cwd ? path.resolve(opts.cwd) : path.dirname(file),
    root: opts.root ? path.resolve(opts.root) : projectRoot(file, opts.cwd),
    paths: files.libraries,
  };
  const timeout = opts.timeout ?? DEFAULT_TIMEOUT_S;
  const numbers: Record<string, number> = {};
  for (const key of TRACE_LIMITS) if (opts[key] !== undefined) numbers[key] = opts[key]!;
  const oracle = opts.hybrid;
  const answers: HoleAnswer[] = [];
  const told = new Set<string>();
  for (;;) {
    const call = entryCall(opts.call);
    const request: RunRequest = { program: file, source: text, opts: numbers, ...where, ...(call !== undefined ? { call } : {}) };
    if (oracle) Object.assign(request, { hybrid: { predict: oracle.predict ?? [] }, answers });
    if (opts.inspect) request.inspect = { ...opts.inspect, ...(opts.hold ? { hold: true as const } : {}) };
    if (opts.statements?.length) request.statements = opts.statements;
    if (opts.probes) request.probes = opts.probes;
    if (opts.window) request.window = "seek" in opts.window ? { seek: seekRequest(opts.window.seek), ...(opts.window.fast ? { fast: true } : {}) } : opts.window;
    const hold = opts.hold;
    const ran = await child.run(request, timeout, opts.signal, files, opts.pause, hold && ((answer) => hold(heldAnswer(answer, file, where.root))), opts.ahead);
    const records = new Records(file, where.root);
    if ("killed" in ran) return records.result(source, { killed: true, code: null, signal: "SIGKILL" });
    if ("died" in ran) return { source, frames: [], exit: { status: "error", value: `<the sealed interpreter failed: ${ran.died}>` } };
    // The holes before the run and the modules that stand in are told once, though each answer runs the program again.
    const once = oracle && {
      ...oracle,
      found: (h: Parameters<NonNullable<typeof oracle.found>>[0]) => !told.has("#holes") && (told.add("#holes"), oracle.found?.(h)),
      standIn: (m: string) => !told.has(m) && (told.add(m), oracle.standIn?.(m)),
    };
    let reached = 0;
    let pending: { req: Parameters<typeof answerHole>[1]; frames: Frame[] } | undefined;
    let inspected: Inspected[] | undefined;
    const executed: Executed[] = [];
    const probed: Probed[] = [];
    let skeleton: RunSkeleton | undefined;
    let callers: unknown;
    let windowRun: WindowRun | undefined;
    records.feed(ran.records + "\n", (r) => {
      if (pending) return false;
      if (r.event === "skeleton" && opts.window && "skeleton" in opts.window && !skeleton) {
        skeleton = RunSkeleton.read(r);
        return false;
      }
      if (r.event === "window" && opts.window && !windowRun) {
        if (Number.isInteger(r.events) && (r.from === null || Number.isInteger(r.from)))
          windowRun = { events: r.events as number, ...(r.from !== null ? { from: r.from as number } : {}), ...(r.latest !== undefined ? { latest: readLatest(r.latest) } : {}), ...(Number.isInteger(r.behind) && (r.behind as number) >= -1 ? { behind: r.behind as number } : {}), ...readHeld(r.held), ...readHits(r.hits), ...(r.fast === true ? { fast: true as const } : {}) };
        return false;
      }
      if (r.callers !== undefined && opts.window && callers === undefined) {
        callers = r.callers;
        delete r.callers;
      }
      if (r.event === "inspect" && opts.inspect && !inspected) {
        inspected = readInspected(r);
        return false;
      }
      if (r.event === "probe") {
        if (opts.probes && Number.isInteger(r.at)) probed.push({ at: r.at as number, results: readProbed(r) });
        return false;
      }
      if (r.event === "statements") {
        if (opts.statements?.length && Number.isInteger(r.at)) executed.push({ at: r.at as number, results: readInspected(r) });
        return false;
      }
      if (r.event === "exit" && r.reason === "hole") return false;
      if (!once) return true;
      const hole = holeRecord(r, once);
      if (hole === "frame") return true;
      if (hole !== "done" && reached++ === answers.length) pending = { req: hole, frames: records.frames.slice() };
      return false;
    });
    if (!pending || records.invalid)
      return {
        ...records.result(source, { killed: false, code: 0, signal: null }),
        ...(inspected ? { inspected } : {}),
        ...(executed.length ? { executed } : {}),
        ...(probed.length ? { probed } : {}),
        ...(callers !== undefined ? { callers: callerFrames(callers, file, where.root) } : {}),
        ...(skeleton ? { skeleton } : {}),
        ...(windowRun ? { window: windowRun } : {}),
        sandbox: { wrote: ran.wrote, notices: ran.notices },
      };
    answers.push(answers.length < MAX_HOLES ? await answerHole(oracle!, pending.req, pending.frames) : { error: `more than ${MAX_HOLES} holes in one run` });
  }
}
