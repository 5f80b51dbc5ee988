// A hole's value asked of a chat model that a server the user runs serves (Ollama, llama.cpp's
// server, vLLM: launch attribute `holeModel`), rather than of the bundled model's next state: the
// value alone. The question is what a developer would read: the function's source (its
// docstring and annotations included), the call's arguments and the line that made it; the answer
// is one Python literal, held by a grammar to the return annotation's type where there is one
// (adapter/rules/grammar.ts: literalGrammar). What it writes is read as a literal only, by the
// program's side (adapter/python/holes.py): it is never run.
import type { ValueType } from "../format/valueType.js";
import { valueGrammar } from "../rules/grammar.js";
import { Endpoint, type ServerInfo } from "./endpoint.js";
import { confidence } from "./served.js";

/** What the model is told of one hole. */
export interface HoleQuestion {
  /** The function's source as written (empty for a missing module's function, whose source is not here). */
  source: string;
  /** The call as written out from its arguments: `to_fahrenheit(celsius=37)`, or the calling line for a missing call. */
  call: string;
  /** The line that called it, as written. */
  caller?: string;
  /** The return annotation, as written, and as a literal's type. */
  returns?: string;
  type?: ValueType;
}

/** The longest answer asked for: a value, not an essay. */
const MAX_TOKENS = 200;

const SYSTEM =
  "You are a Python interpreter. A function is not written yet; from its name, signature, docstring and the call, " +
  "answer with the value the call returns, as one Python literal (what repr() prints), and nothing else.";

export class HoleValueModel {
  private constructor(
    private readonly endpoint: Endpoint,
    private readonly info: ServerInfo,
  ) {}

  /** The server at `url` (…/v1), checked: it answers and names its model. */
  static async open(url: string, apiKey?: string, signal?: AbortSignal): Promise<HoleValueModel> {
    const endpoint = new Endpoint(url, apiKey);
    return new HoleValueModel(endpoint, await endpoint.info(signal));
  }

  /** Where the answers come from, for the Debug Console. */
  get name(): string {
    return `${this.info.model} at ${this.endpoint.url}`;
  }

  /** The value (a literal's repr) and its probability under the model (the product of its tokens': not calibrated). */
  async ask(q: HoleQuestion, signal?: AbortSignal): Promise<{ repr: string; confidence: number }> {
    const returns = q.returns ? ` (annotated \`-> ${q.returns}\`)` : "";
    const user = [
      ...(q.source ? ["```python", q.source.trimEnd(), "```"] : []),
      `The call: ${q.call}`,
      ...(q.caller ? [`Called from: \`${q.caller.trim()}\``] : []),
      `The value it returns${returns}:`,
    ].join("\n");
    const r = await this.endpoint.chat(
      { messages: [{ role: "system", content: SYSTEM }, { role: "user", content: user }], grammar: valueGrammar(q.type ?? null), maxTokens: MAX_TOKENS, model: this.info.model, kind: this.info.kind },
      signal,
    );
    const repr = r.text.trim();
    if (r.stop === "length") throw new Error(`${this.name} wrote no whole value within ${MAX_TOKENS} tokens`);
    if (!repr) throw new Error(`${this.name} gave no value`);
    return { repr, confidence: Math.exp(confidence(r.probs).logProb) };
  }
}
