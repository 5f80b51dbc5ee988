// The model runtime: one loaded model per file, shared by every session (models are large;
// sessions only hold a context sequence each). Its weights live in the inference host, a child
// process (remote.ts, host.ts) that may die without taking the adapter; the adapter keeps a
// vocabulary-only copy on the CPU binding to tokenize, build grammars and read answers.
// node-llama-cpp is imported lazily, so modes that need no model never load it.
import { availableParallelism } from "node:os";
import { realpath, stat } from "node:fs/promises";
import type { Llama, LlamaModel } from "node-llama-cpp";
import { checkModelFile, ModelFileError, type ModelFileInfo } from "./gguf.js";
import { chooseBackend, type Backend, type BackendChoice } from "./probe.js";
import { HostEndedError, inferenceHost, stopInferenceHost, type Placement } from "./remote.js";
import { llamaBinding } from "../system/platforms.js";

export type GpuSetting = "auto" | "cuda" | "metal" | "vulkan" | "cpu";
export const GPU_SETTINGS: readonly GpuSetting[] = ["auto", "cuda", "metal", "vulkan", "cpu"];

export class BackendError extends Error {}

export interface BackendOptions {
  gpu?: GpuSetting;
  /** Where llama.cpp's own messages go (never stdout: the adapter speaks DAP there). */
  log?: (message: string) => void;
}

/** Where the inference host runs a model: the fields that change when it falls back to another backend. */
interface Placed {
  /** The backend the inference host runs it on. */
  backend: Backend;
  /** Bytes of its weights. */
  size: number;
  /** Where it runs: "cpu", "cuda", "metal" or "vulkan". */
  device: string;
  /** GPU names, when it runs on one. */
  gpuNames: string[];
  loadMs: number;
  /** The backends passed over for this one, each with why (their probe's error line, or how they failed later). */
  skipped: BackendChoice["skipped"];
}

/** A model, shared by the sessions that use it; when the host sets its backend aside, `fallBack` moves it (Placed's fields change). */
export interface LoadedModel extends Placed, Placement {
  path: string;
  /** The adapter's CPU binding and the model's vocabulary on it (tokens, grammars); no weights. */
  llama: Llama;
  model: LlamaModel;
  info: ModelFileInfo;
  /** Placed's, changed by fallBack (Placement's is read-only to the sessions). */
  backend: Backend;
}

let logSink: ((message: string) => void) | undefined;
const llamas = new Map<string, Promise<Llama>>();
const models = new Map<string, Promise<LoadedModel>>();

export function defaultThreads(): number {
  return Math.max(1, availableParallelism());
}

/**
 * Below this size a token's arithmetic takes well under a millisecond on one core, less than
 * llama.cpp's threads spend meeting at each layer's barrier: one thread is faster (measured with
 * the bundled 2.8 MB model on 2 cores: see `ndbg bench`).
 */
const ONE_THREAD_BYTES = 32 * 1024 * 1024;

/** CPU threads when none are set: one for a small model on the CPU, else the machine's. */
export function threadsForSize(device: string, modelBytes: number): number {
  return device === "cpu" && modelBytes < ONE_THREAD_BYTES ? 1 : defaultThreads();
}

/** CPU threads for a session with this model when none are set. */
export function threadsFor(lm: LoadedModel): number {
  return threadsForSize(lm.device, lm.size);
}

/**
 * The llama.cpp binding for a backend (one that passed its probe: see loadModel); prebuilt
 * binaries only (never a build from source). It may use every core; each session's context says how many threads it uses.
 */
export async function getBackend({ gpu: backend, direct = false }: { gpu: Backend; direct?: boolean }): Promise<Llama> {
  let p = llamas.get(backend);
  if (!p) {
    p = (async () => {
      const nlc = await import("node-llama-cpp");
      const { gpu } = llamaBinding(backend);
      let llama: Llama;
      try {
        llama = await nlc.getLlama({
          build: "never",
          gpu,
          maxThreads: defaultThreads(),
          // direct: llama.cpp writes its log itself (the inference host: an abort's reason must not wait for this thread).
          ...(direct
            ? { debug: true }
            : { logLevel: nlc.LlamaLogLevel.warn, logger: (level: string, message: string) => logSink?.(`[llama.cpp ${level}] ${message.trimEnd()}`) }),
          progressLogs: false,
        });
      } catch (e) {
        throw new BackendError(`llama.cpp could not start on ${backend}: ${(e as Error).message}`);
      }
      if (llama.gpu !== gpu) throw new BackendError(`llama.cpp has no ${backend} build here (node-llama-cpp offers ${llama.gpu === false ? "cpu" : llama.gpu})`);
      return llama;
    })();
    llamas.set(backend, p);
    p.catch(() => llamas.delete(backend));
  }
  return p;
}

/**
 * Loads a GGUF model once per process (per file and GPU setting); later calls share it. The
 * header is checked first: llama.cpp aborts the process on some malformed files. The inference
 * host loads the weights first (a GPU that fails there, even by ending the host, falls back to
 * the next backend: see place), then the adapter the vocabulary.
 */
export async function loadModel(path: string, opts: BackendOptions = {}): Promise<LoadedModel> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new ModelFileError(`model file not found: ${path}`, path);
  }
  const st = await stat(real);
  const gpu = opts.gpu ?? "auto";
  if (!GPU_SETTINGS.includes(gpu)) throw new BackendError(`unknown gpu setting "${gpu}" (use ${GPU_SETTINGS.join(", ")})`);
  if (opts.log) logSink = opts.log;
  const host = inferenceHost(opts.log);
  // A session that starts tries the CPU again where the host was given up on (remote.ts's HostStoppedError).
  host.retry();
  host.start();
  const key = `${real}|${st.size}|${st.mtimeMs}|${gpu}`;
  let p = models.get(key);
  if (!p) {
    p = (async () => {
      const info = await checkModelFile(real);
      // The adapter's binding starts while the host loads the weights.
      const binding = getBackend({ gpu: "cpu" });
      binding.catch(() => undefined); // awaited below, after the weights (whose error comes first)
      const placed = await place(path, real, gpu, opts.log);
      // Only a model the host loaded is read here: one that makes llama.cpp abort has ended the host, not the adapter.
      const llama = await binding;
      let model: LlamaModel;
      try {
        model = await llama.loadModel({ modelPath: real, vocabOnly: true });
      } catch (e) {
        throw new ModelFileError(`${path} could not be loaded: ${(e as Error).message}`, path);
      }
      let moving: Promise<void> | undefined;
      const lm: LoadedModel = {
        path: real,
        llama,
        model,
        info,
        ...placed,
        // Sessions that find the backend set aside at once share one move.
        fallBack: () => (moving ??= place(path, real, gpu, opts.log).then((next) => void Object.assign(lm, next)).finally(() => (moving = undefined))),
      };
      return lm;
    })();
    models.set(key, p);
    p.catch(() => models.delete(key));
  }
  return p;
}

/**
 * Chooses the backend for a model (chooseBackend: the fallback order, and the verdicts, which
 * pass over a backend set aside after crashes) and loads the weights there in the inference
 * host. A backend whose load fails, even by ending the host, is passed over for the next: a GPU's
 * verdict may come from another model, which fit in its memory.
 */
async function place(path: string, real: string, gpu: GpuSetting, log?: (message: string) => void): Promise<Placed> {
  const avoid: BackendChoice["skipped"] = [];
  for (;;) {
    const choice = await chooseBackend(gpu, real, { avoid, ...(log ? { log: (m: string) => log(`backend probe: ${m}`) } : {}) }).catch((e: Error) => {
      throw new BackendError(e.message);
    });
    try {
      const { size, device, gpuNames, loadMs } = await inferenceHost().load(real, choice.backend);
      return { backend: choice.backend, size, device, gpuNames, loadMs, skipped: choice.skipped };
    } catch (e) {
      const why = e instanceof HostEndedError ? `the inference process ended while loading it: ${e.why}` : (e as Error).message;
      if (choice.backend === "cpu") throw new ModelFileError(`${path} could not be loaded: ${why}`, path);
      avoid.push({ backend: choice.backend, reason: `the model could not be loaded there: ${why}` });
    }
  }
}

/** A model's vocabulary, without weights, on the adapter's CPU binding: what the dialects tokenize with and build grammars for. */
export interface Vocabulary {
  llama: Llama;
  model: LlamaModel;
}

const vocabularies = new Map<string, Promise<Vocabulary & { info: ModelFileInfo }>>();

/** The vocabulary of a GGUF file and what its header says (a served model's: served.ts); loaded once per file. */
export function loadVocabulary(path: string): Promise<Vocabulary & { info: ModelFileInfo }> {
  let p = vocabularies.get(path);
  if (!p) {
    p = (async () => {
      const info = await checkModelFile(path);
      const llama = await getBackend({ gpu: "cpu" });
      try {
        return { llama, model: await llama.loadModel({ modelPath: path, vocabOnly: true }), info };
      } catch (e) {
        throw new ModelFileError(`${path} could not be loaded: ${(e as Error).message}`, path);
      }
    })();
    vocabularies.set(path, p);
    p.catch(() => vocabularies.delete(path));
  }
  return p;
}

/** Unloads every model and binding and ends the inference host (end of a CLI run, tests). */
export async function disposeAll(): Promise<void> {
  stopInferenceHost();
  const ms = [...models.values(), ...vocabularies.values()];
  models.clear();
  vocabularies.clear();
  for (const p of ms) {
    const m = await p.catch(() => undefined);
    if (m && !m.model.disposed) await m.model.dispose();
  }
  const ls = [...llamas.values()];
  llamas.clear();
  for (const p of ls) {
    const l = await p.catch(() => undefined);
    if (l && !l.disposed) await l.dispose();
  }
}
