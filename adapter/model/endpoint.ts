// A model served over HTTP by an engine the user already runs, named by an OpenAI-compatible
// endpoint (`http://127.0.0.1:8080/v1`). This file is the talking: which server it is, what it
// serves, and the two generation requests the dialects need, each with a bounded wait and an
// error that says what went wrong in words. What a session does with them is served.ts.
//
// The native dialect needs llama.cpp's own `/completion`: the prompt as token ids (our special
// tokens), `cache_prompt`, a GBNF grammar with token references, and each token's probability.
// The instruct dialect speaks `/v1/chat/completions` to any chat model, the grammar sent as the
// server takes it (llama.cpp: `grammar`; vLLM: `guided_grammar`, `structured_outputs`).

import type { ChatTurn } from "./sequence.js";

/** An OpenAI-compatible endpoint: an http(s) URL whose path ends in /v1 (a model download URL ends in its file's name). */
export const isEndpoint = (spec: string): boolean => /^https?:\/\/[^?#\s]*\/v1\/?$/i.test(spec.trim());

/** Seconds a generation may take before the step fails ($NDBG_SERVER_TIMEOUT). */
export const SERVER_TIMEOUT_S = 60;
/** Seconds the server has to say what it serves when a session opens. */
export const CONNECT_TIMEOUT_S = 10;

export function serverTimeoutMs(): number {
  const env = Number(process.env.NDBG_SERVER_TIMEOUT);
  return (Number.isFinite(env) && env > 0 ? env : SERVER_TIMEOUT_S) * 1000;
}

/** The server could not give an answer: unreachable, too slow, an HTTP error, or a reply that is not what was asked for. */
export class ServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ServerError";
  }
}

/** The step was cancelled while its request was in flight (sequence.ts's AbortError is made of it by the caller). */
export class ServerCancelled extends Error {}

export type ServerKind = "llama.cpp" | "vllm" | "other";

/** What the server serves, asked once when a session opens. */
export interface ServerInfo {
  kind: ServerKind;
  /** The model's id as the server names it. */
  model: string;
  /** llama.cpp: the GGUF file it loaded (a path on the server's machine), its build, its context per slot and its slots. */
  modelPath?: string;
  build?: string;
  contextSize?: number;
  slots?: number;
}

export interface Completion {
  tokens: number[];
  /** The probability of each generated token (the stop token included). */
  probs: number[];
  /** "eos", "word", "limit" (llama.cpp) or "stop", "length" (OpenAI). */
  stop: string;
  promptTokens: number;
  /** Prompt tokens evaluated (the rest came from the server's cache), where the server says. */
  evaluatedTokens?: number;
  promptMs?: number;
  generateMs?: number;
}

export interface ChatCompletion {
  text: string;
  probs: number[];
  stop: string;
  promptTokens: number;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export class Endpoint {
  /** The URL as the user wrote it, without a trailing slash: `.../v1`. */
  readonly url: string;
  /** The server's root (llama.cpp's own routes: /completion, /props, /tokenize). */
  readonly root: string;

  constructor(
    spec: string,
    /** Sent as a bearer token (the caller decides whose: see ModelPredictorOptions.apiKey). */
    private readonly apiKey?: string,
  ) {
    if (!isEndpoint(spec)) throw new ServerError(`${spec} is not an OpenAI-compatible endpoint (an http:// or https:// URL ending in /v1)`);
    this.url = spec.trim().replace(/\/$/, "");
    this.root = this.url.replace(/\/v1$/i, "");
  }

  /**
   * One request, bounded by `timeoutMs` and `signal`; the body read as JSON. Every failure is a
   * ServerError whose message names the server and the cause (or ServerCancelled).
   */
  async request(path: string, body: Json | undefined, timeoutMs: number, signal?: AbortSignal): Promise<Json> {
    const url = (path.startsWith("/v1/") ? this.url + path.slice(3) : this.root + path);
    const headers: Record<string, string> = { accept: "application/json" };
    if (body) headers["content-type"] = "application/json";
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    const all = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const waited = (): never => {
      throw new ServerError(`the model server at ${this.url} did not answer ${path} within ${timeoutMs / 1000} s (NDBG_SERVER_TIMEOUT sets the wait for a step)`);
    };
    let res: Response;
    let text: string;
    try {
      res = await fetch(url, { method: body ? "POST" : "GET", headers, ...(body ? { body: JSON.stringify(body) } : {}), signal: all });
      text = await res.text();
    } catch (e) {
      if (signal?.aborted) throw new ServerCancelled("cancelled");
      if (timeout.aborted) waited();
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new ServerError(`the model server at ${this.url} cannot be reached (${cause?.code ?? cause?.message ?? (e as Error).message}): is it running?`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const err = isObj(json) ? (isObj(json.error) ? json.error.message : json.error ?? json.message) : undefined;
      const why = typeof err === "string" ? err : text.slice(0, 200).trim();
      const hint =
        res.status === 401 || res.status === 403
          ? this.apiKey
            ? " (check its API key: NDBG_API_KEY or the neuralPython.apiKey setting)"
            : " (set its API key in NDBG_API_KEY or the neuralPython.apiKey setting; none is sent for a workspace that is not trusted)"
          : "";
      throw new ServerError(`the model server at ${this.url} answered ${path} with ${res.status} ${res.statusText}${why ? `: ${why}` : ""}${hint}`);
    }
    if (!isObj(json)) throw this.malformed(path, `not a JSON object: ${JSON.stringify(text.slice(0, 80))}`);
    return json;
  }

  private malformed(path: string, why: string): ServerError {
    return new ServerError(`the model server at ${this.url} answered ${path} with something that is not a reply to it (${why})`);
  }

  /** Which server it is and what it serves: /v1/models, then llama.cpp's /props. */
  async info(signal?: AbortSignal): Promise<ServerInfo> {
    const ms = CONNECT_TIMEOUT_S * 1000;
    const models = await this.request("/v1/models", undefined, ms, signal);
    const first = Array.isArray(models.data) ? models.data[0] : undefined;
    if (!isObj(first) || typeof first.id !== "string") throw this.malformed("/v1/models", "no model in its data");
    const owner = String(first.owned_by ?? "").toLowerCase();
    const kind: ServerKind = owner === "llamacpp" ? "llama.cpp" : owner === "vllm" ? "vllm" : "other";
    const info: ServerInfo = { kind, model: first.id };
    if (kind === "llama.cpp") {
      const props = await this.request("/props", undefined, ms, signal);
      const settings = isObj(props.default_generation_settings) ? props.default_generation_settings : {};
      if (typeof props.model_path === "string") info.modelPath = props.model_path;
      if (typeof props.build_info === "string") info.build = props.build_info;
      if (typeof settings.n_ctx === "number") info.contextSize = settings.n_ctx;
      if (typeof props.total_slots === "number") info.slots = props.total_slots;
    }
    return info;
  }

  /** Token ids of `text` as the server tokenizes it (special tokens parsed): llama.cpp's /tokenize. */
  async tokenize(text: string, signal?: AbortSignal): Promise<number[]> {
    const r = await this.request("/tokenize", { content: text, add_special: false, parse_special: true }, CONNECT_TIMEOUT_S * 1000, signal);
    if (!Array.isArray(r.tokens) || !r.tokens.every((t) => typeof t === "number")) throw this.malformed("/tokenize", "no token ids");
    return r.tokens as number[];
  }

  /** A greedy completion of a prompt of token ids under a GBNF grammar: llama.cpp's /completion. */
  async complete(req: { prompt: number[]; grammar?: string; maxTokens: number }, signal?: AbortSignal): Promise<Completion> {
    const path = "/completion";
    const r = await this.request(
      path,
      {
        prompt: req.prompt,
        n_predict: req.maxTokens,
        temperature: 0,
        ...(req.grammar ? { grammar: req.grammar } : {}),
        n_probs: TOP_PROBS,
        cache_prompt: true,
        return_tokens: true,
        stream: false,
      },
      serverTimeoutMs(),
      signal,
    );
    const tokens = r.tokens;
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t))) throw this.malformed(path, "no generated token ids");
    const probs = grammarProbs(r.completion_probabilities);
    if (!probs) throw this.malformed(path, "no token probabilities");
    const timings = isObj(r.timings) ? r.timings : {};
    const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
    const evaluated = num(timings.prompt_n);
    const promptMs = num(timings.prompt_ms);
    const generateMs = num(timings.predicted_ms);
    return {
      tokens: tokens as number[],
      probs,
      stop: typeof r.stop_type === "string" ? r.stop_type : "none",
      promptTokens: num(r.tokens_evaluated) ?? req.prompt.length,
      ...(evaluated !== undefined ? { evaluatedTokens: evaluated } : {}),
      ...(promptMs !== undefined ? { promptMs } : {}),
      ...(generateMs !== undefined ? { generateMs } : {}),
    };
  }

  /** A greedy chat answer under a GBNF grammar, with each token's log-probability: /v1/chat/completions. */
  async chat(req: { messages: readonly ChatTurn[]; grammar?: string; maxTokens: number; model: string; kind: ServerKind }, signal?: AbortSignal): Promise<ChatCompletion> {
    const path = "/v1/chat/completions";
    const grammar: Json = !req.grammar
      ? {}
      : req.kind === "llama.cpp"
        ? { grammar: req.grammar }
        : req.kind === "vllm"
          ? // vLLM before 0.10.2 reads guided_grammar, later ones structured_outputs; each ignores the other
            { guided_grammar: req.grammar, structured_outputs: { grammar: req.grammar } }
          : { grammar: req.grammar, guided_grammar: req.grammar };
    const r = await this.request(
      path,
      { model: req.model, messages: req.messages, max_tokens: req.maxTokens, temperature: 0, logprobs: true, top_logprobs: 1, stream: false, ...grammar },
      serverTimeoutMs(),
      signal,
    );
    const choice = Array.isArray(r.choices) ? r.choices[0] : undefined;
    if (!isObj(choice) || !isObj(choice.message) || typeof choice.message.content !== "string") throw this.malformed(path, "no message in its choices");
    const probs = probsOf(isObj(choice.logprobs) ? choice.logprobs.content : undefined, (p) => p.logprob) ?? [];
    const usage = isObj(r.usage) ? r.usage : {};
    return {
      text: choice.message.content,
      probs,
      stop: typeof choice.finish_reason === "string" ? choice.finish_reason : "none",
      promptTokens: typeof usage.prompt_tokens === "number" ? usage.prompt_tokens : 0,
    };
  }
}

/**
 * A timed generation of `tokens` tokens (`ndbg doctor`): ms per generated token and prompt tokens
 * per second, from llama.cpp's own timings, else from the wall clock and the usage the server reports.
 */
export async function timeServer(endpoint: Endpoint, info: ServerInfo, tokens: number, timeoutMs: number): Promise<{ msPerToken: number; promptTokensPerSecond?: number; generated: number }> {
  const prompt = "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n";
  if (info.kind === "llama.cpp") {
    const r = await endpoint.request("/completion", { prompt, n_predict: tokens, temperature: 0, ignore_eos: true, cache_prompt: false, stream: false }, timeoutMs);
    const t = isObj(r.timings) ? r.timings : {};
    if (typeof t.predicted_per_token_ms !== "number" || typeof t.predicted_n !== "number") throw new ServerError(`the model server at ${endpoint.url} answered /completion without its timings`);
    return { msPerToken: t.predicted_per_token_ms, generated: t.predicted_n, ...(typeof t.prompt_per_second === "number" ? { promptTokensPerSecond: t.prompt_per_second } : {}) };
  }
  const t0 = performance.now();
  const r = await endpoint.request("/v1/chat/completions", { model: info.model, messages: [{ role: "user", content: `Continue this program:\n${prompt}` }], max_tokens: tokens, temperature: 0, stream: false }, timeoutMs);
  const usage = isObj(r.usage) ? r.usage : {};
  const n = typeof usage.completion_tokens === "number" && usage.completion_tokens > 0 ? usage.completion_tokens : undefined;
  if (!n) throw new ServerError(`the model server at ${endpoint.url} answered /v1/chat/completions without the tokens it generated (usage)`);
  return { msPerToken: (performance.now() - t0) / n, generated: n };
}

/** Probabilities asked for per generated token: the chosen one's rank among the model's preferences, for grammarProbs. */
const TOP_PROBS = 16;

/**
 * Each generated token's confidence from llama.cpp's probabilities (before the grammar), as the
 * inference host computes it: where the grammar refused the model's first choices, the tokens it
 * preferred to the one chosen are out, and the probability is taken among the rest (the host
 * renormalizes over the tokens the grammar allows: the same where every token below the chosen
 * one is allowed, a little lower otherwise).
 */
function grammarProbs(list: unknown): number[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: number[] = [];
  for (const t of list) {
    if (!isObj(t) || typeof t.logprob !== "number" || Number.isNaN(t.logprob)) return undefined;
    const p = Math.exp(t.logprob);
    const top = Array.isArray(t.top_logprobs) ? t.top_logprobs : [];
    const at = top.findIndex((x) => isObj(x) && x.id === t.id);
    let above = 0;
    for (const x of top.slice(0, Math.max(0, at))) if (isObj(x) && typeof x.logprob === "number") above += Math.exp(x.logprob);
    out.push(at > 0 && above < 1 ? Math.min(1, p / (1 - above)) : p);
  }
  return out;
}

/** Each entry's probability from its log-probability; undefined when the list is not one. */
function probsOf(list: unknown, logprob: (p: Json) => unknown): number[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: number[] = [];
  for (const p of list) {
    const lp = isObj(p) ? logprob(p) : undefined;
    if (typeof lp !== "number" || Number.isNaN(lp)) return undefined;
    out.push(Math.exp(lp));
  }
  return out;
}
