// The program's scopes as the frames of a trace see them (FuncShape): the lines each can stand
// on, where it is called, starts and returns, the names its locals can have (parameters in
// CPython's order, the names it binds, a closure's free variables), and the values some names
// hold wherever they are bound (a function's or a plain class's repr). Built once per program
// from what pyread/ read and the scope table the grammar shares (grammar.ts); Reach reads these
// shapes at every step, and each is checked against real traces in test/reach.test.ts.
import { classBases, type PyFunction, type PyScope, type PySource, type ScopeNames } from "../pyread/source.js";
import { funcLines, scopeFuncNames, scopeTable } from "./grammar.js";
import type { FuncShape } from "./shapes.js";

/**
 * Every frame shape of the program, by function name (`<module>`, a qualname, a comprehension's
 * or lambda's name): for the session's `python` (a minor version; unknown, 3.11's), where
 * `globals` are the names some function declares `global` (a function may rebind them).
 */
export function funcShapes(src: PySource, globals: ReadonlySet<string>, python?: string): Map<string, FuncShape> {
  const funcs = new Map<string, FuncShape>();
  const byQual = new Map(src.functions.map((f) => [f.qualname, f] as const));
  const classes = new Map(src.classes.map((c) => [c.qualname, c] as const));
  for (const s of scopeTable(src, python)) {
    for (const func of scopeFuncNames(s)) {
      const lines = funcLines(s, func);
      if (!lines.length) continue;
      if (func !== s.func) {
        const names = new Set<string>();
        for (const n of src.nested) if (func.endsWith(n.name) && lines.includes(n.line)) n.names.forEach((x) => names.add(x));
        funcs.set(func, { func, kind: "nested", lines, callLines: lines, returnLines: lines, required: [], optional: [...names], deletes: true, name: func, inlined: new Map(), made: new Map() });
        continue;
      }
      const f = byQual.get(func);
      const c = classes.get(func);
      const names: ScopeNames = f?.scope ?? c?.scope ?? src.module;
      // Checked on real traces of 3.10-3.13: a module starts on its first statement, a function on
      // the first of its body (its header where the body has none, only a docstring), a class body
      // where its call stands (its first decorator, else its header).
      const firstLine = s.kind === "module" ? src.firstLine : s.kind === "class" ? c?.callLine : f?.bodyLine || undefined;
      const kind = s.kind;
      const inLines = (ls: number[]): number[] => ls.filter((l) => lines.includes(l));
      const params = f ? cpythonOrder(f) : [];
      // A method that calls super() holds its class in a cell, which the tracer lists as `__class__`.
      const free = f ? [...freeNames(src, f), ...(f.method && f.scope.uses.includes("super") ? ["__class__"] : [])] : [];
      const returns = inLines(names.returnLines);
      // An inline comprehension's locals appear while it runs and are gone after it: a line step may then write locals in full.
      const deletes = names.deletes || s.inlined.size > 0;
      funcs.set(func, {
        func,
        kind,
        lines,
        callLines: kind === "module" ? [lines[0]] : [...new Set([f?.callLine ?? c!.callLine, ...inLines(names.resumeLines)])],
        ...(firstLine !== undefined && lines.includes(firstLine) ? { firstLine, firstLines: firstRows(src, firstLine, kind, lines) } : {}),
        returnLines: kind === "def" && returns.length ? returns : lines,
        required: names.deletes ? [] : params,
        optional: [...new Set([...(names.deletes ? params : []), ...names.binds, ...free, ...s.inlined.keys()])].filter((n) => !params.includes(n) || names.deletes),
        deletes,
        name: func.split(".").pop()!,
        bindLines: names.bindLines,
        inlined: s.inlined,
        made: madeValues(src, names.bindLines, globals),
      });
    }
  }
  return funcs;
}

/**
 * The rows a frame's first line event can stand on: any row of its first statement that carries
 * code (CPython may stop on a continuation row). A module's docstring runs, but the canonical
 * layout the model reads has none: its states, mapped back, start on the statement after it.
 */
function firstRows(src: PySource, first: number, kind: FuncShape["kind"], lines: number[]): number[] {
  const stmt = src.statements.find((x) => x.line === first);
  const rows = (x: typeof stmt): number[] => (x ? lines.filter((l) => x.line <= l && l <= x.endLine) : []);
  const docstring = kind === "module" && stmt !== undefined && stmt.simple && !stmt.names.length && /^\s*[rRuUbBfF]*("|')/.test(src.source.split("\n")[first - 1] ?? "");
  return [...new Set([first, ...rows(stmt), ...(docstring ? rows(src.statements.find((x) => x.line > stmt.endLine)) : [])])];
}

/** A closure's free variables: names it uses that an enclosing function binds. */
function freeNames(src: PySource, f: PyFunction): string[] {
  const outer = new Set<string>();
  for (let q = f.qualname; q.includes(".<locals>."); ) {
    q = q.slice(0, q.lastIndexOf(".<locals>."));
    const g = src.functions.find((x) => x.qualname === q);
    if (!g) break;
    g.params.forEach((p) => outer.add(p.name));
    g.scope.binds.forEach((n) => outer.add(n));
  }
  return f.scope.uses.filter((n) => outer.has(n));
}

// Base classes whose class keeps type's repr (`<class 'module.Name'>`): builtins and exceptions. An
// Enum's metaclass writes `<enum 'Name'>`, a class of an unknown module may have any metaclass.
const PLAIN_BASES = new Set(["object", "int", "float", "complex", "str", "bytes", "list", "dict", "set", "frozenset", "tuple", "BaseException", "Exception"]);
const PLAIN_DECORATOR = /^\s*@\s*((dataclasses\.)?dataclass\b|(functools\.)?total_ordering\s*$)/;

/**
 * The repr each name of a scope has wherever its frame holds it, for the names that only
 * undecorated defs, or plain classes of a script, bind there: the tracer writes a function as
 * `<function QUAL at 0x...>` and a class run as a script's code as `<class '__main__.QUAL'>`
 * (classes inside functions aside: a call's module is named after its file).
 */
function madeValues(src: PySource, bindLines: Record<string, number[]> | undefined, globals: ReadonlySet<string>): Map<string, string> {
  const rows = src.source.split("\n");
  const plain = (c: PyScope, seen: Set<PyScope>): boolean => {
    if (seen.has(c) || c.qualname.includes("<locals>")) return false;
    seen.add(c);
    for (let l = c.callLine; l < c.defLine; l++) if (!PLAIN_DECORATOR.test(rows[l - 1] ?? "")) return false;
    const bases = classBases(src, c);
    return (
      bases !== undefined &&
      bases.every((b) => {
        if (PLAIN_BASES.has(b) || (/^\w*(Error|Exception|Warning)$/.test(b) && !/Enum|Flag/.test(b))) return true;
        const base = src.classes.find((x) => x.qualname === b);
        return base !== undefined && plain(base, seen);
      })
    );
  };
  const made = (line: number, name: string): string | undefined => {
    const f = src.functions.find((x) => x.defLine === line && x.name === name);
    if (f) return f.callLine === f.defLine ? `<function ${f.qualname} at 0x...>` : undefined;
    const c = src.classes.find((x) => x.defLine === line && x.name === name);
    return c && plain(c, new Set()) ? `<class '__main__.${c.qualname}'>` : undefined;
  };
  const out = new Map<string, string>();
  for (const [name, lines] of Object.entries(bindLines ?? {})) {
    if (globals.has(name)) continue; // a function may rebind it
    const values = new Set(lines.map((l) => made(l, name)));
    const [v] = values;
    if (values.size === 1 && v !== undefined) out.set(name, v);
  }
  return out;
}

/** Parameters in the order CPython lists a frame's locals: positional, keyword-only, *args, **kwargs. */
function cpythonOrder(f: PyFunction): string[] {
  const order = ["positional_only", "positional", "keyword_only", "var_positional", "var_keyword"];
  return order.flatMap((k) => f.params.filter((p) => p.kind === k).map((p) => p.name));
}
