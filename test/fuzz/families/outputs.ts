// Malformed model outputs through the real dialect: the native dialect of a real (tiny, random)
// model builds the grammar for the next state (llama.cpp compiles it) and parses answers that are
// a real next state damaged at random. Each parse must give a state or a PredictionError, fast;
// any other exception is a crash, a parse over a second a hang.
import { readFileSync } from "node:fs";
import { loadModel, type LoadedModel } from "../../../adapter/model/backend.js";
import { NativeDialect } from "../../../adapter/model/native.js";
import { PredictionError } from "../../../adapter/model/dialect.js";
import { parsePython } from "../../../adapter/pyread/parse.js";
import { parse, serializeStep, type Step } from "../../../adapter/format/trajectory.js";
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { TRACE } from "../dap.js";
import { tinyModel } from "./tiny.js";

const TRAJECTORY = parse(readFileSync(TRACE, "utf8"));
let loaded: Promise<{ lm: LoadedModel; dialect: NativeDialect }> | undefined;

export async function outputs(g: Gen, label: string, tally: Tally, _work: string, shared: string): Promise<void> {
  loaded ??= (async () => {
    const lm = await loadModel(tinyModel(shared), { gpu: "cpu" });
    return { lm, dialect: new NativeDialect(lm, await parsePython(TRAJECTORY.source), { contextSize: 2048, maxTokens: 256 }) };
  })();
  const { dialect } = await loaded;
  const steps = TRAJECTORY.steps;
  for (let i = g.int(5, 20); i > 0; i--) {
    const k = g.int(0, steps.length - 1);
    const history: Step[] = steps.slice(0, k + 1);
    const truth = steps[k + 1];
    const action = truth.action ?? { kind: "step_into" as const };
    tally.sent++;
    try {
      await dialect.request(history, action);
      const full = serializeStep(truth, history.at(-1)?.frame);
      const text = g.damage(full.slice(full.indexOf("\n") + 1), g.int(0, 4));
      const t0 = performance.now();
      try {
        dialect.parse(text, history, action);
      } catch (e) {
        if (!(e instanceof PredictionError)) throw e;
      }
      const ms = performance.now() - t0;
      if (ms > 1000) {
        tally.hangs++;
        tally.problems.push(`${label}: a parse took ${Math.round(ms)} ms: ${JSON.stringify(text.slice(0, 200))}`);
      } else tally.answered++;
    } catch (e) {
      tally.crashes++;
      tally.problems.push(`${label}: ${(e as Error).stack?.split("\n").slice(0, 3).join(" | ")}`);
    }
  }
  // The process under test is this one.
  tally.peakMiB = Math.max(tally.peakMiB, Math.round(process.memoryUsage().rss / 2 ** 20));
  if (dialect.grammarProblem) tally.problems.push(`${label}: ${dialect.grammarProblem}`);
}
