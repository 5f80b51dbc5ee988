// Which GGUF file a session uses: a path, a URI node-llama-cpp resolves (hf:owner/repo:quant,
// https://...) downloaded once into a cache directory, or by default the model bundled in models/.
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ModelFileError } from "./gguf.js";

export interface ResolveOptions {
  /** Where downloaded models are kept (default: models/ in cacheRoot(), or $NDBG_MODEL_CACHE). */
  cacheDir?: string;
  /** Relative paths are resolved against this directory (default: the working directory). */
  cwd?: string;
  onProgress?: (p: { downloadedBytes: number; totalBytes: number }) => void;
  signal?: AbortSignal;
}

export const isUri = (s: string): boolean => /^(hf:|huggingface:|https?:\/\/)/i.test(s);

/** The user's cache folder for ndbg: $XDG_CACHE_HOME/ndbg, else ~/.cache/ndbg. */
export function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "ndbg");
}

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
  try {
    return await resolveModelFile(s, {
      directory: dir,
      cli: false,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onProgress ? { onProgress: ({ totalSize, downloadedSize }) => opts.onProgress!({ downloadedBytes: downloadedSize, totalBytes: totalSize }) } : {}),
    });
  } catch (e) {
    const why = (e as Error).message ?? String(e);
    throw new ModelFileError(`the model ${s} could not be fetched into ${dir}: ${why}. Download it on a machine with network access and set "model" to the file's path.`, s);
  }
}
