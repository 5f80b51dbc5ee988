// What running inference in the host process costs per step: the requests of a real predict
// session on examples/demo.py (bundled model, one thread) are replayed, one by one, on a
// sequence in this process (ModelSequence, as before the host) and on one in the host
// (RemoteSequence), alternately, so that a busy machine slows both alike. Prints the medians of
// each one's wall time and of what the IPC adds (the remote wall time minus the host's own
// prompt + generation time).
//   node --import tsx scripts/host-cost.ts [--steps 30] [--rounds 3]
import { join } from "node:path";
import { ModelPredictor } from "../adapter/predictors/model.js";
import { disposeAll, getBackend } from "../adapter/model/backend.js";
import { ModelSequence, type GenerateOptions, type GenerateResult } from "../adapter/model/sequence.js";
import { inferenceHost, RemoteSequence } from "../adapter/model/remote.js";
import type { Predicted } from "../adapter/engine/predictor.js";
import type { LlamaGrammar, Token } from "node-llama-cpp";

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const STEPS = arg("steps", 30);
const ROUNDS = arg("rounds", 3);
const program = join(import.meta.dirname, "..", "examples", "demo.py");

// 1. A real session's requests: step in until the program ends or STEPS, from the start again when it does.
type Req = { prompt: Token[]; opts: GenerateOptions & { grammar?: LlamaGrammar } };
const reqs: Req[] = [];
const p = await ModelPredictor.create({ program, call: "total([3, 1, 4, 1, 5, 9, 2, 6])", gpu: "cpu", threads: 1 });
const generate = p.sequence.generate.bind(p.sequence);
p.sequence.generate = (prompt, opts) => {
  reqs.push({ prompt: [...prompt], opts: { ...opts } as Req["opts"] });
  return generate(prompt, opts);
};
let history: Predicted[] = [await p.start()];
while (reqs.length < STEPS) {
  try {
    const next = await p.predict(history, { kind: "step_into" });
    history = next.step.exit ? [history[0]] : [...history, next];
  } catch {
    history = [history[0]];
  }
}
const { path } = p.loaded!;
const contextSize = p.sequence.contextSize;
await p.dispose();

// 2. Both sides, each with its own sequence (each keeps its cache as a session does).
const llama = await getBackend({ gpu: "cpu" });
const model = await llama.loadModel({ modelPath: path });
const local = await ModelSequence.create(model, { contextSize, threads: 1 });
const remote = await RemoteSequence.open(inferenceHost(), p.loaded!, { contextSize, threads: 1 });
const grammars = new Map<string, Promise<LlamaGrammar>>();
const grammarOf = (g?: LlamaGrammar): Promise<LlamaGrammar | undefined> => {
  if (!g) return Promise.resolve(undefined);
  let h = grammars.get(g.grammar);
  if (!h) grammars.set(g.grammar, (h = llama.createGrammar({ grammar: g.grammar })));
  return h;
};
const inner = (r: GenerateResult): number => r.promptMs + r.generateMs;
const localMs: number[] = [];
const remoteMs: number[] = [];
const ipcMs: number[] = [];
const localOverMs: number[] = [];
for (let round = 0; round < ROUNDS; round++)
  for (const r of reqs) {
    const opts = { maxTokens: r.opts.maxTokens, stopTokens: r.opts.stopTokens ?? [], ...(r.opts.stopText ? { stopText: r.opts.stopText } : {}) };
    const g = await grammarOf(r.opts.grammar);
    const runLocal = async (): Promise<GenerateResult> => {
      const t = performance.now();
      const a = await local.generate(r.prompt, { ...opts, ...(g ? { grammar: g } : {}) });
      localMs.push(performance.now() - t);
      localOverMs.push(localMs.at(-1)! - inner(a));
      return a;
    };
    const runRemote = async (): Promise<GenerateResult> => {
      const t = performance.now();
      const b = await remote.generate(r.prompt, { ...opts, ...(r.opts.grammar ? { grammar: r.opts.grammar } : {}) });
      remoteMs.push(performance.now() - t);
      ipcMs.push(remoteMs.at(-1)! - inner(b));
      return b;
    };
    // Each side goes first half of the time: the second of a pair finds the caches holding the other's weights.
    const first = localMs.length % 2 === 0;
    const a = first ? await runLocal() : undefined;
    const b = await runRemote();
    const a2 = a ?? (await runLocal());
    if (a2.text !== b.text) throw new Error(`the two sides wrote different answers: ${a2.text} / ${b.text}`);
  }
const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  return +((s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2).toFixed(2);
};
console.log(
  JSON.stringify({
    requests: reqs.length * ROUNDS,
    promptTokens: median(reqs.map((r) => r.prompt.length)),
    inProcessMs: median(localMs),
    hostMs: median(remoteMs),
    inProcessOverheadMs: median(localOverMs),
    ipcOverheadMs: median(ipcMs),
  }),
);
await remote.dispose();
await local.dispose();
await model.dispose();
await disposeAll();
