// Damage to a GGUF model file, in place, at the byte offsets of its layout: header numbers set to
// any value (written as the type they are stored with), a tensor's dimensions, type or data
// offset. For the tests that check that no damaged model crashes the process that loads it.
import assert from "node:assert/strict";
import { rng } from "./rng.js";

/** Changes a copy of the model in place, or returns a shorter one (any other result is ignored). */
export type Damage = (buf: Buffer) => unknown;

/** Where a length-prefixed name (a metadata key or a tensor name) ends: its value or tensor info follows. */
export function behind(buf: Buffer, name: string): number {
  const bytes = Buffer.from(name);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(bytes.length));
  const at = buf.indexOf(Buffer.concat([len, bytes]));
  assert.ok(at >= 0, `${name} is not in the model`);
  return at + 8 + bytes.length;
}

/** Sets a numeric metadata value, written as the type it is stored with. */
export function setKey(buf: Buffer, key: string, value: number): void {
  const at = behind(buf, key);
  const type = buf.readUInt32LE(at);
  const v = at + 4;
  if (type === 4) buf.writeUInt32LE(value >>> 0, v);
  else if (type === 5) buf.writeInt32LE(value | 0, v);
  else if (type === 6) buf.writeFloatLE(value, v);
  else if (type === 10) buf.writeBigUInt64LE(BigInt(value), v);
  else assert.fail(`${key} has metadata type ${type}`);
}

/** A tensor's info: where each dimension, its type and its data offset are stored. */
export function tensorInfo(buf: Buffer, name: string): { dims: number[]; type: number; offset: number } {
  const at = behind(buf, name);
  const n = buf.readUInt32LE(at);
  const dims = Array.from({ length: n }, (_, k) => at + 4 + 8 * k);
  return { dims, type: at + 4 + 8 * n, offset: at + 8 + 8 * n };
}

const WHOLE_KEYS = ["llama.block_count", "llama.embedding_length", "llama.feed_forward_length", "llama.attention.head_count", "llama.attention.head_count_kv", "llama.context_length", "llama.rope.dimension_count", "general.alignment"];
const FLOAT_KEYS = ["llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base"];

/** `n` seeded random damages of a model whose tensors are `tensors`: header numbers, tensor infos, and (with `cuts`) truncation. */
export function randomDamage(seed: number, n: number, tensors: string[], cuts = false): { what: string; damage: Damage }[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const out: { what: string; damage: Damage }[] = [];
  for (let i = 0; i < n; i++) {
    const which = r();
    if (cuts && which < 0.1) {
      // The file cut anywhere: in its header, its tensor table or its data.
      const at = r();
      out.push({ what: `cut at ${(at * 100).toFixed(1)}% of the file`, damage: (b) => b.subarray(0, Math.floor(b.length * at)) });
    } else if (which < 0.25) {
      // A tensor's dimension, type or data offset.
      const name = pick(tensors);
      const field = pick(["dim", "type", "offset"] as const);
      const v = pick([0, 1, 31, 32, 33, 0xffffffff, Math.floor(r() * 0x10000)]);
      out.push({
        what: `${name} ${field} = ${v}`,
        damage: (b) => {
          const t = tensorInfo(b, name);
          if (field === "type") b.writeUInt32LE(v >>> 0, t.type);
          else b.writeBigUInt64LE(BigInt(v), field === "dim" ? pick(t.dims) : t.offset);
        },
      });
    } else if (which < 0.75) {
      const k = pick(WHOLE_KEYS);
      // Zeros, extremes, small numbers near the real ones, and anything at all.
      const v = pick([0, 1, 2, 0xffffffff, 0x80000000, Math.floor(r() * 512), Math.floor(r() * 0x100000000)]);
      out.push({ what: `${k} = ${v}`, damage: (b) => setKey(b, k, v) });
    } else {
      const k = pick(FLOAT_KEYS);
      const bits = Buffer.alloc(4);
      bits.writeUInt32LE(Math.floor(r() * 0x100000000));
      const v = pick([NaN, -Infinity, Infinity, 0, -0, -1e-5, 1e30, bits.readFloatLE(0)]);
      out.push({ what: `${k} = ${v}`, damage: (b) => setKey(b, k, v) });
    }
  }
  return out;
}
