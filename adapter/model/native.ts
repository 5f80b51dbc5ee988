// The native dialect, for models trained on our trajectories: the prompt is the trajectory text
// (header without metadata, source, the steps so far, then `<|action_sep|>` and the action) and
// the model writes one frame or exit, constrained by a grammar built from the program.
//
// The prompt only ever grows by the new action and frame, so the context sequence's cache holds
// the session. When the history outgrows its budget (historyTokens, and always the context), old
// steps are dropped: the prompt restarts at a later state written with full locals (the header
// and source always stay). The dropped window moves in large jumps, so most steps still extend
// the cached prefix, and a step costs the same at step 500 as at step 5.
import type { LlamaGrammar, Token } from "node-llama-cpp";
import { FORMAT_VERSION, STOP_TOKEN, TOKENS, parseSteps, serializeAction, serializeHead, serializeStep, type Action, type Frame, type Step } from "../format/trajectory.js";
import type { PySource } from "../pyread/source.js";
import type { Vocabulary } from "./backend.js";
import { checkFrame, checkReachable, lastFrame, PredictionError, type Dialect, type DialectRequest } from "./dialect.js";
import { lit, literalGrammar, nativeGrammar, reachGrammar, scopeTable, type DeltaTarget, type ScopeLines } from "../rules/grammar.js";
import { Reach } from "../rules/reach.js";
import type { Next } from "../rules/shapes.js";
import type { PythonAsk } from "../format/values.js";
import type { TypedHole } from "../format/valueType.js";

export interface NativeOptions {
  contextSize: number;
  /** Most tokens one frame may take. */
  maxTokens: number;
  /** Decode without a grammar (then every answer is checked after parsing). */
  grammar?: boolean;
  /** Most tokens of history (steps) the prompt keeps after the program (default HISTORY_TOKENS). */
  historyTokens?: number;
  /** The minor version of the session's Python: the grammar admits only its frames (unknown: 3.11's). */
  python?: string;
  /** CPython, sealed, which computes what a statement decides (adapter/rules/computed.ts); without it, nothing is. */
  ask?: PythonAsk;
  /** The trajectory format the model was trained on (default: this one's); a version 1 prompt has no Python version. */
  format?: number;
  /** The Python version the prompt's header shows (one the model knows; see pyversion.ts's modelPython). */
  shownPython?: string;
}

/**
 * The history a prompt keeps by default. The next state depends mostly on the current one (which
 * is always there, in full); a longer history costs attention on every generated token.
 */
export const HISTORY_TOKENS = 128;
/** After dropping old steps, the history fills at most this part of its budget: later steps extend it. */
const REFILL = 0.5;
/** An answer may take at least this many tokens, and at most twice the current state's plus this. */
const ANSWER_SLACK = 48;
/** Grammars kept built: one per kind of state and action met (a session meets tens). */
const GRAMMAR_CACHE = 256;

export class NativeDialect implements Dialect {
  readonly name = "native" as const;
  readonly table: ScopeLines[];
  readonly reach: Reach;
  private readonly head: Token[];
  private readonly stepTokens = new Map<string, Token[]>();
  private readonly grammars = new Map<string, Promise<LlamaGrammar | undefined>>();
  private readonly stop: Token[] = [];
  private readonly stopText?: string;
  /** Index of the first step in the prompt. */
  windowStart = 0;
  /** Why grammars are not used, when they failed to build. */
  grammarProblem?: string;

  constructor(
    private readonly lm: Vocabulary,
    private readonly src: PySource,
    private readonly opts: NativeOptions,
  ) {
    this.table = scopeTable(src, opts.python);
    this.reach = new Reach(src, opts.python, opts.ask);
    const m = lm.model;
    const bos = m.tokens.shouldPrependBosToken && m.tokens.bos !== null ? [m.tokens.bos] : [];
    const format = opts.format ?? FORMAT_VERSION;
    // A model of format 1 (the bundled one) reads the prompts it was trained on: no Python version.
    this.head = [...bos, ...this.tokenize(serializeHead(src.source, opts.shownPython && format >= 2 ? { python: opts.shownPython } : {}, format))];
    const stop = this.special(STOP_TOKEN);
    if (stop !== undefined) this.stop.push(stop);
    else this.stopText = STOP_TOKEN;
  }

  private tokenize(text: string): Token[] {
    return this.lm.model.tokenize(text, true);
  }

  /** The id of a special token the model has as one token. */
  private special(text: string): Token | undefined {
    const t = this.tokenize(text);
    return t.length === 1 && this.lm.model.isSpecialToken(t[0]) ? t[0] : undefined;
  }

  /** Tokens of one step's text; steps are cut at special tokens, so a prompt is their concatenation. */
  private tokensOf(text: string): Token[] {
    let t = this.stepTokens.get(text);
    if (!t) {
      t = this.tokenize(text);
      if (this.stepTokens.size > 4096) this.stepTokens.clear();
      this.stepTokens.set(text, t);
    }
    return t;
  }

  /**
   * Tokens of step i as the prompt writes it: in full when it opens the window (no action, full
   * locals), else after step i-1 (delta locals where the format says so). Cached on the step
   * object: a session's steps are the same objects from one prediction to the next.
   */
  private stepTokensAt(steps: readonly Step[], i: number, first: boolean): Token[] {
    const step = steps[i];
    const prev = first ? undefined : steps[i - 1]?.frame;
    const cache = first ? this.openers : this.followers;
    const hit = cache.get(step);
    if (hit && hit.prev === prev) return hit.tokens;
    let text: string;
    if (first) {
      if (!step.frame) throw new Error("a prompt window must start at a frame");
      text = serializeStep({ frame: step.frame });
    } else text = serializeStep(step, prev);
    const tokens = this.tokensOf(text);
    cache.set(step, { prev, tokens });
    return tokens;
  }

  private readonly openers = new WeakMap<Step, { prev: Frame | undefined; tokens: Token[] }>();
  private readonly followers = new WeakMap<Step, { prev: Frame | undefined; tokens: Token[] }>();

  /** The prompt's tokens, dropping old steps when the session outgrows the context. */
  promptTokens(steps: readonly Step[], action: Action): Token[] {
    if (!steps.length) throw new Error("a prediction needs the current state");
    const n = steps.length;
    const actionToks = this.tokensOf(TOKENS.action + serializeAction(action) + "\n");
    const room = this.opts.contextSize - this.opts.maxTokens - 1;
    const budget = Math.min(room, this.head.length + (this.opts.historyTokens ?? HISTORY_TOKENS));
    // The window's start must still be in the history (a step back may have cut it) and a frame.
    if (this.windowStart >= n || !steps[this.windowStart].frame) this.windowStart = 0;
    const w0 = this.windowStart;
    // rest[i - w0]: tokens of the steps after step i, each written after its predecessor.
    const rest: number[] = new Array(n - w0).fill(0);
    for (let i = n - 2; i >= w0; i--) rest[i - w0] = this.stepTokensAt(steps, i + 1, false).length + rest[i + 1 - w0];
    const size = (w: number): number => this.head.length + this.stepTokensAt(steps, w, true).length + rest[w - w0] + actionToks.length;
    if (size(this.windowStart) > budget) {
      const refill = this.head.length + (budget - this.head.length) * REFILL;
      let chosen = -1;
      for (let w = this.windowStart + 1; w < n; w++) {
        if (!steps[w].frame) continue;
        const s = size(w);
        if (s <= budget && chosen < 0) chosen = w;
        if (s <= refill) {
          chosen = w;
          break;
        }
      }
      // A current state larger than the history budget still goes in whole while the context has
      // room, alone in the window: it may be the window's first step already (a session's start).
      const latest = this.lastFrameIndex(steps);
      if (chosen < 0 && size(latest) <= room) chosen = latest;
      if (chosen < 0) {
        const need = size(latest);
        throw new PredictionError(
          `the program and its current state take ${need} tokens, more than the model's context leaves room for (${room}); use a model with a longer context`,
          "",
        );
      }
      this.windowStart = chosen;
    }
    const w = this.windowStart;
    const out = [...this.head, ...this.stepTokensAt(steps, w, true)];
    for (let i = w + 1; i < n; i++) out.push(...this.stepTokensAt(steps, i, false));
    out.push(...actionToks);
    return out;
  }

  async request(steps: readonly Step[], action: Action, hole?: TypedHole): Promise<DialectRequest> {
    await this.reach.know(steps);
    const prompt = this.promptTokens(steps, action);
    // A next state is about as long as the current one (a return adds its value, a call its
    // arguments): a cap near that stops a runaway answer early without cutting a real one.
    const current = this.stepTokensAt(steps, this.lastFrameIndex(steps), true).length;
    const maxTokens = Math.min(this.opts.maxTokens, Math.max(ANSWER_SLACK, 2 * current + ANSWER_SLACK));
    const req: DialectRequest = { prompt, stopTokens: this.stop, maxTokens };
    if (this.stopText) req.stopText = this.stopText;
    if (this.opts.grammar !== false) {
      const g = await this.grammarFor(steps, action, hole);
      if (g) req.grammar = g;
    }
    return req;
  }

  private lastFrameIndex(steps: readonly Step[]): number {
    for (let i = steps.length - 1; i >= 0; i--) if (steps[i].frame) return i;
    throw new Error("a prediction needs the current state");
  }

  /**
   * The grammar for the next state: only the states this program can reach from the current one
   * by `action` (adapter/rules/reach.ts); where those are not known (a frame of another file),
   * any frame of this program, with the delta form of locals only where the format allows it.
   */
  private grammarFor(steps: readonly Step[], action: Action, hole?: TypedHole): Promise<LlamaGrammar | undefined> {
    const tok = (t: string): string => {
      const id = this.special(t);
      return id !== undefined ? `<[${id}]>` : lit(t);
    };
    const reached = this.reach.next(steps, action);
    const next = reached && hole ? typedNext(reached, hole) : reached;
    let text: string;
    if (next) text = reachGrammar(next, tok);
    else {
      const prev = lastFrame(steps);
      let delta: DeltaTarget | undefined;
      if (prev && (action.kind === "step_into" || action.kind === "step_over") && (prev.event === "call" || prev.event === "line") && prev.file === undefined)
        delta = { depth: prev.depth, func: prev.func };
      text = nativeGrammar(this.src, tok, delta, this.opts.python);
    }
    let g = this.grammars.get(text);
    if (!g) {
      if (this.grammars.size >= GRAMMAR_CACHE) this.grammars.clear();
      g = this.lm.llama.createGrammar({ grammar: text }).catch((e: Error) => {
        this.grammarProblem = `the frame grammar could not be built (${e.message}); answers are checked after decoding instead`;
        return undefined;
      });
      this.grammars.set(text, g);
    }
    return g;
  }

  parse(text: string, steps: readonly Step[], action: Action): Step {
    const prev = lastFrame(steps);
    const body = TOKENS.action + serializeAction(action) + "\n" + text + (text.endsWith("\n") ? "" : "\n");
    let parsed: Step[];
    try {
      parsed = parseSteps(body, prev);
    } catch (e) {
      throw new PredictionError(`the model's answer is not a frame: ${(e as Error).message}`, text);
    }
    if (parsed.length !== 1) throw new PredictionError(`the model wrote ${parsed.length} states where one was asked for`, text);
    const step = parsed[0];
    if (step.frame) checkFrame(step.frame, this.table, text);
    checkReachable(this.reach, steps, action, step, text);
    return step;
  }
}

/** The states reached where a hole's answer has a declared type: its return value (which a return must then have), or the name its result is assigned to, holds a literal of that type. */
function typedNext(next: Next, hole: TypedHole): Next {
  const typed = literalGrammar(hole.type);
  const frames = next.frames.map((f) =>
    hole.target !== undefined ? { ...f, typed: new Map([[hole.target, typed]]) } : f.event === "return" ? { ...f, value: "yes" as const, valueTyped: typed } : f,
  );
  return { ...next, frames };
}
