// The trace-file TextMate grammar (syntaxes/ndbg.tmLanguage.json), tokenized by the engine VS
// Code itself uses (vscode-textmate on vscode-oniguruma) over sample traces.
import { test, describe, before } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const read = (rel: string): string => readFileSync(new URL(rel, import.meta.url), "utf8");

// Both packages are dev dependencies; without them the suite is skipped with this reason.
let missing: string | false = false;
try {
  require.resolve("vscode-textmate");
  require.resolve("vscode-oniguruma");
} catch {
  missing = "vscode-textmate and vscode-oniguruma are not installed (dev dependencies)";
}

interface Token {
  text: string;
  scopes: string[];
  line: number;
}

type Tokenize = (text: string) => Token[];

// The parts of vscode-textmate and vscode-oniguruma used here (typed locally: both are optional).
interface TextMate {
  INITIAL: unknown;
  Registry: new (o: { onigLib: Promise<unknown>; loadGrammar(scope: string): Promise<unknown> }) => { loadGrammar(scope: string): Promise<Grammar | null> };
  parseRawGrammar(text: string, path: string): unknown;
}
interface Grammar {
  tokenizeLine(line: string, stack: unknown): { tokens: { startIndex: number; scopes: string[] }[]; ruleStack: unknown };
}
interface Oniguruma {
  loadWASM(data: ArrayBuffer): Promise<void>;
  OnigScanner: new (patterns: string[]) => unknown;
  OnigString: new (s: string) => unknown;
}

/** A tiny grammar standing in for VS Code's Python grammar, to see that the source section embeds it. */
const PYTHON_STAND_IN = { scopeName: "source.python", patterns: [{ match: "\\bdef\\b", name: "storage.type.function.python" }] };

async function loadTokenizer(): Promise<Tokenize> {
  const tm = require("vscode-textmate") as TextMate;
  const onig = require("vscode-oniguruma") as Oniguruma;
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await onig.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  const registry = new tm.Registry({
    onigLib: Promise.resolve({ createOnigScanner: (p: string[]) => new onig.OnigScanner(p), createOnigString: (s: string) => new onig.OnigString(s) }),
    loadGrammar: async (scope: string) => {
      if (scope === "source.ndbg") return tm.parseRawGrammar(read("../syntaxes/ndbg.tmLanguage.json"), "ndbg.tmLanguage.json");
      if (scope === "source.python") return tm.parseRawGrammar(JSON.stringify(PYTHON_STAND_IN), "python.json");
      return null;
    },
  });
  const grammar = await registry.loadGrammar("source.ndbg");
  assert.ok(grammar, "the grammar loads");
  const g: Grammar = grammar;
  return (text) => {
    const out: Token[] = [];
    let stack = tm.INITIAL;
    text.split("\n").forEach((line, i) => {
      const r = g.tokenizeLine(line, stack);
      r.tokens.forEach((t, k) => out.push({ text: line.slice(t.startIndex, r.tokens[k + 1]?.startIndex ?? line.length), scopes: t.scopes, line: i }));
      stack = r.ruleStack;
    });
    return out;
  };
}

const has = (t: Token | undefined, scope: string): boolean => !!t && t.scopes.some((s) => s === scope || s.startsWith(scope + "."));
function find(tokens: Token[], text: string, line?: number): Token {
  const t = tokens.find((x) => x.text === text && (line === undefined || x.line === line));
  assert.ok(t, `a token "${text}"${line === undefined ? "" : ` on line ${line}`}`);
  return t;
}
const lineOf = (doc: string, needle: string): number => doc.slice(0, doc.indexOf(needle)).split("\n").length - 1;

describe("ndbg TextMate grammar", { skip: missing }, () => {
  let tokenize: Tokenize;
  const demo = read("fixtures/traces/demo.ndbg");
  const features = read("golden/features.ndbg");
  before(async () => {
    tokenize = await loadTokenizer();
  });

  test("header: keyword, version and metadata", () => {
    const tokens = tokenize(demo);
    assert.ok(has(find(tokens, "#ndbg", 0), "keyword.other.header"));
    assert.ok(has(find(tokens, "1", 0), "constant.numeric.version"));
    assert.ok(tokens.filter((t) => t.line === 0 && t.text.includes("demo.py")).every((t) => has(t, "meta.header.metadata")));
    // Version 2 names the Python version.
    const v2 = tokenize(read("golden/comprehension.ndbg"));
    assert.ok(has(find(v2, "2", 0), "constant.numeric.version"));
    assert.ok(has(find(v2, "python", 0), "keyword.other.python"));
    assert.ok(has(find(v2, "3.11", 0), "constant.numeric.python-version"));
    assert.ok(v2.filter((t) => t.line === 0 && t.text.includes("squares.py")).every((t) => has(t, "meta.header.metadata")));
  });

  test("the source section is Python, embedded", () => {
    const tokens = tokenize(demo);
    assert.ok(has(find(tokens, "<|src_sep|>", 1), "keyword.other.special-token"));
    const src = tokens.filter((t) => t.line >= 2 && t.line <= 15);
    assert.ok(src.length > 0 && src.every((t) => t.scopes.includes("meta.embedded.block.python")), "every source token is in the embedded block");
    assert.ok(has(find(tokens, "def", 2), "storage.type.function.python"), "the Python grammar tokenizes the source");
    const firstFrame = lineOf(demo, "<|frame_sep|>");
    assert.ok(tokens.filter((t) => t.line === firstFrame).every((t) => !t.scopes.includes("meta.embedded.block.python")), "the source ends at the first frame");
  });

  test("frames: separator, event, line, depth, function, locals and values", () => {
    const tokens = tokenize(demo);
    const l = lineOf(demo, "<|call_sep|>1 1 running_max");
    assert.ok(has(find(tokens, "<|frame_sep|>", l), "punctuation.separator.frame"));
    assert.ok(has(find(tokens, "<|call_sep|>", l), "keyword.other.event.call"));
    assert.ok(has(find(tokens, "1", l), "constant.numeric.line"));
    assert.ok(has(tokens.filter((t) => t.line === l && t.text === "1")[1], "constant.numeric.depth"));
    assert.ok(has(find(tokens, "running_max", l), "entity.name.function"));
    assert.ok(has(find(tokens, "<|arg_sep|>", l), "punctuation.separator.arg"));
    assert.ok(has(find(tokens, "values", l), "variable.other.local"));
    assert.ok(has(find(tokens, "=", l), "keyword.operator.assignment"));
    assert.ok(has(find(tokens, "3", l), "constant.numeric"));
    const r = lineOf(demo, "<|return_sep|>8 1 running_max");
    assert.ok(has(find(tokens, "<|return_sep|>", r), "keyword.other.event.return"));
    assert.ok(has(find(tokens, "<|value_sep|>", r), "punctuation.separator.value"));
    const d = lineOf(demo, "<|line_sep|>3 1 running_max<|arg_sep|>..");
    assert.ok(has(find(tokens, "..", d), "keyword.operator.delta"));
    assert.ok(has(find(tokens, "None", d), "constant.language"));
    const m = lineOf(demo, "<|call_sep|>11 0 total");
    assert.ok(has(find(tokens, "total", m), "entity.name.function"), "a function name stops at the next special token");
  });

  test("actions, inverse actions, breakpoint lines and exits", () => {
    const tokens = tokenize(features);
    const a = lineOf(features, "<|action_sep|><|step_into|>");
    assert.ok(has(find(tokens, "<|action_sep|>", a), "punctuation.separator.action"));
    assert.ok(has(find(tokens, "<|step_into|>", a), "keyword.control.action.step_into"));
    const b = lineOf(features, "<|breakpoint|>3");
    assert.ok(has(find(tokens, "3", b), "constant.numeric.line.target"));
    const inv = tokens.find((t) => t.text.includes("inv_"));
    assert.ok(has(inv, "storage.modifier.inverse") && has(inv, "keyword.control.action"));
    const e = lineOf(features, "<|exit_error|>");
    assert.ok(has(find(tokens, "<|exit_error|>", e), "keyword.control.exit.error"));
    assert.ok(has(find(tokens, "<|out_sep|>", e), "punctuation.separator.output"));
    assert.ok(has(find(tokens, "ValueError", e + 1), "support.class"));
    // A frame in another file: the path is one token, spaces included.
    const f = lineOf(features, "lib/other module.py");
    assert.ok(has(find(tokens, "lib/other module.py", f), "string.unquoted.file"));
  });

  test("escaped special tokens in free text stay text", () => {
    const tokens = tokenize(features);
    const l = lineOf(features, "<|line_sep|>7 0 main");
    const onLine = tokens.filter((t) => t.line === l);
    assert.equal(onLine.filter((t) => has(t, "punctuation.separator.frame")).length, 1, "only the real frame separator");
    assert.ok(onLine.some((t) => t.text === "<\\|" && has(t, "constant.character.escape")));
    assert.ok(onLine.some((t) => t.text === "<\\\\\\|" && has(t, "constant.character.escape")));
  });

  test("output spans lines up to the next token", () => {
    const tokens = tokenize(features);
    const l = lineOf(features, "<|out_sep|>x = 2\n<|arg_sep|>..");
    assert.ok(has(find(tokens, "x = 2", l), "string.unquoted.output"));
    assert.ok(has(find(tokens, "..", l + 1), "keyword.operator.delta"));
  });

  test("an unknown special token is marked invalid", () => {
    const tokens = tokenize(read("fixtures/traces/bad.ndbg"));
    assert.ok(has(find(tokens, "<|bogus|>"), "invalid.illegal"));
  });

  test("a file of several trajectories: each source is embedded again", () => {
    const text = read("fixtures/traces/compare.ndbg");
    const tokens = tokenize(text);
    const second = text.split("\n").findIndex((l, i) => i > 0 && l.startsWith("#ndbg "));
    assert.ok(second > 0);
    assert.ok(has(find(tokens, "#ndbg", second), "keyword.other.header"));
    assert.ok(tokens.some((t) => t.line === second + 2 && t.scopes.includes("meta.embedded.block.python")));
  });

  test("outside the source, only whitespace is left without a scope of its own", () => {
    for (const text of [demo, features]) {
      const tokens = tokenize(text);
      const bare = tokens.filter((t) => t.scopes.length === 1 && t.text.trim() !== "");
      assert.deepEqual(bare.map((t) => `${t.line}: ${t.text}`), []);
    }
  });
});
