// The sealed executor's child process (dist/sealed.mjs): CPython compiled to WebAssembly (Pyodide)
// running the tracer, in a Node process locked down in layers. adapter/real/sealed.ts starts it as
//
//   node --experimental-permission --allow-fs-read=<pyodide>/* --allow-fs-read=<dist>/... \
//        --disallow-code-generation-from-strings --max-old-space-size=N sealed.mjs <pyodide> <python dir> <MiB> <snapshot>
//
// with an empty environment and standard input, output and error on /dev/null. It talks over fds 3
// (requests in) and 4 (answers out), one JSON object a line, through fs.readSync / fs.writeSync
// captured here: no stream or socket object exists in this realm for a program to reach (the first
// thing in may be the interpreter's memory as Pyodide loads, kept by the parent: readSnapshot). While a
// run goes on, the worker asks the parent for the user's folders and files on the same channel
// ({"event": "fs", ...}, answered by one line: sandboxFs.ts and workspace.ts), and whether the
// debugger pauses the run ({"event": "poll"}: pollAnswer), and, for a run held at a stop, the next
// expression to answer there ({"event": "held"}: nextQuestion).
//
// The layers, outermost first:
// 1. Node's permission model: reading only Pyodide's files and the tracer's, no writes, no child
//    processes, no workers, no native addons, no WASI (enforced by Node itself, also against code
//    that reaches JavaScript).
// 2. No code generation from strings (`eval`, `Function`).
// 3. The JavaScript realm, before Pyodide loads: no native bindings (process.binding but for the
//    constants Pyodide's loader reads, process._linkedBinding: an embedder's own, Electron's shell
//    functions among them; process.dlopen), each checked to be cut.
//    Then, before any program runs: no network primitives (`fetch`, `WebSocket`, ...,
//    removed before Pyodide loads, so nothing holds them), no `process` (its powers cut off as well,
//    in case a reference survives), no `require` (Pyodide's loader leaves one), a silent `console`,
//    a wall clock and a random source that are the same on every run.
// 4. Python (adapter/python/sealed.py): `js`, `pyodide`, `_pyodide*`, `ctypes` cannot be imported by
//    any import path, and the program runs under the tracer with its limits.
// 5. Memory: WebAssembly memory capped (MemoryError in the program), the JS heap capped by the flag.
// The parent kills the process when a run outlives its time (a loop in C code) and starts another.
import fs from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { sandboxFs, type FsAnswer, type FsRequest } from "./sandboxFs.js";
import { SEALED_PYTHON_FILES } from "./sealedFiles.js";

const readSync = fs.readSync;
const writeSync = fs.writeSync;
const readFileSync = fs.readFileSync;
const IN = 3;
const OUT = 4;
const quit = process.exit.bind(process);
const [pyodideDir, pythonDir, memoryArg, snapshotArg] = process.argv.slice(2);
/** WebAssembly memory the program may use, in MiB. */
const MEMORY_MIB = Math.max(64, Number(memoryArg) || 1024);
/** Bytes a run may write to the in-memory file system in all (its files live in this process's memory). */
const MAX_WRITE = 256 * 1024 * 1024;
/** The last line the interpreter wrote on its standard output: a held run's answers (nextQuestion). */
let heldAnswers: string | undefined;

function send(message: unknown): void {
  let data = Buffer.from(JSON.stringify(message) + "\n", "utf8");
  while (data.length) data = data.subarray(writeSync(OUT, data));
}

// Layers 1 and 2 are this process's flags: a Node that ignores them (an older one, or one whose
// embedder turns the permission model off) runs nothing sealed. The parent then says why, and
// predict mode falls back to the model alone, which runs no code at all.
function lockdownProblem(): string | undefined {
  const permission = (process as unknown as { permission?: { has(scope: string, ref?: string): boolean } }).permission;
  if (!permission) return "this Node has no permission model";
  for (const [scope, ref] of [["fs.write", undefined], ["child", undefined], ["worker", undefined], ["fs.read", "/etc/passwd"]] as const)
    if (permission.has(scope, ref)) return `the permission model allows ${scope}${ref ? ` ${ref}` : ""}`;
  try {
    (0, eval)("1");
    return "code generation from strings is allowed";
  } catch {
    return undefined;
  }
}
const problem = lockdownProblem();
if (problem) {
  send({ event: "failed", error: `the sandbox cannot be locked down: ${problem}` });
  quit(1);
}

// ---- layer 3, first half: the network is gone before anything can hold it ----
for (const name of ["fetch", "WebSocket", "EventSource", "XMLHttpRequest", "WebTransport", "Request", "Response", "Headers", "FormData", "navigator"]) {
  try {
    delete (globalThis as Record<string, unknown>)[name];
  } catch {
    // not configurable in this Node: it stays, and the tests say so
  }
}

// ---- layer 5: a cap on WebAssembly memory (Pyodide asks for up to 4 GiB) ----
interface MemoryDescriptor {
  initial: number;
  maximum?: number;
  shared?: boolean;
}
const wasm = (globalThis as unknown as { WebAssembly: { Memory: new (d: MemoryDescriptor) => unknown } }).WebAssembly;
const RealMemory = wasm.Memory;
const capPages = (MEMORY_MIB * 1024 * 1024) / 65536;
(wasm as { Memory: unknown }).Memory = function Memory(desc: MemoryDescriptor) {
  const maximum = desc.shared ? desc.maximum : Math.min(desc.maximum ?? capPages, capPages);
  return new RealMemory({ ...desc, ...(maximum !== undefined ? { maximum } : {}) });
};

// ---- native bindings: cut before Pyodide loads ----
// Node's permission model does not guard them: process.binding and process.dlopen reach Node's
// internals and native code; process._linkedBinding reaches an embedder's own bindings (desktop VS
// Code's Electron runs this process as Node: electron_common_shell has openPath, openExternal,
// trashItem). Pyodide's loader asks only process.binding("constants"), given from node:constants.
const constants = await import("node:constants");
const NATIVE = ["binding", "_linkedBinding", "dlopen"] as const;
const cuts = new Map<string, () => never>();
for (const name of NATIVE) {
  const refuse = (n?: unknown): never => {
    if (name === "binding" && n === "constants") return { ...constants.default, fs: constants.default } as never;
    throw new Error(`process.${name} is not available in the sandbox`);
  };
  cuts.set(name, refuse);
  try {
    Object.defineProperty(process, name, { value: refuse, configurable: false, writable: false });
  } catch {
    // (a property that cannot be redefined: the check below refuses to run)
  }
}
// The self-check's second half: each cut holds, or nothing runs.
const uncut = NATIVE.find((name) => (process as unknown as Record<string, unknown>)[name] !== cuts.get(name));
if (uncut) {
  send({ event: "failed", error: `the sandbox cannot be locked down: process.${uncut} cannot be cut off` });
  quit(1);
}

// ---- a clock and a random source that make each run a pure function of its input ----
// CPython's wall clock in C (datetime.now, time.localtime) reads Date.now here: it stands at one
// instant (sealed.py gives time.time the same, moved on by time.sleep). Monotonic clocks stay real:
// the tracer's time limit reads them.
const EPOCH = Date.UTC(2026, 0, 1);
Date.now = () => EPOCH;
// os.urandom and the seeding of random read crypto.getRandomValues (Pyodide 0.27) or node:crypto's
// randomFillSync (later ones): both a seeded generator (xorshift).
let seed = 1;
const random = (buf: ArrayBufferView): ArrayBufferView => {
  const bytes = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let i = 0; i < bytes.length; i++) {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    bytes[i] = seed & 0xff;
  }
  return buf;
};
const webcrypto = globalThis.crypto as unknown as { getRandomValues: unknown };
Object.defineProperty(webcrypto, "getRandomValues", { value: random, configurable: false, writable: false });
Object.defineProperty((await import("node:crypto")).default, "randomFillSync", { value: random, configurable: false, writable: false });

interface PyProxyFn {
  (...args: unknown[]): unknown;
}
interface Pyodide {
  runPython(code: string): unknown;
  makeMemorySnapshot(): Uint8Array;
  /** What the interpreter reads for a signal to raise (any object whose [0] it reads and clears). */
  setInterruptBuffer(buffer: { 0: number }): void;
  globals: { get(name: string): unknown };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Emscripten's FS is untyped JavaScript
  FS: any;
  ERRNO_CODES: Record<string, number>;
  version: string;
}

/**
 * The interpreter's memory just after Pyodide has loaded and the runner is imported, from the parent (snapshot "load": a
 * line {"snapshot": N} on the channel, then N bytes), which loads in a fifth of the time; or
 * made here for the parent to keep (snapshot "make"). Either way taken and restored in the same
 * realm, after the same cuts above, with the same options: the same interpreter as a plain load.
 */
function readSnapshot(): Uint8Array {
  const one = Buffer.alloc(1);
  let header = "";
  while (!header.endsWith("\n")) {
    if (readSync(IN, one, 0, 1, null) !== 1) throw new Error("the channel closed");
    header += one.toString("latin1");
    if (header.length > 100) throw new Error("no snapshot header");
  }
  const size = (JSON.parse(header) as { snapshot?: unknown }).snapshot;
  if (typeof size !== "number" || !Number.isInteger(size) || size <= 0 || size > 1 << 30) throw new Error("a bad snapshot size");
  const data = Buffer.alloc(size);
  for (let at = 0; at < size; ) {
    const n = readSync(IN, data, at, size - at, null);
    if (n <= 0) throw new Error("the channel closed");
    at += n;
  }
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The tracer, the files it loads (its console, processes and holes) and the sealed runner, in the
 * in-memory file system under /sealed (which no snapshot holds: written at every start), and the
 * runner imported where the snapshot has not imported it already.
 */
function importRunner(pyodide: Pyodide): void {
  pyodide.FS.mkdirTree("/sealed");
  for (const name of SEALED_PYTHON_FILES) pyodide.FS.writeFile(`/sealed/${name}`, readFileSync(`${pythonDir}/${name}`, "utf8"));
  pyodide.runPython("import sys\nif 'sealed' not in sys.modules:\n    sys.path.insert(0, '/sealed'); import sealed; sys.path.remove('/sealed')");
}

let py: Pyodide;
let snapshot = "none";
try {
  // The interpreter's JavaScript (a CommonJS script that sets globalThis._createPyodideModule,
  // which loadPyodide then uses as it is) is required, not imported as loadPyodide would: an
  // import of a 1 MB script whose format its package does not state has Node detect the format
  // and lex it for exports first (measured: a worker ready from its snapshot in 450 ms, median of
  // 8, against 500).
  createRequire(import.meta.url)(`${pyodideDir}/pyodide.asm.js`);
  const { loadPyodide } = (await import(pathToFileURL(`${pyodideDir}/pyodide.mjs`).href)) as { loadPyodide: (o: object) => Promise<Pyodide> };
  const options = {
    indexURL: `${pyodideDir}/`,
    // Deterministic string hashes (set orders), as the host tracer runs with PYTHONHASHSEED=0.
    env: { PYTHONHASHSEED: "0", HOME: "/home/user", USER: "user", PYTHONDONTWRITEBYTECODE: "1" },
    // Standard output is where a run held at a stop writes its answers (sealed.py's _held: the
    // program's prints are caught in Python); standard input gives the parent's next question to
    // them, else the debugger's pause line (pollAnswer). The program's sys.stdin is empty.
    stdout: (line: string) => {
      heldAnswers = line;
    },
    stderr: () => undefined,
    stdin: () => (heldAnswers !== undefined ? nextQuestion() : pollAnswer()),
    packages: [],
  };
  let loaded: Pyodide | undefined;
  if (snapshotArg === "load") {
    try {
      loaded = await loadPyodide({ ...options, _loadSnapshot: readSnapshot() });
      snapshot = "loaded";
    } catch (e) {
      snapshot = `failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  }
  if (!loaded && snapshotArg === "make") {
    loaded = await loadPyodide({ ...options, _makeSnapshot: true });
    // The runner is imported before the snapshot is taken (a quarter of a second of every start
    // from it: the tracer compiled, the standard modules it reads imported).
    importRunner(loaded);
    send({ event: "snapshot", data: Buffer.from(loaded.makeMemorySnapshot()).toString("base64") });
    snapshot = "made";
  }
  py = loaded ?? (await loadPyodide(options));
} catch (e) {
  send({ event: "failed", error: `Pyodide did not load: ${e instanceof Error ? e.message : String(e)}` });
  quit(1);
  throw e;
}
importRunner(py);
const runner = py.globals.get("sealed") as { run: PyProxyFn; seal: PyProxyFn; notices: PyProxyFn };
const run = runner.run;
const notices = runner.notices;
// Layer 4 (Python): the modules that reach JavaScript are gone, and no import path brings them back.
runner.seal();
const python = String(py.runPython("import sys; '%d.%d' % sys.version_info[:2]"));

// ---- layer 3, second half: nothing left in the realm that reaches the machine ----
const processPowers = [
  "binding", "_linkedBinding", "dlopen", "getBuiltinModule", "kill", "_kill", "mainModule", "send", "channel",
  "disconnect", "_debugProcess", "_debugEnd", "_startProfilerIdleNotifier", "_stopProfilerIdleNotifier",
  "openStdin", "stdin", "stdout", "stderr", "report", "env", "setuid", "setgid", "seteuid", "setegid",
  "setgroups", "initgroups", "chdir", "umask", "loadEnvFile", "execve", "permission", "_getActiveHandles",
  "_getActiveRequests", "activeResourcesInfo", "cwd", "argv", "execArgv", "execPath", "moduleLoadList",
];
for (const name of processPowers) {
  try {
    Object.defineProperty(process, name, { value: undefined, configurable: false, writable: false });
  } catch {
    // a property that cannot be redefined keeps its value; the realm no longer names process below
  }
}
const silent = Object.freeze(Object.fromEntries(["log", "info", "warn", "error", "debug", "trace", "dir", "table"].map((k) => [k, () => undefined])));
for (const name of ["process", "require", "global", "console", "WebAssembly", "module", "exports", "__filename", "__dirname"]) {
  try {
    if (name === "console") Object.defineProperty(globalThis, name, { value: silent, configurable: false, writable: false });
    else delete (globalThis as Record<string, unknown>)[name];
  } catch {
    // see the tests: each of these is checked to be gone
  }
}

/**
 * One request to the parent on the channel, and its answer: one line, parsed (`fallback` where it
 * is not JSON). The channel is one request, one answer: the parent cannot speak while a run holds
 * this thread.
 */
function askParent<T>(request: object, fallback: T): T {
  send(request);
  const line = nextLine();
  if (line === undefined) quit(0); // the parent is gone
  try {
    return JSON.parse(line!) as T;
  } catch {
    return fallback;
  }
}

// The user's folders, mounted for each run (sandboxFs.ts): every file comes from the parent, which checks its path.
const ask = (request: FsRequest): FsAnswer => askParent<FsAnswer>({ event: "fs", ...request }, { errno: "EIO" });
const files = sandboxFs(py.FS, py.ERRNO_CODES, ask, MAX_WRITE);

/**
 * What the parent asks of the run under way: the tracer of every run reads fd 0 every 50 ms
 * (sealed.py's _pause_asked), and each read asks here ({"event": "poll"}, answered {"pause": bool,
 * "stop"?: true}): "pause", "stop" (a run begun ahead of a question that is wanted no more), or
 * nothing.
 */
function pollAnswer(): string | null {
  const answer = askParent<{ pause?: unknown; stop?: unknown }>({ event: "poll" }, {});
  return answer.stop === true ? "stop" : answer.pause === true ? "pause" : null;
}

/**
 * A run held at a stop: its answers (the last line it wrote on fd 1) go to the parent, whose
 * answer, one line, is the next question ({"question": ...}) or lets the run go. A program's own
 * line on fd 1 reaches the parent the same way, which answers it only while it holds a run.
 */
function nextQuestion(): string {
  const line = heldAnswers!;
  heldAnswers = undefined;
  return JSON.stringify(askParent<object>({ event: "held", line }, {})) + "\n";
}

/**
 * The run's ticks: the interpreter reads its interrupt buffer's first element every 50 eval-loop
 * checks or so, and raises the signal it finds there. While a run goes on this read gives SIGUSR2
 * every TICK_MS: Python ignores it until the tracer sets a handler, as it does where a Continue's
 * seek runs with no trace function (tracer.Run.go_fast), whose limits and pause poll it keeps.
 */
const TICK_MS = 50;
const SIGUSR2 = 12;
let ticking = false;
let nextTick = 0;
py.setInterruptBuffer({
  get 0(): number {
    if (!ticking) return 0;
    const now = performance.now();
    if (now < nextTick) return 0;
    nextTick = now + TICK_MS;
    return SIGUSR2;
  },
  set 0(_: number) {},
});

send({ event: "ready", python, pyodide: py.version, snapshot });

// ---- the loop: one request, one run, one answer ----
const chunk = Buffer.alloc(1 << 16);
let pending = "";
function nextLine(): string | undefined {
  for (;;) {
    const nl = pending.indexOf("\n");
    if (nl >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      return line;
    }
    let n: number;
    try {
      n = readSync(IN, chunk, 0, chunk.length, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EAGAIN") continue;
      return undefined;
    }
    if (n === 0) return undefined; // the parent is gone
    pending += chunk.toString("utf8", 0, n);
  }
}

for (;;) {
  const line = nextLine();
  if (line === undefined) quit(0);
  if (!line!.trim()) continue;
  seed = 1;
  heldAnswers = undefined;
  let records: string;
  // A program's run mounts the user's folders and reports what it wrote; an evaluation over
  // values (the runner's "evaluate") touches no file, and is answered at once.
  let folders: string[] | undefined;
  try {
    const request = JSON.parse(line!) as { mounts?: unknown; evaluate?: unknown };
    if (request.evaluate === undefined) folders = Array.isArray(request.mounts) ? request.mounts.filter((m): m is string => typeof m === "string" && m.startsWith("/")) : [];
  } catch {
    // (the runner answers a request that is not JSON)
  }
  try {
    if (folders) files.mount(folders);
    ticking = true;
    const answer = run(line) as { toJs(): Uint8Array; destroy(): void };
    ticking = false;
    const bytes = answer.toJs();
    answer.destroy();
    records = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  } catch (e) {
    // A fatal error of the interpreter (the WebAssembly stack overflowed, memory ran out in C):
    // this process is no longer usable; the parent starts another.
    send({ event: "fatal", error: e instanceof Error ? e.message.split("\n").slice(-3).join(" ") : String(e) });
    quit(2);
  }
  if (!folders) send({ event: "done", records: records!, wrote: [], notices: [] });
  else send({ event: "done", records: records!, wrote: files.unmount(), notices: JSON.parse(String(notices())) as unknown });
}
