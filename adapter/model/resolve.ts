// Which GGUF file a session uses: a path, a URI node-llama-cpp resolves (hf:owner/repo:quant,
// https://...) downloaded once into a cache directory, or by default the model bundled in models/.
import { existsSync, readdirSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ModelFileError } from "./gguf.js";
import { cacheRoot } from "../system/paths.js";

export interface ResolveOptions {
  /** Where downloaded models are kept (default: models/ in cacheRoot(), or $NDBG_MODEL_CACHE). */
  cacheDir?: string;
  /** Relative paths are resolved against this directory (default: the working directory). */
  cwd?: string;
  onProgress?: (p: { downloadedBytes: number; totalBytes: number }) => void;
  signal?: AbortSignal;
  /** A download that has sent no byte after this long fails (default CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** A download that sends no new byte for this long fails (default IDLE_TIMEOUT_MS). */
  idleTimeoutMs?: number;
}

/**
 * A host that refuses or never answers makes node-llama-cpp's downloader retry for minutes, and
 * it does not stop when its signal is aborted: a URL is first asked for its first byte here
 * (failing within the connect timeout), and the launch waits at most the idle timeout between
 * bytes of the download itself.
 */
export const CONNECT_TIMEOUT_MS = 30_000;
export const IDLE_TIMEOUT_MS = 60_000;

export const isUri = (s: string): boolean => /^(hf:|huggingface:|https?:\/\/)/i.test(s);

export function defaultCacheDir(): string {
  return process.env.NDBG_MODEL_CACHE || join(cacheRoot(), "models");
}

/** Directories that may hold the bundled model: models/ beside the bundle (dist/..) or the repository. */
export function bundledModelDirs(): string[] {
  const out: string[] = [];
  if (process.env.NDBG_MODELS_DIR) out.push(process.env.NDBG_MODELS_DIR);
  try {
    const here = dirname(fileURLToPath(import.meta.url));
    out.push(join(here, "..", "models"), join(here, "..", "..", "models"));
  } catch {
    // not an ES module file (bundled as CommonJS): the working directory must do
  }
  out.push(join(process.cwd(), "models"));
  return [...new Set(out.map((d) => resolve(d)))];
}

/** The bundled model: the first .gguf in a models/ directory (default.gguf preferred). */
export function bundledModel(): string | undefined {
  for (const dir of bundledModelDirs()) {
    if (!existsSync(dir)) continue;
    const ggufs = readdirSync(dir).filter((f) => f.endsWith(".gguf")).sort();
    if (!ggufs.length) continue;
    return join(dir, ggufs.includes("default.gguf") ? "default.gguf" : ggufs[0]);
  }
  return undefined;
}

/** A local path to a GGUF file for a model setting (empty: the bundled model). */
export async function resolveModel(spec: string | undefined, opts: ResolveOptions = {}): Promise<string> {
  const s = (spec ?? "").trim();
  if (!s) {
    const b = bundledModel();
    if (!b) throw new ModelFileError(`no model given and none is bundled (looked for *.gguf in ${bundledModelDirs().join(", ")}); set "model" to a GGUF path or URI`, "");
    return b;
  }
  if (!isUri(s)) {
    const p = isAbsolute(s) ? s : resolve(opts.cwd ?? process.cwd(), s);
    if (!existsSync(p)) throw new ModelFileError(`model file not found: ${p}`, p);
    return p;
  }
  const { resolveModelFile } = await import("node-llama-cpp");
  const dir = opts.cacheDir ?? defaultCacheDir();
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(opts.signal?.reason);
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const connectMs = opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const watch = watchdog(connectMs, opts.idleTimeoutMs ?? IDLE_TIMEOUT_MS, opts.signal);
  try {
    if (/^https?:/i.test(s)) await Promise.race([reachable(s, connectMs, stop.signal), watch.failed]);
    return await Promise.race([
      resolveModelFile(s, {
        directory: dir,
        cli: false,
        signal: stop.signal,
        onProgress: ({ totalSize, downloadedSize }) => {
          watch.progress(downloadedSize);
          opts.onProgress?.({ downloadedBytes: downloadedSize, totalBytes: totalSize });
        },
      }),
      watch.failed,
    ]);
  } catch (e) {
    const why = (e as Error).message ?? String(e);
    throw new ModelFileError(`the model ${s} could not be fetched into ${dir}: ${why}. Download it on a machine with network access and set "model" to the file's path.`, s);
  } finally {
    watch.end();
    stop.abort();
    opts.signal?.removeEventListener("abort", onAbort);
  }
}

/** Resolves once `url` answers a request for its first byte; rejects within `ms` when it does not. */
async function reachable(url: string, ms: number, signal: AbortSignal): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { range: "bytes=0-0" }, signal: AbortSignal.any([signal, AbortSignal.timeout(ms)]) });
  } catch (e) {
    if (signal.aborted) throw new Error("the launch was cancelled");
    if ((e as Error).name === "TimeoutError") throw new Error(`no data after ${ms / 1000} s (the host refuses or does not answer)`);
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`the host cannot be reached (${cause?.code ?? cause?.message ?? (e as Error).message})`);
  }
  await res.body?.cancel().catch(() => undefined);
  if (!res.ok) throw new Error(`the host answers ${res.status} ${res.statusText}`.trim());
}

/** Rejects `failed` when no byte came within `connectMs`, none for `idleMs` since the last, or `signal` aborts. */
function watchdog(connectMs: number, idleMs: number, signal?: AbortSignal): { failed: Promise<never>; progress(bytes: number): void; end(): void } {
  let bytes = -1;
  let timer: NodeJS.Timeout | undefined;
  let fail: (e: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined); // a watchdog that fires after the download settled is not an error
  const arm = (ms: number, why: string): void => {
    clearTimeout(timer);
    timer = setTimeout(() => fail(new Error(why)), ms);
  };
  const onAbort = (): void => fail(new Error("the launch was cancelled"));
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) onAbort();
  arm(connectMs, `no data after ${connectMs / 1000} s (the host refuses or does not answer)`);
  return {
    failed,
    progress(n) {
      if (n > bytes) {
        bytes = n;
        arm(idleMs, `no data for ${idleMs / 1000} s after ${n} bytes`);
      }
    },
    end() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}
