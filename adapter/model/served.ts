// A session's model on a server (endpoint.ts): the same generate contract as the inference host's
// sequence (remote.ts), so the dialects, grammars and predictors do not change. The native
// dialect still tokenizes, builds grammars and reads answers here, on the vocabulary of the GGUF
// the server loaded (checked against the server's own tokenizer); the instruct dialect needs no
// vocabulary: the server applies its model's chat template.
//
// A server that goes away fails the step it was asked for with the cause, and the session stays
// where it was: every step is one request, so the next step simply asks again.
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { STOP_TOKEN, TOKENS } from "../format/trajectory.js";
import { loadVocabulary, type Vocabulary } from "./backend.js";
import { Endpoint, ServerCancelled, ServerError, type ServerInfo } from "./endpoint.js";
import type { ModelFileInfo } from "./gguf.js";
import { bundledModel } from "./resolve.js";
import { vocabDecoder } from "./vocab.js";
import { AbortError, type Generator, type GenerateOptions, type GenerateResult, type ChatTurn } from "./sequence.js";
import type { Token } from "node-llama-cpp";

/** A context size for a server that does not say its own. */
const UNSAID_CONTEXT = 4096;

export interface Served {
  endpoint: Endpoint;
  info: ServerInfo;
  /** The served GGUF's vocabulary and header, when a copy of it is readable here and tokenizes as the server does. */
  vocab?: Vocabulary & { info: ModelFileInfo; path: string };
  /** Why there is no vocabulary (the native dialect cannot be used), when there is none. */
  noVocab?: string;
  /** The server's context per session (llama.cpp: per slot). */
  contextSize: number;
  loadMs: number;
}

/** Text the server and the local vocabulary must tokenize alike: our special tokens among code. */
const PROBE = `${TOKENS.src}def f(x):\n    return [x, 'a b', 3.5]\n${STOP_TOKEN}${TOKENS.frame}`;

/** Asks the server what it serves and finds the vocabulary for the native dialect. */
export async function openServed(spec: string, opts: { apiKey?: string | undefined; signal?: AbortSignal } = {}): Promise<Served> {
  const t0 = performance.now();
  const { signal } = opts;
  const endpoint = new Endpoint(spec, opts.apiKey);
  const info = await endpoint.info(signal);
  const served: Served = { endpoint, info, contextSize: info.contextSize ?? UNSAID_CONTEXT, loadMs: 0 };
  if (info.kind !== "llama.cpp") served.noVocab = `the server is ${info.kind === "vllm" ? "vLLM" : "not llama.cpp"}: the native dialect needs llama.cpp's /completion (token ids and special tokens)`;
  else {
    // The file the server loaded, where this machine sees it (a local server); else the bundled model when the server serves a file of its name.
    const bundled = bundledModel();
    const file = info.modelPath && existsSync(info.modelPath) ? info.modelPath : bundled && info.modelPath && basename(info.modelPath) === basename(bundled) ? bundled : undefined;
    if (!file) served.noVocab = `the server's model file (${info.modelPath ?? info.model}) is not readable here, and the native dialect tokenizes with its vocabulary`;
    else {
      const v = await loadVocabulary(file);
      const ours = v.model.tokenize(PROBE, true);
      const theirs = await endpoint.tokenize(PROBE, signal);
      if (ours.length !== theirs.length || ours.some((t, i) => t !== theirs[i]))
        served.noVocab = `the server's model tokenizes differently from ${file}, so it is not the same model`;
      else served.vocab = { ...v, path: file };
    }
  }
  served.loadMs = performance.now() - t0;
  return served;
}

/** One session's generations on the server. */
export class ServerSequence implements Generator {
  readonly threads = 0;
  private disposed = false;
  /** Exact text of tokens, as the inference host's sequence reads them (vocab.ts). */
  private readonly decode?: (ids: readonly Token[]) => string;

  constructor(
    private readonly served: Served,
    readonly contextSize: number,
  ) {
    if (served.vocab) this.decode = vocabDecoder(served.vocab.model);
  }

  async generate(prompt: readonly Token[], opts: Omit<GenerateOptions, "grammar"> & { grammar?: { readonly grammar: string }; messages?: readonly ChatTurn[] }): Promise<GenerateResult> {
    if (this.disposed) throw new Error("the sequence was disposed");
    opts.signal?.throwIfAborted();
    try {
      return opts.messages ? await this.chat(opts.messages, opts) : await this.complete(prompt, opts);
    } catch (e) {
      if (e instanceof ServerCancelled) throw new AbortError();
      throw e;
    }
  }

  /** The native dialect: token ids in, token ids out, read with the local vocabulary. */
  private async complete(prompt: readonly Token[], opts: Omit<GenerateOptions, "grammar"> & { grammar?: { readonly grammar: string } }): Promise<GenerateResult> {
    const decode = this.decode;
    if (!decode) throw new ServerError(`the native dialect cannot be used here: ${this.served.noVocab}`);
    const t0 = performance.now();
    const r = await this.served.endpoint.complete({ prompt: [...prompt], maxTokens: opts.maxTokens, ...(opts.grammar ? { grammar: opts.grammar.grammar } : {}) }, opts.signal);
    const stops = new Set<number>(opts.stopTokens ?? []);
    const at = r.tokens.findIndex((t) => stops.has(t));
    let tokens = (at >= 0 ? r.tokens.slice(0, at) : r.tokens) as Token[];
    // An end-of-generation token that is not ours ends the answer too, and is not part of it.
    if (at < 0 && r.stop === "eos") tokens = tokens.slice(0, -1);
    const text = decode(tokens);
    let stop: GenerateResult["stop"] = at >= 0 ? "token" : r.stop === "limit" ? "limit" : "eog";
    let cut = text;
    if (opts.stopText) {
      const i = text.indexOf(opts.stopText);
      if (i >= 0) {
        cut = text.slice(0, i);
        stop = "text";
      }
    }
    opts.onToken?.(tokens.length);
    const probs = r.probs.slice(0, at >= 0 ? at + 1 : r.probs.length);
    const wall = performance.now() - t0;
    return {
      tokens,
      text: cut,
      stop,
      ...confidence(probs),
      promptTokens: prompt.length,
      evaluatedTokens: r.evaluatedTokens ?? prompt.length,
      promptMs: r.promptMs ?? 0,
      generateMs: r.generateMs ?? wall,
    };
  }

  /** The instruct dialect: the server renders the chat with its model's template. */
  private async chat(messages: readonly ChatTurn[], opts: Omit<GenerateOptions, "grammar"> & { grammar?: { readonly grammar: string } }): Promise<GenerateResult> {
    const t0 = performance.now();
    const { info, endpoint } = this.served;
    const r = await endpoint.chat({ messages, maxTokens: opts.maxTokens, model: info.model, kind: info.kind, ...(opts.grammar ? { grammar: opts.grammar.grammar } : {}) }, opts.signal);
    opts.onToken?.(r.probs.length);
    return {
      tokens: [],
      text: r.text,
      stop: r.stop === "length" ? "limit" : "eog",
      ...confidence(r.probs),
      promptTokens: r.promptTokens,
      evaluatedTokens: r.promptTokens,
      promptMs: 0,
      generateMs: performance.now() - t0,
    };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

/** A generation's confidence figures from its tokens' probabilities, as the in-process sequence gives them (logProb: the state's probability, what the calibration reads). */
export function confidence(probs: readonly number[]): { confidence: number; minConfidence: number; logProb: number } {
  if (!probs.length) return { confidence: 1, minConfidence: 1, logProb: 0 };
  return {
    confidence: probs.reduce((a, b) => a + b, 0) / probs.length,
    minConfidence: Math.min(...probs),
    logProb: probs.reduce((a, c) => a + Math.log(Math.max(c, Number.MIN_VALUE)), 0),
  };
}
