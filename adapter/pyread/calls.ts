// The binding of an entry call such as `f([1, 2], b=3)` to the callee's parameters, as Python
// binds them (positional, keyword, defaults, *args, **kwargs): a session started at a function
// rather than a script begins from these locals. Arguments that are values alone get their reprs
// from the sealed CPython; the rest keep their source text.
import { evaluateValues, SealedUnavailableError } from "../real/sealed.js";
import { getParser } from "./parser.js";
import { findFunction, PySourceError, type ParamKind, type PyFunction, type PySource } from "./source.js";

export interface CallBinding {
  func: PyFunction;
  /** The callee's locals at its call event, in CPython's order: {name: repr}. */
  locals: Record<string, string>;
  /** Names whose value is not a literal: their "repr" is the argument's source text. */
  unevaluated: string[];
}

/**
 * The reprs of arguments (`[1,2]` -> `[1, 2]`, `-3`, `'a' * 2` -> `'aa'`), each evaluated alone
 * by CPython, sealed; a text with no value alone (a call of the program's functions, a name of
 * the program) has none, nor has any where the sealed CPython cannot be had.
 */
async function argumentReprs(texts: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(texts.map((t) => t.trim()))];
  const out = new Map<string, string>();
  try {
    const results = await evaluateValues({}, unique);
    unique.forEach((t, i) => {
      const r = results[i];
      if (!("error" in r)) out.set(t, r.value);
    });
  } catch (e) {
    if (!(e instanceof SealedUnavailableError)) throw e;
  }
  return out;
}

interface CallArg {
  name?: string; // keyword
  star?: "*" | "**";
  text: string;
}

async function parseCallText(call: string): Promise<{ callee: string; args: CallArg[] }> {
  const parser = await getParser();
  const tree = parser.parse(call.trim());
  if (!tree) throw new PySourceError("the Python parser gave no tree");
  try {
    const root = tree.rootNode;
    const stmt = root.namedChildren[0];
    const node = stmt?.type === "expression_statement" ? stmt.namedChildren[0] : undefined;
    if (root.hasError || root.namedChildCount !== 1 || !node || node.type !== "call")
      throw new PySourceError(`the entry call "${call}" is not a call such as f(1, [2, 3])`);
    const fn = node.childForFieldName("function");
    const argList = node.childForFieldName("arguments");
    if (!fn || (fn.type !== "identifier" && fn.type !== "attribute")) throw new PySourceError(`the entry call "${call}" must call a function by name`);
    if (!argList || argList.type !== "argument_list") throw new PySourceError(`the entry call "${call}" must have an argument list`);
    const args: CallArg[] = [];
    for (const a of argList.namedChildren) {
      if (!a || a.type === "comment") continue;
      if (a.type === "keyword_argument") {
        args.push({ name: a.childForFieldName("name")!.text, text: a.childForFieldName("value")!.text });
      } else if (a.type === "list_splat" || a.type === "dictionary_splat") {
        args.push({ star: a.type === "list_splat" ? "*" : "**", text: a.namedChildren[0]?.text ?? "" });
      } else args.push({ text: a.text });
    }
    return { callee: fn.text.replace(/\s+/g, ""), args };
  } finally {
    tree.delete();
  }
}

/**
 * Binds an entry call's arguments to the callee's parameters, as Python would (positional,
 * keyword, defaults, *args, **kwargs), with arguments turned into reprs where they are values
 * alone (argumentReprs).
 */
export async function bindCall(src: PySource, call: string): Promise<CallBinding> {
  const { callee, args } = await parseCallText(call);
  const func = findFunction(src, callee);
  if (!func) {
    const known = src.functions.filter((f) => !f.qualname.includes("<locals>")).map((f) => f.qualname);
    throw new PySourceError(`the entry call "${call}" names ${callee}, which this file does not define${known.length ? ` (it defines ${known.join(", ")})` : ""}`);
  }
  const reprs = await argumentReprs([...args.map((a) => a.text), ...func.params.flatMap((p) => (p.default !== undefined ? [p.default] : []))]);
  const argumentRepr = (text: string): string | undefined => reprs.get(text.trim());
  const unevaluated: string[] = [];
  const value = (name: string, text: string): string => {
    const r = argumentRepr(text);
    if (r !== undefined) return r;
    unevaluated.push(name);
    return text.trim();
  };
  let params = func.params;
  const bound = new Map<string, string>();
  // A method called through an instance or its class: `self` is not in the call's arguments.
  if (func.method && callee.includes(".") && params.length && params[0].kind !== "keyword_only") {
    const cls = func.qualname.split(".").slice(-2, -1)[0];
    bound.set(params[0].name, `<${cls} object>`);
    unevaluated.push(params[0].name);
    params = params.slice(1);
  }
  const positional = params.filter((p) => p.kind === "positional_only" || p.kind === "positional");
  const varPos = params.find((p) => p.kind === "var_positional");
  const varKw = params.find((p) => p.kind === "var_keyword");
  const extraPos: string[] = [];
  const extraKw: [string, string][] = [];
  let i = 0;
  for (const a of args) {
    if (a.star) throw new PySourceError(`the entry call "${call}" unpacks ${a.star}${a.text}: write the arguments out`);
    if (a.name !== undefined) continue;
    if (i < positional.length) bound.set(positional[i].name, value(positional[i].name, a.text));
    else if (varPos) extraPos.push(a.text);
    else throw new PySourceError(`${func.qualname}() takes ${positional.length} positional argument${positional.length === 1 ? "" : "s"} but the entry call gives more`);
    i++;
  }
  for (const a of args) {
    if (a.name === undefined) continue;
    const p = params.find((q) => q.name === a.name && q.kind !== "var_positional" && q.kind !== "var_keyword" && q.kind !== "positional_only");
    if (p) {
      if (bound.has(p.name)) throw new PySourceError(`${func.qualname}() got multiple values for argument '${p.name}'`);
      bound.set(p.name, value(p.name, a.text));
    } else if (varKw) extraKw.push([a.name, a.text]);
    else throw new PySourceError(`${func.qualname}() got an unexpected keyword argument '${a.name}'`);
  }
  const missing: string[] = [];
  for (const p of params) {
    if (p.kind === "var_positional" || p.kind === "var_keyword" || bound.has(p.name)) continue;
    if (p.default !== undefined) bound.set(p.name, value(p.name, p.default));
    else missing.push(p.name);
  }
  if (missing.length) throw new PySourceError(`${func.qualname}() is missing ${missing.length === 1 ? "an argument" : "arguments"}: ${missing.join(", ")}`);
  const tupleRepr = (items: string[]): string => (items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`);
  if (varPos) {
    const items = extraPos.map((t) => argumentRepr(t) ?? t.trim());
    if (extraPos.some((t) => argumentRepr(t) === undefined)) unevaluated.push(varPos.name);
    bound.set(varPos.name, tupleRepr(items));
  }
  if (varKw) {
    const items = extraKw.map(([k, t]) => `'${k}': ${argumentRepr(t) ?? t.trim()}`);
    if (extraKw.some(([, t]) => argumentRepr(t) === undefined)) unevaluated.push(varKw.name);
    bound.set(varKw.name, `{${items.join(", ")}}`);
  }
  // CPython's order of a frame's locals: positional parameters (self first), keyword-only, *args, **kwargs.
  const order: ParamKind[] = ["positional_only", "positional", "keyword_only", "var_positional", "var_keyword"];
  const locals: Record<string, string> = {};
  for (const kind of order) for (const p of func.params) if (p.kind === kind && bound.has(p.name)) locals[p.name] = bound.get(p.name)!;
  return { func, locals, unevaluated };
}
