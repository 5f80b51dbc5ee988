// GBNF grammars built from the program itself, so that decoding can only produce a state this
// program can be in: a line the function can stop on (executable lines, per function), one of
// the four events, a depth, a function of this file, locals named by the file's identifiers.
// One grammar for each dialect: the native trajectory frame, and a JSON object for chat models.
import { parentQualname, type PySource } from "../pyread/source.js";
import { EVENT_TOKENS, EXIT_TOKENS, TOKENS, escapeText, pythonMinor } from "../format/trajectory.js";
import type { Simple, ValueType } from "../format/valueType.js";
import type { Next } from "./shapes.js";

/** The comprehensions that 3.12+ runs inline. */
const INLINED = new Set(["<listcomp>", "<dictcomp>", "<setcomp>"]);

/** Whether a comprehension, generator expression or lambda named `name` opens a frame of its own on `python` (unknown: as on 3.11). */
export function opensFrame(name: string, python: string | undefined): boolean {
  return !INLINED.has(name) || python === undefined || pythonMinor(python) < 12;
}

/** The lines a frame of one function (or class body, or the module) can stand on. */
export interface ScopeLines {
  /** The qualname, or "<module>". */
  func: string;
  kind: "module" | "def" | "class";
  lines: number[];
  /** Frames of their own that this scope's code opens (comprehensions, lambdas), with the lines they span. */
  nested: { func: string; lines: number[] }[];
  /**
   * The names of comprehensions this scope's frame runs inline (3.12+), each with the lines of
   * those that name it: its locals while they run, on those lines.
   */
  inlined: Map<string, number[]>;
}

export const MODULE = "<module>";

/**
 * Which lines belong to which frame: a function's body lines and its call line belong to it; its
 * decorator and `def` lines (run when it is defined) also belong to the enclosing scope.
 * `python`: the minor version whose frames these are (adapter/model/pyversion.ts); unknown, 3.11's.
 */
export function scopeTable(src: PySource, python?: string): ScopeLines[] {
  const scopes = [
    ...src.functions.map((f) => ({ s: f, kind: "def" as const })),
    ...src.classes.map((c) => ({ s: c, kind: "class" as const })),
  ];
  const byQual = new Map<string, ScopeLines>();
  const moduleLines = new Set<number>([1]); // a <module> call event stands on the code's first line
  const table: ScopeLines[] = [{ func: MODULE, kind: "module", lines: [], nested: [], inlined: new Map() }];
  const sets = new Map<string, Set<number>>([[MODULE, moduleLines]]);
  for (const { s, kind } of scopes) {
    const entry: ScopeLines = { func: s.qualname, kind, lines: [], nested: [], inlined: new Map() };
    byQual.set(s.qualname, entry);
    table.push(entry);
    sets.set(s.qualname, new Set([s.callLine, s.defLine]));
  }
  const innermost = (line: number): (typeof scopes)[number] | undefined => {
    let best: (typeof scopes)[number] | undefined;
    for (const x of scopes) if (x.s.callLine <= line && line <= x.s.endLine && (!best || x.s.defLine >= best.s.defLine)) best = x;
    return best;
  };
  for (const line of src.lines) {
    const x = innermost(line);
    if (!x) {
      moduleLines.add(line);
      continue;
    }
    const header = line < x.s.bodyLine || line === x.s.defLine;
    if (line >= x.s.bodyLine) sets.get(x.s.qualname)!.add(line);
    if (header) {
      const parent = parentQualname(x.s.qualname);
      (sets.get(parent && sets.has(parent) ? parent : MODULE) ?? moduleLines).add(line);
    }
  }
  for (const e of table) e.lines = [...sets.get(e.func)!].sort((a, b) => a - b);
  // A comprehension or lambda belongs to the scope whose code runs it (one in a def line's
  // defaults or decorators, to the enclosing scope); its frame stands on the lines it spans.
  // One inside another (a generator expression in a list comprehension) is named after it; one
  // that runs inline opens no frame, and what it holds is named as if it were not there.
  const byFunc = new Map<string, Set<number>>();
  const owners = new Map<string, ScopeLines>();
  const named = new Map<PySource["nested"][number], string>();
  const outerFirst = [...src.nested].sort((a, b) => a.start - b.start || b.end - a.end);
  for (const n of outerFirst) {
    const x = innermost(n.line);
    const ownerQual = !x ? MODULE : n.line < x.s.bodyLine || n.line === x.s.defLine ? parentQualname(x.s.qualname) || MODULE : x.s.qualname;
    const owner = byQual.get(ownerQual) ?? table[0];
    const inside = (m: typeof n): boolean => m !== n && m.start <= n.start && n.end <= m.end && !(m.outer && m.outer.start <= n.start && n.end <= m.outer.end);
    const parent = outerFirst.filter((m) => inside(m) && named.has(m)).at(-1);
    if (!opensFrame(n.name, python)) {
      // Its locals are those of the frame that runs it while it runs (inside a lambda or generator expression, that frame's, which has its names already).
      if (!parent) {
        const lines = [n.line, ...src.lines.filter((l) => l > n.line && l <= n.endLine)];
        for (const x of n.names) owner.inlined.set(x, [...new Set([...(owner.inlined.get(x) ?? []), ...lines])].sort((a, b) => a - b));
      }
      continue;
    }
    const func = parent ? `${named.get(parent)}.${n.name}` : owner.kind === "module" ? n.name : owner.func + (owner.kind === "def" ? ".<locals>." : ".") + n.name;
    named.set(n, func);
    if (!byFunc.has(func)) {
      byFunc.set(func, new Set());
      owners.set(func, owner);
    }
    const lines = byFunc.get(func)!;
    lines.add(n.line);
    for (const l of src.lines) if (l > n.line && l <= n.endLine) lines.add(l);
  }
  for (const [func, lines] of byFunc) owners.get(func)!.nested.push({ func, lines: [...lines].sort((a, b) => a - b) });
  return table;
}

/** The function names a frame of this scope may carry: the scope and the comprehensions, lambdas inside it. */
export function scopeFuncNames(s: ScopeLines): string[] {
  return [s.func, ...s.nested.map((n) => n.func)];
}

/** The scope of a frame's function name (a comprehension belongs to the scope that holds it). */
export function scopeOfFunc(table: readonly ScopeLines[], func: string): ScopeLines | undefined {
  return table.find((s) => scopeFuncNames(s).includes(func));
}

/** The lines a frame of `func` (the scope itself or a comprehension, lambda inside it) can stand on. */
export function funcLines(s: ScopeLines, func: string): number[] {
  return func === s.func ? s.lines : (s.nested.find((n) => n.func === func)?.lines ?? []);
}

/** Header rules (line, depth, function) for every function a frame of this program can be in; their names in `hdrs` (GBNF names: letters, digits, "-"). */
function headerRules(table: readonly ScopeLines[], header: (lines: string, func: string) => string): { rules: string[]; hdrs: string[]; lineRule: Map<string, string> } {
  const rules: string[] = [];
  const hdrs: string[] = [];
  const lineRule = new Map<string, string>();
  table.forEach((s, i) => {
    scopeFuncNames(s).forEach((func, j) => {
      const lines = funcLines(s, func);
      if (!lines.length) return;
      const l = `l${i}-${j}`;
      rules.push(`${l} ::= ${lines.map((x) => lit(String(x))).join(" | ")}`);
      rules.push(`h${i}-${j} ::= ${header(l, func)}`);
      hdrs.push(`h${i}-${j}`);
      lineRule.set(func, l);
    });
  });
  return { rules, hdrs, lineRule };
}

/** A GBNF string literal. */
export const lit = (s: string): string => JSON.stringify(s);

const TEXT_RULES = [
  // Free text never holds "<|" (the format escapes it as "<\|"); reprs stay on one line.
  `txt ::= tc+`,
  `tc ::= [^<\\n] | "<"+ [^<|\\n]`,
  `otxt ::= oc+`,
  `oc ::= [^<] | "<"+ [^<|]`,
  `dep ::= [0-9] | [1-9] [0-9]`,
];

// A Python literal's repr, as the format writes it (never "<|": a "<" is never followed by "|").
const QUOTED = (q: string): string => {
  const other = q === "'" ? "'" : '\\"';
  return `"${other}" ([^${other}\\\\\\n<] | "\\\\" [^\\n<] | "<" [^|${other}\\n])* "${other}"`;
};
// Numbers as repr() writes them, bounded so that a model that writes digits on and on ends: a float
// has at most 17 significant digits (16 before the point without an exponent), an int here 40.
const LITERALS: Record<Simple, string> = {
  int: `"-"? ([0-9] | [1-9] [0-9]{1,39})`,
  float: `"-"? ([0-9]{1,16} "." [0-9]{1,17} | [0-9] ("." [0-9]{1,16})? "e" [-+] [0-9]{2,3} | "inf") | "nan"`,
  bool: `"True" | "False"`,
  str: `${QUOTED("'")} | ${QUOTED('"')}`,
  bytes: `"b" (${QUOTED("'")} | ${QUOTED('"')})`,
  None: `"None"`,
};

/**
 * The GBNF of a literal of type `t` (a hole's return annotation, adapter/format/valueType.ts), as
 * one parenthesized expression over the text rules: a `-> float` hole's value is a float. A part
 * of no known type (null) is any text; containers keep their brackets and separators.
 */
export function literalGrammar(t: ValueType | null): string {
  if (t === null) return "tc+";
  const [kind] = t;
  const seq = (e: string): string => `(${e} (", " ${e})*)`;
  switch (kind) {
    case "list":
      return `("[" ${seq(literalGrammar(t[1] as ValueType | null))}? "]")`;
    case "set":
      return `("{" ${seq(literalGrammar(t[1] as ValueType | null))} "}" | "set()")`;
    case "frozenset":
      return `("frozenset({" ${seq(literalGrammar(t[1] as ValueType | null))} "})" | "frozenset()")`;
    case "dict": {
      const pair = `${literalGrammar(t[1] as ValueType | null)} ": " ${literalGrammar(t[2] as ValueType | null)}`;
      return `("{" ${seq(`(${pair})`)}? "}")`;
    }
    case "tuple...": {
      const e = literalGrammar(t[1] as ValueType | null);
      return `("()" | "(" ${e} ",)" | "(" ${e} (", " ${e})+ ")")`;
    }
    case "tuple": {
      const es = (t.slice(1) as (ValueType | null)[]).map(literalGrammar);
      return es.length === 0 ? `"()"` : es.length === 1 ? `("(" ${es[0]} ",)")` : `("(" ${es.join(` ", " `)} ")")`;
    }
    case "union":
      return `(${(t.slice(1) as ValueType[]).map(literalGrammar).join(" | ")})`;
    case "class":
      // The constructor's call; its arguments are read as literals where the value is built.
      return `(${lit(`${t[1]}(`)} tc* ")")`;
    default:
      return `(${LITERALS[kind]})`;
  }
}

/** A whole grammar for one literal of type `t` (any text where the type is not known): a hole's value asked alone. */
export function valueGrammar(t: ValueType | null): string {
  return [`root ::= ${literalGrammar(t)}`, ...TEXT_RULES].join("\n");
}

/** The names locals can have: the file's identifiers (any identifier when there are too many to list). */
function localNames(names: readonly string[]): string[] | undefined {
  const ids = names.filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  return ids.length === 0 || ids.length > 5000 ? undefined : ids;
}

function namesRule(names: readonly string[]): string {
  const ids = localNames(names);
  return ids ? `nm ::= ${ids.map(lit).join(" | ")}` : `nm ::= [A-Za-z_] [A-Za-z0-9_]*`;
}

/**
 * A frame has no more locals than the file has names: the bound stops a model that lists locals
 * on and on (a name it writes twice is read as its last value).
 */
function localsRule(arg: string, names: readonly string[]): string {
  const n = localNames(names)?.length;
  return `locs ::= (${arg} nm "=" txt)${n === undefined ? "*" : `{0,${n}}`}`;
}

export interface DeltaTarget {
  depth: number;
  func: string;
}

/**
 * The grammar of one native frame or exit and its newline. Generation then stops at the model's
 * end token (`<|action_sep|>` in our models, which is their EOS). `tok` writes a special token as GBNF (a token reference where the
 * model has it as one token). `delta`: the frame the locals may be written against (a line step
 * inside the same call), the only case where `<|arg_sep|>..` is allowed. `python`: the session's
 * version, whose frames alone it admits (see scopeTable).
 */
export function nativeGrammar(src: PySource, tok: (special: string) => string, delta?: DeltaTarget, python?: string): string {
  const { rules, hdrs, lineRule } = headerRules(scopeTable(src, python), (l, func) => `${l} " " dep " " ${lit(func)}`);
  const A = (t: string): string => tok(t);
  const ev = EVENT_TOKENS;
  const frameAlts = [
    `${A(ev.call)} hdr out? locs`,
    `${A(ev.line)} hdr out? locs`,
    `${A(ev.return)} hdr out? locs val?`,
    `${A(ev.exception)} hdr out? locs val`,
  ];
  const dl = delta && lineRule.get(delta.func);
  if (delta && dl) {
    rules.push(`dh ::= ${dl} ${lit(` ${delta.depth} ${delta.func}`)}`);
    frameAlts.push(`${A(ev.line)} dh out? ${A(TOKENS.arg)} ".." locs`);
  }
  const exits = `(${A(EXIT_TOKENS.normal)} out? | ${A(EXIT_TOKENS.error)} out? val? | ${A(EXIT_TOKENS.limit)} out?)`;
  return [
    `root ::= (frame | exit) "\\n"`,
    `frame ::= ${A(TOKENS.frame)} (${frameAlts.join(" | ")})`,
    `exit ::= ${exits}`,
    `hdr ::= ${hdrs.join(" | ")}`,
    localsRule(A(TOKENS.arg), src.names),
    `out ::= ${A(TOKENS.out)} otxt`,
    `val ::= ${A(TOKENS.value)} txt`,
    namesRule(src.names),
    ...TEXT_RULES,
    ...rules,
  ].join("\n");
}

/**
 * The grammar of one native frame or exit that `next` allows (adapter/rules/reach.ts): each
 * kind of frame with its own lines, depth, function and locals (the parameters first, in order,
 * then only names that function binds; changed locals only where the format writes them so),
 * a value where that event has one. Generation stops at the model's end token, as above.
 */
export function reachGrammar(next: Next, tok: (special: string) => string): string {
  const rules: string[] = [];
  const interned = new Map<string, string>();
  /** A rule for `body`, shared by every alternative that needs the same one. */
  const rule = (prefix: string, body: string): string => {
    let name = interned.get(prefix + body);
    if (!name) {
      name = `${prefix}${interned.size}`;
      interned.set(prefix + body, name);
      rules.push(`${name} ::= ${body}`);
    }
    return name;
  };
  const arg = tok(TOKENS.arg);
  const names = (ns: readonly string[]): string | undefined => (ns.length ? rule("n", ns.map(lit).join(" | ")) : undefined);
  /** `name=` and its value: the one it must have, else how it must start, else anything. */
  // (as the format writes it: "<|" in a value is escaped)
  // (a value of a declared type, `typed`: the literal grammar of the hole's annotation)
  const valued = (n: string, value: string | undefined, starts?: readonly string[], typed?: string): string =>
    value !== undefined
      ? lit(`${n}=${escapeText(value)}`)
      : typed
        ? `${lit(n + "=")} ${typed}`
        : starts
          ? `${lit(n + "=")} (${starts.map(lit).join(" | ")}) tc*`
          : `${lit(n + "=")} txt`;
  // Names whose value the program fixes (reach.ts: madeValues) are written with it, typed names as their type, the rest freely.
  const some = (ns: readonly string[], made: ReadonlyMap<string, string>, typed?: ReadonlyMap<string, string>): string => {
    const bound = (x: string): boolean => made.has(x) || !!typed?.has(x);
    const free = names(ns.filter((x) => !bound(x)));
    const alts = [...(free ? [`${free} "=" txt`] : []), ...ns.filter(bound).map((x) => valued(x, made.get(x), undefined, typed?.get(x)))];
    return alts.length ? ` (${arg} ${rule("s", alts.join(" | "))}){0,${ns.length}}` : "";
  };
  const alts = next.frames.map((f) => {
    const g = f.func;
    // The values the program fixes (reach.ts: madeValues) and those the statement just run computed (`values`).
    const made = f.values?.size ? new Map([...g.made, ...f.values]) : g.made;
    const lines = rule("l", f.lines.map((l) => lit(String(l))).join(" | "));
    const depth = f.depth === "any" ? "dep" : f.depth === "deeper" ? "dep1" : lit(String(f.depth));
    const optional = f.optional ?? g.optional;
    // Names a line step must write (reach.ts: `must`) may stand anywhere among the others: one alternative per order.
    const must = f.must ?? [];
    // A namespace's names so far come first, in order (reach.ts: `keep`); then the rest.
    const kept = new Set((f.keep ?? []).map((k) => k.name));
    const typed = f.typed;
    const keep = (f.keep ?? []).map((k) => ` ${arg} ${valued(k.name, k.value ?? made.get(k.name), k.starts, typed?.get(k.name))}`).join("");
    const params = g.required.map((p) => ` ${arg} ${valued(p, made.get(p), undefined, typed?.get(p))}`).join("") + keep;
    const rest = some(optional.filter((x) => !must.includes(x) && !kept.has(x)), made, typed);
    const one = (n: string): string => valued(n, made.get(n), undefined, typed?.get(n));
    const full =
      params +
      (must.length ? ` (${permutations(must).map((o) => rule("w", `${rest} ${o.map((n) => `${arg} ${one(n)}${rest}`).join(" ")}`.trim())).join(" | ")})` : rest);
    // Which locals a line step may change, and how their values start (reach.ts: deltaChanges).
    const changing = f.changes ? [...f.changes.keys()].filter((n) => g.required.includes(n) || optional.includes(n)) : [...g.required, ...optional];
    const change = (n: string): string => valued(n, made.get(n), f.changes?.get(n), typed?.get(n));
    const others = changing.length ? ` (${arg} ${rule("c", changing.map(change).join(" | "))}){0,${changing.length}}` : "";
    const delta =
      ` ${arg} ".."` +
      (must.length
        ? ` (${permutations(must).map((o) => rule("m", `${others} ${o.map((n) => `${arg} ${change(n)}${others}`).join(" ")}`.trim())).join(" | ")})`
        : others);
    const locals = f.locals === "full" ? full : f.locals === "delta" ? delta : ` (${rule("d", delta.trim())} | ${rule("u", full.trim() || '""')})`;
    const known =
      f.valueIs !== undefined ? ` ${tok(TOKENS.value)} ${lit(escapeText(f.valueIs))}` : f.valueTyped !== undefined ? ` ${tok(TOKENS.value)} ${f.valueTyped}` : " val";
    // A computed print's output, exactly (none where it writes nothing).
    const out = f.stdout === undefined ? " out?" : f.stdout ? ` ${tok(TOKENS.out)} ${lit(escapeText(f.stdout))}` : "";
    const value = f.value === "yes" ? known : f.value === "maybe" ? ` (${known.trim()})?` : "";
    return rule("a", `${tok(EVENT_TOKENS[f.event])} ${lines} " " ${depth} ${lit(" " + g.func)}${out}${locals}${value}`);
  });
  const exits = next.exits.map((e) => `${tok(EXIT_TOKENS[e])} out?${e === "error" ? " val?" : ""}`);
  const root = [...(alts.length ? [`${tok(TOKENS.frame)} (${alts.join(" | ")})`] : []), ...exits];
  return [
    `root ::= (${root.join(" | ")}) "\\n"`,
    `out ::= ${tok(TOKENS.out)} otxt`,
    `val ::= ${tok(TOKENS.value)} txt`,
    `dep1 ::= [1-9] | [1-9] [0-9]`,
    ...TEXT_RULES,
    ...rules,
  ].join("\n");
}

function permutations<T>(xs: readonly T[]): T[][] {
  if (xs.length <= 1) return [[...xs]];
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]));
}

// A JSON string. As in the native format, "<|" never appears in it: that is a special token's text.
const JSON_STRING = [
  String.raw`js ::= "\"" jc* "\""`,
  String.raw`jc ::= [^"\\<\x00-\x1f] | esc | "<"+ ([^"\\<|\x00-\x1f] | esc)`,
  String.raw`esc ::= "\\" (["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F])`,
];

/**
 * The grammar of one state as JSON, for chat models:
 * {"event": "line", "line": 3, "function": "f", "depth": 0, "locals": {"x": "1"}, "value": "...", "stdout": "..."}
 * or {"exit": "normal" | "error", "value": "...", "stdout": "..."}.
 */
export function jsonGrammar(src: PySource, python?: string): string {
  const { rules, hdrs } = headerRules(scopeTable(src, python), (l, func) => `"\\"line\\": " ${l} ", \\"function\\": " ${lit(JSON.stringify(func))}`);
  return [
    `root ::= frame | exit`,
    `frame ::= "{\\"event\\": " ev ", " hdr ", \\"depth\\": " dep ", \\"locals\\": {" (pair (", " pair)*)? "}" (", \\"value\\": " js)? (", \\"stdout\\": " js)? "}"`,
    `exit ::= "{\\"exit\\": " ("\\"normal\\"" | "\\"error\\"") (", \\"value\\": " js)? (", \\"stdout\\": " js)? "}"`,
    `ev ::= "\\"call\\"" | "\\"line\\"" | "\\"return\\"" | "\\"exception\\""`,
    `hdr ::= ${hdrs.join(" | ")}`,
    `pair ::= "\\"" nm "\\": " js`,
    ...JSON_STRING,
    namesRule(src.names),
    `dep ::= [0-9] | [1-9] [0-9]`,
    ...rules,
  ].join("\n");
}

/** The grammar of one JSON string (an expression's repr). */
export const jsonStringGrammar = (): string => [`root ::= js`, ...JSON_STRING].join("\n");
