// The instruct dialect, for any chat model: the system message states the program (with line
// numbers) and the rules, the user message the recent states and the action, and the answer is
// one JSON object, constrained by a grammar built from the program. The system message is the
// same for every step, so its tokens stay in the cache and a step costs the user message only.
import type { ChatHistoryItem, ChatWrapper, Token } from "node-llama-cpp";
import type { ChatTurn } from "./sequence.js";
import type { Action, Exit, Frame, Step } from "../format/trajectory.js";
import type { PySource } from "../pyread/source.js";
import type { Vocabulary } from "./backend.js";
import { checkFrame, checkReachable, lastFrame, PredictionError, type Dialect, type DialectRequest } from "./dialect.js";
import { jsonGrammar, jsonStringGrammar, scopeTable, type ScopeLines } from "../rules/grammar.js";
import { Reach } from "../rules/reach.js";
import type { PythonAsk } from "../format/values.js";

export interface InstructOptions {
  maxTokens: number;
  /** How many earlier states the user message repeats. */
  recent?: number;
  /** The program's file name, for the prompt. */
  fileName?: string;
  /** The minor version of the session's Python (the prompt says it; the grammar admits only its frames). */
  python?: string;
  /** CPython, sealed, which computes what a statement decides (adapter/rules/computed.ts); without it, nothing is. */
  ask?: PythonAsk;
}

const ACTION_TEXT: Record<Action["kind"], string> = {
  step_into: "step into: execute until the very next event (entering a function of this file if the current line calls one; a return or an exception is an event too)",
  step_over: "step over: execute the current line completely, calls included, and stop at the next line of the same function (or its return or exception)",
  step_return: "step out: run until the current function returns and stop at its return event",
  breakpoint: "run to line L: run until line L is about to execute (if it never is, run to the end)",
  continue: "continue: run to the end of the program",
  inv_step_into: "step back: the state just before the current one",
  inv_step_over: "step back over: the previous line of the same function before the current one, calls skipped",
  inv_step_return: "back to the call: the call event that started the current function (its arguments)",
  inv_breakpoint: "back to line L: the latest earlier state at line L",
};

/** A state as the prompt shows it. */
function stateJson(f: Frame): Record<string, unknown> {
  const o: Record<string, unknown> = { event: f.event, line: f.line, function: f.func, depth: f.depth, locals: f.locals };
  if (f.value !== undefined) o.value = f.value;
  if (f.stdout) o.stdout = f.stdout;
  return o;
}

const numbered = (source: string): string =>
  source
    .replace(/\n$/, "")
    .split("\n")
    .map((l, i) => `${String(i + 1).padStart(4)} | ${l}`)
    .join("\n");

export class InstructDialect implements Dialect {
  readonly name = "instruct" as const;
  readonly table: ScopeLines[];
  private readonly system: string;
  readonly reach: Reach;
  private wrapper?: ChatWrapper;
  private grammar?: Promise<{ readonly grammar: string }>;
  private stringGrammar?: Promise<{ readonly grammar: string }>;

  constructor(
    /** The model's vocabulary; absent for a served chat model, whose server renders the chat (`messages`). */
    private readonly lm: Vocabulary | undefined,
    private readonly src: PySource,
    private readonly opts: InstructOptions,
  ) {
    this.table = scopeTable(src, opts.python);
    this.reach = new Reach(src, opts.python, opts.ask);
    this.system = [
      "You are a Python debugger that predicts program execution without running the program.",
      "A state is where execution stands: the event (call, line, return or exception), the line number, the function, the call depth (0 for the first traced frame) and the local variables as Python reprs.",
      "A line event means the line is about to execute. A return event carries the returned value's repr in \"value\"; an exception event the exception's repr. \"stdout\" is what the program printed since the previous state.",
      "When the program ends, answer {\"exit\": \"normal\"} or {\"exit\": \"error\", \"value\": \"<exception repr>\"}.",
      "Answer with one JSON object and nothing else.",
      "",
      `The program${opts.fileName ? ` (${opts.fileName})` : ""}${opts.python ? `, run by Python ${opts.python}` : ""}, with line numbers:`,
      numbered(src.source),
    ].join("\n");
  }

  private async chatWrapper(lm: Vocabulary): Promise<ChatWrapper> {
    if (!this.wrapper) {
      const { resolveChatWrapper } = await import("node-llama-cpp");
      this.wrapper = resolveChatWrapper(lm.model);
    }
    return this.wrapper;
  }

  /** The request's prompt: the chat as messages, and its tokens under the model's chat template where the vocabulary is here. */
  private async render(user: string): Promise<{ prompt: Token[]; messages: ChatTurn[] }> {
    const messages: ChatTurn[] = [
      { role: "system", content: this.system },
      { role: "user", content: user },
    ];
    const lm = this.lm;
    if (!lm) return { prompt: [], messages };
    const wrapper = await this.chatWrapper(lm);
    const history: ChatHistoryItem[] = [
      { type: "system", text: this.system },
      { type: "user", text: user },
      { type: "model", response: [] },
    ];
    const { contextText } = wrapper.generateContextState({ chatHistory: history });
    return { prompt: contextText.tokenize(lm.model.tokenizer), messages };
  }

  /** A grammar: built (and so checked) where the vocabulary is here, else its text for the server. */
  private build(text: string): Promise<{ readonly grammar: string }> {
    return this.lm ? this.lm.llama.createGrammar({ grammar: text }) : Promise.resolve({ grammar: text });
  }

  private userText(steps: readonly Step[], tail: string): string {
    const recent = this.opts.recent ?? 4;
    const lines: string[] = [];
    const from = Math.max(0, steps.length - 1 - recent);
    if (steps.length > 1) {
      lines.push("Earlier states, oldest first:");
      for (let i = from; i < steps.length - 1; i++) {
        const s = steps[i];
        const how = s.action ? `after ${s.action.kind}${s.action.line !== undefined ? " " + s.action.line : ""}: ` : "";
        lines.push(how + (s.frame ? JSON.stringify(stateJson(s.frame)) : JSON.stringify({ exit: s.exit?.status })));
      }
      lines.push("");
    }
    const cur = lastFrame(steps);
    lines.push("Current state:", cur ? JSON.stringify(stateJson(cur)) : "(none)", "", tail);
    return lines.join("\n");
  }

  async request(steps: readonly Step[], action: Action): Promise<DialectRequest> {
    await this.reach.know(steps);
    const what = ACTION_TEXT[action.kind].replace(/line L/g, `line ${action.line ?? "?"}`);
    const rendered = await this.render(this.userText(steps, `Debugger action: ${what}.\nAnswer with the resulting state as JSON.`));
    this.grammar ??= this.build(jsonGrammar(this.src, this.opts.python));
    return { ...rendered, grammar: await this.grammar, stopTokens: [], maxTokens: this.opts.maxTokens };
  }

  parse(text: string, steps: readonly Step[], action: Action): Step {
    const step = this.read(text);
    checkReachable(this.reach, steps, action, step, text);
    return step;
  }

  /** The state a JSON answer writes. */
  private read(text: string): Step {
    let o: unknown;
    try {
      o = JSON.parse(text);
    } catch (e) {
      throw new PredictionError(`the model's answer is not JSON: ${(e as Error).message}`, text);
    }
    if (!o || typeof o !== "object" || Array.isArray(o)) throw new PredictionError("the model's answer is not a JSON object", text);
    const r = o as Record<string, unknown>;
    const str = (k: string): string | undefined => (typeof r[k] === "string" ? (r[k] as string) : undefined);
    if (r.exit !== undefined) {
      if (r.exit !== "normal" && r.exit !== "error") throw new PredictionError(`unknown exit "${String(r.exit)}"`, text);
      const exit: Exit = { status: r.exit };
      if (str("value") !== undefined) exit.value = str("value");
      if (str("stdout")) exit.stdout = str("stdout");
      return { exit };
    }
    const event = r.event;
    if (event !== "call" && event !== "line" && event !== "return" && event !== "exception") throw new PredictionError(`unknown event "${String(event)}"`, text);
    if (!Number.isInteger(r.line) || !Number.isInteger(r.depth) || typeof r.function !== "string") throw new PredictionError("the state lacks line, function or depth", text);
    const locals = r.locals;
    if (!locals || typeof locals !== "object" || Array.isArray(locals) || Object.values(locals).some((v) => typeof v !== "string"))
      throw new PredictionError("the state's locals are not an object of reprs", text);
    const frame: Frame = { event, line: r.line as number, depth: r.depth as number, func: r.function, locals: locals as Record<string, string> };
    if ((event === "return" || event === "exception") && str("value") !== undefined) frame.value = str("value");
    if (str("stdout")) frame.stdout = str("stdout");
    checkFrame(frame, this.table, text);
    return { frame };
  }

  async question(steps: readonly Step[], expression: string): Promise<DialectRequest> {
    const rendered = await this.render(
      this.userText(steps, `Question: what is the value of the Python expression \`${expression}\` in the current state? Answer with its repr as one JSON string.`),
    );
    this.stringGrammar ??= this.build(jsonStringGrammar());
    return { ...rendered, grammar: await this.stringGrammar, stopTokens: [], maxTokens: this.opts.maxTokens };
  }

  answer(text: string): string {
    try {
      const v = JSON.parse(text);
      if (typeof v === "string") return v;
    } catch {
      // fall through
    }
    throw new PredictionError("the model's answer is not a JSON string", text);
  }
}
