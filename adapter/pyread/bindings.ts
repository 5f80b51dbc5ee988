// The names a statement binds in the scope it runs in (assignment, loop, with and except
// targets, imports, def and class names), and a scope's names collected statement by statement:
// the locals its frame can have and the lines where it can return or resume. Read from a logical
// line's tokens, so code that does not parse still has them.
import { CLOSERS, firstWord, identifiers, OPENERS, topLevelIndex, type Leaf, type Logical } from "./tokens.js";
import type { ScopeNames } from "./source.js";

const AUGMENTED = new Set(["+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "|=", "^=", "@="]);
/** Compound statements whose header may carry a simple statement after its colon (`if x: y = 1`). */
export const COMPOUND = new Set(["if", "elif", "else", "for", "while", "try", "except", "finally", "with"]);

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

export interface Bindings {
  binds: string[];
  globals: string[];
  deletes: boolean;
}

/** What one statement binds in the scope it runs in (a `def` / `class` binds its name there). */
export function statementBindings(leaves: readonly Leaf[]): Bindings {
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
export class ScopeCollector {
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
