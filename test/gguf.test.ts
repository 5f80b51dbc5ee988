// GGUF export against the real runtime: node-llama-cpp loads the models training/gguf.py writes,
// tokenizes held-out trajectories exactly as the Python tokenizer does, and computes the same
// distributions and greedy tokens as the PyTorch model (a RoPE layout or weight permutation mistake
// shows up here). Steps that need PyTorch are skipped, with a message, where it is absent.
import { after, before, describe, test } from "node:test";
import { vocabDecoder } from "../adapter/model/vocab.js";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getLlama, LlamaLogLevel, type Llama, type LlamaModel, type Token } from "node-llama-cpp";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const FIX = path.join(ROOT, "test", "fixtures", "gguf");

function run(cmd: string, args: string[], timeoutS = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: ROOT, timeout: timeoutS * 1000, maxBuffer: 64 << 20, env: { ...process.env, OMP_NUM_THREADS: "1" } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(" ")} failed: ${err.message}\n${stderr.slice(-3000)}`));
      else resolve(stdout);
    });
  });
}

async function pythonWith(module: string): Promise<string | undefined> {
  for (const py of ["python3", "/usr/bin/python3"]) {
    try {
      await run(py, ["-c", `import ${module}`], 120);
      return py;
    } catch {
      /* try the next one */
    }
  }
  return undefined;
}

const readJsonl = async (file: string): Promise<{ id: string; text: string; targets: [number, number][] }[]> =>
  (await readFile(file, "utf8")).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

/** Exact text of tokens from the vocabulary in the GGUF (GPT-2 byte mapping). */

let tmp: string;
let py: string | undefined;
let torchPy: string | undefined;
let llama: Llama;
const models: LlamaModel[] = [];

async function load(file: string): Promise<LlamaModel> {
  // A GGUF missing a required key aborts the process that loads it: check the header first.
  await run(py!, ["-m", "training.gguf", "--info", file], 60);
  const m = await llama.loadModel({ modelPath: file });
  models.push(m);
  return m;
}

async function pyTokenize(tok: string, texts: string[]): Promise<number[][]> {
  const f = path.join(tmp, `texts-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(f, JSON.stringify(texts));
  return JSON.parse(await run(py!, ["-m", "training.tokenizer", "encode", "--tokenizer", tok, "--texts", f]));
}

interface NodeOut {
  /** log p of the tokens llama.cpp gives a probability, at each of the last positions. */
  logProbs: Map<number, number>[];
  greedy: number[];
}

/**
 * Log-probabilities at the last `last` positions of the prompt (the full distribution, sampled at
 * temperature 1 with no truncation: node-llama-cpp gives probabilities, not logits), and `n` greedy
 * tokens after it.
 */
async function nodeLogProbs(model: LlamaModel, prompt: number[], last: number, n: number): Promise<NodeOut> {
  const ctx = await model.createContext({ contextSize: 512, threads: 1, sequences: 1 });
  try {
    const seq = ctx.getSequence();
    const full = { probabilities: true, options: { temperature: 1, topK: 0, topP: 1, minP: 0 } } as const;
    const items = prompt.map((t, i) => (i >= prompt.length - last ? ([t, { generateNext: full }] as const) : t));
    const out = await seq.controlledEvaluate(items as Parameters<typeof seq.controlledEvaluate>[0]);
    const logProbs: Map<number, number>[] = [];
    for (let i = prompt.length - last; i < prompt.length; i++) {
      const m = out[i]?.next?.probabilities;
      assert.ok(m, `no probabilities at position ${i}`);
      logProbs.push(new Map([...m].map(([k, v]) => [k, Math.log(v)])));
    }
    await seq.clearHistory();
    const greedy: number[] = [];
    for await (const t of seq.evaluate(prompt as Token[], { temperature: 0, yieldEogToken: true })) {
      greedy.push(t);
      if (greedy.length >= n) break;
    }
    return { logProbs, greedy };
  } finally {
    await ctx.dispose();
  }
}

/** log-softmax of each row of logits. */
const logSoftmax = (rows: number[][]): number[][] =>
  rows.map((row) => {
    const top = Math.max(...row);
    const lse = top + Math.log(row.reduce((s, v) => s + Math.exp(v - top), 0));
    return row.map((v) => v - lse);
  });

/**
 * The largest difference in log p between llama.cpp and PyTorch over the tokens PyTorch gives a
 * probability above e^-12 (below that, float32 softmax in llama.cpp's sampler rounds): a token
 * llama.cpp gave no probability there counts as infinitely far.
 */
const maxLogProbDiff = (got: Map<number, number>[], refLogits: number[][]): number => {
  let m = 0;
  logSoftmax(refLogits).forEach((row, i) =>
    row.forEach((v, j) => {
      const g = got[i].get(j);
      if (v > -12) m = Math.max(m, g === undefined ? Infinity : Math.abs(g - v));
    }),
  );
  return m;
};

before(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "ndbg-gguf-"));
  py = await pythonWith("numpy");
  torchPy = await pythonWith("torch");
  assert.ok(py, "a python3 with numpy is needed (apt-get install python3-numpy)");
  await run(py, ["-m", "training.tokenizer", "train", "--data", path.join(FIX, "train.jsonl"), "--vocab", "1024", "--out", path.join(tmp, "tok.json")]);
  llama = await getLlama({ build: "never", gpu: false, maxThreads: 1, logLevel: LlamaLogLevel.error });
});

after(async () => {
  for (const m of models) await m.dispose();
  await llama?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("random-weight model (numpy only)", () => {
  let model: LlamaModel;
  const tok = () => path.join(tmp, "tok.json");

  before(async () => {
    const out = path.join(tmp, "random.gguf");
    await run(py!, ["-m", "training.gguf", "--random", "--config", "tiny", "--tokenizer", tok(), "--out", out]);
    model = await load(out);
  });

  test("metadata names the format, the dialect and the stop token", async () => {
    const md = model.fileInfo.metadata as unknown as Record<string, Record<string, unknown>>;
    assert.equal(md.general.architecture, "llama");
    assert.equal(md.ndbg.format_version, 1);
    assert.equal(md.ndbg.dialect, "native");
    const stop = model.tokenize("<|action_sep|>", true);
    assert.equal(stop.length, 1);
    assert.equal(model.tokens.eos, stop[0]);
    assert.ok(model.isSpecialToken(stop[0]));
    assert.equal(md.ndbg.stop_token, "<|action_sep|>");
  });

  test("node-llama-cpp tokenizes held-out trajectories exactly as the Python tokenizer", async (t) => {
    const golden = ["minimal.ndbg", "features.ndbg"].map((f) => path.join(ROOT, "test", "golden", f)).filter(existsSync);
    const texts = [
      ...(await readJsonl(path.join(FIX, "heldout.jsonl"))).map((r) => r.text),
      ...(await Promise.all(golden.map((f) => readFile(f, "utf8")))),
      "x=['apple', 'sun', 'moon']<|arg_sep|>y='what ?' , z . w ' q",
      "héllo wörld 中文 ٣٤ x²  \u00a0\u2003 tabs\t\tend  \n\n  it's we're I'LL \x1c\x1f 😀👍🏽 <\\|frame_sep|>",
    ];
    const want = await pyTokenize(tok(), texts);
    const decode = vocabDecoder(model);
    let cleaned = 0;
    texts.forEach((text, i) => {
      const got = Array.from(model.tokenize(text, true));
      assert.deepEqual(got, want[i], `tokenization differs on text ${i}: ${JSON.stringify(text.slice(0, 60))}`);
      assert.equal(decode(got), text, "the vocabulary in the GGUF decodes the tokens back to the text");
      if (model.detokenize(got, true) !== text) cleaned++;
    });
    // llama.cpp's detokenizer cleans spaces for gpt2 vocabularies (" ," -> ",", ", 's" -> ",'s"):
    // exact text comes from the vocabulary, as vocabDecoder above does.
    t.diagnostic(`model.detokenize changed ${cleaned} of ${texts.length} texts (clean_up_tokenization_spaces)`);
  });
});

describe("trained tiny model against PyTorch", () => {
  let dir: string;
  let prompts: number[][];
  let ref: { logits: number[][]; greedy: number[]; gaps: number[] }[];

  before(async () => {
    if (!torchPy) return;
    dir = path.join(tmp, "tiny");
    await run(torchPy, ["-m", "training.train", "--data", path.join(FIX, "train.jsonl"), "--eval", path.join(FIX, "heldout.jsonl"),
      "--config", "tiny", "--tokenizer", path.join(tmp, "tok.json"), "--out", dir, "--threads", "1"], 600);
    for (const type of ["f16", "q8_0"]) await run(py!, ["-m", "training.gguf", "--weights", dir, "--type", type, "--out", path.join(dir, `tiny.${type}.gguf`)]);
    // prompts as the adapter writes them: the trajectory up to an action, then the model writes a frame
    const recs = (await readJsonl(path.join(FIX, "heldout.jsonl"))).filter((r) => r.targets.length > 3).slice(0, 4);
    // (half of them stop inside the frame, so greedy decoding has a frame to continue)
    const texts = recs.map((r, i) => r.text.slice(0, r.targets[Math.min(1 + i, r.targets.length - 1)][0] + (i % 2 ? 20 : 0)));
    prompts = await pyTokenize(path.join(dir, "tokenizer.json"), texts);
    await writeFile(path.join(dir, "prompts.json"), JSON.stringify(prompts));
    await run(torchPy, ["-m", "training.model", "logits", "--weights", dir, "--prompts", path.join(dir, "prompts.json"),
      "--out", path.join(dir, "ref.json"), "--last", "4", "--greedy", "12"]);
    ref = JSON.parse(await readFile(path.join(dir, "ref.json"), "utf8"));
  });

  test("f16: same distributions and greedy tokens as the PyTorch model", async (t) => {
    if (!torchPy) return t.skip("PyTorch is absent (apt-get install python3-torch): export checked against numpy only");
    const model = await load(path.join(dir, "tiny.f16.gguf"));
    for (let i = 0; i < prompts.length; i++) {
      const got = await nodeLogProbs(model, prompts[i], 4, 12);
      const diff = maxLogProbDiff(got.logProbs, ref[i].logits);
      assert.ok(diff < 0.05, `prompt ${i}: log-probabilities differ by up to ${diff}`);
      // greedy paths agree until a step where PyTorch's top two logits nearly tie; generation ends
      // at the stop token (eos), PyTorch's reference runs on past it
      assert.ok(got.greedy.length > 0);
      for (let k = 0; k < got.greedy.length; k++) {
        if (got.greedy[k] === ref[i].greedy[k]) continue;
        assert.ok(ref[i].gaps[k] < 0.01, `prompt ${i}: greedy token ${k} differs (${got.greedy[k]} vs ${ref[i].greedy[k]}) with a clear margin ${ref[i].gaps[k]}`);
        break;
      }
      t.diagnostic(`prompt ${i} (${prompts[i].length} tokens): max |Δlog p| ${diff.toExponential(2)}, greedy ${JSON.stringify(got.greedy)}`);
    }
  });

  test("q8_0 loads and stays close to the PyTorch model", async (t) => {
    if (!torchPy) return t.skip("PyTorch is absent (apt-get install python3-torch)");
    const model = await load(path.join(dir, "tiny.q8_0.gguf"));
    for (let i = 0; i < prompts.length; i++) {
      const got = await nodeLogProbs(model, prompts[i], 4, 1);
      const diff = maxLogProbDiff(got.logProbs, ref[i].logits);
      assert.ok(diff < 0.25, `prompt ${i}: q8_0 log-probabilities differ by up to ${diff}`);
      if (ref[i].gaps[0] > 0.5) assert.equal(got.greedy[0], ref[i].greedy[0]);
      t.diagnostic(`prompt ${i}: q8_0 max |Δlog p| ${diff.toExponential(2)}`);
    }
  });
});
