// The inference host: the child process (dist/host.js) that holds the loaded models and every
// session's context sequence for one adapter process, and runs their decodes (remote.ts is the
// adapter's side). Whatever kills it (llama.cpp aborting on a GPU error, the OOM killer) ends
// only this process; the adapter reads its last words from what it wrote.
//
// Requests and answers are HostRequest / HostReply messages on the IPC channel. llama.cpp's log
// goes straight to stderr (node-llama-cpp's debug mode), unbuffered: through a logger it would
// arrive later, on this thread, and an abort leaves no time for that.
import type { LlamaGrammar, LlamaModel } from "node-llama-cpp";
import { getBackend, threadsForSize } from "./backend.js";
import { binaryOf, MARK, type Backend } from "./probe.js";
import { llamaBinding } from "../system/platforms.js";
import { ModelSequence } from "./sequence.js";
import type { GenerateReply, HostModel, HostReply, HostRequest, OpenedSequence } from "./remote.js";

interface Loaded {
  backend: Backend;
  model: LlamaModel;
  info: HostModel;
  /** Grammars built from GBNF text, kept as the dialects keep theirs (a session meets tens). */
  grammars: Map<string, Promise<LlamaGrammar>>;
}

const GRAMMAR_CACHE = 256;
const models = new Map<string, Promise<Loaded>>();
const sequences = new Map<number, ModelSequence>();
const running = new Map<number, AbortController>();
let nextSeq = 1;

interface Fault {
  /** Only this backend's work faults; absent: any. */
  backend?: Backend;
  what: "abort" | "kill";
  /** The adapter's Nth generation, every generation, or the model's load. */
  when: number | "every" | "load";
}

/**
 * Faults for tests, from $NDBG_HOST_FAULT: a comma-separated list of [BACKEND:]WHAT@WHEN, where
 * WHAT is "abort" (a GGML_ASSERT-like line, then an abort, as llama.cpp does on a CUDA error) or
 * "kill" (SIGKILL, as the OOM killer does), and WHEN is N (the adapter's Nth generation, counted
 * across restarts of this process), "every" (every generation) or "load" (while the model loads).
 * "abort@3", "abort@3,abort@4", "vulkan:abort@every", "cuda:abort@load".
 */
function readFaults(text: string): Fault[] {
  return text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^(?:(cuda|vulkan|metal|cpu):)?(abort|kill)@(\d+|every|load)$/.exec(part);
      if (!m) throw new Error(`NDBG_HOST_FAULT: cannot read "${part}" (expected [cuda|vulkan|metal|cpu:]abort|kill@N|every|load)`);
      const when = /^\d+$/.test(m[3]) ? Number(m[3]) : (m[3] as "every" | "load");
      return { ...(m[1] ? { backend: m[1] as Backend } : {}), what: m[2] as Fault["what"], when };
    });
}

let faults: Fault[] = [];

/** Ends this process as the fault that matches `backend`'s work `at` would (a generation's number, or the load). */
function injectFault(backend: Backend, at: number | "load"): void {
  const f = faults.find((f) => (f.backend ?? backend) === backend && (f.when === at || (f.when === "every" && at !== "load")));
  if (!f) return;
  if (f.what === "kill") process.kill(process.pid, "SIGKILL");
  process.stderr.write(`ggml.c:0: GGML_ASSERT(injected) failed: inference fault injected ${at === "load" ? `while loading the model on ${backend}` : `at decode ${at}`}\n`);
  process.abort();
}

function load(path: string, backend: Backend): Promise<Loaded> {
  const key = `${backend}|${path}`;
  let p = models.get(key);
  if (!p) {
    p = (async () => {
      // A backend a test pretends (binaryOf) runs on the CPU's binary, under its own name.
      const binary = binaryOf(backend);
      const llama = await getBackend({ gpu: binary, direct: true });
      // A crash's reason is looked for after the last mark (probe.ts's reasonLine): in what this load made llama.cpp say.
      process.stderr.write(`${MARK}load on ${backend}\n`);
      injectFault(backend, "load");
      const t0 = performance.now();
      // (on Apple silicon the CPU is the Metal build with no layer offloaded: no GPU is used, as in the probe)
      const { gpuLayers } = llamaBinding(binary);
      const model = await llama.loadModel({ modelPath: path, gpuLayers });
      const device = binary !== backend || binary === "cpu" ? backend : String(llama.gpu);
      const gpuNames = llama.gpu === false || gpuLayers === 0 ? [] : await llama.getGpuDeviceNames().catch(() => []);
      return { backend, model, info: { size: model.size, device, gpuNames, loadMs: performance.now() - t0 }, grammars: new Map() };
    })();
    models.set(key, p);
    p.catch(() => models.delete(key));
  }
  return p;
}

function grammarOf(m: Loaded, text: string): Promise<LlamaGrammar> {
  let g = m.grammars.get(text);
  if (!g) {
    if (m.grammars.size >= GRAMMAR_CACHE) m.grammars.clear();
    g = m.model.llama.createGrammar({ grammar: text });
    m.grammars.set(text, g);
    g.catch(() => m.grammars.delete(text));
  }
  return g;
}

const sequenceModel = new Map<number, Loaded>();

function sequence(id: number): ModelSequence {
  const s = sequences.get(id);
  if (!s) throw new Error(`no sequence ${id} in the inference process`);
  return s;
}

async function handle(req: HostRequest, reply: (m: HostReply) => void): Promise<unknown> {
  switch (req.op) {
    case "load":
      return (await load(req.path, req.backend)).info;
    case "open": {
      const m = await load(req.path, req.backend);
      const s = await ModelSequence.create(m.model, { contextSize: req.contextSize, threads: req.threads, speculative: req.speculative });
      const seq = nextSeq++;
      sequences.set(seq, s);
      sequenceModel.set(seq, m);
      return { seq, contextSize: s.contextSize, threads: s.threads } satisfies OpenedSequence;
    }
    case "generate": {
      const s = sequence(req.seq);
      const m = sequenceModel.get(req.seq)!;
      // As at a load: what follows this mark is what the generation made llama.cpp say.
      process.stderr.write(`${MARK}decode ${req.n}\n`);
      injectFault(m.backend, req.n);
      const ctl = new AbortController();
      running.set(req.id, ctl);
      try {
        const grammar = req.grammar !== undefined ? await grammarOf(m, req.grammar) : undefined;
        const r = await s.generate(req.prompt, {
          maxTokens: req.maxTokens,
          stopTokens: req.stopTokens,
          ...(grammar ? { grammar } : {}),
          ...(req.stopText ? { stopText: req.stopText } : {}),
          signal: ctl.signal,
          ...(req.progress ? { onToken: (n: number) => reply({ id: req.id, progress: n }) } : {}),
        });
        return { ...r, predictions: s.predictions } satisfies GenerateReply;
      } finally {
        running.delete(req.id);
      }
    }
    case "cancel":
      running.get(req.target)?.abort();
      return undefined;
    case "close": {
      const s = sequences.get(req.seq);
      sequences.delete(req.seq);
      sequenceModel.delete(req.seq);
      await s?.dispose();
      return undefined;
    }
    case "warm": {
      // One short generation on a throwaway sequence: the weights paged in, a GPU's pipelines compiled.
      const m = await load(req.path, req.backend);
      const t0 = performance.now();
      const s = await ModelSequence.create(m.model, { contextSize: 256, threads: threadsForSize(m.info.device, m.info.size) });
      try {
        const prompt = m.model.tokenize("def f(x):\n    return x + 1\n\nf(1)\n");
        await s.generate(prompt, { maxTokens: req.tokens });
      } finally {
        await s.dispose();
      }
      return performance.now() - t0;
    }
  }
}

if (process.send) {
  try {
    faults = readFaults(process.env.NDBG_HOST_FAULT ?? "");
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(2);
  }
  // Imported now, while the adapter checks the model file and picks a backend: the first load does not wait for it.
  import("node-llama-cpp").catch(() => undefined);
  const reply = (m: HostReply): void => void process.send!(m);
  process.on("message", (req: HostRequest) => {
    handle(req, reply).then(
      (value) => req.op !== "cancel" && reply({ id: req.id, value }),
      (e: Error) => reply({ id: req.id, error: { name: e?.name ?? "Error", message: String(e?.message ?? e) } }),
    );
  });
  // The adapter went (even killed): so does this process, and the memory it holds.
  process.on("disconnect", () => process.exit(0));
} else {
  process.stderr.write("the inference host is started by the debug adapter (it talks over an IPC channel)\n");
  process.exit(2);
}
