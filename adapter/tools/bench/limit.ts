// The physical limit of a step: generating one token reads every weight once (the embedding
// table only one row, unless it doubles as the output matrix) plus the KV cache so far, so a
// frame of T tokens cannot take less than T x bytes / memory bandwidth. Bandwidth is measured
// here with a large array copy (memcpy) in this process: read + written bytes per second.
import { readGgufHeader, tensorBytes } from "../../model/gguf.js";

export interface WeightsRead {
  /** Bytes of weights read to generate one token. */
  perToken: number;
  /** All tensor bytes in the file. */
  total: number;
  /** Bytes the KV cache adds per token already in the context (f16 keys and values). */
  kvPerContextToken: number;
  params: number;
}

/** Reads the tensor table of a GGUF file and sums what one decoded token reads. */
export async function weightsRead(path: string): Promise<WeightsRead> {
  const h = await readGgufHeader(path);
  const arch = String(h.metadata.get("general.architecture") ?? "llama");
  const num = (k: string): number | undefined => {
    const v = h.metadata.get(`${arch}.${k}`);
    return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : undefined;
  };
  const hasOutput = h.tensors.some((t) => t.name === "output.weight");
  let perToken = 0;
  let total = 0;
  let params = 0;
  for (const t of h.tensors) {
    const bytes = tensorBytes(t);
    if (bytes === undefined) throw new Error(`${path}: tensor ${t.name} has a type (${t.type}) whose size is not known`);
    total += bytes;
    const n = t.dims.reduce((a, d) => a * d, 1);
    params += n;
    // A lookup reads one row of the embedding table; a tied table is read whole by the output projection.
    if (t.name === "token_embd.weight" && hasOutput) perToken += bytes / (t.dims[1] ?? 1);
    else perToken += bytes;
  }
  const layers = num("block_count") ?? 0;
  const embd = num("embedding_length") ?? 0;
  const heads = num("attention.head_count") ?? 1;
  const kvHeads = num("attention.head_count_kv") ?? heads;
  const kvPerContextToken = 2 * layers * kvHeads * (embd / heads) * 2;
  return { perToken: Math.round(perToken), total, kvPerContextToken, params };
}

export interface Bandwidth {
  /** Read + written bytes per second copying `bytes` (best of the repeats). */
  bytesPerSecond: number;
  bytes: number;
}

/**
 * Copy bandwidth of one thread over a buffer of `bytes` (large: main memory; the size of a
 * small model: what its caches give). Repeats until about `ms` have passed; the best run counts.
 */
export function copyBandwidth(bytes: number, ms = 400): Bandwidth {
  const n = Math.max(1, Math.floor(bytes / 8));
  const src = new Float64Array(n);
  const dst = new Float64Array(n);
  for (let i = 0; i < n; i += 512) src[i] = i; // touch every page before timing
  dst.set(src);
  let best = Infinity;
  const until = performance.now() + ms;
  let runs = 0;
  // Small buffers are copied many times per timing, so the clock's resolution does not matter.
  const inner = Math.max(1, Math.floor((64 << 20) / (n * 8)));
  do {
    const t0 = performance.now();
    for (let k = 0; k < inner; k++) dst.set(src);
    const dt = (performance.now() - t0) / inner;
    best = Math.min(best, dt);
    runs++;
  } while (performance.now() < until || runs < 3);
  return { bytesPerSecond: (2 * n * 8) / (best / 1000), bytes: n * 8 };
}
