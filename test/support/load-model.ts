// Run as a child process: loads a model the way a predict session does (ModelPredictor.create:
// header check, llama.cpp load, a context) and takes one step, then prints one JSON line. A model
// llama.cpp cannot handle may abort this process (GGML_ASSERT): the parent sees the signal.
// Usage: node --import tsx test/support/load-model.ts MODEL.gguf PROGRAM.py
import { ModelPredictor } from "../../adapter/predictors/model.js";
import { PredictionError } from "../../adapter/model/dialect.js";
import { ModelFileError } from "../../adapter/model/gguf.js";

export interface LoadOutcome {
  /** "refused": the model file was turned down before llama.cpp saw it; "stepped": it loaded and took a step. */
  outcome: "refused" | "stepped" | "error";
  message?: string;
}

const [model, program] = process.argv.slice(2);
const say = (o: LoadOutcome): void => void process.stdout.write(JSON.stringify(o) + "\n");
try {
  const p = await ModelPredictor.create({ program, model, gpu: "cpu", threads: 1, layout: "original", contextSize: 256, maxTokens: 16 });
  const first = await p.start();
  // A random model's answer may be invalid: that is a PredictionError, a step all the same.
  await p.predict([first], { kind: "step_into" }).catch((e: unknown) => {
    if (!(e instanceof PredictionError)) throw e;
  });
  say({ outcome: "stepped" });
} catch (e) {
  say({ outcome: e instanceof ModelFileError ? "refused" : "error", message: (e as Error).message });
}
// Exit without unloading: a damaged model that loaded may also fail while being freed.
process.exit(0);
