// Probe before use: a llama.cpp backend serves a session only after a throwaway child process has
// loaded the model on it and decoded a few tokens. A GPU binary can load and then abort the whole
// process at its first decode (a CUDA build newer than the driver does), so no check inside the
// adapter's own process can tell; a child that dies tells without taking the adapter with it.
// Verdicts are cached per (backend binary, driver, device) in the user's cache folder, so a
// machine pays for each probe once; `ndbg doctor` probes afresh and rewrites them.
import { spawn, execFile } from "node:child_process";
import { cpus } from "node:os";
import { mkdir, readFile, readdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot } from "../system/paths.js";
import { llamaBinding } from "../system/platforms.js";

export type Backend = "cuda" | "vulkan" | "metal" | "cpu";
/** The order `gpu: "auto"` tries them in; the CPU always comes last. */
export const BACKENDS: readonly Backend[] = ["cuda", "vulkan", "metal", "cpu"];

export interface ProbeTiming {
  promptTokens: number;
  /** Prompt tokens per second (evaluated in one batch). */
  promptTokensPerSecond: number;
  generatedTokens: number;
  msPerToken: number;
}

export interface Verdict {
  backend: Backend;
  ok: boolean;
  /** Why it failed: the probe's own error line. */
  reason?: string;
  /** GPU names the backend saw. */
  devices?: string[];
  timing?: ProbeTiming;
  /** The model the probe ran. */
  model: string;
  /** When it was probed (ISO time). */
  at: string;
  /** Read from the cache rather than probed now. */
  cached?: boolean;
  /** Given by sessions, not a probe: it passed its probe, then crashed the inference process again and again (setAside). */
  served?: boolean;
}

export interface ProbeOptions {
  /** CPU threads the probe decodes with (default 1: a probe checks, it does not race). */
  threads?: number;
  /** Tokens to generate (default PROBE_TOKENS). */
  tokens?: number;
  /** Default: $NDBG_PROBE_TIMEOUT seconds, else PROBE_TIMEOUT_MS. */
  timeoutMs?: number;
}

export const PROBE_TOKENS = 16;
/** Loading a large model and compiling GPU pipelines (5.7 s measured for Vulkan) both fit well inside this. */
export const PROBE_TIMEOUT_MS = 120_000;

/** Starts the stderr line that marks each report. */
export const MARK = "[ndbg probe] ";

/** The child's report lines on stdout. */
type Report =
  | { stage: "binary"; devices: string[] }
  | { stage: "model" }
  | { stage: "done"; promptTokens: number; promptMs: number; generated: number; generateMs: number }
  | { stage: "error"; at: "binary" | "model" | "decode"; name: string; message: string };

interface ChildRequest {
  module: string;
  backend: Backend;
  /** What node-llama-cpp is asked for (platforms.ts): the backend's, or the CPU's where a test pretends (binaryOf). */
  binding: ReturnType<typeof llamaBinding>;
  model: string;
  threads: number;
  tokens: number;
  fault?: string;
}

/**
 * The probe child's program, run by the same node from stdin (CommonJS) with its ChildRequest as
 * JSON in $NDBG_PROBE; it imports the node-llama-cpp this module resolves. It is JavaScript as
 * written here, not compiled: a TypeScript function's source text would carry the build's
 * helpers (tsx adds __name calls), which a fresh process does not have. Reports (Report) are
 * JSON lines on stdout; a failure's reason is found in the rest of what it writes (llama.cpp's
 * log, node-llama-cpp's messages) on stdout and stderr.
 */
const CHILD = `
(async () => {
  const req = JSON.parse(process.env.NDBG_PROBE);
  const MARK = ${JSON.stringify(MARK)};
  // Each stage reached is marked on stderr too: a failure's reason is looked for after the last mark.
  const say = (r) => {
    if (r.stage !== "error") process.stderr.write(MARK + r.stage + "\\n");
    return new Promise((done) => process.stdout.write(JSON.stringify(r) + "\\n", done));
  };
  // Faults injected by tests, as the real failures look from outside: an abort, a hang; "cpu"
  // pretends: the CPU binary runs under the backend's name (binaryOf).
  if (req.fault === "abort") {
    process.stderr.write("probe fault injected for " + req.backend + ": simulated error, aborting\\n");
    process.abort();
  }
  if (req.fault === "hang") return setInterval(() => {}, 60000);
  let at = "binary";
  const binding = req.binding;
  try {
    const nlc = await import(req.module);
    // debug: llama.cpp writes its log straight out, flushed at once. Through a logger it arrives
    // later, on this thread, and an abort (a CUDA error) leaves no time for that: the reason would be lost.
    const llama = await nlc.getLlama({ build: "never", gpu: binding.gpu, maxThreads: req.threads, debug: true, progressLogs: false });
    // Where a backend has no binary for the platform at all (Metal on Linux), node-llama-cpp gives another one.
    if (llama.gpu !== binding.gpu) {
      await say({ stage: "error", at, name: "BackendMismatch", message: "no " + req.backend + " build of llama.cpp for " + process.platform + "-" + process.arch + " (node-llama-cpp offers " + (llama.gpu === false ? "cpu" : llama.gpu) + " instead)" });
      process.exit(1);
    }
    await say({ stage: "binary", devices: llama.gpu === false || binding.gpuLayers === 0 ? [] : await llama.getGpuDeviceNames() });
    at = "model";
    const model = await llama.loadModel({ modelPath: req.model, gpuLayers: binding.gpuLayers });
    const context = await model.createContext({ contextSize: 512, sequences: 1, threads: req.threads });
    await say({ stage: "model" });
    at = "decode";
    const prompt = model.tokenize("def total(xs):\\n    s = 0\\n    for x in xs:\\n        s += x\\n    return s\\n\\nprint(total([1, 2, 3]))\\n");
    // The prompt in one batch, then one token at a time as a step generates them (sampling
    // included); generation goes on past an end token, whatever the model makes of this text.
    const sequence = context.getSequence();
    const t0 = performance.now();
    await sequence.evaluateWithoutGeneratingNewTokens(prompt);
    const t1 = performance.now();
    let token = prompt[prompt.length - 1];
    for (let i = 0; i < req.tokens; i++)
      for await (const next of sequence.evaluate([token], { temperature: 0, yieldEogToken: true })) {
        token = next;
        break;
      }
    await say({ stage: "done", promptTokens: prompt.length, promptMs: t1 - t0, generated: req.tokens, generateMs: performance.now() - t1 });
    process.exit(0);
  } catch (e) {
    await say({ stage: "error", at, name: e?.constructor?.name ?? "Error", message: String(e?.message ?? e) });
    process.exit(1);
  }
})();
`;

/** node-llama-cpp's entry, for the child to import (it has no project around it to resolve from). */
function nodeLlamaCppUrl(): string {
  return import.meta.resolve("node-llama-cpp");
}

/**
 * Faults to inject, from $NDBG_PROBE_FAULT ("cuda=abort,vulkan=hang"): tests of the fallback.
 * "BACKEND=cpu" pretends instead: see binaryOf.
 */
function injectedFault(backend: Backend): "abort" | "hang" | "cpu" | undefined {
  for (const part of (process.env.NDBG_PROBE_FAULT ?? "").split(",")) {
    const [b, f] = part.split("=").map((s) => s.trim());
    if (b === backend && (f === "abort" || f === "hang" || f === "cpu")) return f;
  }
  return undefined;
}

/**
 * The llama.cpp binary that runs `backend`: its own, or the CPU's where a test pretends a GPU
 * ($NDBG_PROBE_FAULT "vulkan=cpu"): its probe passes and the inference host runs it, all on the
 * CPU under that name, so that what follows a passed probe (a crash while serving, the fallback)
 * is tested for real on a machine without that GPU.
 */
export function binaryOf(backend: Backend): Backend {
  return injectedFault(backend) === "cpu" ? "cpu" : backend;
}

function timeoutMs(opts: ProbeOptions): number {
  if (opts.timeoutMs) return opts.timeoutMs;
  const env = Number(process.env.NDBG_PROBE_TIMEOUT);
  return Number.isFinite(env) && env > 0 ? env * 1000 : PROBE_TIMEOUT_MS;
}

/** A stack frame, a backtrace line or a banner (Node's native stack, ggml's backtrace): never the reason. */
const FRAME = /^(-{3,}|\d+:\s|at\s|#\d+\s|0x[0-9a-f]+|\S+\(\+?0x[0-9a-f]+\)|\[0x)/i;

/**
 * The line of a child's output that says why it failed: after its last report's mark (llama.cpp
 * logs a whole load before a decode fails), the first that names an error, else the last.
 */
export function reasonLine(output: string): string | undefined {
  const mark = output.lastIndexOf(MARK);
  const tail = mark < 0 ? output : output.slice(output.indexOf("\n", mark) + 1);
  const lines = tail.split("\n").map((l) => l.trim()).filter((l) => l && !FRAME.test(l));
  return lines.find((l) => /error|not compatible|failed/i.test(l)) ?? lines.at(-1);
}

const STAGE_NAMES = { binary: "starting its binary", model: "loading the model", decode: "decoding" } as const;

/** The verdict's reason for an error the child reported (`output`: what else it said). */
function errorReason(backend: Backend, r: Extract<Report, { stage: "error" }>, output: string): string {
  if (r.name === "BackendMismatch") return r.message;
  // llama.cpp's log says what a bare "Failed to load model" was; node-llama-cpp's, which binary it tried and why it did not fit.
  const said = reasonLine(output);
  const why = said ? ` (${said})` : "";
  if (r.name !== "NoBinaryFoundError") return `${STAGE_NAMES[r.at]} failed: ${r.message.split("\n")[0]}${why}`;
  return backend === "cpu"
    ? `no prebuilt llama.cpp binary runs on this machine${why}: install node-llama-cpp's package for it (@node-llama-cpp/${process.platform}-${process.arch})`
    : `no usable ${backend} binary here: node-llama-cpp finds no ${backend} device and driver it can run on, or no ${backend} binary for ${process.platform}-${process.arch}${why}`;
}

/**
 * Runs one probe: a child process loads `model` on `backend` and decodes a few tokens. Never
 * throws for the backend's faults: a crash, a hang past the timeout or an error is a failed
 * verdict with its reason.
 */
export function probeBackend(backend: Backend, model: string, opts: ProbeOptions = {}): Promise<Verdict> {
  const req: ChildRequest = { module: nodeLlamaCppUrl(), backend, binding: llamaBinding(binaryOf(backend)), model, threads: opts.threads ?? 1, tokens: opts.tokens ?? PROBE_TOKENS };
  const fault = injectedFault(backend);
  if (fault) req.fault = fault;
  const limit = timeoutMs(opts);
  const verdict = (v: Omit<Verdict, "backend" | "model" | "at">): Verdict => ({ backend, model, at: new Date().toISOString(), ...v });
  return new Promise((resolve) => {
    // The program goes in on stdin, with no flags: node-llama-cpp forks its binary tests with our
    // execArgv, where an -e would run this program again and --input-type refuses a file.
    const child = spawn(process.execPath, [], {
      stdio: ["pipe", "pipe", "pipe"],
      // The extension host's Electron runs scripts only as Node.
      env: { ...process.env, NDBG_PROBE: JSON.stringify(req), ...(process.versions.electron ? { ELECTRON_RUN_AS_NODE: "1" } : {}) },
    });
    child.stdin.on("error", () => undefined); // a child that dies at once: its exit says why
    child.stdin.end(CHILD);
    let out = "";
    let err = "";
    const reports: Report[] = [];
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      let nl: number;
      while ((nl = out.indexOf("\n")) >= 0) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        try {
          reports.push(JSON.parse(line) as Report);
        } catch {
          // node-llama-cpp's own messages: kept with stderr, where the reason is looked for.
          err = (err + line + "\n").slice(-16_384);
        }
      }
    });
    // Only the tail matters (the reason line); llama.cpp can be talkative.
    child.stderr.setEncoding("utf8").on("data", (d: string) => void (err = (err + d).slice(-16_384)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, limit);
    // A probe never outlives the process that asked for it (a hung one would stay forever).
    const orphan = (): void => void child.kill("SIGKILL");
    process.on("exit", orphan);
    const stage = (): string => {
      const last = reports.at(-1)?.stage;
      return last === "binary" ? STAGE_NAMES.model : last === "model" ? STAGE_NAMES.decode : STAGE_NAMES.binary;
    };
    child.on("error", (e) => {
      clearTimeout(timer);
      process.off("exit", orphan);
      resolve(verdict({ ok: false, reason: `the probe process could not start: ${e.message}` }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      process.off("exit", orphan);
      const devices = reports.find((r): r is Extract<Report, { stage: "binary" }> => r.stage === "binary")?.devices;
      const seen = devices?.length ? { devices } : {};
      const done = reports.find((r): r is Extract<Report, { stage: "done" }> => r.stage === "done");
      const error = reports.find((r): r is Extract<Report, { stage: "error" }> => r.stage === "error");
      if (timedOut) return resolve(verdict({ ok: false, reason: `the probe did not finish within ${Math.round(limit / 1000)} s (stuck ${stage()})`, ...seen }));
      if (done && code === 0)
        return resolve(
          verdict({
            ok: true,
            ...seen,
            timing: {
              promptTokens: done.promptTokens,
              promptTokensPerSecond: done.promptTokens / (Math.max(done.promptMs, 1e-3) / 1000),
              generatedTokens: done.generated,
              msPerToken: done.generateMs / Math.max(1, done.generated),
            },
          }),
        );
      if (error) return resolve(verdict({ ok: false, reason: errorReason(backend, error, err), ...seen }));
      const line = reasonLine(err);
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      resolve(verdict({ ok: false, reason: `the probe process ${how} while ${stage()}${line ? `: ${line}` : ""}`, ...seen }));
    });
  });
}

// ---- what identifies a verdict: the backend's binary, the driver, the device ----

/** GPU devices and driver as the NVIDIA tools report them; none (not an error) where they are absent. */
export interface GpuDevice {
  name: string;
  driver: string;
  memoryMiB?: number;
}

let gpuList: Promise<GpuDevice[]> | undefined;

export function gpuDevices(): Promise<GpuDevice[]> {
  gpuList ??= new Promise((resolve) => {
    execFile("nvidia-smi", ["--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits"], { timeout: 10_000 }, (e, stdout) => {
      if (e) return resolve([]);
      resolve(
        stdout
          .split("\n")
          .map((l) => l.split(",").map((s) => s.trim()))
          .filter((f) => f.length >= 2 && f[0])
          .map(([name, driver, mem]) => ({ name, driver, ...(Number(mem) > 0 ? { memoryMiB: Number(mem) } : {}) })),
      );
    });
  });
  return gpuList;
}

/** The installed node-llama-cpp binaries: their package (`{platform}-{arch}[-gpu[-ext]]`) and its version. */
export interface InstalledBinary {
  name: string;
  version: string;
  llamaCpp?: string;
}

export async function installedBinaries(): Promise<InstalledBinary[]> {
  // node_modules/node-llama-cpp/dist/index.js -> node_modules/@node-llama-cpp/*
  const scope = join(dirname(fileURLToPath(nodeLlamaCppUrl())), "..", "..", "@node-llama-cpp");
  const names = await readdir(scope).catch(() => [] as string[]);
  const out: InstalledBinary[] = [];
  for (const name of names.sort()) {
    const pkg = await readJson(join(scope, name, "package.json"));
    if (!pkg || typeof pkg.version !== "string") continue;
    const bins = await readdir(join(scope, name, "bins")).catch(() => [] as string[]);
    const meta = bins.length ? await readJson(join(scope, name, "bins", bins[0], "_nlcBuildMetadata.json")) : undefined;
    const release = (meta?.buildOptions as { llamaCpp?: { release?: string } } | undefined)?.llamaCpp?.release;
    out.push({ name, version: pkg.version, ...(release ? { llamaCpp: release } : {}) });
  }
  return out;
}

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const v: unknown = JSON.parse(await readFile(path, "utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The cache key: a new binary, driver or device is a new machine as far as a verdict goes. */
export async function verdictKey(backend: Backend): Promise<string> {
  const platform = `${process.platform}-${process.arch}`;
  const bins = await installedBinaries();
  const binary = bins.filter((b) => (backend === "cpu" ? b.name === platform : b.name.startsWith(`${platform}-${backend}`))).map((b) => `${b.name}@${b.version}${b.llamaCpp ? `/${b.llamaCpp}` : ""}`);
  const gpus = backend === "cpu" ? [] : await gpuDevices();
  const driver = gpus.length ? `driver ${[...new Set(gpus.map((g) => g.driver))].join("/")}` : `${process.platform} ${process.version}`;
  const device = backend === "cpu" || !gpus.length ? cpus()[0]?.model ?? "unknown cpu" : gpus.map((g) => g.name).join(" + ");
  return [backend, binary.join(" ") || "no binary", driver, device].join(" | ");
}

// ---- the verdict cache ----

export function verdictFile(): string {
  return join(cacheRoot(), "backends.json");
}

async function readVerdicts(): Promise<Record<string, Verdict>> {
  const v = (await readJson(verdictFile()))?.verdicts;
  return v && typeof v === "object" ? (v as Record<string, Verdict>) : {};
}

/** Writes one verdict: aside, then renamed, so a reader never sees half a file. */
async function saveVerdict(key: string, v: Verdict): Promise<void> {
  const file = verdictFile();
  try {
    await mkdir(dirname(file), { recursive: true });
    const verdicts = { ...(await readVerdicts()), [key]: { ...v, cached: undefined } };
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ version: 1, verdicts }, null, 1) + "\n");
    await rename(tmp, file);
  } catch {
    // An unwritable cache costs a probe next time, nothing more.
  }
}

/**
 * A failure the model caused (a clean load or decode error: a truncated or unreadable file, too
 * little memory for it) says nothing about the backend and is not kept; a crash, a hang or a
 * missing binary is the backend's and is.
 */
function backendsFault(v: Verdict): boolean {
  return v.ok || !/^(loading the model|decoding) failed:/.test(v.reason ?? "");
}

const inflight = new Map<string, Promise<Verdict>>();

/** Failures that sessions of this process gave (setAside): they hold here even where the cache cannot be written. */
const failedServing = new Map<Backend, Verdict>();

/**
 * A backend that passed its probe, then crashed the inference process again and again while
 * serving steps (remote.ts): it fails from now on, with the crash's own last line in its reason,
 * in this process and in the cache, so that the next launch does not choose it either, until its
 * binary, driver or device changes (the cache key) or `ndbg doctor` probes it again.
 */
export async function setAside(backend: Backend, model: string, reason: string): Promise<void> {
  const v: Verdict = { backend, ok: false, reason, model, at: new Date().toISOString(), served: true };
  failedServing.set(backend, v);
  await saveVerdict(await verdictKey(backend), v);
}

/** The verdict for a backend: from the cache, else probed now (once per process at a time) and kept. */
export async function verdictFor(backend: Backend, model: string, opts: ProbeOptions & { fresh?: boolean } = {}): Promise<Verdict> {
  if (opts.fresh) failedServing.delete(backend);
  else if (failedServing.has(backend)) return failedServing.get(backend)!;
  const key = await verdictKey(backend);
  if (!opts.fresh) {
    const hit = (await readVerdicts())[key];
    if (hit && typeof hit.ok === "boolean") return { ...hit, cached: true };
  }
  let p = inflight.get(key);
  if (!p) {
    p = probeBackend(backend, model, opts).then(async (v) => {
      if (backendsFault(v)) await saveVerdict(key, v);
      return v;
    });
    inflight.set(key, p);
    void p.finally(() => inflight.delete(key));
  }
  return p;
}

export interface BackendChoice {
  /** The backend that passed its probe. */
  backend: Backend;
  verdict: Verdict;
  /** The backends tried or passed over before it, each with why. */
  skipped: { backend: Backend; reason: string }[];
}

/** The GPU backends node-llama-cpp finds a device, driver and binary for here (and those a test pretends: binaryOf). */
async function availableGpus(): Promise<Backend[]> {
  const { getLlamaGpuTypes } = await import("node-llama-cpp");
  const types: unknown[] = await getLlamaGpuTypes("supported").catch(() => []);
  return BACKENDS.filter((b) => b !== "cpu" && (types.includes(b) || binaryOf(b) !== b));
}

/**
 * The backend a session uses for a GPU setting: "auto" tries CUDA, Vulkan and Metal where
 * node-llama-cpp finds them, then the CPU; a named backend that fails falls back to the CPU.
 * This is the one fallback order: a backend that fails later (its load, or crashes while serving)
 * is passed over by choosing again. `avoid`: backends passed over with the reason given (a load
 * that failed), unprobed. Throws only when the CPU fails too.
 */
export async function chooseBackend(
  gpu: Backend | "auto",
  model: string,
  opts: ProbeOptions & { log?: (message: string) => void; avoid?: BackendChoice["skipped"] } = {},
): Promise<BackendChoice> {
  const skipped: BackendChoice["skipped"] = [];
  let candidates: Backend[];
  if (gpu === "auto") {
    const available = await availableGpus();
    for (const b of BACKENDS) if (b !== "cpu" && !available.includes(b)) skipped.push({ backend: b, reason: `not available here (no ${b} device, driver or binary found)` });
    candidates = [...available, "cpu"];
  } else candidates = gpu === "cpu" ? ["cpu"] : [gpu, "cpu"];
  for (const backend of candidates) {
    const avoided = opts.avoid?.find((a) => a.backend === backend);
    if (avoided) {
      skipped.push(avoided);
      continue;
    }
    const v = await verdictFor(backend, model, opts);
    const failed = v.served ? "failed while serving" : "failed its probe";
    opts.log?.(`${backend}: ${v.ok ? "passed its probe" : failed}${v.cached ? ` (cached ${v.at})` : ""}${v.reason ? `: ${v.reason}` : ""}`);
    if (v.ok) return { backend, verdict: v, skipped };
    skipped.push({ backend, reason: `${v.served ? "it failed while serving" : "its probe failed"}${v.cached ? ` (cached ${v.at.slice(0, 10)}; ndbg doctor probes again)` : ""}: ${v.reason}` });
  }
  throw new Error(`no llama.cpp backend can run ${model} here: ${skipped.map((s) => `${s.backend}: ${s.reason}`).join("; ")}`);
}
