// One session's context sequence, kept across steps: a new prompt that extends what is already
// evaluated costs only its new tokens; a prompt that diverges (step back, setVariable, an edited
// history, a dropped window) erases the tokens after the common prefix and evaluates the rest.
import type { LlamaContext, LlamaContextSequence, LlamaGrammar, LlamaModel, Token, TokenPredictor } from "node-llama-cpp";
import { vocabDecoder } from "./vocab.js";

export class AbortError extends Error {
  constructor(message = "generation was cancelled") {
    super(message);
    this.name = "AbortError";
  }
}

/** The model cannot generate any more: its sampler failed (a damaged model file). */
export class SamplerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SamplerError";
  }
}

export interface GenerateOptions {
  grammar?: LlamaGrammar;
  /** Generation ends after this many tokens (the result says it was cut). */
  maxTokens: number;
  /** Tokens that end generation (not part of the output). */
  stopTokens?: readonly Token[];
  /** Text that ends generation (checked on the decoded output, for models without our tokens). */
  stopText?: string;
  signal?: AbortSignal;
  /** Called after each generated token with the count so far (progress, tokens/s). */
  onToken?: (generated: number) => void;
}

export interface GenerateResult {
  /** Generated tokens, without the stop token. */
  tokens: Token[];
  text: string;
  stop: "token" | "text" | "eog" | "limit";
  /** Mean and least probability of the generated tokens (the stop token included). */
  confidence: number;
  minConfidence: number;
  /** Natural log of the answer's probability: the sum of its tokens' log probabilities (the stop token included). */
  logProb: number;
  /** Prompt tokens, and how many of them had to be evaluated (the rest came from the cache). */
  promptTokens: number;
  evaluatedTokens: number;
  /** Milliseconds evaluating the prompt, and generating. */
  promptMs: number;
  generateMs: number;
}

/**
 * What a session generates with: a context sequence in the inference host (remote.ts) or a model
 * server (served.ts). The grammar goes as GBNF text; `messages` is the same request as a chat,
 * for a server that applies its model's own chat template (the instruct dialect).
 */
export interface Generator {
  readonly contextSize: number;
  /** CPU threads its context evaluates with (0: not ours to say, a server's). */
  readonly threads: number;
  /** Draft tokens accepted and rejected so far (speculative decoding in the inference host). */
  readonly predictions?: { validated: number; refuted: number; used: number };
  generate(prompt: readonly Token[], opts: Omit<GenerateOptions, "grammar"> & { grammar?: { readonly grammar: string }; messages?: readonly ChatTurn[] }): Promise<GenerateResult>;
  dispose(): Promise<void>;
}

export interface ChatTurn {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * node-llama-cpp samples inside its batch dispatcher; when the sampler throws there (a damaged
 * model picks a token its grammar refuses: "Unexpected empty grammar stack after accepting
 * piece"), the error becomes an unhandled rejection and the generation waiting for the token
 * waits forever. While generations run, such rejections are routed to them: each ends with the
 * error, and its sequence is not used again (the library still holds its lock).
 */
const SAMPLER_FAILURE = /sampler|SampleToken|grammar/i;
const waiting = new Set<(e: Error) => void>();
function onStrayRejection(reason: unknown): void {
  if (reason instanceof Error && SAMPLER_FAILURE.test(reason.message)) {
    for (const w of waiting) w(reason);
    return;
  }
  // Not ours: where nobody else listens, keep Node's default (the process fails on it).
  if (process.listenerCount("unhandledRejection") === 1) throw reason;
}
interface SamplerWatch {
  /** Rejects with the sampler's error. */
  failed: Promise<never>;
  error?: Error;
  end(): void;
}
function awaitSamplerFailure(): SamplerWatch {
  let fail: (e: Error) => void = () => undefined;
  const watch: SamplerWatch = {
    failed: new Promise<never>((_, reject) => (fail = (e) => reject((watch.error = e)))),
    end() {
      waiting.delete(fail);
      if (!waiting.size) process.off("unhandledRejection", onStrayRejection);
    },
  };
  watch.failed.catch(() => undefined);
  if (!waiting.size) process.on("unhandledRejection", onStrayRejection);
  waiting.add(fail);
  return watch;
}

/** Prompt tokens evaluated per call, so that cancellation waits for at most one chunk. */
const CHUNK = 128;

export class ModelSequence {
  readonly sequence: LlamaContextSequence;
  /** Exact text of tokens (see vocab.ts). */
  readonly decode: (ids: readonly Token[]) => string;
  private queue: Promise<unknown> = Promise.resolve();
  /** Why this sequence can no longer generate (its sampler failed). */
  private broken?: Error;

  private constructor(
    readonly context: LlamaContext,
    readonly model: LlamaModel,
    tokenPredictor?: TokenPredictor,
  ) {
    this.sequence = context.getSequence(tokenPredictor ? { tokenPredictor } : {});
    this.decode = vocabDecoder(model);
  }

  /**
   * A context with one sequence. `speculative`: draft tokens by looking them up in the prompt
   * (most of a next state repeats the current one) and verify them in one batch; greedy output
   * is unchanged.
   */
  static async create(model: LlamaModel, opts: { contextSize: number; threads?: number; speculative?: boolean }): Promise<ModelSequence> {
    const context = await model.createContext({
      contextSize: opts.contextSize,
      sequences: 1,
      ...(opts.threads ? { threads: opts.threads } : {}),
    });
    let predictor: TokenPredictor | undefined;
    if (opts.speculative) {
      const { InputLookupTokenPredictor } = await import("node-llama-cpp");
      predictor = new InputLookupTokenPredictor({ patternLength: { min: 2 }, predictionLength: { max: 16 } });
    }
    return new ModelSequence(context, model, predictor);
  }

  /** Draft tokens accepted and rejected so far (speculative decoding). */
  get predictions(): { validated: number; refuted: number; used: number } {
    const p = this.sequence.tokenPredictions;
    return { validated: p.validated, refuted: p.refuted, used: p.used };
  }

  get contextSize(): number {
    return this.sequence.contextSize;
  }

  /** CPU threads this context evaluates with. */
  get threads(): number {
    return this.context.idealThreads;
  }

  /** Tokens now held in the cache. */
  get cachedTokens(): number {
    return this.sequence.nextTokenIndex;
  }

  /** Runs generations one at a time: a session never interleaves two on its sequence. */
  generate(prompt: readonly Token[], opts: GenerateOptions): Promise<GenerateResult> {
    const run = this.queue.then(() => this.run(prompt, opts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(prompt: readonly Token[], opts: GenerateOptions): Promise<GenerateResult> {
    const { signal } = opts;
    const check = (): void => {
      if (signal?.aborted) throw new AbortError();
    };
    check();
    if (this.broken) throw this.broken;
    if (prompt.length === 0) throw new Error("empty prompt");
    if (prompt.length + opts.maxTokens > this.contextSize) throw new Error(`the prompt (${prompt.length} tokens) does not fit the context (${this.contextSize})`);
    const seq = this.sequence;
    const t0 = performance.now();
    // Reuse the common prefix, but keep at least the last prompt token out of it: evaluating a
    // token is what yields the logits the first generated token is sampled from.
    const { firstDifferentIndex } = seq.compareContextTokens([...prompt]);
    const keep = Math.min(firstDifferentIndex, prompt.length - 1);
    if (keep < seq.nextTokenIndex) await seq.eraseContextTokenRanges([{ start: keep, end: seq.nextTokenIndex }]);
    const fresh = prompt.slice(keep);
    for (let i = 0; i < fresh.length - 1; i += CHUNK) {
      check();
      await seq.evaluateWithoutGeneratingNewTokens(fresh.slice(i, Math.min(i + CHUNK, fresh.length - 1)));
    }
    check();
    const t1 = performance.now();
    const { LlamaGrammarEvaluationState } = await import("node-llama-cpp");
    const grammarEvaluationState = opts.grammar ? new LlamaGrammarEvaluationState({ model: this.model, grammar: opts.grammar }) : undefined;
    const stops = new Set(opts.stopTokens ?? []);
    const tokens: Token[] = [];
    const confidences: number[] = [];
    let stop: GenerateResult["stop"] = "eog";
    let text = "";
    const gen = seq.evaluateWithMetadata([fresh[fresh.length - 1]], { confidence: true }, {
      temperature: 0,
      ...(grammarEvaluationState ? { grammarEvaluationState } : {}),
    });
    const sampler = awaitSamplerFailure();
    try {
      for (;;) {
        const next = await Promise.race([gen.next(), sampler.failed]);
        if (next.done) break;
        const out = next.value;
        check();
        confidences.push(out.confidence);
        if (stops.has(out.token)) {
          stop = "token";
          break;
        }
        tokens.push(out.token);
        opts.onToken?.(tokens.length);
        if (opts.stopText) {
          text = this.decode(tokens);
          const at = text.indexOf(opts.stopText);
          if (at >= 0) {
            text = text.slice(0, at);
            stop = "text";
            break;
          }
        }
        if (tokens.length >= opts.maxTokens) {
          stop = "limit";
          break;
        }
      }
    } catch (e) {
      if (e !== sampler.error) throw e;
      // The generator never resumes after a failure in the dispatcher: do not wait for it.
      this.broken = new SamplerError(`the model's sampler failed (${(e as Error).message}); the model file may be damaged`);
      throw this.broken;
    } finally {
      sampler.end();
      if (!this.broken) await gen.return(undefined);
    }
    check(); // cancelled while the last token was decoded: the answer is not wanted
    if (stop !== "text") text = this.decode(tokens);
    const t2 = performance.now();
    const mean = confidences.length ? confidences.reduce((a, b) => a + b, 0) / confidences.length : 1;
    return {
      tokens,
      text,
      stop,
      confidence: mean,
      minConfidence: confidences.length ? Math.min(...confidences) : 1,
      logProb: confidences.reduce((a, c) => a + Math.log(Math.max(c, Number.MIN_VALUE)), 0),
      promptTokens: prompt.length,
      evaluatedTokens: fresh.length,
      promptMs: t1 - t0,
      generateMs: t2 - t1,
    };
  }

  /** Forgets everything cached (the next prompt is evaluated in full). */
  async clear(): Promise<void> {
    await this.queue;
    await this.sequence.clearHistory();
  }

  async dispose(): Promise<void> {
    await this.queue.catch(() => undefined);
    // A failed sampler left the library's evaluation lock held: disposing would wait on it forever.
    if (this.broken) return;
    if (!this.sequence.disposed) this.sequence.dispose();
    if (!this.context.disposed) await this.context.dispose();
  }
}
