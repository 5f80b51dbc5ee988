// Reads and checks a GGUF file's header before llama.cpp sees it. llama.cpp aborts the whole
// process (GGML_ASSERT) on some missing keys, and gives unclear errors on truncated files; here
// a missing, truncated or malformed file becomes a ModelFileError that says what is wrong.
import { open, stat } from "node:fs/promises";

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

// ggml tensor types: [elements per block, bytes per block]. Unknown types skip the size check.
const GGML_BLOCK: Record<number, [number, number]> = {
  0: [1, 4], 1: [1, 2], 2: [32, 18], 3: [32, 20], 6: [32, 22], 7: [32, 24], 8: [32, 34], 9: [32, 36],
  10: [256, 84], 11: [256, 110], 12: [256, 144], 13: [256, 176], 14: [256, 210], 15: [256, 292],
  16: [256, 66], 17: [256, 74], 18: [256, 98], 19: [256, 50], 20: [32, 18], 21: [256, 110], 22: [256, 82],
  23: [256, 136], 24: [1, 1], 25: [1, 2], 26: [1, 4], 27: [1, 8], 28: [1, 8], 29: [256, 56], 30: [1, 2],
  34: [256, 54], 35: [256, 66], 39: [32, 17],
};

/** Arrays whose items are kept (the rest are skipped: a vocabulary can hold 150,000 strings). */
const KEEP_ITEMS = new Set(["tokenizer.ggml.token_type"]);
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
        const keep = KEEP_ITEMS.has(key) || n <= 16;
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
      if (nd > 8) throw new ModelFileError(`${path} is corrupt: tensor ${name} has ${nd} dimensions`, path);
      const dims: number[] = [];
      for (let d = 0; d < nd; d++) dims.push(Number(await r.u64()));
      const type = await r.u32();
      const offset = await r.u64();
      tensors.push({ name, dims, type, offset });
    }
    const align = Number(metadata.get("general.alignment") ?? 32) || 32;
    const dataOffset = Math.ceil(r.pos / align) * align;
    return { version, metadata, tensors, dataOffset, fileSize: size };
  } finally {
    await fh.close();
  }
}

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

export interface ModelFileInfo {
  header: GgufHeader;
  architecture: string;
  name?: string;
  /** `ndbg.dialect` from the metadata ("native" for models trained on our trajectories). */
  dialect?: string;
  /** `ndbg.format_version`: the trajectory format version the model was trained on, when present. */
  format?: number;
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
  let end = h.dataOffset;
  for (const t of h.tensors) {
    const bytes = tensorBytes(t) ?? 0;
    const tEnd = h.dataOffset + Number(t.offset) + bytes;
    if (tEnd > end) end = tEnd;
  }
  if (end > h.fileSize) throw new ModelFileError(`${path} is truncated: its tensors need ${end} bytes, the file has ${h.fileSize}`, path);
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
  const ctx = md.get(`${a}.context_length`);
  if (typeof ctx === "number" || typeof ctx === "bigint") info.contextLength = Number(ctx);
  return info;
}
