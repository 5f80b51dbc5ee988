// Model files with a damaged header, loaded through the project's real path (ModelPredictor.create,
// as a predict session does) in a child process: llama.cpp aborts the process that loads some of
// them (GGML_ASSERT on a block count of 0, a head count of 0, a NaN epsilon...), so each load runs
// apart and the test reads its exit. Every damaged copy must be refused by the header check with a
// message naming the key and its value, and no copy may crash the process. The listed cases come
// first; then seeded random damage (NDBG_FUZZ_SEED and NDBG_FUZZ_CASES choose the run).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "../support/dist.js";
import { randomModel } from "../support/models.js";
import { readGgufHeader } from "../../adapter/model/gguf.js";
import type { LoadOutcome } from "../support/load-model.js";
import { behind, randomDamage, setKey, tensorInfo, type Damage } from "../support/gguf-damage.js";

const PROGRAM = join(ROOT, "test", "fixtures", "dap", "script.py");
const LOADER = join(ROOT, "test", "support", "load-model.ts");
const SEED = Number(process.env.NDBG_FUZZ_SEED ?? 1);
const RANDOM_CASES = Number(process.env.NDBG_FUZZ_CASES ?? 16);

let dir = "";
let model: Buffer;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-gguf-headers-"));
  // A tiny llama (64 wide, 2 blocks of 2 heads, feed-forward 160): seconds to load and step.
  model = readFileSync(randomModel(join(dir, "random.gguf"), 2));
});

after(() => rmSync(dir, { recursive: true, force: true }));

interface Case {
  what: string;
  damage: Damage;
  /** The refusal must say this (the key and its value); absent: refused or loaded, never a crash. */
  message?: RegExp;
}

const key = (k: string, value: number, message: RegExp): Case => ({ what: `${k} = ${value}`, damage: (b) => setKey(b, k, value), message });

const LISTED: Case[] = [
  // The header numbers that made llama.cpp abort the process.
  key("llama.block_count", 0, /llama\.block_count is 0; it must be a whole number from 1 to 512/),
  key("llama.block_count", 0xffffffff, /llama\.block_count is 4294967295; it must be a whole number from 1 to 512/),
  key("llama.feed_forward_length", 0, /llama\.feed_forward_length is 0; it must be a whole number from 1/),
  key("llama.attention.head_count", 0, /llama\.attention\.head_count is 0; it must be a whole number from 1/),
  key("llama.attention.head_count_kv", 0, /llama\.attention\.head_count_kv is 0; it must be a whole number from 1/),
  key("llama.attention.layer_norm_rms_epsilon", NaN, /llama\.attention\.layer_norm_rms_epsilon is NaN; it must be a finite number above 0/),
  // Numbers out of range or inconsistent with each other and with the tensors.
  key("llama.attention.layer_norm_rms_epsilon", -1e-5, /layer_norm_rms_epsilon is -0\.0000099\d*; it must be a finite number above 0/),
  key("llama.attention.layer_norm_rms_epsilon", Infinity, /layer_norm_rms_epsilon is Infinity; it must be a finite number above 0/),
  key("llama.embedding_length", 0, /llama\.embedding_length is 0; it must be a whole number from 1/),
  key("llama.embedding_length", 96, /token_embd\.weight has shape \[64, \d+\], where llama\.embedding_length 96 and \d+ tokens make it \[96, \d+\]/),
  key("llama.context_length", 0, /llama\.context_length is 0; it must be a whole number from 1/),
  key("llama.attention.head_count", 3, /llama\.attention\.head_count 3 does not divide llama\.embedding_length 64/),
  key("llama.attention.head_count", 4, /blk\.0\.attn_k\.weight has shape \[64, 64\], where .*head_count 4 and llama\.attention\.head_count_kv 2 make it \[64, 32\]/),
  key("llama.attention.head_count_kv", 3, /llama\.attention\.head_count_kv 3 does not divide llama\.attention\.head_count 2/),
  key("llama.feed_forward_length", 100, /blk\.0\.ffn_gate\.weight has shape \[64, 160\], where .*llama\.feed_forward_length 100 make it \[64, 100\]/),
  key("llama.block_count", 3, /it has no blk\.2 tensors \(llama\.block_count is 3\)/),
  key("llama.block_count", 1, /tensor blk\.1\.\w+\.weight lies beyond llama\.block_count 1/),
  key("llama.rope.dimension_count", 0, /llama\.rope\.dimension_count is 0; it must be a whole number from 1 to 32/),
  key("general.alignment", 0, /general\.alignment is 0; it must be a power of two/),
  key("general.alignment", 48, /general\.alignment is 48; it must be a power of two/),
  key("general.alignment", 2, /data starts at byte \d+, not on a 32-byte boundary \(general\.alignment is 2\)/),
  // The tensor table.
  { what: "a tensor's data offset off the alignment", damage: (b) => bump(b, tensorInfo(b, "blk.1.ffn_up.weight").offset, 2), message: /tensor blk\.1\.ffn_up\.weight's data offset \d+ is not a multiple of the alignment 32/ },
  { what: "a tensor's data over the next one's", damage: (b) => bump(b, tensorInfo(b, "blk.1.ffn_up.weight").offset, -64), message: /tensor blk\.1\.ffn_up\.weight's data offset is \d+; after the tensors before it, it must be \d+/ },
  { what: "a tensor's type with larger data", damage: (b) => b.writeUInt32LE(0, tensorInfo(b, "blk.0.attn_q.weight").type), message: /tensor blk\.0\.attn_v\.weight.s data offset is \d+; after the tensors before it, it must be \d+/ },
  { what: "the file cut inside its tensor data", damage: (b) => b.subarray(0, b.length - 100), message: /is truncated: tensor \S+ needs \d+ bytes, the file has \d+/ },
  { what: "a tensor's dimensions swapped", damage: (b) => swapDims(b, "blk.1.ffn_up.weight"), message: /blk\.1\.ffn_up\.weight has shape \[160, 64\], where .*llama\.feed_forward_length 160 make it \[64, 160\]/ },
  { what: "a tensor's dimension 0", damage: (b) => b.writeBigUInt64LE(0n, tensorInfo(b, "blk.0.attn_q.weight").dims[0]), message: /tensor blk\.0\.attn_q\.weight has shape \[0, 64\]/ },
  { what: "a tensor's type", damage: (b) => b.writeUInt32LE(99, tensorInfo(b, "blk.0.attn_v.weight").type), message: /tensor blk\.0\.attn_v\.weight has unknown type 99/ },
  { what: "a block's tensor renamed past block_count", damage: (b) => b.write("7", behind(b, "blk.1.attn_q.weight") - "1.attn_q.weight".length), message: /tensor blk\.7\.attn_q\.weight lies beyond llama\.block_count 2/ },
];

function swapDims(buf: Buffer, name: string): void {
  const [d0, d1] = tensorInfo(buf, name).dims;
  const a = buf.readBigUInt64LE(d0);
  buf.writeBigUInt64LE(buf.readBigUInt64LE(d1), d0);
  buf.writeBigUInt64LE(a, d1);
}

function bump(buf: Buffer, at: number, by: number): void {
  buf.writeBigUInt64LE(buf.readBigUInt64LE(at) + BigInt(by), at);
}

// ---- a load in its own process ----

interface Run extends LoadOutcome {
  code: number | null;
  signal: string | null;
  stderr: string;
}

function load(file: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", LOADER, file, PROGRAM], { cwd: ROOT, timeout: 120_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? null) : 0;
      const signal = err ? ((err as { signal?: string }).signal ?? null) : null;
      const line = stdout.trim().split("\n").at(-1) ?? "";
      let outcome: LoadOutcome = { outcome: "error", message: `no answer: ${line}` };
      try {
        outcome = JSON.parse(line);
      } catch {
        // the process died before it could answer
      }
      resolve({ ...outcome, code: typeof code === "number" ? code : null, signal, stderr });
    });
  });
}

async function check(c: Case, i: number): Promise<void> {
  const copy = Buffer.from(model);
  const cut = c.damage(copy);
  const buf = Buffer.isBuffer(cut) ? cut : copy;
  const file = join(dir, `damaged-${i}.gguf`);
  writeFileSync(file, buf);
  const run = await load(file);
  rmSync(file);
  const said = `${c.what}: ${JSON.stringify({ outcome: run.outcome, message: run.message, code: run.code, signal: run.signal })}\n${run.stderr.slice(-1500)}`;
  assert.equal(run.signal, null, `the process was killed: ${said}`);
  assert.equal(run.code, 0, `the process failed: ${said}`);
  if (c.message) {
    assert.equal(run.outcome, "refused", said);
    assert.match(run.message ?? "", c.message, said);
  } else {
    assert.ok(run.outcome === "refused" || run.outcome === "stepped", said);
  }
  // A refusal comes from the header check, before llama.cpp saw the file.
  if (run.outcome === "refused") assert.match(run.message ?? "", /is not a usable model|is corrupt|is truncated/, said);
}

test("the undamaged model loads and takes a step in the child process", { timeout: 120_000 }, async () => {
  const file = join(dir, "intact.gguf");
  writeFileSync(file, model);
  const run = await load(file);
  assert.deepEqual([run.code, run.signal, run.outcome], [0, null, "stepped"], run.message ?? run.stderr);
});

/** Checks the cases two at a time: each loads in a process of its own, most of it spent starting up. */
async function checkAll(cases: readonly Case[], offset: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < cases.length; i = next++) await check(cases[i], offset + i);
  };
  await Promise.all([worker(), worker()]);
}

test("each listed header damage is refused with the key and value named, and never crashes the loading process", { timeout: 600_000 }, async () => {
  await checkAll(LISTED, 0);
});

test(`seeded random header damage (seed ${SEED}, ${RANDOM_CASES} cases) is refused or loads, and never crashes the loading process`, { timeout: 600_000 }, async () => {
  const tensors = (await readGgufHeader(join(dir, "random.gguf"))).tensors.map((t) => t.name);
  await checkAll(randomDamage(SEED, RANDOM_CASES, tensors), LISTED.length);
});
