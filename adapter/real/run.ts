// What a run of the tracer (adapter/python/tracer.py) is, wherever it runs: on this machine's
// Python (hostRun.ts) or sealed (sealed.ts). Its options and result, the records it writes read
// and checked (Records), its holes' records and their answers, and where tracer.py is. The two
// executors share this contract; executor.ts gives them one interface.
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { SOURCE_LIMIT, readTextFile } from "../system/files.js";
import { under } from "../system/paths.js";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PYTHON_VERSION_RE, type Exit, type ExitStatus, type Frame, type Objects } from "../format/trajectory.js";
import { valueType, type ValueType } from "../format/valueType.js";

export interface TraceOptions {
  /** Entry call evaluated after the module body runs untraced, e.g. "f([1, 2])"; without it the file runs as a script. */
  call?: string;
  /** Python interpreter (a setting); default: see findPython. */
  python?: string;
  /** The sealed run's CPython, its minor version (sealed.ts's SEALED_PYTHONS; default SEALED_PYTHON). */
  sealedPython?: string;
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

export type LimitReason = "events" | "time" | "output" | "tracing" | "inspect" | "seek" | "pause";

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

/**
 * The longest timeout of a run in seconds. Node's timers wait at most 2**31 - 1 ms (24.8 days) and fire
 * at once past that, which would end every run at its start; the waits add margins to it.
 */
export const MAX_TIMEOUT_S = 1_000_000;

/** Seconds a run may outlive its timeout before its process is killed (the tracer's own watchdog acts at +0.5 s). */
export const KILL_MARGIN_S = 2;
export const DEFAULT_TIMEOUT_S = 10;
/** Bytes of a run's standard error kept. */
export const MAX_STDERR = 64 * 1024;

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
const REASONS = new Set(["events", "time", "output", "tracing", "inspect", "seek", "pause"]);
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
