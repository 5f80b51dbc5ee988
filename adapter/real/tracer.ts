// The driver of the real tracer (adapter/python/tracer.py): runs a program under sys.settrace in a
// Python process and returns its frames and exit. runTrace starts one process per program;
// TraceBatch keeps one `tracer.py --batch` process for many programs (data generation, evaluation).
// Every run ends: the tracer enforces its limits itself, and the process is killed (and the run
// reported as a time limit) when it outlives its timeout by KILL_MARGIN_S.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { SOURCE_LIMIT, readTextFile } from "../system/files.js";
import { under } from "../system/paths.js";
import { killTree, own } from "../system/processes.js";
import type { Socket } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PYTHON_VERSION_RE, normalizeSource, type Exit, type ExitStatus, type Frame, type Objects } from "../format/trajectory.js";
import { valueType, type ValueType } from "../format/valueType.js";
import { firstPython, runPythonScript } from "./python.js";

export interface TraceOptions {
  /** Entry call evaluated after the module body runs untraced, e.g. "f([1, 2])"; without it the file runs as a script. */
  call?: string;
  /** Python interpreter (a setting); default: see findPython. */
  python?: string;
  /** Limit on recorded events (default 10000). */
  maxEvents?: number;
  /** Wall-clock limit in seconds (default 10). */
  timeout?: number;
  /** Limit on the program's standard output, in bytes (default 1e6). */
  maxOutput?: number;
  /** Longer reprs are cut to this many characters and marked "…(+N chars)" (default 1000; 0: no cap). */
  maxRepr?: number;
  /** Record what the Variables view opens of objects (Frame.objects), at most this many children a state (default 0: none). */
  objects?: number;
  /** Working directory of the program (default: the program's folder). */
  cwd?: string;
  /** The project's folder: its .py files are the user's (traced, breakpoints bind), not only those under the program's folder. */
  root?: string;
  /** Aborting ends the run at once: the program and what it started are killed, and the run rejects. */
  signal?: AbortSignal;
  /** Hybrid mode: the program's holes are filled by this oracle (see adapter/python/holes.py). */
  hybrid?: HybridOracle;
}

/** A hole the running program has reached: a stub function (its return value) or a missing call (the value assigned to `target`). */
export interface HoleRequest {
  kind: "function" | "call";
  /** The stub's qualified name, or the stand-in's dotted name (`textkit.slugify`). */
  name: string;
  line: number;
  target?: string;
  /** A stub's return annotation, as written (`float`, `list[str]`), and as the type of a literal where it names one. */
  returns?: string;
  type?: ValueType;
  /** A stub's docstring example that calls it with this call's arguments: its result, and the example's line. */
  docstring?: { repr: string; line: number };
}

/** A hole's value as a Python literal's repr, or why there is none (raised in the program). */
export type HoleAnswer = { repr: string; confidence?: number } | { error: string };

/** What the tracer found before the run: stub functions (qualname: "stub" or "listed") and names bound nowhere. */
export interface HoleList {
  functions: Record<string, "stub" | "listed">;
  names: string[];
  /** Listed functions the program does not define. */
  unknown: string[];
  /** The lines of the stubs' bodies (docstrings aside), [first, last] each. */
  bodies: [number, number][];
}

export interface HybridOracle {
  /** Functions to predict rather than run (names or qualified names). */
  predict?: readonly string[];
  /** Answers a hole; `frames` is the run so far, the hole's state last. The program waits, its clock stopped. */
  fill(req: HoleRequest, frames: readonly Frame[]): Promise<HoleAnswer>;
  /** The holes found before the run; modules that stand in, as they are imported. */
  found?(holes: HoleList): void;
  standIn?(module: string): void;
}

export type LimitReason = "events" | "time" | "output" | "tracing" | "inspect" | "seek";

export interface TraceResult {
  /** The program text ("\n" line ends, ending with "\n"). */
  source: string;
  /** The minor version of the Python that ran it ("3.11"), as its tracer wrote it before the program ran. */
  python?: string;
  frames: Frame[];
  exit: Exit;
  /** Which limit ended the run, when exit.status is "limit". */
  limit?: LimitReason;
  /** What the program wrote to standard error. */
  stderr?: string;
}

/** One program of a batch: a file, or text without one (`source`; with `program` too, text shown as that file). */
export interface BatchRequest extends Omit<TraceOptions, "python"> {
  program?: string;
  source?: string;
}

/**
 * The longest timeout of a run in seconds. Node's timers wait at most 2**31 - 1 ms (24.8 days) and fire
 * at once past that, which would end every run at its start; the waits add margins to it.
 */
export const MAX_TIMEOUT_S = 1_000_000;

/** Seconds a run may outlive its timeout before its process is killed (the tracer's own watchdog acts at +0.5 s). */
export const KILL_MARGIN_S = 2;
export const DEFAULT_TIMEOUT_S = 10;
const MAX_STDERR = 64 * 1024;
const MIN_PYTHON: [number, number] = [3, 8];

// ---- locating things ----

/** tracer.py: adapter/python/ beside this module's folder in the source tree, dist/python/ next to the bundle. */
export function tracerScript(): string {
  const dirs: string[] = [];
  try {
    dirs.push(path.dirname(fileURLToPath(import.meta.url)));
  } catch {
    // A CommonJS bundle has no import.meta.url.
  }
  if (typeof __dirname !== "undefined") dirs.push(__dirname);
  for (const dir of dirs) {
    for (const rel of ["python/tracer.py", "../python/tracer.py", "../adapter/python/tracer.py"]) {
      const p = path.resolve(dir, rel);
      if (existsSync(p)) return p;
    }
  }
  throw new Error(`tracer.py not found (looked in python/, ../python/ and ../adapter/python/ next to ${dirs.join(", ") || "this module"})`);
}

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

// ---- reading records ----

export function checkOptions(o: TraceOptions): void {
  for (const key of TRACE_LIMITS) {
    const v = o[key];
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < 0 || (key !== "maxRepr" && key !== "objects" && v === 0)))
      throw new Error(`${key} must be a positive number, got ${JSON.stringify(v)}`);
  }
  if (o.call !== undefined && typeof o.call !== "string") throw new Error("call must be a string");
  o.signal?.throwIfAborted();
}

/** The tracer's numeric options, as both executors pass them. */
export const TRACE_LIMITS = ["maxEvents", "timeout", "maxOutput", "maxRepr", "objects"] as const;

/**
 * Children of objects a debugging session's states record (what the Variables view opens). Each is
 * a repr written at every state: on user-style scripts (test/fixtures/userstyle) 64 add 10% to the
 * trace and no time to be seen; a loop over 50 objects held in one list traces about 3 times slower.
 */
export const SESSION_OBJECTS = 64;

export const entryCall = (call: string | undefined): string | undefined => (call && call.trim() ? call : undefined);

/** A record the tracer's channel carried that no tracer writes: the run ends with this message. */
export class RecordError extends Error {}

const EVENTS = new Set(["call", "line", "return", "exception"]);
const STATUSES = new Set(["normal", "error", "limit"]);
const REASONS = new Set(["events", "time", "output", "tracing", "inspect", "seek"]);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const whole = (v: unknown, min: number): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= min;

/**
 * One record of the tracer's channel, checked field by field: the program shares its process with
 * the tracer and can write into the channel, so nothing in a record is taken on trust. A user
 * file's path is relative to the program's folder and must stay inside the user's folder (`root`,
 * the project's folder where it is above the program's: "../lib/util.py"; else the program's
 * folder: no "..").
 */
function checkRecord(r: unknown, mainDir?: string, root?: string): Record<string, unknown> {
  if (!isObject(r)) throw new RecordError(`a record is a JSON object, not ${r === null ? "null" : Array.isArray(r) ? "an array" : typeof r}`);
  const str = (key: string): void => {
    if (r[key] !== undefined && typeof r[key] !== "string") throw new RecordError(`"${key}" is ${JSON.stringify(r[key])?.slice(0, 40)}, not a string`);
  };
  for (const key of ["value", "stdout", "stderr"]) str(key);
  if (r.event === "start") {
    if (typeof r.python !== "string" || !PYTHON_VERSION_RE.test(r.python)) throw new RecordError(`a start's "python" is ${JSON.stringify(r.python)?.slice(0, 40)}`);
    return r;
  }
  if (r.event === "exit") {
    if (!STATUSES.has(r.status as string)) throw new RecordError(`an exit's "status" is ${JSON.stringify(r.status)?.slice(0, 40)}`);
    if (r.reason !== undefined && !REASONS.has(r.reason as string)) throw new RecordError(`an exit's "reason" is ${JSON.stringify(r.reason)?.slice(0, 40)}`);
    return r;
  }
  if (!EVENTS.has(r.event as string)) throw new RecordError(`"event" is ${JSON.stringify(r.event)?.slice(0, 40)}`);
  if (!whole(r.line, 1)) throw new RecordError(`"line" is ${JSON.stringify(r.line)?.slice(0, 40)}, not a positive integer`);
  if (!whole(r.depth, 0)) throw new RecordError(`"depth" is ${JSON.stringify(r.depth)?.slice(0, 40)}, not a whole number`);
  if (typeof r.func !== "string" || !r.func) throw new RecordError(`"func" is ${JSON.stringify(r.func)?.slice(0, 40)}, not a name`);
  if (r.file !== undefined) {
    const f = r.file;
    const climbs = typeof f === "string" && f.split(/[\\/]/).includes("..");
    if (typeof f !== "string" || !f || f.includes("\0") || path.posix.isAbsolute(f) || path.win32.isAbsolute(f) || (climbs && !(mainDir && root && under(path.resolve(mainDir, f), root))))
      throw new RecordError(`"file" is ${JSON.stringify(f)?.slice(0, 80)}, not a path inside the program's folder`);
  }
  if (r.locals !== undefined) {
    if (!isObject(r.locals)) throw new RecordError(`"locals" is not an object`);
    for (const [k, v] of Object.entries(r.locals)) if (typeof v !== "string") throw new RecordError(`the local ${JSON.stringify(k).slice(0, 40)} is not a repr`);
  }
  if (r.objects !== undefined) checkObjects(r.objects);
  if (r.ids !== undefined && !(isObject(r.ids) && Object.values(r.ids).every((v) => typeof v === "string" && /^[0-9a-f]{1,16}$/.test(v))))
    throw new RecordError(`"ids" is not an object of identities`);
  if (r.returned !== undefined && !(isObject(r.returned) && typeof r.returned.func === "string" && typeof r.returned.value === "string"))
    throw new RecordError(`"returned" is not a function's name and value`);
  if (r.caller !== undefined) {
    const c = checkRecord(r.caller, mainDir, root);
    if (r.event !== "return" || c.event !== "line" || c.caller !== undefined || c.depth !== (r.depth as number) - 1) throw new RecordError(`"caller" is not the line record of a return's caller`);
  }
  return r;
}

/** A record's objects: {PATH: [[NAME, REPR, CHILD_PATH], ...]}, strings only. */
export function checkObjects(o: unknown): asserts o is Objects {
  if (!isObject(o)) throw new RecordError(`"objects" is not an object`);
  for (const [k, children] of Object.entries(o)) {
    if (!Array.isArray(children) || !children.every((c) => Array.isArray(c) && c.length === 3 && c.every((x) => typeof x === "string")))
      throw new RecordError(`the object ${JSON.stringify(k).slice(0, 40)} is not a list of [name, repr, path]`);
  }
}

/** Builds a TraceResult from the tracer's JSON lines. */
export class Records {
  python?: string;
  frames: Frame[] = [];
  exit?: Exit;
  limit?: LimitReason;
  stderr = "";
  /** Why the channel was refused: set by the first record that is not valid; nothing after it is read. */
  invalid?: RecordError;
  private partial = "";
  private count = 0;

  /** `root`: the project's folder, where its files may lie above the program's folder. */
  constructor(
    private readonly mainFile?: string,
    private readonly root?: string,
  ) {}

  /** Feeds raw output; returns true once the exit record has arrived, or a record was not valid. */
  feed(chunk: string, onRecord?: (r: Record<string, unknown>) => boolean): boolean {
    if (this.invalid) return true;
    const lines = (this.partial + chunk).split("\n");
    this.partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim()) continue;
      this.count++;
      try {
        let r: unknown;
        try {
          r = JSON.parse(line);
        } catch {
          throw new RecordError("a record is not JSON");
        }
        if (onRecord && isObject(r) && !onRecord(r)) continue;
        this.add(checkRecord(r, this.mainFile && path.dirname(this.mainFile), this.root));
      } catch (e) {
        if (!(e instanceof RecordError)) throw e;
        this.invalid = new RecordError(`The trace is not valid (record ${this.count}: ${e.message}): the program wrote into the tracer's channel, or the tracer is not this debugger's`);
        return true;
      }
    }
    return this.exit !== undefined;
  }

  add(r: Record<string, unknown>): void {
    if (this.exit) return;
    if (r.event === "start") {
      // Written once, before the program runs: one later came from the program.
      if (this.python !== undefined || this.frames.length) throw new RecordError("a start record after the run began");
      this.python = r.python as string;
      return;
    }
    if (r.event === "exit") {
      const exit: Exit = { status: r.status as ExitStatus };
      if (typeof r.value === "string") exit.value = r.value;
      if (typeof r.stdout === "string" && r.stdout) exit.stdout = r.stdout;
      this.exit = exit;
      if (typeof r.reason === "string") this.limit = r.reason as LimitReason;
      if (typeof r.stderr === "string" && r.stderr) {
        exit.stderr = r.stderr;
        this.addStderr(r.stderr);
      }
      return;
    }
    const frame = this.frameOf(r);
    if (typeof r.stdout === "string" && r.stdout) frame.stdout = r.stdout;
    if (typeof r.stderr === "string" && r.stderr) {
      frame.stderr = r.stderr;
      this.addStderr(r.stderr);
    }
    this.frames.push(frame);
  }

  /** A checked record's state. */
  private frameOf(r: Record<string, unknown>): Frame {
    const frame = { event: r.event, line: r.line, depth: r.depth, func: r.func } as Frame;
    if (typeof r.file === "string" && r.file !== this.mainFile) frame.file = r.file;
    // JSON.parse makes every key an own property (a local named __proto__ too).
    frame.locals = (r.locals ?? {}) as Record<string, string>;
    if (typeof r.value === "string") frame.value = r.value;
    if (r.objects !== undefined) frame.objects = r.objects as Objects;
    if (r.ids !== undefined) frame.ids = r.ids as Record<string, string>;
    if (r.caller !== undefined) frame.caller = this.frameOf(r.caller as Record<string, unknown>);
    if (isObject(r.returned)) frame.returned = { func: r.returned.func as string, value: r.returned.value as string };
    return frame;
  }

  addStderr(s: string): void {
    if (this.stderr.length < MAX_STDERR) this.stderr += s.slice(0, MAX_STDERR - this.stderr.length);
  }

  /** The result, once the process is gone: without an exit record, a kill is a time limit and a crash an error. */
  result(source: string, ended: { killed: boolean; code: number | null; signal: string | null }): TraceResult {
    let exit = this.exit;
    let limit = this.limit;
    if (this.invalid) exit = { status: "error", value: `<${this.invalid.message}>` };
    else if (!exit) {
      if (ended.killed) {
        exit = { status: "limit", value: "the time limit was reached (the program did not stop: it was killed)" };
        limit = "time";
      } else {
        const how = ended.signal ? `signal ${ended.signal}` : `exit code ${ended.code}`;
        exit = { status: "error", value: `<the program ended the tracer without an exit record: ${how}>` };
      }
    }
    const res: TraceResult = { source, ...(this.python ? { python: this.python } : {}), frames: this.frames, exit };
    if (exit.status === "limit" && limit) res.limit = limit;
    if (this.stderr) res.stderr = this.stderr;
    return res;
  }
}

export async function checkProgram(program: string): Promise<string> {
  const file = path.resolve(program);
  let info;
  try {
    info = await stat(file);
  } catch {
    throw new Error(`Program not found: ${file}`);
  }
  if (!info.isFile()) throw new Error(`Program is not a file: ${file}`);
  return file;
}

export const readProgram = (file: string): Promise<string> =>
  readTextFile(file, SOURCE_LIMIT).catch((e: Error) => {
    throw new Error(`Cannot read the program ${file}: ${e.message}`);
  });

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
 * Hybrid mode's records that are not states, read the same for a run on the host and a sealed one:
 * the holes found before the run and a module standing in go to the oracle ("done"); a hole reached
 * is its request (`ok`: well formed); any other record is a state or the exit ("frame").
 */
export function holeRecord(r: Record<string, unknown>, oracle: HybridOracle): "frame" | "done" | { req: HoleRequest; ok: boolean } {
  if (r.event === "holes") {
    const fns = r.functions && typeof r.functions === "object" ? (r.functions as Record<string, "stub" | "listed">) : {};
    const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
    const bodies = (Array.isArray(r.bodies) ? r.bodies : []).filter(
      (b): b is [number, number] => Array.isArray(b) && b.length === 2 && b.every((n) => Number.isInteger(n) && n > 0),
    );
    oracle.found?.({ functions: fns, names: strings(r.names), unknown: strings(r.unknown), bodies });
    return "done";
  }
  if (r.event === "stand-in") {
    if (typeof r.name === "string") oracle.standIn?.(r.name);
    return "done";
  }
  if (r.event !== "hole") return "frame";
  const ok = (r.kind === "function" || r.kind === "call") && typeof r.name === "string" && Number.isInteger(r.line);
  const req: HoleRequest = { kind: r.kind as HoleRequest["kind"], name: String(r.name), line: Number(r.line) };
  if (typeof r.target === "string") req.target = r.target;
  if (typeof r.returns === "string") req.returns = r.returns;
  const type = valueType(r.type);
  if (type) req.type = type;
  const doc = r.docstring as { repr?: unknown; line?: unknown } | undefined;
  if (doc && typeof doc.repr === "string" && Number.isInteger(doc.line)) req.docstring = { repr: doc.repr, line: Number(doc.line) };
  return { req, ok };
}

/** The oracle's answer to a hole reached; a malformed record, or an oracle that fails, is an answer that raises in the program. */
export async function answerHole(oracle: HybridOracle, hole: { req: HoleRequest; ok: boolean }, frames: readonly Frame[]): Promise<HoleAnswer> {
  try {
    return hole.ok ? await oracle.fill(hole.req, frames) : { error: "a malformed hole record" };
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) };
  }
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
