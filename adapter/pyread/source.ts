// What reading a Python file without running it gives (PySource: its executable lines,
// statements, functions, classes, loops and the names each scope binds), and the questions the
// rest of the adapter asks of it: which function or scope holds a line, where a breakpoint binds,
// which function an entry call names, a class's bases, where a frame goes past the end of a
// block. The reading itself is parse.ts; the types and their lookups stand apart from it so that
// code that only reads a PySource does not load tree-sitter.

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
