// Models for the tests. Tiny random-weight GGUF models: our BPE tokenizer trained on the fixture
// trajectories, and a llama written by training/gguf.py --random with it. A random model's
// answers are garbage: tests that use one check protocol and validity, never accuracy. And the
// shipped model, for tests that need an answer that is a state of the program.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { bundledModel, bundledModelDirs } from "../../adapter/model/resolve.js";
import { ROOT } from "./dist.js";

/** A Python that has numpy (training/gguf.py needs it). */
export function pythonWithNumpy(): string {
  for (const p of ["python3", "/usr/bin/python3"]) {
    try {
      execFileSync(p, ["-c", "import numpy"], { stdio: "ignore" });
      return p;
    } catch {
      // next
    }
  }
  throw new Error("no python with numpy found (apt-get install python3-numpy)");
}

/**
 * Writes a random-weight tiny llama to `out` and returns `out`. The tokenizer is trained once per
 * folder (tok.json beside `out`). The seed decides how the model writes: with the fixture
 * tokenizer, seed 2 mostly writes short frames and seed 0 mostly writes until it is cut off.
 */
export function randomModel(out: string, seed: number): string {
  const py = pythonWithNumpy();
  const tok = join(dirname(out), "tok.json");
  if (!existsSync(tok))
    execFileSync(py, ["-m", "training.tokenizer", "train", "--data", join(ROOT, "test", "fixtures", "gguf", "train.jsonl"), "--vocab", "1024", "--out", tok], { cwd: ROOT, stdio: "pipe", timeout: 60_000 });
  execFileSync(py, ["-m", "training.gguf", "--random", "--config", "tiny", "--seed", String(seed), "--tokenizer", tok, "--out", out], { cwd: ROOT, stdio: "pipe", timeout: 60_000 });
  return out;
}

/**
 * The model the repository ships (models/, found as the adapter finds it by default). Tests that
 * need a model's answer to be a state of the program use it: greedy decoding on one thread is
 * deterministic. A checkout without it is broken, so its absence fails rather than skips.
 */
export function shippedModel(): string {
  const m = bundledModel();
  if (!m) throw new Error(`no .gguf in ${bundledModelDirs().join(" or ")}: the repository ships one in models/`);
  return m;
}
