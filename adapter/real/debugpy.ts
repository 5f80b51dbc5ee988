// The real debugger beside the prediction: a client of debugpy's own debug adapter
// (`<python> -m debugpy.adapter`, DAP over stdio). It launches the user's program the way the
// tracer runs it (a small generated driver: empty standard input, the program's folder first on
// sys.path, the module imported and the entry call evaluated, or the file run as __main__), and
// reports each stop in terms of the user's files: the user frames on the stack (files in the
// program's folder, as the tracer traces them), the driver, or the end of the program.
// It knows DAP and Python, and nothing of predictions or of how stops are paired (compare.ts).
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, delimiter, dirname, extname, join, relative, resolve, sep } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { DapClient, DapError } from "./dapClient.js";
import { parseLiteral } from "../format/values.js";
import { removeStale } from "../system/stale.js";
import { descendants, killTree, own } from "../system/processes.js";
import { under } from "../system/paths.js";
import { tracerScript } from "./run.js";
import type { Objects } from "../format/trajectory.js";
import { firstPython, runPythonScript } from "./python.js";

export const DEBUGPY_INSTALL_HINT =
  'Install debugpy for the Python that runs the program: `python3 -m pip install debugpy`, or on Debian and Ubuntu `apt-get install python3-debugpy` (for /usr/bin/python3), or install VS Code\'s Python Debugger extension (ms-python.debugpy), whose copy is found, or name an interpreter that has it (the "python" launch attribute, --python on the command line).';

// ---- finding a Python with debugpy ----

/** Where editors keep their extensions, under the home folder: VS Code's own copy of debugpy lives in one of them. */
const EXTENSION_ROOTS = [".vscode", ".vscode-server", ".vscode-insiders", ".vscode-server-insiders", ".vscode-oss", ".cursor", ".cursor-server", ".windsurf", join(".local", "share", "code-server")].map((d) => join(d, "extensions"));

/** "2025.10.0" of "ms-python.debugpy-2025.10.0-linux-x64", as numbers to sort by. */
const versionOf = (name: string): number[] => (/-(\d+(?:\.\d+)*)/.exec(name)?.[1] ?? "0").split(".").map(Number);
const newer = (a: number[], b: number[]): number => {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (b[i] ?? 0) - (a[i] ?? 0);
  return 0;
};

/**
 * Folders that hold a copy of the debugpy package, for a Python that has none of its own: first
 * those of `NDBG_DEBUGPY_PATH` (a path list; the extension sets it to where VS Code's Python
 * Debugger extension is installed, as VS Code's extension API says), then that extension's
 * `bundled/libs` in each editor's extensions folder under `home`, newest version first. Only
 * folders with `debugpy/__init__.py` count.
 */
export function bundledDebugpyDirs(home = homedir(), env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const d of (env.NDBG_DEBUGPY_PATH ?? "").split(delimiter)) if (d) out.push(resolve(d));
  for (const root of EXTENSION_ROOTS.map((r) => join(home, r))) {
    let names: string[];
    try {
      names = readdirSync(root).filter((n) => n.startsWith("ms-python.debugpy-"));
    } catch {
      continue;
    }
    names.sort((a, b) => newer(versionOf(a), versionOf(b)));
    for (const n of names) out.push(join(root, n, "bundled", "libs"));
  }
  return [...new Set(out)].filter((d) => existsSync(join(d, "debugpy", "__init__.py")));
}

const probed = new Map<string, Promise<string>>();
/** The interpreters (by executable) that import debugpy only from a folder of bundledDebugpyDirs: that folder. */
const debugpyFolder = new Map<string, string>();

/** The environment a Python runs debugpy in: with `folder` first on its module path when its debugpy comes from there. */
function withDebugpy(env: NodeJS.ProcessEnv, folder: string | undefined): NodeJS.ProcessEnv {
  return folder ? { ...env, PYTHONPATH: [folder, env.PYTHONPATH].filter(Boolean).join(delimiter) } : env;
}

/**
 * Resolves the interpreter's executable path when `cmd` runs and can import debugpy, its own or
 * a copy of bundledDebugpyDirs (remembered for the launch); rejects with the reason otherwise.
 */
async function probeDebugpy(cmd: string): Promise<string> {
  const ask = (folder?: string): Promise<string> => runPythonScript(cmd, "import sys, debugpy; sys.stdout.write(sys.executable)", 15_000, withDebugpy(process.env, folder));
  try {
    const out = (await ask()).trim();
    if (!out) throw new Error("it did not say where it is");
    return out;
  } catch (e) {
    if (!/No module named .?debugpy/.test((e as Error).message)) throw e;
    const folders = bundledDebugpyDirs();
    for (const folder of folders) {
      const out = (await ask(folder).catch(() => "")).trim();
      if (!out) continue;
      debugpyFolder.set(out, folder);
      return out;
    }
    throw new Error(folders.length ? `it has no debugpy, and cannot import the copy in ${folders.join(", ")}` : "it has no debugpy (nor is VS Code's Python Debugger extension installed)");
  }
}

/**
 * The Python for the real side: `preferred` (the launch attribute `python`) when given, else the
 * first of PYTHON_CANDIDATES that can import debugpy. An error names every interpreter tried and
 * says how to install debugpy.
 */
export function findDebugpyPython(preferred?: string): Promise<string> {
  return firstPython(preferred, probeDebugpy, probed, (named, why) =>
    named
      ? new Error(`The real debugger (debugpy) is needed, and the configured Python "${named}" cannot provide it (${why[0].slice(named.length + 2)}). ${DEBUGPY_INSTALL_HINT}`)
      : new Error(`The real debugger (debugpy) is needed, and no Python found has it (${why.join("; ")}). ${DEBUGPY_INSTALL_HINT}`),
  );
}

// ---- debugpy's adapter over its stdio ----

/** python/guard.py, beside the tracer (adapter/python/ in the source tree, dist/python/ beside the bundle). */
export const guardScript = (): string => join(dirname(tracerScript()), "guard.py");

/**
 * The DAP client (adapter/real/dapClient.ts) with compare mode's errors; the adapter's end reaches
 * listeners as an "ndbg/adapterExited" event. Outside Windows, debugpy's adapter runs below
 * `guard.py`, a subreaper: its launcher and the program it launches stay below the guard
 * however debugpy ends, and the guard ends them all when this process dies, even by SIGKILL.
 */
class DebugpyClient extends DapClient {
  constructor(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    const guarded = process.platform !== "win32";
    super("debugpy", cmd, guarded ? ["-B", guardScript(), cmd, ...args] : args, {
      ...opts,
      lifeline: guarded,
      exitError: (why, failed, stderr) =>
        new DapError(failed ? `cannot start ${cmd}: ${why}` : `the debug adapter exited (${why})${stderr.length ? `: ${stderr.join("\n")}` : ""}`),
    });
    own(this.child);
  }

  /** Everything this session started: the guard, debugpy's adapter, its launcher and the program, each in a process group of its own. */
  private tree(): number[] {
    return this.pid ? [this.pid, ...descendants(this.pid)] : [];
  }

  /** Sends a request; resolves with the response body, rejects with the adapter's message. */
  async request<B = unknown>(command: string, args?: unknown, timeoutMs = 15_000): Promise<B> {
    const r = await this.send(command, args, timeoutMs);
    if (!r.msg.success) throw new DapError(r.msg.message || `"${command}" failed`);
    return r.msg.body as B;
  }

  /** Asks debugpy to end the program, then kills what is left of the processes it started. */
  async close(): Promise<void> {
    const started = this.tree();
    if (!this.closed) {
      try {
        await this.request("disconnect", { terminateDebuggee: true }, 2_000);
      } catch {
        // gone or stuck: killed below
      }
    }
    for (const pid of new Set([...started, ...this.tree()])) killTree(pid);
    this.kill();
  }

  protected override ended(reason: Error): void {
    this.emit({ seq: 0, type: "event", event: "ndbg/adapterExited", body: { message: reason.message } }, performance.now());
  }
}

// ---- the program under debugpy ----

export interface DebugpyOptions {
  /** An interpreter that has debugpy (findDebugpyPython). */
  python: string;
  /** Absolute path of the program. */
  program: string;
  /** Entry call, e.g. `f([1, 2])`; absent: the file runs as __main__. */
  call?: string;
  /** The program's working directory. */
  cwd: string;
  /** Seconds the program may run before it reaches its next stop. */
  timeout: number;
  /** Reprs longer than this are cut as the tracer cuts them (0: no cut). */
  maxRepr: number;
}

/** A frame on the real stack. */
export interface RealFrameInfo {
  /** debugpy's frame id (stable while the frame lives; reused after). */
  id: number;
  /** The code object's name (co_name), as debugpy shows it. */
  name: string;
  line: number;
  path: string;
  /** Absent for the main program; the path of another user file, relative to the program's folder. */
  file?: string;
}

export type RealStop =
  | {
      kind: "stop";
      /** debugpy's reason: entry, step, breakpoint, exception, pause. */
      reason: string;
      /** User frames (those the tracer traces), innermost first. */
      frames: RealFrameInfo[];
      /** The frame the program is suspended in, user or not. */
      top?: RealFrameInfo;
      /** Suspended in the generated driver (before the entry call or after it returned). */
      inDriver: boolean;
      /** Suspended in a file that is not traced (outside the program's folder). */
      foreign: boolean;
      /** For exception stops: the exception's repr and whether it is uncaught (the program is ending). */
      exception?: { repr?: string; unhandled: boolean };
      /** The move did not reach a stop by itself: paused at its time limit, or because it was cancelled. */
      paused?: "timeout" | "cancelled";
    }
  | { kind: "exit"; code?: number; message?: string };

export type StepCommand = "stepIn" | "next" | "stepOut" | "continue";

export interface BreakpointLine {
  line: number;
  condition?: string;
}

/** The folder of a comparison's driver script: `ndbg-compare-PID-XXXXXX` in the temp folder. */
const COMPARE_DIR = /^ndbg-compare-(\d+)-\w{6}$/;
/** Whether this process has removed the folders of comparisons whose process died. */
let sweptStale = false;
const RETURN_PREFIX = "(return) ";
const GROUPS_SKIPPED = new Set(["special variables", "protected variables"]);
const GROUPS_EXPANDED = new Set(["function variables", "class variables"]);
/** Values debugpy may not show as repr() would: shortened with "...", or a default object repr standing for a repr() that raised. */
const MAYBE_CUT = /\.\.\.|^<[\w.]+ object at 0x[0-9a-fA-F]+>$/;
const ADDRESS = / at 0x[0-9a-fA-F]+/g;
/** Values whose repr says all (never opened), and builtin containers the adapter reads from their reprs (looked into for objects). */
const ATOM_TYPES = new Set(["int", "float", "complex", "bool", "str", "bytes", "bytearray", "NoneType", "range", "set", "frozenset", "function", "type", "module", "method", "builtin_function_or_method"]);
const LOOKED_INTO = new Set(["list", "tuple", "dict"]);

export class Debugpy {
  private readonly opts: DebugpyOptions;
  private readonly dap: DebugpyClient;
  private readonly dir: string;
  private readonly driver: string;
  private readonly mainReal: string;
  private readonly mainDir: string;
  private threadId = 1;
  private stopQueue: DebugProtocol.Event[] = [];
  private waiter?: () => void;
  private ended?: { code?: number; message?: string };
  private out = "";
  private bps = "[]";
  private filters = "";
  /** The current stop (or the end). */
  current: RealStop = { kind: "exit", message: "not started" };

  private constructor(opts: DebugpyOptions, driverSource: string, readonly entryLine: number) {
    this.opts = opts;
    // Named with our pid, so that a later process removes it if we die without disposing of it.
    if (!sweptStale) {
      sweptStale = true;
      removeStale(COMPARE_DIR);
    }
    this.dir = mkdtempSync(join(tmpdir(), `ndbg-compare-${process.pid}-`));
    this.driver = join(this.dir, "ndbg_driver.py");
    writeFileSync(this.driver, driverSource);
    this.mainReal = realOrResolved(this.opts.program);
    this.mainDir = dirname(this.mainReal);
    this.dap = new DebugpyClient(opts.python, ["-m", "debugpy.adapter"], { cwd: this.opts.cwd, env: withDebugpy(pythonEnv(), debugpyFolder.get(opts.python)) });
    this.dap.onEvent((e) => this.onEvent(e));
  }

  /**
   * Starts debugpy and the program, and runs it to the start of the traced code: the entry
   * call's line in the driver (the module has been imported) or the script's first line.
   */
  static async launch(opts: DebugpyOptions, signal?: AbortSignal): Promise<Debugpy> {
    const abs = { ...opts, program: resolve(opts.program), cwd: resolve(opts.cwd) };
    const { text, entryLine } = driverScript(abs);
    const d = new Debugpy(abs, text, entryLine);
    try {
      await d.start(signal);
      return d;
    } catch (e) {
      await d.dispose();
      throw e;
    }
  }

  get python(): string {
    return this.opts.python;
  }

  /** What the program wrote to standard output since the last call. */
  takeOutput(): string {
    const s = this.out;
    this.out = "";
    return s;
  }

  /**
   * Which exceptions stop the program: "raised" (where raised in user code, and again in each
   * caller they pass through) and "uncaught" (once more as the program ends). Sent when changed.
   */
  async setExceptionFilters(filters: readonly ("raised" | "uncaught")[]): Promise<void> {
    const key = filters.join(",");
    if (key === this.filters || this.ended) return;
    await this.dap.request("setExceptionBreakpoints", { filters });
    this.filters = key;
  }

  /** Sets the program's breakpoints (line and condition), when they changed. */
  async setBreakpoints(bps: readonly BreakpointLine[]): Promise<void> {
    const key = JSON.stringify(bps.map((b) => [b.line, b.condition ?? ""]));
    if (key === this.bps || this.ended) return;
    await this.dap.request("setBreakpoints", {
      source: { path: this.opts.program },
      breakpoints: bps.map((b) => (b.condition ? { line: b.line, condition: b.condition } : { line: b.line })),
    });
    this.bps = key;
  }

  /**
   * One debugpy command and the stop it leads to. A program that does not stop within the time
   * limit is paused where it is (a stop with `paused: "timeout"`); a cancelled command likewise
   * (`paused: "cancelled"`) before the signal's reason is thrown.
   */
  async command(cmd: StepCommand, signal?: AbortSignal): Promise<RealStop> {
    if (this.current.kind === "exit") return this.current;
    this.stopQueue = [];
    await this.dap.request(cmd, { threadId: this.threadId });
    const got = await this.nextStop(this.opts.timeout * 1000, signal);
    if (got === "timeout" || got === "cancelled") {
      const stop = await this.pauseNow(got);
      this.current = stop;
      if (got === "cancelled") throw signal?.reason ?? new DOMException("cancelled", "AbortError");
      return stop;
    }
    this.current = await this.describe(got);
    return this.current;
  }

  /** The locals of a user frame as reprs the tracer would write, and the return values debugpy shows there. */
  async locals(frame: RealFrameInfo, namespace: boolean, objects = 0): Promise<{ locals: Record<string, string>; returns: Record<string, string>; objects?: Objects }> {
    const scopes = (await this.dap.request<DebugProtocol.ScopesResponse["body"]>("scopes", { frameId: frame.id })).scopes;
    const scope = scopes.find((s) => s.presentationHint === "locals") ?? scopes.find((s) => /local/i.test(s.name)) ?? scopes[0];
    const locals: Record<string, string> = {};
    const returns: Record<string, string> = {};
    if (!scope) return { locals, returns };
    const top = await this.variables(scope.variablesReference);
    const vars: DebugProtocol.Variable[] = [];
    for (const v of top) {
      if (GROUPS_SKIPPED.has(v.name)) continue;
      if (GROUPS_EXPANDED.has(v.name) && v.variablesReference) vars.push(...(await this.variables(v.variablesReference)));
      else vars.push(v);
    }
    for (const v of vars) {
      if (v.name.startsWith(RETURN_PREFIX)) {
        const name = v.name.slice(RETURN_PREFIX.length);
        returns[name] = MAYBE_CUT.test(v.value) ? await this.reprOf(`__pydevd_ret_val_dict[${JSON.stringify(name)}]`, frame.id, v.value) : v.value;
        continue;
      }
      if (!IDENTIFIER.test(v.name) || v.name.startsWith(".")) continue;
      if (namespace && ((/^__.*__$/.test(v.name) && !v.value.startsWith("<function ")) || v.value.startsWith("<module "))) continue;
      locals[v.name] = MAYBE_CUT.test(v.value) ? await this.reprOf(v.name, frame.id, v.value) : v.value;
    }
    for (const k of Object.keys(locals)) locals[k] = this.normalize(locals[k]);
    for (const k of Object.keys(returns)) returns[k] = this.normalize(returns[k]);
    if (objects <= 0) return { locals, returns };
    return { locals, returns, objects: await this.objects(vars.filter((v) => v.name in locals), objects) };
  }

  /**
   * What the tracer records as `objects` (Frame.objects), read from debugpy at its stop: each
   * object reached from `roots` with its attributes (debugpy's children, its groups of special,
   * function and class variables aside), builtin lists, tuples and dicts looked into; at most
   * `budget` children, three steps from a local.
   */
  private async objects(roots: readonly DebugProtocol.Variable[], budget: number): Promise<Objects> {
    const out: Objects = {};
    let left = budget;
    const walk = async (path: string, v: DebugProtocol.Variable, depth: number): Promise<void> => {
      if (!v.variablesReference || depth > 3 || left <= 0 || ATOM_TYPES.has(v.type ?? "")) return;
      const kids = (await this.variables(v.variablesReference)).filter((c) => !GROUPS_SKIPPED.has(c.name) && !GROUPS_EXPANDED.has(c.name) && !/^__.*__$/.test(c.name));
      if (LOOKED_INTO.has(v.type ?? "")) {
        // A list's or tuple's items are named 0, 1, ...; a dict's by their key's repr.
        for (const c of kids) if (c.variablesReference && (/^\d+$/.test(c.name) || v.type === "dict") && c.name !== "len()") await walk(`${path}[${c.name}]`, c, depth + 1);
        return;
      }
      const attrs = kids.filter((c) => IDENTIFIER.test(c.name)).slice(0, left);
      if (!attrs.length) return;
      left -= attrs.length;
      out[path] = attrs.map((c) => [c.name, this.normalize(c.value), `${path}.${c.name}`]);
      for (const c of attrs) await walk(`${path}.${c.name}`, c, depth + 1);
    };
    for (const v of roots) await walk(v.name, v, 0);
    return out;
  }

  /**
   * Evaluates an expression in a frame of the real program (compare mode runs the user's code
   * anyway). An expression that raises yields the exception's repr, its type named by `type`.
   */
  async evaluate(expression: string, frameId: number): Promise<string> {
    return (await this.evaluateTyped(expression, frameId)).result;
  }

  private async evaluateTyped(expression: string, frameId: number): Promise<{ result: string; type?: string }> {
    const body = await this.dap.request<DebugProtocol.EvaluateResponse["body"]>("evaluate", { expression, frameId, context: "clipboard" });
    return { result: body.result, type: body.type };
  }

  /** Whether a breakpoint condition holds at the current stop (true when it cannot be evaluated, as debugpy does). */
  async conditionHolds(condition: string, frameId: number): Promise<boolean> {
    try {
      return (await this.evaluate(`bool(${condition})`, frameId)) === "True";
    } catch {
      return true;
    }
  }

  /** Ends the program and debugpy; idempotent. */
  async dispose(): Promise<void> {
    await this.dap.close();
    this.current = { kind: "exit", message: "ended" };
    rmSync(this.dir, { recursive: true, force: true });
  }

  // ---- internals ----

  private async start(signal?: AbortSignal): Promise<void> {
    await this.dap.request("initialize", {
      clientID: "neural-python", adapterID: "python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true,
      supportsVariableType: true, supportsRunInTerminalRequest: false,
    });
    const initialized = this.waitEvent("initialized", 15_000);
    const launched = this.dap.request("launch", {
      name: "real", type: "python", request: "launch", program: this.driver, cwd: this.opts.cwd, python: this.opts.python,
      console: "internalConsole", redirectOutput: true, justMyCode: true, showReturnValue: true, stopOnEntry: false,
      subProcess: false, env: { PYTHONHASHSEED: "0", PYTHONIOENCODING: "utf-8" },
    }, 30_000);
    launched.catch(() => undefined);
    // A launch that fails answers before any "initialized".
    await Promise.race([initialized, launched.then(() => initialized)]);
    await this.dap.request("setBreakpoints", { source: { path: this.driver }, breakpoints: [{ line: this.entryLine }] });
    // Raised exceptions stop where they are raised in user code (the tracer's exception events).
    await this.setExceptionFilters(["raised", "uncaught"]);
    this.stopQueue = [];
    await this.dap.request("configurationDone", {});
    await launched;
    // Until the driver's entry line: the module body runs untraced (exceptions it raises are passed).
    for (let n = 0; ; n++) {
      const got = await this.nextStop((this.opts.timeout + 15) * 1000, signal);
      if (got === "cancelled") throw signal?.reason ?? new DOMException("cancelled", "AbortError");
      if (got === "timeout") throw new Error(`the real program did not reach its entry within ${this.opts.timeout} s (the module's own code may loop or wait)`);
      const stop = await this.describe(got);
      this.current = stop;
      if (stop.kind === "exit") return; // e.g. the module failed to import: the real run is over before it began
      if (stop.inDriver && stop.top?.line === this.entryLine) break;
      if (n > 1000) throw new Error("the real program kept stopping before its entry");
      this.stopQueue = [];
      await this.dap.request("continue", { threadId: this.threadId });
    }
  }

  private onEvent(e: DebugProtocol.Event): void {
    if (e.event === "output") {
      const b = (e as DebugProtocol.OutputEvent).body;
      if (b.category === "stdout") this.out += b.output;
      return;
    }
    if (e.event === "stopped" || e.event === "exited" || e.event === "terminated" || e.event === "ndbg/adapterExited") {
      if (e.event === "exited") this.ended = { ...this.ended, code: (e as DebugProtocol.ExitedEvent).body.exitCode };
      if (e.event === "terminated" || e.event === "ndbg/adapterExited") this.ended = { ...this.ended, message: (e.body as { message?: string } | undefined)?.message };
      this.stopQueue.push(e);
      this.waiter?.();
    }
  }

  private waitEvent(name: string, ms: number): Promise<DebugProtocol.Event> {
    return new Promise((res, rej) => {
      const timer = setTimeout(() => {
        off();
        rej(new Error(`debugpy sent no "${name}" within ${Math.round(ms / 1000)} s${this.dap.stderr ? `: ${this.dap.stderr.trim().split("\n").pop()}` : ""}`));
      }, ms);
      const off = this.dap.onEvent((e) => {
        if (e.event === name) {
          clearTimeout(timer);
          off();
          res(e);
        } else if (e.event === "ndbg/adapterExited") {
          clearTimeout(timer);
          off();
          rej(new Error((e.body as { message: string }).message));
        }
      });
    });
  }

  /** The next stopped event, or the end (exited / terminated, given a moment for the exit code), or why none came. */
  private async nextStop(ms: number, signal?: AbortSignal): Promise<DebugProtocol.Event | "timeout" | "cancelled"> {
    const deadline = Date.now() + ms;
    for (;;) {
      const e = this.stopQueue.shift();
      if (e) {
        if (e.event === "stopped") {
          this.threadId = (e as DebugProtocol.StoppedEvent).body.threadId ?? this.threadId;
          return e;
        }
        // The end: wait briefly for the exit code when the terminated event came first.
        if (this.ended?.code === undefined) await this.waitQueue(300, signal);
        return e;
      }
      if (signal?.aborted) return "cancelled";
      const left = deadline - Date.now();
      if (left <= 0) return "timeout";
      await this.waitQueue(left, signal);
    }
  }

  private waitQueue(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((res) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.waiter = undefined;
        res();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener("abort", done, { once: true });
      this.waiter = done;
    });
  }

  /** Pauses a program that is running on its own; the stop says why. */
  private async pauseNow(why: "timeout" | "cancelled"): Promise<RealStop> {
    try {
      this.stopQueue = [];
      await this.dap.request("pause", { threadId: this.threadId }, 5_000);
      const got = await this.nextStop(5_000);
      if (typeof got === "string") return { kind: "exit", message: "the real program could not be paused" };
      const stop = await this.describe(got);
      return stop.kind === "stop" ? { ...stop, paused: why } : stop;
    } catch (e) {
      return { kind: "exit", message: `the real program could not be paused: ${(e as Error).message}` };
    }
  }

  private async describe(e: DebugProtocol.Event): Promise<RealStop> {
    if (e.event !== "stopped") return { kind: "exit", code: this.ended?.code, message: this.ended?.message };
    const reason = (e as DebugProtocol.StoppedEvent).body.reason;
    const st = await this.dap.request<DebugProtocol.StackTraceResponse["body"]>("stackTrace", { threadId: this.threadId });
    const all = st.stackFrames.map((f) => this.frameInfo(f));
    const frames = all.filter((f): f is RealFrameInfo => f !== undefined && f.path !== this.driver && this.isUser(f.path));
    const topRaw = st.stackFrames[0];
    const top = all[0];
    const inDriver = !!top && top.path === this.driver;
    const foreign = !inDriver && (!top || !this.isUser(top.path));
    const stop: RealStop = { kind: "stop", reason, frames, top, inDriver, foreign };
    if (reason === "exception" && topRaw) {
      let unhandled = false;
      try {
        const info = await this.dap.request<DebugProtocol.ExceptionInfoResponse["body"]>("exceptionInfo", { threadId: this.threadId });
        unhandled = info.breakMode === "unhandled";
      } catch {
        // keep going without it
      }
      let repr: string | undefined;
      try {
        repr = this.normalize(unquote(await this.evaluate("repr(__exception__[1])", topRaw.id)));
      } catch {
        // not readable here
      }
      stop.exception = { repr, unhandled };
    }
    return stop;
  }

  private frameInfo(f: DebugProtocol.StackFrame): RealFrameInfo | undefined {
    const path = f.source?.path;
    if (!path) return undefined;
    const real = realOrResolved(path);
    const info: RealFrameInfo = { id: f.id, name: f.name, line: f.line, path: real };
    if (real !== this.mainReal && real !== this.driver && this.isUser(real)) info.file = relative(this.mainDir, real).split(sep).join("/");
    return info;
  }

  /** Files the tracer traces: the program and .py files under its folder outside installed packages. */
  private isUser(path: string): boolean {
    if (path === this.mainReal) return true;
    if (path === this.driver || extname(path) !== ".py" || !under(path, this.mainDir)) return false;
    return !/[\\/](site|dist)-packages[\\/]/.test(path);
  }

  private async variables(ref: number): Promise<DebugProtocol.Variable[]> {
    return (await this.dap.request<DebugProtocol.VariablesResponse["body"]>("variables", { variablesReference: ref })).variables;
  }

  /**
   * The exact repr of an expression in a frame: debugpy's display shortens long values, and
   * shows a default `<C object at 0x…>` where repr() raises (the tracer writes "<repr failed: E>").
   */
  private async reprOf(expression: string, frameId: number, shown: string): Promise<string> {
    try {
      const r = await this.evaluateTyped(`repr(${expression})`, frameId);
      if (r.type && r.type !== "str") return `<repr failed: ${r.type}>`;
      return unquote(r.result);
    } catch {
      return shown;
    }
  }

  /** Addresses and long reprs as the tracer writes them. */
  private normalize(repr: string): string {
    let r = repr.replace(ADDRESS, " at 0x...");
    const max = this.opts.maxRepr;
    const chars = Array.from(r);
    if (max > 0 && chars.length > max) r = `${chars.slice(0, max).join("")}…(+${chars.length - max} chars)`;
    return r;
  }
}

const IDENTIFIER = /^[\p{ID_Start}_][\p{ID_Continue}]*$/u;

/** A Python str literal (as an evaluate result shows a str) read back into its text. */
function unquote(literal: string): string {
  const v = parseLiteral(literal);
  if (v.t !== "str") throw new Error(`not a string: ${literal.slice(0, 40)}`);
  return v.v;
}

function realOrResolved(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return resolve(p);
  }
}

const pythonEnv = (): NodeJS.ProcessEnv => ({ ...process.env, PYTHONHASHSEED: "0", PYTHONIOENCODING: "utf-8" });

/**
 * The generated driver: sets the program up as the tracer does, then runs the traced code on
 * one line (the entry line), where the first stop is made.
 */
export function driverScript(opts: Pick<DebugpyOptions, "program" | "call" | "cwd">): { text: string; entryLine: number } {
  const lit = (s: string): string => JSON.stringify(s);
  const program = resolve(opts.program);
  const name = basename(program).replace(/\.py$/i, "") || "program";
  const lines = [
    "# Generated by the neural Python debugger (compare mode): runs the program under debugpy as the tracer runs it.",
    "import os as _os, sys as _sys",
    "_fd = _os.open(_os.devnull, _os.O_RDONLY)",
    "_os.dup2(_fd, 0)",
    "_os.close(_fd)",
    '_sys.stdin = open(_os.devnull, encoding="utf-8")',
    `_sys.path.insert(0, ${lit(dirname(program))})`,
    `_sys.argv = [${lit(program)}]`,
    `_os.chdir(${lit(opts.cwd)})`,
  ];
  if (opts.call !== undefined) {
    lines.push(
      "import importlib.util as _util",
      `_spec = _util.spec_from_file_location(${lit(name)}, ${lit(program)})`,
      "_mod = _util.module_from_spec(_spec)",
      `_sys.modules[${lit(name)}] = _mod`,
      "_spec.loader.exec_module(_mod)",
      'globals().update({_k: _v for _k, _v in vars(_mod).items() if not _k.startswith("__")})',
      `__ndbg_result = (${opts.call.replace(/\r\n?/g, "\n")})`,
    );
  } else {
    lines.push("import runpy as _runpy", `_runpy.run_path(${lit(program)}, run_name="__main__")`);
  }
  // The entry statement is the last one (a call may span lines).
  const entryLine = lines.slice(0, -1).join("\n").split("\n").length + 1;
  return { text: lines.join("\n") + "\n", entryLine };
}
