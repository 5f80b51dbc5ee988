// The line structure of a Python file, read without Python: executable lines, functions with
// their parameters and line ranges, and the binding of an entry call such as `f([1, 2], b=3)`.
// Code that does not parse (unfinished functions, syntax errors, missing imports) still gets an
// answer: tree-sitter is used as a tolerant tokenizer, and statements are recovered from tokens,
// brackets and indentation, the way Python's own tokenizer splits logical lines.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Language, Parser, type Node } from "web-tree-sitter";
import { evaluateValues, SealedUnavailableError } from "../real/sealed.js";

export class PySourceError extends Error {}

export type ParamKind = "positional_only" | "positional" | "var_positional" | "keyword_only" | "var_keyword";

export interface PyParam {
  name: string;
  kind: ParamKind;
  /** The default's source text, as written. */
  default?: string;
}

/** A comprehension, generator expression or lambda: CPython (3.11) runs it as a frame of its own. */
export interface PyNested {
  /** The code object's name: `<listcomp>`, `<dictcomp>`, `<setcomp>`, `<genexpr>` or `<lambda>`. */
  name: string;
  line: number;
  endLine: number;
  /** The identifiers it uses: its locals (targets, parameters, free variables) are among them. */
  names: string[];
  /** Its span in the source (UTF-16 offsets): one inside another is that one's child (`f.<locals>.<listcomp>.<genexpr>`). */
  start: number;
  end: number;
  /** A comprehension's first iterable, which runs in the enclosing scope: what stands in it is not its child. */
  outer?: { start: number; end: number };
}

/** What a scope's own code binds and where its frame can leave: the names its locals can have. */
export interface ScopeNames {
  /** Names its own statements bind (assignment, augmented and annotated assignment, walrus, for / with / except targets, imports, def, class), in first-seen order; parameters and `global` names excluded. */
  binds: string[];
  /** Every identifier on its lines (a closure's free variables are among them). */
  uses: string[];
  /** A local can disappear (`del`, the end of an `except ... as` handler). */
  deletes: boolean;
  /** Lines a return event with a value can stand on: `return`, `yield`, `await` lines and every line of the body's last statement (falling off the end). */
  returnLines: number[];
  /** `yield` / `await` lines: a generator or coroutine is resumed there (a call event), and stops there (a return event). */
  resumeLines: number[];
  /** Where each of `binds` is bound: the first line of each statement that binds it. */
  bindLines: Record<string, number[]>;
}

/** A function or class: a scope that runs as a frame of its own. */
export interface PyScope {
  name: string;
  /** As CPython's co_qualname: `f`, `Stack.push`, `f.<locals>.g`. */
  qualname: string;
  /** The `def` / `class` line. */
  defLine: number;
  /** The line of a call event: the first decorator's line, else the `def` / `class` line. */
  callLine: number;
  /** The last line of the body. */
  endLine: number;
  /** The first executable line of the body. */
  bodyLine: number;
  /** The names its frame's locals can have, and where it returns. */
  scope: ScopeNames;
}

export interface PyFunction extends PyScope {
  params: PyParam[];
  /** Whether the function is defined directly in a class body. */
  method: boolean;
}

export interface PySource {
  source: string;
  /** Lines where a debugger may stop (a superset of the lines CPython reports), ascending. */
  lines: number[];
  /** Lines where a statement starts, ascending (a subset of `lines`). */
  statementLines: number[];
  functions: PyFunction[];
  classes: PyScope[];
  /** Every identifier the file uses (the names its frames' locals can have). */
  names: string[];
  /** Comprehensions, generator expressions and lambdas, which run as frames of their own (`<listcomp>`, ...). */
  nested: PyNested[];
  /** The module level's names (its frame's locals in a script). */
  module: ScopeNames;
  /**
   * Statements (logical lines: a statement over several rows is one) with the identifiers they
   * use and the names it binds (for a simple statement, such as an assignment, they are bound
   * once it has run).
   */
  statements: {
    line: number;
    endLine: number;
    names: string[];
    binds: string[];
    simple: boolean;
    /** A simple statement or an import that can only fall through (no return, raise, break, continue) to a statement after it in the same block: that statement's lines (its first line event may stand on any of them). */
    next?: { line: number; endLine: number };
    /**
     * An `if`, `elif`, `while` or `for` header (its body on rows of its own): the statement its
     * frame goes to next when the test holds or an item comes (the body's first) and when not (the
     * next clause's, or the one after the whole statement in the same block); absent where that is
     * not one statement read from the file alone (the block ends, a declaration or decorator stands there).
     */
    branch?: { yes?: { line: number; endLine: number }; no?: { line: number; endLine: number } };
    /**
     * An undecorated `def` or `class` header: once it has run, its name is bound in the frame that
     * holds it, and that frame's next line is the statement after its body (`next`, when one
     * follows in the same block). A decorated one runs its decorators' lines back and forth.
     */
    header?: "def" | "class";
  }[];
  /** Identifiers used as values somewhere (not called on the spot, not a def / class name): a function named so can be called from anywhere. */
  valueNames: string[];
  /** `for` and `while` loops: the header line and the last line of the body. */
  loops: { line: number; endLine: number }[];
  /** The module level only defines things (functions, classes, imports, constants): it needs an entry call. */
  definesOnly: boolean;
  /** Lines where the parser found a syntax error. */
  errorLines: number[];
  /** The first statement line of the module level (where a script starts), if any. */
  firstLine?: number;
}

// ---- the parser ----

/** Where tree-sitter-python's wasm may be: beside the bundle (dist/), else in node_modules. */
export function grammarCandidates(): string[] {
  const out: string[] = [];
  const env = process.env.NDBG_PYTHON_GRAMMAR;
  if (env) out.push(env);
  let here: string | undefined;
  try {
    here = dirname(fileURLToPath(import.meta.url));
  } catch {
    here = typeof __dirname === "string" ? __dirname : undefined;
  }
  if (here) out.push(join(here, "tree-sitter-python.wasm"), join(here, "..", "..", "dist", "tree-sitter-python.wasm"));
  try {
    const req = createRequire(here ? join(here, "x.js") : join(process.cwd(), "x.js"));
    out.push(join(dirname(req.resolve("tree-sitter-python/package.json")), "tree-sitter-python.wasm"));
  } catch {
    // not installed beside us: the bundled copy must do
  }
  return out;
}

declare const __dirname: string | undefined;

let parserReady: Promise<Parser> | undefined;

async function loadParser(): Promise<Parser> {
  const wasm = grammarCandidates().find((p) => existsSync(p));
  if (!wasm) throw new PySourceError(`the Python grammar (tree-sitter-python.wasm) was not found; looked in: ${grammarCandidates().join(", ")}`);
  await Parser.init();
  const parser = new Parser();
  parser.setLanguage(await Language.load(wasm));
  return parser;
}

let parserLoaded: Parser | undefined;

/** tree-sitter's parser of Python, loaded once. */
export function getParser(): Promise<Parser> {
  parserReady ??= loadParser().then(
    (p) => (parserLoaded = p),
    (e) => {
      parserReady = undefined;
      throw e;
    },
  );
  return parserReady;
}

/** Loads the parser (once); afterwards parsePythonSync can be used. */
export async function initPython(): Promise<void> {
  await getParser();
}

// ---- tokens and logical lines ----

interface Leaf {
  type: string;
  text: string;
  row: number; // 0-based
  col: number;
  start: number; // UTF-16 offsets into the source
  end: number;
}

const OPENERS = new Set(["(", "[", "{"]);
const CLOSERS = new Set([")", "]", "}"]);
/** Words that may continue an expression on a new row inside brackets. */
const CONTINUING = new Set(["for", "async", "if", "else", "in", "not", "and", "or", "is", "lambda", "await"]);
/** Tokens that put no code on a row of their own. */
const PUNCT = new Set([")", "]", "}", ",", ":", ";"]);
/** Keywords that only ever start a statement: inside unbalanced brackets they mean the brackets were never closed. */
const STATEMENT_ONLY = new Set([
  "def", "class", "return", "elif", "try", "except", "finally", "while", "import", "pass", "raise", "break", "continue",
  "global", "nonlocal", "del", "assert", "with",
]);

/** Node types that CPython runs as frames of their own, with their code objects' names. */
const NESTED_NODES: Record<string, string> = {
  list_comprehension: "<listcomp>",
  dictionary_comprehension: "<dictcomp>",
  set_comprehension: "<setcomp>",
  generator_expression: "<genexpr>",
  lambda: "<lambda>",
};

/** Leaves in source order (a string literal is one leaf, comments and missing nodes are dropped), and the nested frames' nodes. */
function leavesOf(root: Node): { leaves: Leaf[]; continued: Set<number>; errors: Set<number>; nested: PyNested[] } {
  const leaves: Leaf[] = [];
  const nested: PyNested[] = [];
  const continued = new Set<number>(); // rows ending in a backslash continuation
  const errors = new Set<number>();
  const cursor = root.walk();
  const visit = (): void => {
    const n = cursor.currentNode;
    if (n.isError) errors.add(n.startPosition.row);
    if (n.isMissing) {
      errors.add(n.startPosition.row);
      return;
    }
    const t = n.type;
    if (t === "comment") return;
    if (n.isNamed && Object.hasOwn(NESTED_NODES, t)) {
      const iterable = n.namedChildren.find((c) => c?.type === "for_in_clause")?.childForFieldName("right");
      nested.push({
        name: NESTED_NODES[t],
        line: n.startPosition.row + 1,
        endLine: n.endPosition.row + 1,
        names: [],
        start: n.startIndex,
        end: n.endIndex,
        ...(iterable ? { outer: { start: iterable.startIndex, end: iterable.endIndex } } : {}),
      });
    }
    if (t === "line_continuation") {
      continued.add(n.startPosition.row);
      return;
    }
    // A string literal is one leaf (its parts are not code); a concatenation is several strings.
    if (t === "string" || (n.childCount === 0 && t !== "concatenated_string")) {
      if (n.endIndex > n.startIndex)
        leaves.push({ type: t, text: n.text, row: n.startPosition.row, col: n.startPosition.column, start: n.startIndex, end: n.endIndex });
      return;
    }
    if (cursor.gotoFirstChild()) {
      do visit();
      while (cursor.gotoNextSibling());
      cursor.gotoParent();
    }
  };
  visit();
  cursor.delete();
  for (const n of nested) n.names = identifiers(leaves.filter((x) => x.start >= n.start && x.end <= n.end));
  return { leaves, continued, errors, nested };
}

interface Logical {
  leaves: Leaf[];
  row: number;
  endRow: number;
  indent: number;
}

/** Splits leaves into logical lines, as Python's tokenizer does, recovering from unclosed brackets. */
function logicalLines(leaves: Leaf[], continued: Set<number>, source: string): Logical[] {
  const out: Logical[] = [];
  let cur: Logical | undefined;
  let depth = 0;
  let lastRow = -1;
  let prev: Leaf | undefined;
  for (const leaf of leaves) {
    const firstOnRow = leaf.row !== lastRow;
    lastRow = leaf.row;
    let starts = false;
    if (!cur) starts = true;
    else if (firstOnRow && !continued.has(leafRowBefore(cur))) {
      if (depth === 0) starts = true;
      else if (
        STATEMENT_ONLY.has(leaf.text) ||
        (/^[A-Za-z_]/.test(leaf.text) && ((leaf.col <= cur.indent && !CONTINUING.has(leaf.text)) || prev?.text === ":"))
      ) {
        depth = 0; // the brackets of the previous line were never closed (a header's ":" ended it, or a statement begins)
        starts = true;
      }
    }
    if (starts) {
      cur = { leaves: [], row: leaf.row, endRow: leaf.row, indent: leaf.col };
      out.push(cur);
    }
    cur!.leaves.push(leaf);
    cur!.endRow = Math.max(cur!.endRow, leaf.row + countNewlines(source, leaf.start, leaf.end));
    if (OPENERS.has(leaf.text)) depth++;
    else if (CLOSERS.has(leaf.text)) depth = Math.max(0, depth - 1);
    prev = leaf;
  }
  return out;
}

const leafRowBefore = (l: Logical): number => l.leaves[l.leaves.length - 1].row;

function countNewlines(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = s.indexOf("\n", from); i >= 0 && i < to; i = s.indexOf("\n", i + 1)) n++;
  return n;
}

const isString = (l: Leaf): boolean => l.type === "string";
const onlyStrings = (l: Logical): boolean => l.leaves.every((x) => isString(x) || x.text === "(" || x.text === ")");

/** Index of the first leaf at bracket depth 0 (relative to the line) satisfying `pred`, else -1. */
function topLevelIndex(l: Logical, pred: (x: Leaf) => boolean, from = 0): number {
  let depth = 0;
  for (let i = 0; i < l.leaves.length; i++) {
    const x = l.leaves[i];
    if (i >= from && depth === 0 && pred(x)) return i;
    if (OPENERS.has(x.text)) depth++;
    else if (CLOSERS.has(x.text)) depth = Math.max(0, depth - 1);
  }
  return -1;
}

const firstWord = (l: Logical): string => (l.leaves[0].text === "async" && l.leaves[1] ? l.leaves[1].text : l.leaves[0].text);

// ---- parameters ----

function parseParams(l: Logical, open: number, source: string): PyParam[] {
  // Leaves between the "(" at `open` and its ")" (or the end of the line when it was never closed).
  const segs: Leaf[][] = [[]];
  let depth = 0;
  for (let i = open + 1; i < l.leaves.length; i++) {
    const x = l.leaves[i];
    if (depth === 0 && (x.text === ")" || (x.text === ":" && segs[segs.length - 1].length === 0))) break;
    if (depth === 0 && x.text === ":" && (i + 1 >= l.leaves.length || l.leaves[i + 1].row > x.row)) break; // "def f(a:" then a body
    if (OPENERS.has(x.text)) depth++;
    else if (CLOSERS.has(x.text)) depth--;
    if (depth === 0 && x.text === ",") segs.push([]);
    else segs[segs.length - 1].push(x);
  }
  const params: PyParam[] = [];
  let kwOnly = false;
  for (const seg of segs) {
    if (!seg.length) continue;
    const t0 = seg[0].text;
    if (t0 === "/") {
      for (const p of params) if (p.kind === "positional") p.kind = "positional_only";
      continue;
    }
    if (t0 === "*" && seg.length === 1) {
      kwOnly = true;
      continue;
    }
    if ((t0 === "*" || t0 === "**") && seg[1]?.type === "identifier") {
      params.push({ name: seg[1].text, kind: t0 === "*" ? "var_positional" : "var_keyword" });
      if (t0 === "*") kwOnly = true;
      continue;
    }
    if (seg[0].type !== "identifier") continue; // broken: skip what is not a parameter
    const p: PyParam = { name: t0, kind: kwOnly ? "keyword_only" : "positional" };
    let d = 0;
    for (let i = 1; i < seg.length; i++) {
      const x = seg[i];
      if (OPENERS.has(x.text)) d++;
      else if (CLOSERS.has(x.text)) d--;
      else if (d === 0 && x.text === "=") {
        const text = source.slice(x.end, seg[seg.length - 1].end).trim();
        if (text) p.default = text;
        break;
      }
    }
    params.push(p);
  }
  return params;
}


// ---- names a scope binds ----

/** The identifiers among leaves, also those inside an f-string's replacement fields (a string is one leaf). */
function identifiers(leaves: readonly Leaf[]): string[] {
  const out = new Set<string>();
  for (const x of leaves) {
    if (x.type === "identifier") out.add(x.text);
    else if (x.type === "string" && /^(?:[rRbB]?[fF]|[fF][rR])/.test(x.text))
      for (const field of x.text.match(/\{[^{}]*\}/g) ?? []) for (const id of field.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) out.add(id);
  }
  return [...out];
}

const AUGMENTED = new Set(["+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "|=", "^=", "@="]);
/** Compound statements whose header may carry a simple statement after its colon (`if x: y = 1`). */
const COMPOUND = new Set(["if", "elif", "else", "for", "while", "try", "except", "finally", "with"]);

/** Names a target list binds: bare names, also inside tuple and list displays; never attributes or subscripts. */
function targetNames(leaves: readonly Leaf[]): string[] {
  const out: string[] = [];
  const displays: boolean[] = []; // per open bracket: a display (binds) rather than a call or a subscript
  for (let i = 0; i < leaves.length; i++) {
    const x = leaves[i];
    const prev = leaves[i - 1];
    if (OPENERS.has(x.text)) {
      const call = prev !== undefined && (prev.type === "identifier" || prev.type === "string" || CLOSERS.has(prev.text));
      displays.push(!call && (displays.length === 0 || displays[displays.length - 1]));
    } else if (CLOSERS.has(x.text)) displays.pop();
    else if (x.type === "identifier" && prev?.text !== "." && ![".", "[", "("].includes(leaves[i + 1]?.text ?? "") && (displays.length === 0 || displays[displays.length - 1]))
      out.push(x.text);
  }
  return out;
}

/** The names an import list binds (`a.b` binds `a`; `x as y` binds `y`), the list's parentheses aside. */
function importedNames(leaves: readonly Leaf[]): string[] {
  const list = leaves[0]?.text === "(" && leaves[leaves.length - 1]?.text === ")" ? leaves.slice(1, -1) : leaves;
  const out: string[] = [];
  let seg: Leaf[] = [];
  for (const x of [...list, undefined]) {
    if (x && x.text !== ",") {
      seg.push(x);
      continue;
    }
    const as = seg.findIndex((y) => y.text === "as");
    const name = as >= 0 ? seg[as + 1] : seg[0];
    if (name?.type === "identifier") out.push(name.text);
    seg = [];
  }
  return out;
}

interface Bindings {
  binds: string[];
  globals: string[];
  deletes: boolean;
}

/** What one statement binds in the scope it runs in (a `def` / `class` binds its name there). */
function statementBindings(leaves: readonly Leaf[]): Bindings {
  const b: Bindings = { binds: [], globals: [], deletes: false };
  if (!leaves.length) return b;
  leaves.forEach((x, i) => {
    if (x.text === ":=" && leaves[i - 1]?.type === "identifier") b.binds.push(leaves[i - 1].text);
  });
  const at = leaves[0].text === "async" ? 1 : 0;
  const w = leaves[at]?.text;
  const colon = topLevelIndex({ leaves: [...leaves], row: 0, endRow: 0, indent: 0 }, (x) => x.text === ":");
  const rest = (): void => {
    // A simple statement after a compound header's colon, on the same row.
    if (colon >= 0 && colon + 1 < leaves.length && leaves[colon + 1].row === leaves[colon].row) {
      const inner = statementBindings(leaves.slice(colon + 1));
      b.binds.push(...inner.binds);
      b.globals.push(...inner.globals);
      b.deletes ||= inner.deletes;
    }
  };
  switch (w) {
    case "def":
    case "class":
      if (leaves[at + 1]?.type === "identifier") b.binds.push(leaves[at + 1].text);
      return b;
    case "@":
    case "nonlocal": // a closure's free variable: among the names it uses
      return b;
    case "global":
      b.globals.push(...identifiers(leaves.slice(1)));
      return b;
    case "del":
      b.deletes = true;
      return b;
    case "import":
    case "from": {
      const imp = leaves.findIndex((x) => x.text === "import");
      if (imp >= 0) b.binds.push(...importedNames(leaves.slice(imp + 1)));
      return b;
    }
    case "for": {
      const inAt = leaves.findIndex((x, i) => i > at && x.text === "in");
      if (inAt > at) b.binds.push(...targetNames(leaves.slice(at + 1, inAt)));
      rest();
      return b;
    }
    case "with":
    case "except":
      leaves.forEach((x, i) => {
        if (x.text !== "as") return;
        let depth = 0;
        let j = i + 1;
        for (; j < leaves.length; j++) {
          const y = leaves[j];
          if (OPENERS.has(y.text)) depth++;
          else if (CLOSERS.has(y.text)) {
            if (depth === 0) break;
            depth--;
          } else if (depth === 0 && (y.text === "," || y.text === ":")) break;
        }
        b.binds.push(...targetNames(leaves.slice(i + 1, j)));
      });
      if (w === "except" && leaves.some((x) => x.text === "as")) b.deletes = true; // the name is deleted when the handler ends
      rest();
      return b;
    case "case":
      leaves.forEach((x, i) => {
        if (x.type === "identifier" && leaves[i - 1]?.text !== "." && ![".", "(", "="].includes(leaves[i + 1]?.text ?? "")) b.binds.push(x.text);
      });
      return b;
  }
  if (COMPOUND.has(w ?? "")) {
    rest();
    return b;
  }
  // Assignments: every segment before a top-level "=" (or an augmented operator) is a target list;
  // an annotated target ends at its ":". A lambda's defaults are not assignments.
  let depth = 0;
  let from = 0;
  for (let i = 0; i < leaves.length; i++) {
    const x = leaves[i];
    if (OPENERS.has(x.text)) depth++;
    else if (CLOSERS.has(x.text)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && x.text === "lambda") break;
    else if (depth === 0 && (x.text === "=" || AUGMENTED.has(x.text))) {
      let seg = leaves.slice(from, i);
      const ann = seg.findIndex((y) => y.text === ":");
      if (ann >= 0) seg = seg.slice(0, ann);
      b.binds.push(...targetNames(seg));
      from = i + 1;
      if (x.text !== "=") break;
    }
  }
  return b;
}

/** A scope's names as they are collected, statement by statement. */
class ScopeCollector {
  private readonly binds = new Map<string, number[]>();
  private readonly globals = new Set<string>();
  private readonly uses = new Set<string>();
  private deletes = false;
  private readonly returns = new Set<number>();
  private readonly resumes = new Set<number>();
  /** The indentation of the body's statements, and the body's last statement so far. */
  private bodyIndent = -1;
  private lastTop = -1;

  /** A statement that runs in this scope. */
  own(l: Logical, b: Bindings): void {
    for (const n of b.binds) {
      const at = this.binds.get(n) ?? [];
      if (!at.includes(l.row + 1)) at.push(l.row + 1);
      this.binds.set(n, at);
    }
    for (const n of b.globals) this.globals.add(n);
    this.deletes ||= b.deletes;
    const rows = (): number[] => Array.from({ length: l.endRow - l.row + 1 }, (_, k) => l.row + k + 1);
    const w = firstWord(l);
    if (w === "def" || w === "class") return; // a one-line body belongs to its own scope
    if (l.leaves.some((x) => x.text === "return")) for (const r of rows()) this.returns.add(r); // also `if x: return y`
    if (l.leaves.some((x) => x.text === "yield" || x.text === "await"))
      for (const r of rows()) {
        this.returns.add(r);
        this.resumes.add(r);
      }
  }

  /** A statement on this scope's lines (its own, or a nested scope's: free variables pass through). */
  sees(l: Logical): void {
    for (const n of identifiers(l.leaves)) this.uses.add(n);
    if (this.bodyIndent < 0) this.bodyIndent = l.indent;
    // `elif`, `else`, `except` and `finally` go on the statement they belong to: the body may fall off
    // the end of any of its blocks.
    if (l.indent === this.bodyIndent && !["elif", "else", "except", "finally"].includes(firstWord(l))) this.lastTop = l.row + 1;
  }

  finish(endLine: number, params: readonly string[] = []): ScopeNames {
    // Falling off the end: the return event stands on a line of the body's last statement.
    if (this.lastTop > 0) for (let r = this.lastTop; r <= endLine; r++) this.returns.add(r);
    const ps = new Set(params);
    const binds = [...this.binds.keys()].filter((n) => !this.globals.has(n) && !ps.has(n));
    return {
      binds,
      bindLines: Object.fromEntries(binds.map((n) => [n, this.binds.get(n)!])),
      uses: [...this.uses],
      deletes: this.deletes,
      returnLines: [...this.returns].sort((a, b) => a - b),
      resumeLines: [...this.resumes].sort((a, b) => a - b),
    };
  }
}

// ---- analysis ----

/** Analyses Python source text; never fails on code that does not parse. */
export async function parsePython(sourceText: string): Promise<PySource> {
  return analyseWith(await getParser(), sourceText);
}

/** parsePython, once initPython has resolved (throws before). */
export function parsePythonSync(sourceText: string): PySource {
  if (!parserLoaded) throw new PySourceError("the Python parser is not loaded yet: await initPython() first");
  return analyseWith(parserLoaded, sourceText);
}

function analyseWith(parser: Parser, sourceText: string): PySource {
  const source = sourceText.replace(/\r\n?/g, "\n");
  const tree = parser.parse(source);
  if (!tree) throw new PySourceError("the Python parser gave no tree");
  try {
    return analyse(source, tree.rootNode);
  } finally {
    tree.delete();
  }
}

interface Scope {
  indent: number;
  kind: "def" | "class";
  qual: string;
  fn: PyScope;
  names: ScopeCollector;
}

function analyse(source: string, root: Node): PySource {
  const { leaves, continued, errors, nested } = leavesOf(root);
  const logicals = logicalLines(leaves, continued, source);
  const lines = new Set<number>();
  const statements = new Set<number>();
  const functions: PyFunction[] = [];
  const classes: PyScope[] = [];
  const stack: Scope[] = [];
  let definesOnly = true;
  let firstLine: number | undefined;
  let decorators: Logical[] = [];
  let afterDef: Scope | undefined; // the def whose body's first statement comes next (docstring check)
  const declarations = new Set<number>(); // rows of `global`, `nonlocal` and bare annotations

  const module = new ScopeCollector();
  const spans: PySource["statements"] = [];
  const close = (s: Scope): void => {
    if (s.fn.bodyLine === 0) s.fn.bodyLine = s.fn.defLine;
    s.fn.scope = s.names.finish(s.fn.endLine, "params" in s.fn ? (s.fn as PyFunction).params.map((p) => p.name) : []);
  };

  for (const l of logicals) {
    while (stack.length && stack[stack.length - 1].indent >= l.indent) close(stack.pop()!);
    const inFunction = stack.some((s) => s.kind === "def");
    const word = firstWord(l);
    const colon = topLevelIndex(l, (x) => x.text === ":");
    const codeAfterColon = colon >= 0 && colon + 1 < l.leaves.length && l.leaves[colon + 1].row === l.leaves[colon].row;

    // A function's docstring is a constant: no line event.
    const docstring = afterDef !== undefined && afterDef === stack[stack.length - 1] && onlyStrings(l);
    afterDef = undefined;

    let executable = true;
    if (docstring) executable = false;
    else if (word === "global" || word === "nonlocal") executable = false;
    else if ((word === "else" || word === "finally") && !codeAfterColon) executable = false;
    else if (inFunction && l.leaves[0].type === "identifier" && colon === 1 && topLevelIndex(l, (x) => x.text === "=") < 0) executable = false; // `x: int`
    // A declaration runs nothing and ends no block: the statement before it falls through past it.
    if (!executable && !docstring && word !== "else" && word !== "finally") declarations.add(l.row);

    const owner = stack[stack.length - 1]?.names ?? module;
    module.sees(l);
    for (const sc of stack) sc.names.sees(l);
    const bound = docstring ? undefined : statementBindings(l.leaves);
    if (bound) owner.own(l, bound);
    if (executable) {
      // Imports aside: a module is no local of a module or class frame (the tracer leaves them out).
      const simple = !COMPOUND.has(word) && !["def", "class", "@", "async", "case", "match", "global", "nonlocal", "del", "import", "from"].includes(word);
      const jumps = ["return", "raise", "break", "continue"].includes(word) || l.leaves.some((x) => x.text === "yield" || x.text === "await");
      // An import falls through too (or raises), binding no local where it binds a module.
      const through = (simple && !jumps) || word === "import" || word === "from" ? l.indent : undefined;
      const header = (word === "def" || word === "class") && !decorators.some((d) => d.indent === l.indent) ? word : undefined;
      spans.push({ line: l.row + 1, endLine: l.endRow + 1, names: identifiers(l.leaves), binds: [...new Set(bound?.binds ?? [])], simple, ...(through !== undefined ? { next: { line: -1 - through, endLine: 0 } } : {}), ...(header ? { header } : {}) });
      statements.add(l.row + 1);
      lines.add(l.row + 1);
      // Continuation rows that carry code (not just closing brackets): CPython may stop there too.
      const isHeader = word === "def" || word === "class";
      for (const x of l.leaves) if (x.row !== l.row && !PUNCT.has(x.text) && !(isHeader && x.text === "->")) lines.add(x.row + 1);
      if (!stack.length && firstLine === undefined) firstLine = l.row + 1;
    }

    if (!stack.length) {
      const defining = word === "def" || word === "class" || word === "@" || word === "import" || word === "from" || docstring || onlyStrings(l) || word === "pass" || word === "..." ||
        (l.leaves[0].type === "identifier" && !l.leaves.some((x, i) => x.text === "(" && i > 0 && (l.leaves[i - 1].type === "identifier" || l.leaves[i - 1].text === ")" || l.leaves[i - 1].text === "]")));
      if (!defining) definesOnly = false;
    }

    // Every statement inside a function extends it; its first executable one is where the body starts.
    for (const s of stack) {
      if (s.fn.bodyLine === 0 && executable) s.fn.bodyLine = l.row + 1;
      s.fn.endLine = Math.max(s.fn.endLine, l.endRow + 1);
    }
    if (word === "@") {
      decorators.push(l);
      continue;
    }
    if (word === "def" || word === "class") {
      const at = l.leaves[0].text === "async" ? 1 : 0;
      const nameLeaf = l.leaves[at + 1];
      const name = nameLeaf && nameLeaf.type === "identifier" ? nameLeaf.text : "<unnamed>";
      const top = stack[stack.length - 1];
      const qual = top ? top.qual + (top.kind === "def" ? ".<locals>." : ".") + name : name;
      const base: PyScope = {
        name,
        qualname: qual,
        defLine: l.row + 1,
        callLine: (decorators.find((d) => d.indent === l.indent)?.row ?? l.row) + 1,
        endLine: l.endRow + 1,
        bodyLine: codeAfterColon ? l.leaves[colon + 1].row + 1 : 0,
        scope: { binds: [], uses: [], deletes: false, returnLines: [], resumeLines: [], bindLines: {} },
      };
      let fn: PyScope = base;
      if (word === "def") {
        const open = l.leaves.findIndex((x, i) => i > at && x.text === "(");
        const f: PyFunction = { ...base, params: open >= 0 ? parseParams(l, open, source) : [], method: top?.kind === "class" };
        functions.push(f);
        fn = f;
      } else classes.push(base);
      const scope: Scope = { indent: l.indent, kind: word, qual, fn, names: new ScopeCollector() };
      if (!codeAfterColon) {
        stack.push(scope);
        afterDef = word === "def" ? scope : undefined;
      } else {
        // `def f(x): return x`: the body is the rest of the line.
        const body: Logical = { ...l, leaves: l.leaves.slice(colon + 1) };
        scope.names.sees(body);
        scope.names.own(body, statementBindings(body.leaves));
        close(scope);
      }
    }
    decorators = [];
  }
  while (stack.length) close(stack.pop()!);

  const loops: { line: number; endLine: number }[] = [];
  logicals.forEach((l, k) => {
    const w = firstWord(l);
    if (w !== "for" && w !== "while") return;
    let end = l.endRow;
    for (let j = k + 1; j < logicals.length && logicals[j].indent > l.indent; j++) end = Math.max(end, logicals[j].endRow);
    loops.push({ line: l.row + 1, endLine: end + 1 });
  });
  const sorted = (s: Set<number>): number[] => [...s].sort((a, b) => a - b);
  const out: PySource = {
    source,
    lines: sorted(lines),
    statementLines: sorted(statements),
    functions,
    classes,
    nested,
    module: module.finish(Math.max(0, ...logicals.map((l) => l.endRow + 1))),
    statements: branches(fallThrough(spans, logicals, declarations), logicals),
    valueNames: identifiers(leaves.filter((x, i) => leaves[i + 1]?.text !== "(" && leaves[i - 1]?.text !== "def" && leaves[i - 1]?.text !== "class")),
    loops,
    names: identifiers(leaves).sort(),
    definesOnly: definesOnly && functions.length > 0,
    errorLines: sorted(new Set([...errors].map((r) => r + 1))),
  };
  if (firstLine !== undefined) out.firstLine = firstLine;
  return out;
}

/**
 * Resolves each fall-through statement's successor: the next logical line, when it stands at the
 * same indentation (the same block); otherwise the block ends there and the successor is left open.
 * Before this, `next.line` holds -1 - indent as a mark. A def or class header's successor is the
 * first line past its body, on the same terms. Declarations in the same block are passed over.
 */
function fallThrough(spans: PySource["statements"], logicals: readonly Logical[], declarations: ReadonlySet<number>): PySource["statements"] {
  const byRow = new Map(logicals.map((l, k) => [l.row + 1, k] as const));
  for (const s of spans) {
    const mark = s.next;
    delete s.next;
    const k = byRow.get(s.line);
    if (k === undefined || (!s.header && mark === undefined)) continue;
    // A header's successor comes past its body (rows indented further); a statement's, right after it.
    const indent = s.header ? logicals[k].indent : -1 - mark!.line;
    const after = logicals.slice(k + 1).find((l) => !onlyComment(l) && (!s.header || l.indent <= indent) && !(l.indent === indent && declarations.has(l.row)));
    if (after && after.indent === indent && firstWord(after) !== "@") s.next = { line: after.row + 1, endLine: after.endRow + 1 };
  }
  return spans;
}

const onlyComment = (l: Logical): boolean => l.leaves.length === 0;

/** Sets `branch` on each `if`, `elif`, `while` and `for` header whose body starts on a row of its own. */
function branches(spans: PySource["statements"], logicals: readonly Logical[]): PySource["statements"] {
  const byRow = new Map(spans.map((s) => [s.line, s] as const));
  // A statement that runs (a declaration or docstring does not; a decorator's line is left open, as in fallThrough).
  const statement = (l: Logical | undefined): { line: number; endLine: number } | undefined => {
    const s = l && firstWord(l) !== "@" ? byRow.get(l.row + 1) : undefined;
    return s && { line: s.line, endLine: s.endLine };
  };
  const code = logicals.filter((l) => !onlyComment(l));
  code.forEach((l, k) => {
    const w = firstWord(l);
    const s = byRow.get(l.row + 1);
    if (!s || !["if", "elif", "while", "for"].includes(w) || l.leaves[0].text === "async" || l.leaves[l.leaves.length - 1].text !== ":") return;
    const body = code[k + 1] && code[k + 1].indent > l.indent ? code[k + 1] : undefined;
    let j = k + 1;
    while (j < code.length && code[j].indent > l.indent) j++;
    const after = code[j] && code[j].indent === l.indent ? code[j] : undefined;
    let no: { line: number; endLine: number } | undefined;
    if (after && firstWord(after) === "else") {
      // `else:` runs nothing itself: its body's first statement comes next (one on the same row is its own).
      const inner = code[j + 1] && code[j + 1].indent > after.indent ? code[j + 1] : undefined;
      no = after.leaves[after.leaves.length - 1].text === ":" ? statement(inner) : statement(after);
    } else if (after && !["except", "finally"].includes(firstWord(after))) no = statement(after);
    const yes = statement(body);
    if (yes || no) s.branch = { ...(yes ? { yes } : {}), ...(no ? { no } : {}) };
  });
  return spans;
}

// ---- queries ----

/** Where a frame goes from the end of a block: the statement past it, back to a loop's header, or off the end of a function's body. */
export type BlockExit = { to: { line: number; endLine: number } } | { loop: number } | { end: true };

/**
 * Where the frame goes once `stmt`, a simple statement that falls through (no `return`, `raise`,
 * `break` or `continue`), has run where it ends its block (or an `if` whose test failed or a
 * loop that ended, with no `elif` or `else` after it): past an `if` statement whose branch it
 * ends (or a loop whose `else` it ends), to the next statement, or where that statement ends a
 * block too, on from there; back to the header of the loop whose body it ends; off the end of
 * the function whose body it ends. Undefined where the file alone does not say: a `try`,
 * `with`, `match` or class block, `while True` (its jump back skips the header), the module's end.
 */
export function blockExit(src: PySource, stmt: PySource["statements"][number]): BlockExit | undefined {
  const rows = src.source.split("\n");
  const indent = (l: number): number => /^[ \t]*/.exec(rows[l - 1] ?? "")![0].length;
  const word = (l: number): string => /^\s*(@|\w+)/.exec(rows[l - 1] ?? "")?.[1] ?? "";
  // Where logical lines start: statements, and the `else:` / `finally:` clauses, which run nothing.
  const starts = [...new Set([...src.statementLines, ...rows.flatMap((r, i) => (/^\s*(else|finally)\s*:/.test(r) ? [i + 1] : []))])].sort((a, b) => a - b);
  if (["return", "raise", "break", "continue", "yield"].includes(word(stmt.line))) return undefined;
  if (!stmt.simple) {
    // An `if` whose test fails, or a loop that ends, where no `elif` or `else` clause follows: past the whole statement.
    const clause = starts.find((l) => l > stmt.endLine && indent(l) <= indent(stmt.line));
    if (!["if", "for", "while"].includes(word(stmt.line)) || (clause !== undefined && indent(clause) === indent(stmt.line) && ["elif", "else"].includes(word(clause)))) return undefined;
  }
  /** The header of the clause chain `l` is a clause of (`if` for an `elif` or `else`; a loop for its `else`). */
  const head = (l: number): number | undefined => {
    for (let k = l; ; ) {
      if (!["elif", "else"].includes(word(k))) return k;
      const prev = [...starts].reverse().find((x) => x < k && indent(x) <= indent(l));
      if (prev === undefined || indent(prev) !== indent(l)) return undefined;
      k = prev;
    }
  };
  let at = stmt.line;
  let end = stmt.endLine;
  let chain = !stmt.simple;
  for (;;) {
    const k = indent(at);
    // The next logical line past `at` (and, for a clause chain, past its other clauses) at `at`'s depth or out of it.
    const after = starts.find((l) => l > end && indent(l) <= k && !(chain && indent(l) === k && ["elif", "else"].includes(word(l))));
    if (after !== undefined && indent(after) === k) {
      const s = src.statements.find((x) => x.line === after);
      return chain && s && !["@", "global", "nonlocal", "except", "finally"].includes(word(after)) ? { to: { line: s.line, endLine: s.endLine } } : undefined;
    }
    const header = [...starts].reverse().find((l) => l < at && indent(l) < k);
    if (header === undefined) return undefined;
    const w = word(header);
    if (w === "for" || w === "while") return /^\s*while\s+(True|1)\s*:/.test(rows[header - 1]) ? undefined : { loop: header };
    if (w === "def") return at === stmt.line ? { end: true } : undefined;
    const h = ["if", "elif", "else"].includes(w) ? head(header) : undefined;
    if (h === undefined || !["if", "for", "while"].includes(word(h))) return undefined;
    // The whole `if` statement (or loop with its `else`) ends here: on from its end.
    at = h;
    end = h;
    chain = true;
  }
}

/** The bases a one-row class header names (`class C(A, B):`), none for `class C:`; undefined for any other header (keywords, calls, several rows). */
export function classBases(src: PySource, c: PyScope): string[] | undefined {
  const header = /^\s*class\s+\w+\s*(?:\(([\w.,\s]*)\))?\s*:/.exec(src.source.split("\n")[c.defLine - 1] ?? "");
  return header ? (header[1] ?? "").split(",").map((b) => b.trim()).filter(Boolean) : undefined;
}

/** The index of the bracket that closes the one at `open` in `text` (strings skipped), or -1. */
export function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      if (end < 0) return -1;
      i = end;
    } else if (ch === "(" || ch === "[" || ch === "{") depth++;
    else if (ch === ")" || ch === "]" || ch === "}") {
      if (--depth === 0) return i;
    }
  }
  return -1;
}

/** Python text without its comments (a `#` inside a string is no comment). */
export function codeOf(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const q = /^('''|"""|'|")/.exec(text.slice(i, i + 3))?.[1];
    if (q) {
      let j = i + q.length;
      while (j < text.length && !text.startsWith(q, j)) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + q.length);
      i = j + q.length - 1;
    } else if (text[i] === "#") {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    } else out += text[i];
  }
  return out;
}

/** The innermost function whose lines contain `line`. */
export function functionAt(src: PySource, line: number): PyFunction | undefined {
  let best: PyFunction | undefined;
  for (const f of src.functions) if (f.callLine <= line && line <= f.endLine && (!best || f.defLine >= best.defLine)) best = f;
  return best;
}

/** The innermost function or class whose lines contain `line`; undefined for the module level. */
export function scopeAt(src: PySource, line: number): PyScope | undefined {
  let best: PyScope | undefined;
  for (const f of [...src.functions, ...src.classes]) if (f.callLine <= line && line <= f.endLine && (!best || f.defLine >= best.defLine)) best = f;
  return best;
}

/** The enclosing scope's qualname of a scope (`f.<locals>.g` -> `f`, `C.m` -> `C`), "" at the module level. */
export function parentQualname(q: string): string {
  const i = q.endsWith(">") ? -1 : q.lastIndexOf(".");
  if (i < 0) return "";
  const head = q.slice(0, i);
  return head.endsWith(".<locals>") ? head.slice(0, -".<locals>".length) : head;
}

/** The executable line a breakpoint at `line` binds to: that line, else the next one; undefined past the end. */
export function snapLine(src: PySource, line: number): number | undefined {
  return src.lines.find((l) => l >= line);
}

/** A function by the name an entry call uses: `f`, `C.m`, or the last part of a qualified name. */
export function findFunction(src: PySource, name: string): PyFunction | undefined {
  return (
    src.functions.find((f) => f.qualname === name) ??
    src.functions.find((f) => f.qualname.endsWith("." + name) && !f.qualname.includes("<locals>")) ??
    src.functions.find((f) => f.name === name.split(".").pop())
  );
}

// ---- entry calls ----

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
