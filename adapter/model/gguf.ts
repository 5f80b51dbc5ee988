// Reads and checks a GGUF file's header before llama.cpp sees it. llama.cpp aborts the whole
// process (GGML_ASSERT) on some missing keys and on some values (a block count of 0, a head count
// of 0, a NaN epsilon), and gives unclear errors on truncated files; here a missing, truncated or
// malformed file, or a header number out of range, becomes a ModelFileError that names what is wrong.
import { open, stat } from "node:fs/promises";
import { PYTHON_VERSION_RE } from "../format/trajectory.js";

export class ModelFileError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

export type GgufScalar = number | bigint | boolean | string;
/** An array value: its element type and length, and its items when they were kept. */
export interface GgufArray {
  type: number;
  length: number;
  items?: GgufScalar[];
}
export type GgufValue = GgufScalar | GgufArray;

export interface GgufTensor {
  name: string;
  dims: number[];
  type: number;
  offset: bigint;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensor[];
  /** Where tensor data starts. */
  dataOffset: number;
  fileSize: number;
}

const T = { U8: 0, I8: 1, U16: 2, I16: 3, U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9, U64: 10, I64: 11, F64: 12 } as const;
const SCALAR_SIZE: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

// ggml tensor types: [elements per block, bytes per block]. A type not here is refused.
const GGML_BLOCK: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  16: [256, 66], 17: [256, 74], 18: [256, 98], 19: [256, 50], 20: [32, 18], 21: [256, 110], 22: [256, 82],
  23: [256, 136], 24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 29: [256, 56], 30: [1, 2],
  34: [256, 54], 35: [256, 66], 39: [32, 17],
};

/** Arrays whose items are kept (the rest are skipped: a vocabulary can hold 150,000 strings): token types and per-layer numbers. */
const keepItems = (key: string): boolean => key === "tokenizer.ggml.token_type" || PER_LAYER.test(key);
/** Hyperparameters some architectures give per layer, as an array. */
const PER_LAYER = /\.(feed_forward_length|attention\.head_count|attention\.head_count_kv)$/;
/** llama.cpp's GGML_MAX_DIMS: tensors have at most 4 dimensions. */
const MAX_DIMS = 4;
const MAX_STRING = 64 * 1024 * 1024;
const MAX_COUNT = 1 << 28;

/** Buffered little-endian reads from a file handle. */
class Reader {
  private buf = Buffer.alloc(0);
  private bufStart = 0;
  pos = 0;
  constructor(
    private readonly fh: import("node:fs/promises").FileHandle,
    readonly size: number,
    private readonly path: string,
  ) {}

  private async need(n: number): Promise<number> {
    const off = this.pos - this.bufStart;
    if (off >= 0 && off + n <= this.buf.length) return off;
    if (this.pos + n > this.size) throw new ModelFileError(`${this.path} is truncated: its header ends at byte ${this.size} while reading byte ${this.pos + n}`, this.path);
    const len = Math.max(n, 1 << 20);
    const buf = Buffer.alloc(Math.min(len, this.size - this.pos));
    const { bytesRead } = await this.fh.read(buf, 0, buf.length, this.pos);
    if (bytesRead < n) throw new ModelFileError(`${this.path} is truncated while reading its header`, this.path);
    this.buf = buf.subarray(0, bytesRead);
    this.bufStart = this.pos;
    return 0;
  }
  async u32(): Promise<number> {
    const o = await this.need(4);
    this.pos += 4;
    return this.buf.readUInt32LE(o);
  }
  async u64(): Promise<bigint> {
    const o = await this.need(8);
    this.pos += 8;
    return this.buf.readBigUInt64LE(o);
  }
  async count(what: string): Promise<number> {
    const n = await this.u64();
    if (n > BigInt(MAX_COUNT)) throw new ModelFileError(`${this.path} is corrupt: ${what} count ${n} is implausible`, this.path);
    return Number(n);
  }
  async string(): Promise<string> {
    const n = await this.count("string length");
    if (n > MAX_STRING) throw new ModelFileError(`${this.path} is corrupt: a string of ${n} bytes`, this.path);
    const o = await this.need(n);
    this.pos += n;
    return this.buf.toString("utf8", o, o + n);
  }
  async skipString(): Promise<void> {
    const n = await this.count("string length");
    if (this.pos + n > this.size) throw new ModelFileError(`${this.path} is truncated inside its metadata`, this.path);
    this.pos += n;
  }
  async scalar(type: number): Promise<GgufScalar> {
    if (type === T.STRING) return this.string();
    const size = SCALAR_SIZE[type];
    if (size === undefined) throw new ModelFileError(`${this.path} is corrupt: unknown metadata value type ${type}`, this.path);
    const o = await this.need(size);
    this.pos += size;
    const b = this.buf;
    switch (type) {
      case T.U8: return b.readUInt8(o);
      case T.I8: return b.readInt8(o);
      case T.U16: return b.readUInt16LE(o);
      case T.I16: return b.readInt16LE(o);
      case T.U32: return b.readUInt32LE(o);
      case T.I32: return b.readInt32LE(o);
      case T.F32: return b.readFloatLE(o);
      case T.BOOL: return b.readUInt8(o) !== 0;
      case T.U64: return b.readBigUInt64LE(o);
      case T.I64: return b.readBigInt64LE(o);
      default: return b.readDoubleLE(o);
    }
  }
}

/** Reads the header (metadata and tensor table) of a GGUF file; throws ModelFileError on anything wrong. */
export async function readGgufHeader(path: string): Promise<GgufHeader> {
  let size: number;
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new ModelFileError(`${path} is not a file`, path);
    size = st.size;
  } catch (e) {
    if (e instanceof ModelFileError) throw e;
    throw new ModelFileError(`model file not found: ${path}`, path);
  }
  const fh = await open(path, "r");
  try {
    const r = new Reader(fh, size, path);
    if (size < 24) throw new ModelFileError(`${path} is not a GGUF model (${size} bytes)`, path);
    const magic = Buffer.alloc(4);
    await fh.read(magic, 0, 4, 0);
    if (magic.toString("latin1") !== "GGUF") throw new ModelFileError(`${path} is not a GGUF model (it starts with ${JSON.stringify(magic.toString("latin1"))}, not "GGUF")`, path);
    r.pos = 4;
    const version = await r.u32();
    if (version !== 2 && version !== 3) throw new ModelFileError(`${path} has GGUF version ${version}; versions 2 and 3 are supported`, path);
    const tensorCount = await r.count("tensor");
    const kvCount = await r.count("metadata");
    const metadata = new Map<string, GgufValue>();
    for (let i = 0; i < kvCount; i++) {
      const key = await r.string();
      const type = await r.u32();
      if (type === T.ARRAY) {
        const et = await r.u32();
        const n = await r.count("array");
        const keep = keepItems(key) || n <= 16;
        const items: GgufScalar[] = [];
        if (et === T.ARRAY) throw new ModelFileError(`${path}: nested arrays in metadata key ${key} are not supported`, path);
        for (let j = 0; j < n; j++) {
          if (!keep && et === T.STRING) await r.skipString();
          else if (!keep) {
            const s = SCALAR_SIZE[et];
            if (s === undefined) throw new ModelFileError(`${path} is corrupt: unknown array type ${et} in ${key}`, path);
            r.pos += s * (n - j);
            if (r.pos > size) throw new ModelFileError(`${path} is truncated inside its metadata`, path);
            break;
          } else items.push(await r.scalar(et));
        }
        metadata.set(key, keep ? { type: et, length: n, items } : { type: et, length: n });
      } else metadata.set(key, await r.scalar(type));
    }
    const tensors: GgufTensor[] = [];
    for (let i = 0; i < tensorCount; i++) {
      const name = await r.string();
      const nd = await r.u32();
      if (nd < 1 || nd > MAX_DIMS) throw new ModelFileError(`${path} is corrupt: tensor ${name} has ${nd} dimensions (1 to ${MAX_DIMS})`, path);
      const dims: number[] = [];
      for (let d = 0; d < nd; d++) dims.push(Number(await r.u64()));
      const type = await r.u32();
      const offset = await r.u64();
      tensors.push({ name, dims, type, offset });
    }
    const align = alignment(metadata.get("general.alignment"), path);
    const dataOffset = Math.ceil(r.pos / align) * align;
    const header = { version, metadata, tensors, dataOffset, fileSize: size };
    checkTensorTable(header, align, path);
    return header;
  } finally {
    await fh.close();
  }
}

/** The data alignment: general.alignment when given, a power of two (llama.cpp's default 32 otherwise). */
function alignment(v: GgufValue | undefined, path: string): number {
  if (v === undefined) return 32;
  const n = typeof v === "number" || typeof v === "bigint" ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 1 << 20 || (n & (n - 1)) !== 0)
    throw new ModelFileError(`${path} is corrupt: general.alignment is ${show(v)}; it must be a power of two`, path);
  return n;
}

/** Each tensor: a unique name, a known type, dimensions that fit, data aligned, in table order without overlap, inside the file. */
function checkTensorTable(h: GgufHeader, align: number, path: string): void {
  const bad = (why: string): never => {
    throw new ModelFileError(`${path} is corrupt: ${why}`, path);
  };
  const seen = new Set<string>();
  const pad = BigInt(align);
  let next = 0n;
  for (const t of h.tensors) {
    if (seen.has(t.name)) bad(`tensor ${t.name} appears twice`);
    seen.add(t.name);
    const block = GGML_BLOCK[t.type];
    if (!block) bad(`tensor ${t.name} has unknown type ${t.type}`);
    if (t.dims.some((d) => d < 1) || t.dims.reduce((a, d) => a * d, 1) > Number.MAX_SAFE_INTEGER) bad(`tensor ${t.name} has shape [${t.dims.join(", ")}]`);
    if (t.dims[0] % block[0] !== 0) bad(`tensor ${t.name}'s first dimension ${t.dims[0]} is not a multiple of its type's block of ${block[0]}`);
    if (t.offset % pad !== 0n) bad(`tensor ${t.name}'s data offset ${t.offset} is not a multiple of the alignment ${align}`);
    // As llama.cpp requires: each tensor's data right after the one before it (its size rounded up to the alignment).
    if (t.offset !== next) bad(`tensor ${t.name}'s data offset is ${t.offset}; after the tensors before it, it must be ${next}`);
    const bytes = BigInt(tensorBytes(t)!);
    next += ((bytes + pad - 1n) / pad) * pad;
    // llama.cpp maps the file and asserts that each tensor's data starts on a 32-byte boundary.
    const start = BigInt(h.dataOffset) + t.offset;
    if (start % 32n !== 0n) bad(`tensor ${t.name}'s data starts at byte ${start}, not on a 32-byte boundary (general.alignment is ${align})`);
    const end = start + bytes;
    if (end > BigInt(h.fileSize)) throw new ModelFileError(`${path} is truncated: tensor ${t.name} needs ${end} bytes, the file has ${h.fileSize}`, path);
  }
}

const show = (v: GgufValue | undefined): string =>
  v === undefined ? "missing" : typeof v === "object" ? `an array of ${v.length}` : typeof v === "string" ? JSON.stringify(v) : String(v);

/** Bytes of a tensor's data, or undefined for a type this reader does not know. */
export function tensorBytes(t: GgufTensor): number | undefined {
  const b = GGML_BLOCK[t.type];
  if (!b) return undefined;
  const n = t.dims.reduce((a, d) => a * d, 1);
  return Math.ceil(n / b[0]) * b[1];
}

// Keys llama.cpp needs for a transformer; without some of them it aborts instead of failing.
const TRANSFORMER_KEYS = ["context_length", "embedding_length", "block_count", "feed_forward_length", "attention.head_count"];
const NON_ATTENTION = /^(mamba|mamba2|rwkv|rwkv6|rwkv7|rwkv6qwen2|arwkv7|lfm2)$/;

// Ranges for the header's numbers. llama.cpp asserts 1 <= block_count <= LLAMA_MAX_LAYERS (512);
// the widths and context bound only what is plausible, far above any released model.
const MAX_LAYERS = 512;
const MAX_WIDTH = 1 << 20;
const MAX_CONTEXT = 1 << 24;

/**
 * The architecture's numbers checked by value: llama.cpp sizes tensors and loops from them and
 * asserts on zeros and NaNs (aborting the process). For the llama architecture (the models this
 * debugger trains) every block's tensors must be there with the shapes the numbers imply.
 */
function checkHyperparameters(h: GgufHeader, a: string, vocab: number, fail: (why: string) => never): void {
  const md = h.metadata;
  const whole = (key: string, min: number, max: number, v = md.get(key)): number => {
    const n = typeof v === "number" || typeof v === "bigint" ? Number(v) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) fail(`${key} is ${show(v)}; it must be a whole number from ${min} to ${max}`);
    return n;
  };
  const optionalWhole = (key: string, min: number, max: number): number | undefined => (md.has(key) ? whole(key, min, max) : undefined);
  /** A width that may be given per layer (an array of block_count numbers, 0 for a layer without it); undefined then. */
  const width = (key: string, layers: number): number | undefined => {
    const v = md.get(key);
    if (typeof v !== "object") return whole(key, 1, MAX_WIDTH, v);
    if (v.length !== layers || !v.items) fail(`${key} is an array of ${v.length}; it must give one number for each of ${layers} layers`);
    v.items!.forEach((item, i) => whole(`${key}[${i}]`, 0, MAX_WIDTH, item));
    return undefined;
  };
  for (const key of [`${a}.attention.layer_norm_rms_epsilon`, `${a}.attention.layer_norm_epsilon`, `${a}.rope.freq_base`]) {
    const v = md.get(key);
    if (v !== undefined && !(typeof v === "number" && Number.isFinite(v) && v > 0)) fail(`${key} is ${show(v)}; it must be a finite number above 0`);
  }
  whole(`${a}.context_length`, 1, MAX_CONTEXT);
  const embd = whole(`${a}.embedding_length`, 1, MAX_WIDTH);
  const layers = whole(`${a}.block_count`, 1, MAX_LAYERS);
  checkBlocks(h.tensors, layers, `${a}.block_count`, fail);
  if (NON_ATTENTION.test(a)) return;

  const ff = width(`${a}.feed_forward_length`, layers);
  const heads = width(`${a}.attention.head_count`, layers);
  const kvKey = `${a}.attention.head_count_kv`;
  const kvHeads = md.has(kvKey) ? width(kvKey, layers) : heads;
  const keyLength = optionalWhole(`${a}.attention.key_length`, 1, MAX_WIDTH);
  const valueLength = optionalWhole(`${a}.attention.value_length`, 1, MAX_WIDTH);
  if (heads === undefined) return; // per-layer heads: llama.cpp checks those layer by layer
  if (keyLength === undefined && embd % heads !== 0) fail(`${a}.attention.head_count ${heads} does not divide ${a}.embedding_length ${embd}`);
  if (kvHeads !== undefined && heads % kvHeads !== 0) fail(`${kvKey} ${kvHeads} does not divide ${a}.attention.head_count ${heads}`);
  const headK = keyLength ?? embd / heads;
  const headV = valueLength ?? embd / heads;
  if (a === "llama" && kvHeads !== undefined && ff !== undefined) checkLlamaShapes(h, { embd, vocab, layers, heads, kvHeads, ff, headK, headV, keyLength }, fail);
  const rot = optionalWhole(`${a}.rope.dimension_count`, 1, headK);
  if (a === "llama" && rot !== undefined && rot !== headK) fail(`${a}.rope.dimension_count is ${rot}; llama needs the head size ${headK}`);
}

interface LlamaNumbers {
  embd: number;
  vocab: number;
  layers: number;
  heads: number;
  kvHeads: number;
  ff: number;
  headK: number;
  headV: number;
  keyLength: number | undefined;
}

/** llama: the tensors llama.cpp will create, with their shapes, named with the numbers they come from. */
function checkLlamaShapes(h: GgufHeader, n: LlamaNumbers, fail: (why: string) => never): void {
  const { embd, vocab, layers, heads, kvHeads, ff, headK, headV, keyLength } = n;
  const a = "llama";
  const kvKey = `${a}.attention.head_count_kv`;
  const E = `${a}.embedding_length ${embd}`;
  const Q = `${a}.attention.head_count ${heads}${keyLength ? ` and key_length ${keyLength}` : ""}`;
  const KV = `${kvKey} ${kvHeads}`;
  const F = `${a}.feed_forward_length ${ff}`;
  const want: [string, number[], string][] = [
    ["token_embd.weight", [embd, vocab], `${E} and ${vocab} tokens`],
    ["output_norm.weight", [embd], E],
  ];
  if (h.tensors.some((t) => t.name === "output.weight")) want.push(["output.weight", [embd, vocab], `${E} and ${vocab} tokens`]);
  const experts = h.metadata.get(`${a}.expert_count`);
  for (let i = 0; i < layers; i++) {
    const b = `blk.${i}.`;
    want.push(
      [`${b}attn_norm.weight`, [embd], E],
      [`${b}attn_q.weight`, [embd, headK * heads], `${E} and ${Q}`],
      [`${b}attn_k.weight`, [embd, headK * kvHeads], `${E}, ${Q} and ${KV}`],
      [`${b}attn_v.weight`, [embd, headV * kvHeads], `${E}, ${Q} and ${KV}`],
      [`${b}attn_output.weight`, [headV * heads, embd], `${E} and ${Q}`],
      [`${b}ffn_norm.weight`, [embd], E],
    );
    // A mixture of experts keeps its feed-forward weights in other tensors.
    if (!experts) want.push([`${b}ffn_gate.weight`, [embd, ff], `${E} and ${F}`], [`${b}ffn_up.weight`, [embd, ff], `${E} and ${F}`], [`${b}ffn_down.weight`, [ff, embd], `${E} and ${F}`]);
  }
  const byName = new Map(h.tensors.map((t) => [t.name, t]));
  for (const [name, dims, from] of want) {
    const t = byName.get(name);
    if (!t) fail(`it has no ${name} tensor (${a}.block_count is ${layers})`);
    if (t!.dims.length !== dims.length || t!.dims.some((d, k) => d !== dims[k])) fail(`${name} has shape [${t!.dims.join(", ")}], where ${from} make it [${dims.join(", ")}]`);
  }
}

/** Every block below block_count has tensors, and none lies beyond it. */
function checkBlocks(tensors: GgufTensor[], layers: number, key: string, fail: (why: string) => never): void {
  const present = new Set<number>();
  for (const t of tensors) {
    const m = /^blk\.(\d+)\./.exec(t.name);
    if (!m) continue;
    const i = Number(m[1]);
    if (i >= layers) fail(`tensor ${t.name} lies beyond ${key} ${layers}`);
    present.add(i);
  }
  for (let i = 0; i < layers; i++) if (!present.has(i)) fail(`it has no blk.${i} tensors (${key} is ${layers})`);
}

export interface ModelFileInfo {
  header: GgufHeader;
  architecture: string;
  name?: string;
  /** `ndbg.dialect` from the metadata ("native" for models trained on our trajectories). */
  dialect?: string;
  /** `ndbg.format_version`: the trajectory format version the model was trained on, when present. */
  format?: number;
  /** `ndbg.train.python_versions` ("3.11,3.12"): the Python versions of the traces it was trained on, when it says. */
  pythonVersions?: string[];
  contextLength?: number;
  hasChatTemplate: boolean;
  vocabularySize: number;
}

/**
 * Checks that a file is a GGUF model llama.cpp can load without aborting: magic, version, the
 * architecture's required keys, a tokenizer, and tensor data that lies inside the file.
 */
export async function checkModelFile(path: string): Promise<ModelFileInfo> {
  const h = await readGgufHeader(path);
  const md = h.metadata;
  const fail = (why: string): never => {
    throw new ModelFileError(`${path} is not a usable model: ${why}`, path);
  };
  const arch = md.get("general.architecture");
  if (typeof arch !== "string" || !arch) fail("the metadata has no general.architecture");
  const a = arch as string;
  const keys = NON_ATTENTION.test(a) ? ["context_length", "embedding_length", "block_count"] : TRANSFORMER_KEYS;
  const missing = keys.map((k) => `${a}.${k}`).filter((k) => !md.has(k));
  if (a === "llama" && !md.has("llama.attention.layer_norm_rms_epsilon")) missing.push("llama.attention.layer_norm_rms_epsilon");
  if (missing.length) fail(`the metadata lacks ${missing.join(", ")}`);
  const tokens = md.get("tokenizer.ggml.tokens");
  if (typeof md.get("tokenizer.ggml.model") !== "string") fail("the metadata has no tokenizer.ggml.model");
  if (!tokens || typeof tokens !== "object" || tokens.length === 0) fail("the metadata has no tokenizer.ggml.tokens");
  const vocab = (tokens as GgufArray).length;
  const types = md.get("tokenizer.ggml.token_type");
  if (types && typeof types === "object" && types.length !== vocab) fail(`tokenizer.ggml.token_type has ${types.length} entries for ${vocab} tokens`);
  if (md.get("tokenizer.ggml.model") === "gpt2" && !md.has("tokenizer.ggml.merges")) fail("a gpt2 tokenizer needs tokenizer.ggml.merges");
  if (!h.tensors.length) fail("it holds no tensors");
  if (!h.tensors.some((t) => t.name === "token_embd.weight")) fail("it has no token_embd.weight tensor");
  checkHyperparameters(h, a, vocab, fail);
  const info: ModelFileInfo = {
    header: h,
    architecture: a,
    hasChatTemplate: typeof md.get("tokenizer.chat_template") === "string",
    vocabularySize: vocab,
  };
  const name = md.get("general.name");
  if (typeof name === "string") info.name = name;
  const dialect = md.get("ndbg.dialect");
  if (typeof dialect === "string") info.dialect = dialect;
  const format = md.get("ndbg.format_version");
  if (typeof format === "number" || typeof format === "bigint") info.format = Number(format);
  const pythons = md.get("ndbg.train.python_versions");
  if (typeof pythons === "string") {
    const vs = pythons.split(",").map((v) => v.trim());
    if (!vs.every((v) => PYTHON_VERSION_RE.test(v))) fail(`ndbg.train.python_versions is "${pythons.slice(0, 80)}", not Python versions such as 3.11,3.12`);
    info.pythonVersions = vs;
  }
  const ctx = md.get(`${a}.context_length`);
  if (typeof ctx === "number" || typeof ctx === "bigint") info.contextLength = Number(ctx);
  return info;
}
