// A Python file's tokens and logical lines, with tree-sitter's tree used as a tolerant
// tokenizer: its leaves in source order (a string literal is one leaf), grouped into logical
// lines the way Python's own tokenizer splits them, recovering from brackets that were never
// closed. Code that does not parse (unfinished functions, syntax errors) still gets its lines
// this way, and everything else the reader finds is read from these lines.
import type { Node } from "web-tree-sitter";
import type { PyNested } from "./source.js";

export interface Leaf {
  type: string;
  text: string;
  row: number; // 0-based
  col: number;
  start: number; // UTF-16 offsets into the source
  end: number;
}

export const OPENERS = new Set(["(", "[", "{"]);
export const CLOSERS = new Set([")", "]", "}"]);
/** Words that may continue an expression on a new row inside brackets. */
const CONTINUING = new Set(["for", "async", "if", "else", "in", "not", "and", "or", "is", "lambda", "await"]);
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
export function leavesOf(root: Node): { leaves: Leaf[]; continued: Set<number>; errors: Set<number>; nested: PyNested[] } {
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

export interface Logical {
  leaves: Leaf[];
  row: number;
  endRow: number;
  indent: number;
}

/** Splits leaves into logical lines, as Python's tokenizer does, recovering from unclosed brackets. */
export function logicalLines(leaves: Leaf[], continued: Set<number>, source: string): Logical[] {
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
export const onlyStrings = (l: Logical): boolean => l.leaves.every((x) => isString(x) || x.text === "(" || x.text === ")");

/** Index of the first leaf at bracket depth 0 (relative to the line) satisfying `pred`, else -1. */
export function topLevelIndex(l: Logical, pred: (x: Leaf) => boolean, from = 0): number {
  let depth = 0;
  for (let i = 0; i < l.leaves.length; i++) {
    const x = l.leaves[i];
    if (i >= from && depth === 0 && pred(x)) return i;
    if (OPENERS.has(x.text)) depth++;
    else if (CLOSERS.has(x.text)) depth = Math.max(0, depth - 1);
  }
  return -1;
}

export const firstWord = (l: Logical): string => (l.leaves[0].text === "async" && l.leaves[1] ? l.leaves[1].text : l.leaves[0].text);

/** The identifiers among leaves, also those inside an f-string's replacement fields (a string is one leaf). */
export function identifiers(leaves: readonly Leaf[]): string[] {
  const out = new Set<string>();
  for (const x of leaves) {
    if (x.type === "identifier") out.add(x.text);
    else if (x.type === "string" && /^(?:[rRbB]?[fF]|[fF][rR])/.test(x.text))
      for (const field of x.text.match(/\{[^{}]*\}/g) ?? []) for (const id of field.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) out.add(id);
  }
  return [...out];
}
