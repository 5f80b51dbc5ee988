// Reads a Python file, without Python, into a PySource: executable lines, statements with the
// statement each falls through or branches to, functions with their parameters and line ranges,
// classes, loops. It never fails on code that does not parse (unfinished functions, syntax
// errors, missing imports): statements are recovered from tokens, brackets and indentation
// (tokens.ts), and the names they bind from those tokens (bindings.ts).
import type { Node, Parser } from "web-tree-sitter";
import { PySourceError, type PyFunction, type PyParam, type PyScope, type PySource } from "./source.js";
import { getParser, loadedParser } from "./parser.js";
import { CLOSERS, firstWord, identifiers, leavesOf, logicalLines, onlyStrings, OPENERS, topLevelIndex, type Leaf, type Logical } from "./tokens.js";
import { COMPOUND, ScopeCollector, statementBindings } from "./bindings.js";

/** Tokens that put no code on a row of their own. */
const PUNCT = new Set([")", "]", "}", ",", ":", ";"]);

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

// ---- analysis ----

/** Analyses Python source text; never fails on code that does not parse. */
export async function parsePython(sourceText: string): Promise<PySource> {
  return analyseWith(await getParser(), sourceText);
}

/** parsePython, once initPython has resolved (throws before). */
export function parsePythonSync(sourceText: string): PySource {
  const parser = loadedParser();
  if (!parser) throw new PySourceError("the Python parser is not loaded yet: await initPython() first");
  return analyseWith(parser, sourceText);
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
