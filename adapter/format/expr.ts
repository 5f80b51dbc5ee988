// A small evaluator of Python expressions over a state's locals (reprs), for breakpoint
// conditions, hovers, watches and the debug console in every mode. It never runs code: it
// reads literals and computes with Python's own rules on the values it can read, and refuses
// (ExprError) everything else: calls other than a few builtins and the methods of built-in values
// that change nothing (s.split(), d.items()), attributes of other objects, names not in scope.
import {
  type PyValue, MAX_NESTING, MAX_REPR, ReprTooLong, ValueSyntaxError, cutText, extentOf, parseRepr, literalToRepr, literalToStr,
  readNumber, readString, reprPreview, TYPE_NAMES,
} from "./values.js";

export class ExprError extends Error {}
/** An expression whose value or work passes a bound: no other way of evaluating it would fare better. */
export class ExprTooLarge extends ExprError {}

/** Characters of an expression (also of a value the debug console sets a variable to). */
export const MAX_EXPRESSION_LENGTH = 10_000;
const MAX_DEPTH = 100; // nesting of an expression
const MAX_ITEMS = 1_000_000; // elements or characters of a computed value
const MAX_BITS = 100_000; // bits of a computed integer
// A value an operation builds prints in at most MAX_REPR characters and nests at most
// MAX_NESTING deep: ['a' * 10**6] * 10**6 holds one string a million times, cheap to hold,
// a terabyte to print. Evaluations run on the adapter's only thread, between requests.
/** Work of one evaluation: elements visited, copied or compared, nodes evaluated (a fraction of a second). */
const MAX_STEPS = 5_000_000;
/** Characters of a value or literal quoted in a message. */
const QUOTED = 200;

// ---------------------------------------------------------------------------------------------
// Tokens

type Tok =
  | { k: "lit"; v: PyValue; pos: number }
  | { k: "name"; v: string; pos: number }
  | { k: "op"; v: string; pos: number }
  | { k: "end"; v: ""; pos: number };

const OPS = ["**", "//", "<<", ">>", "<=", ">=", "==", "!=", ":=", "->", "+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "=", "!"];
const KEYWORDS = new Set(["and", "or", "not", "in", "is", "if", "else", "lambda", "await", "yield", "for", "async", "None", "True", "False"]);

export function tokenize(src: string): Tok[] {
  if (src.length > MAX_EXPRESSION_LENGTH) throw new ExprError(`expression longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const toks: Tok[] = [];
  let depth = 0;
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "\n" && depth === 0 && src.slice(i).trim() !== "") throw new ExprError("expected a single expression (found a line break)");
    if (/\s/.test(c) || (c === "\\" && src[i + 1] === "\n")) {
      i += c === "\\" ? 2 : 1;
      continue;
    }
    if (c === "#") throw new ExprError("comments are not supported in an expression");
    try {
      const s = readString(src, i);
      if (s) {
        const prev = toks[toks.length - 1];
        // Adjacent literals are one: 'a' 'b' == 'ab' (only string literals make str/bytes tokens).
        if (prev?.k === "lit" && (prev.v.t === "str" || prev.v.t === "bytes")) {
          if (prev.v.t !== s.value.t) throw new ExprError("cannot mix bytes and nonbytes literals");
          prev.v = prev.v.t === "str" ? { t: "str", v: prev.v.v + (s.value as { v: string }).v } : { t: "bytes", v: [...prev.v.v, ...(s.value as { v: number[] }).v] };
        } else toks.push({ k: "lit", v: s.value, pos: i });
        i = s.end;
        continue;
      }
      const n = isDigitAt(src, i) || (c === "." && isDigitAt(src, i + 1)) ? readNumber(src, i) : undefined;
      if (n) {
        toks.push({ k: "lit", v: n.value, pos: i });
        i = n.end;
        continue;
      }
    } catch (e) {
      if (e instanceof ValueSyntaxError) throw new ExprError(e.message);
      throw e;
    }
    const id = /^[\p{ID_Start}_][\p{ID_Continue}\u00b7]*/u.exec(src.slice(i));
    if (id) {
      toks.push({ k: "name", v: id[0], pos: i });
      i += id[0].length;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new ExprError(`unexpected character ${JSON.stringify(c)} at ${i}`);
    if (op === "(" || op === "[" || op === "{") depth++;
    if (op === ")" || op === "]" || op === "}") depth = Math.max(0, depth - 1);
    toks.push({ k: "op", v: op, pos: i });
    i += op.length;
  }
  toks.push({ k: "end", v: "", pos: src.length });
  return toks;
}
const isDigitAt = (s: string, i: number): boolean => s[i] !== undefined && s[i] >= "0" && s[i] <= "9";

// ---------------------------------------------------------------------------------------------
// Syntax

type Node =
  | { k: "lit"; v: PyValue }
  | { k: "name"; id: string }
  | { k: "tuple" | "list" | "set"; items: Node[] }
  | { k: "dict"; entries: [Node, Node][] }
  | { k: "unary"; op: string; x: Node }
  | { k: "bin"; op: string; a: Node; b: Node }
  | { k: "and" | "or"; a: Node; b: Node }
  | { k: "not"; x: Node }
  | { k: "cmp"; first: Node; rest: [string, Node][] }
  | { k: "if"; test: Node; body: Node; orelse: Node }
  | { k: "index"; x: Node; index: Node }
  | { k: "slice"; lower?: Node; upper?: Node; step?: Node }
  | { k: "call"; fn: string; args: Node[]; kwargs: [string, Node][] }
  | { k: "attr"; x: Node; name: string }
  | { k: "method"; x: Node; name: string; args: Node[]; kwargs: [string, Node][] };

class Parser {
  i = 0;
  depth = 0;
  constructor(readonly toks: Tok[]) {}

  get t(): Tok {
    return this.toks[this.i];
  }
  isOp(v: string): boolean {
    return this.t.k === "op" && this.t.v === v;
  }
  isName(v: string): boolean {
    return this.t.k === "name" && this.t.v === v;
  }
  eat(v: string): boolean {
    if ((this.t.k === "op" || this.t.k === "name") && this.t.v === v) {
      this.i++;
      return true;
    }
    return false;
  }
  expect(v: string): void {
    if (!this.eat(v)) this.fail(`expected "${v}"`);
  }
  fail(msg: string): never {
    const t = this.t;
    const found = t.k === "end" ? "end of expression" : t.k === "lit" ? reprPreview(t.v, QUOTED) : `"${t.v}"`;
    throw new ExprError(`invalid syntax: ${msg} at ${t.pos}, found ${found}`);
  }
  nest<T>(f: () => T): T {
    if (++this.depth > MAX_DEPTH) throw new ExprError("expression nested too deeply");
    try {
      return f();
    } finally {
      this.depth--;
    }
  }

  /** The whole input: an expression, or a bare tuple `a, b`. */
  top(): Node {
    const n = this.exprList();
    if (this.t.k !== "end") {
      if (this.isOp("=") || this.isOp(";")) this.fail("expected a single expression, not a statement");
      this.fail("unexpected token");
    }
    return n;
  }

  exprList(): Node {
    const first = this.expr();
    if (!this.isOp(",")) return first;
    const items = [first];
    while (this.eat(",")) {
      if (this.t.k === "end" || this.isOp(")") || this.isOp("]")) break;
      items.push(this.expr());
    }
    return { k: "tuple", items };
  }

  expr(): Node {
    return this.nest(() => {
      if (this.isName("lambda")) throw new ExprError("lambda is not supported");
      if (this.isName("yield") || this.isName("await")) throw new ExprError(`${this.t.v} is not supported`);
      const body = this.or();
      if (this.isOp(":=")) throw new ExprError("assignment expressions (:=) are not supported");
      if (!this.eat("if")) return body;
      const test = this.or();
      this.expect("else");
      const orelse = this.expr();
      return { k: "if", test, body, orelse };
    });
  }

  or(): Node {
    let a = this.and();
    while (this.eat("or")) a = { k: "or", a, b: this.and() };
    return a;
  }
  and(): Node {
    let a = this.not();
    while (this.eat("and")) a = { k: "and", a, b: this.not() };
    return a;
  }
  not(): Node {
    if (this.eat("not")) return this.nest(() => ({ k: "not", x: this.not() }));
    return this.comparison();
  }

  comparison(): Node {
    const first = this.bitor();
    const rest: [string, Node][] = [];
    for (;;) {
      let op: string | undefined;
      if (this.t.k === "op" && ["<", ">", "==", ">=", "<=", "!="].includes(this.t.v)) op = this.t.v, this.i++;
      else if (this.eat("in")) op = "in";
      else if (this.isName("not") && this.toks[this.i + 1]?.k === "name" && this.toks[this.i + 1].v === "in") op = "not in", (this.i += 2);
      else if (this.eat("is")) op = this.eat("not") ? "is not" : "is";
      if (!op) break;
      rest.push([op, this.bitor()]);
    }
    return rest.length ? { k: "cmp", first, rest } : first;
  }

  binary(ops: string[], next: () => Node): Node {
    let a = next();
    while (this.t.k === "op" && ops.includes(this.t.v)) {
      const op = this.t.v;
      this.i++;
      a = { k: "bin", op, a, b: next() };
    }
    return a;
  }
  bitor = (): Node => this.binary(["|"], this.bitxor);
  bitxor = (): Node => this.binary(["^"], this.bitand);
  bitand = (): Node => this.binary(["&"], this.shift);
  shift = (): Node => this.binary(["<<", ">>"], this.arith);
  arith = (): Node => this.binary(["+", "-"], this.term);
  term = (): Node => this.binary(["*", "/", "//", "%", "@"], this.factor);

  factor = (): Node => {
    if (this.t.k === "op" && ["-", "+", "~"].includes(this.t.v)) {
      const op = this.t.v;
      this.i++;
      return this.nest(() => ({ k: "unary", op, x: this.factor() }));
    }
    return this.power();
  };

  power(): Node {
    const base = this.postfix();
    if (this.eat("**")) return { k: "bin", op: "**", a: base, b: this.nest(() => this.factor()) };
    return base;
  }

  postfix(): Node {
    let x = this.atom();
    for (;;) {
      if (this.eat(".")) {
        if (this.t.k !== "name" || KEYWORDS.has(this.t.v)) this.fail("expected an attribute name");
        const name = this.t.v;
        this.i++;
        x = this.isOp("(") ? { k: "method", x, name, ...this.callArgs() } : { k: "attr", x, name };
      } else if (this.isOp("[")) {
        this.i++;
        const index = this.subscript();
        this.expect("]");
        x = { k: "index", x, index };
      } else if (this.isOp("(")) {
        if (x.k !== "name") throw new ExprError("only calls of builtins such as len(...) and methods of values such as s.split() are supported");
        x = { k: "call", fn: x.id, ...this.callArgs() };
      } else return x;
    }
  }

  /** The arguments of a call, from its "(" to its ")". */
  callArgs(): { args: Node[]; kwargs: [string, Node][] } {
    this.expect("(");
    const args: Node[] = [];
    const kwargs: [string, Node][] = [];
    while (!this.isOp(")")) {
      if (this.isOp("*") || this.isOp("**")) throw new ExprError("unpacking in calls is not supported");
      if (this.t.k === "name" && this.toks[this.i + 1]?.k === "op" && this.toks[this.i + 1].v === "=") {
        const name = this.t.v;
        this.i += 2;
        kwargs.push([name, this.expr()]);
      } else {
        if (kwargs.length) this.fail("positional argument follows keyword argument");
        args.push(this.expr());
      }
      if (this.isName("for")) throw new ExprError("comprehensions are not supported");
      if (!this.eat(",")) break;
    }
    this.expect(")");
    return { args, kwargs };
  }

  subscript(): Node {
    const one = (): Node => {
      const lower = this.isOp(":") ? undefined : this.expr();
      if (!this.eat(":")) return lower!;
      const upper = this.isOp(":") || this.isOp("]") || this.isOp(",") ? undefined : this.expr();
      let step: Node | undefined;
      if (this.eat(":") && !this.isOp("]") && !this.isOp(",")) step = this.expr();
      return { k: "slice", lower, upper, step };
    };
    const first = one();
    if (!this.isOp(",")) return first;
    const items = [first];
    while (this.eat(",") && !this.isOp("]")) items.push(one());
    if (items.some((n) => n.k === "slice")) throw new ExprError("multi-dimensional slicing is not supported");
    return { k: "tuple", items };
  }

  atom(): Node {
    const t = this.t;
    if (t.k === "lit") {
      this.i++;
      return { k: "lit", v: t.v };
    }
    if (t.k === "name") {
      this.i++;
      if (t.v === "True" || t.v === "False") return { k: "lit", v: { t: "bool", v: t.v === "True" } };
      if (t.v === "None") return { k: "lit", v: { t: "none" } };
      if (KEYWORDS.has(t.v)) {
        this.i--;
        this.fail("expected a value");
      }
      return { k: "name", id: t.v };
    }
    if (t.k === "op") {
      if (t.v === "(") {
        this.i++;
        if (this.eat(")")) return { k: "tuple", items: [] };
        const first = this.expr();
        if (this.isName("for")) throw new ExprError("generator expressions are not supported");
        if (this.eat(")")) return first;
        const items = [first];
        while (this.eat(",")) {
          if (this.isOp(")")) break;
          items.push(this.expr());
        }
        this.expect(")");
        return { k: "tuple", items };
      }
      if (t.v === "[") {
        this.i++;
        const items = this.displayItems("]");
        return { k: "list", items };
      }
      if (t.v === "{") {
        this.i++;
        if (this.eat("}")) return { k: "dict", entries: [] };
        if (this.isOp("**")) throw new ExprError("unpacking is not supported");
        const first = this.expr();
        if (this.eat(":")) {
          const entries: [Node, Node][] = [[first, this.expr()]];
          if (this.isName("for")) throw new ExprError("comprehensions are not supported");
          while (this.eat(",")) {
            if (this.isOp("}")) break;
            const k = this.expr();
            this.expect(":");
            entries.push([k, this.expr()]);
          }
          this.expect("}");
          return { k: "dict", entries };
        }
        if (this.isName("for")) throw new ExprError("comprehensions are not supported");
        const items = [first];
        if (this.eat(",")) items.push(...this.displayItems("}"));
        else this.expect("}");
        return { k: "set", items };
      }
      if (t.v === "*") throw new ExprError("unpacking is not supported");
    }
    this.fail("expected a value");
  }

  displayItems(close: string): Node[] {
    const items: Node[] = [];
    while (!this.isOp(close)) {
      if (this.isOp("*")) throw new ExprError("unpacking is not supported");
      items.push(this.expr());
      if (this.isName("for")) throw new ExprError("comprehensions are not supported");
      if (!this.eat(",")) break;
    }
    this.expect(close);
    return items;
  }
}

export function parseExpression(src: string): Node {
  const toks = tokenize(src);
  if (toks.length === 1) throw new ExprError("empty expression");
  return new Parser(toks).top();
}

// ---------------------------------------------------------------------------------------------
// Python semantics

/** An exception Python itself would raise, e.g. ZeroDivisionError: division by zero. */
const pyErr = (type: string, msg: string): ExprError => new ExprError(`${type}: ${msg}`);
const tn = (v: PyValue): string => (v.t === "opaque" ? "object" : TYPE_NAMES[v.t]);
const opaqueErr = (v: PyValue): ExprError => new ExprError(`cannot compute with ${reprPreview(v, QUOTED)}: only literal values are known`);

const tooLarge = (why: string): ExprTooLarge => new ExprTooLarge(`too large to evaluate: ${why}`);

/** Steps of work the evaluation under way may still take (none under way: no limit). */
let stepsLeft = Infinity;

/** Counts `n` steps of work of the evaluation under way. */
function tick(n = 1): void {
  if ((stepsLeft -= n) < 0) throw tooLarge(`more than ${MAX_STEPS} steps of work`);
}

/** Refuses a value whose repr would have `size` characters or that would nest `depth` deep, past the limits. */
function bound(size: number, depth: number): void {
  if (size > MAX_REPR) throw tooLarge(`its repr would have about ${size} characters (at most ${MAX_REPR})`);
  if (depth > MAX_NESTING) throw tooLarge(`it would nest ${depth} levels deep (at most ${MAX_NESTING})`);
}

/** A value an operation has built, checked: shared elements count each time they would print. */
function built<V extends PyValue>(v: V): V {
  const { size, depth } = extentOf(v);
  bound(size, depth);
  return v;
}

type Num = { t: "int"; v: bigint } | { t: "float"; v: number } | { t: "complex"; re: number; im: number };

const INT = (v: bigint): PyValue => {
  const bits = bitLength(v);
  if (bits > MAX_BITS) throw tooLarge(`an integer of more than ${MAX_BITS} bits`);
  // Arithmetic on big integers costs with their size: a 100,000-bit power takes about a millisecond.
  tick(bits >> 4);
  return { t: "int", v };
};
const FLOAT = (v: number): PyValue => ({ t: "float", v });
const BOOL = (v: boolean): PyValue => ({ t: "bool", v });
const STR = (v: string): PyValue => {
  if (v.length > MAX_ITEMS) throw tooLarge(`a string of more than ${MAX_ITEMS} characters`);
  return { t: "str", v };
};

function bitLength(v: bigint): number {
  return (v < 0n ? -v : v).toString(16).length * 4;
}

/** Numbers (bool counts as int), or undefined for anything else. */
function asNum(v: PyValue): Num | undefined {
  if (v.t === "bool") return { t: "int", v: v.v ? 1n : 0n };
  if (v.t === "int" || v.t === "float" || v.t === "complex") return v;
  return undefined;
}

function toFloat(n: Num): number {
  if (n.t === "float") return n.v;
  if (n.t === "int") {
    const f = Number(n.v);
    if (!Number.isFinite(f)) throw pyErr("OverflowError", "int too large to convert to float");
    return f;
  }
  throw new ExprError("complex to float");
}
const toComplex = (n: Num): [number, number] => (n.t === "complex" ? [n.re, n.im] : [toFloat(n), 0]);

const isSeq = (v: PyValue): v is Extract<PyValue, { items: PyValue[] }> => v.t === "list" || v.t === "tuple" || v.t === "set" || v.t === "frozenset";

/** Code points of a str (Python indexes code points, not UTF-16 units). */
const chars = (s: string): string[] => {
  tick(s.length);
  const out: string[] = [];
  for (let i = 0; i < s.length; ) {
    const c = s.codePointAt(i)!;
    const ch = c >= 0xd800 && c <= 0xdfff ? s[i] : String.fromCodePoint(c);
    out.push(ch);
    i += ch.length;
  }
  return out;
};

export function truthy(v: PyValue): boolean {
  switch (v.t) {
    case "none":
      return false;
    case "bool":
      return v.v;
    case "int":
      return v.v !== 0n;
    case "float":
      return v.v !== 0;
    case "complex":
      return v.re !== 0 || v.im !== 0;
    case "str":
      return v.v.length > 0;
    case "bytes":
      return v.v.length > 0;
    case "dict":
      return v.entries.length > 0;
    case "opaque":
      throw new ExprError(`the truth value of ${cutText(v.text, QUOTED)} is not known without running code`);
    default:
      return v.items.length > 0;
  }
}

/** Exact comparison of an int with a float (Python never rounds the int). */
function cmpIntFloat(i: bigint, f: number): number {
  if (Number.isNaN(f)) return NaN;
  if (f === Infinity) return -1;
  if (f === -Infinity) return 1;
  const fl = BigInt(Math.floor(f));
  if (i < fl) return -1;
  if (i > fl) return 1;
  return f === Math.floor(f) ? 0 : -1;
}

/** -1, 0, 1, or NaN (unordered) for two real numbers. */
function cmpNum(a: Num, b: Num): number {
  if (a.t === "int" && b.t === "int") return a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
  if (a.t === "int" && b.t === "float") return cmpIntFloat(a.v, b.v);
  if (a.t === "float" && b.t === "int") return -cmpIntFloat(b.v, a.v);
  const x = (a as { v: number }).v;
  const y = (b as { v: number }).v;
  return Number.isNaN(x) || Number.isNaN(y) ? NaN : x < y ? -1 : x > y ? 1 : 0;
}

/** Sets, and the dict views Python compares and combines as sets (keys and items; values are not). */
const isSetLike = (v: PyValue): boolean => v.t === "set" || v.t === "frozenset" || v.t === "dict_keys" || v.t === "dict_items";
/** The type a set operation on `a` gives: a frozenset stays one, a set or a view gives a set. */
const setType = (a: PyValue): "set" | "frozenset" => (a.t === "frozenset" ? "frozenset" : "set");

export function pyEq(a: PyValue, b: PyValue): boolean {
  tick();
  if (a.t === "opaque" || b.t === "opaque") throw opaqueErr(a.t === "opaque" ? a : b);
  const na = asNum(a);
  const nb = asNum(b);
  if (na && nb) {
    if (na.t === "complex" || nb.t === "complex") {
      const [ar, ai] = na.t === "complex" ? [na.re, na.im] : [null, 0];
      const [br, bi] = nb.t === "complex" ? [nb.re, nb.im] : [null, 0];
      if (ai !== bi) return false;
      const realA: Num = ar === null ? na : { t: "float", v: ar };
      const realB: Num = br === null ? nb : { t: "float", v: br };
      return cmpNum(realA, realB) === 0;
    }
    return cmpNum(na, nb) === 0;
  }
  if (isSetLike(a) && isSetLike(b)) {
    const x = (a as { items: PyValue[] }).items;
    const y = (b as { items: PyValue[] }).items;
    return x.length === y.length && x.every((e) => contains(y, e));
  }
  if (a.t !== b.t) return false;
  switch (a.t) {
    case "none":
      return true;
    case "str":
      return a.v === (b as { v: string }).v;
    case "bytes": {
      const y = (b as { v: number[] }).v;
      return a.v.length === y.length && a.v.every((c, i) => c === y[i]);
    }
    case "list":
    case "tuple": {
      const y = (b as { items: PyValue[] }).items;
      return a.items.length === y.length && a.items.every((e, i) => pyEq(e, y[i]));
    }
    case "dict": {
      const y = (b as { entries: [PyValue, PyValue][] }).entries;
      return a.entries.length === y.length && a.entries.every(([k, v]) => {
        const hit = y.find(([k2]) => pyEq(k, k2));
        return hit !== undefined && pyEq(v, hit[1]);
      });
    }
  }
  return false;
}

const contains = (items: readonly PyValue[], x: PyValue): boolean => items.some((e) => pyEq(e, x));

function cmpCodePoints(a: string, b: string): number {
  const x = chars(a);
  const y = chars(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d) return d < 0 ? -1 : 1;
  }
  return x.length - y.length < 0 ? -1 : x.length > y.length ? 1 : 0;
}

/** a OP b for OP in < <= > >=, with Python's rules and TypeErrors. */
function order(op: string, a: PyValue, b: PyValue): boolean {
  tick(3); // about three times the work of an equality
  if (a.t === "opaque" || b.t === "opaque") throw opaqueErr(a.t === "opaque" ? a : b);
  const test = (c: number): boolean => (op === "<" ? c < 0 : op === "<=" ? c <= 0 : op === ">" ? c > 0 : c >= 0);
  const na = asNum(a);
  const nb = asNum(b);
  if (na && nb && na.t !== "complex" && nb.t !== "complex") return test(cmpNum(na, nb));
  if (a.t === "str" && b.t === "str") return test(cmpCodePoints(a.v, b.v));
  if (a.t === "bytes" && b.t === "bytes") {
    for (let i = 0; i < Math.min(a.v.length, b.v.length); i++) if (a.v[i] !== b.v[i]) return test(a.v[i] - b.v[i]);
    return test(a.v.length - b.v.length);
  }
  if ((a.t === "list" && b.t === "list") || (a.t === "tuple" && b.t === "tuple")) {
    const x = a.items;
    const y = (b as { items: PyValue[] }).items;
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (!pyEq(x[i], y[i])) return order(op, x[i], y[i]);
    return test(x.length - y.length);
  }
  if (isSetLike(a) && isSetLike(b)) {
    const x = (a as { items: PyValue[] }).items;
    const y = (b as { items: PyValue[] }).items;
    const sub = x.every((e) => contains(y, e));
    const sup = y.every((e) => contains(x, e));
    return op === "<" ? sub && !sup : op === "<=" ? sub : op === ">" ? sup && !sub : sup;
  }
  throw pyErr("TypeError", `'${op}' not supported between instances of '${tn(a)}' and '${tn(b)}'`);
}

function hashable(v: PyValue): void {
  tick();
  if (v.t === "list" || v.t === "dict" || v.t === "set" || v.t.startsWith("dict_")) throw pyErr("TypeError", `unhashable type: '${tn(v)}'`);
  if (v.t === "tuple" || v.t === "frozenset") v.items.forEach(hashable);
  if (v.t === "opaque") throw opaqueErr(v);
}

function contained(x: PyValue, c: PyValue): boolean {
  switch (c.t) {
    case "str":
      if (x.t !== "str") throw pyErr("TypeError", `'in <string>' requires string as left operand, not ${tn(x)}`);
      return c.v.includes(x.v);
    case "bytes": {
      const nx = asNum(x);
      if (nx?.t === "int") return c.v.includes(Number(nx.v));
      if (x.t !== "bytes") throw pyErr("TypeError", `a bytes-like object is required, not '${tn(x)}'`);
      tick(c.v.length + x.v.length);
      return Buffer.from(c.v).includes(Buffer.from(x.v));
    }
    case "list":
    case "tuple":
      return contains(c.items, x);
    case "set":
    case "frozenset":
    case "dict_keys":
      hashable(x);
      return contains(c.items, x);
    case "dict_values":
    case "dict_items":
      return contains(c.items, x);
    case "dict":
      hashable(x);
      return c.entries.some(([k]) => pyEq(k, x));
    case "opaque":
      throw opaqueErr(c);
    default:
      throw pyErr("TypeError", `argument of type '${tn(c)}' is not iterable`);
  }
}

function compare(op: string, a: PyValue, b: PyValue): boolean {
  switch (op) {
    case "==":
      return pyEq(a, b);
    case "!=":
      return !pyEq(a, b);
    case "in":
      return contained(a, b);
    case "not in":
      return !contained(a, b);
    case "is":
    case "is not": {
      // Identity is known only for the singletons None, True and False.
      const single = (v: PyValue): boolean => v.t === "none" || v.t === "bool";
      if (!single(a) && !single(b)) throw new ExprError(`"${op}" is only supported with None, True or False`);
      if (a.t === "opaque" || b.t === "opaque") {
        // An opaque repr is never "None", "True" or "False": those parse as literals.
        return op === "is not";
      }
      const same = a.t === b.t && (a.t === "none" || (a as { v: boolean }).v === (b as { v: boolean }).v);
      return op === "is" ? same : !same;
    }
    default:
      return order(op, a, b);
  }
}

// Float floor division and modulo, as CPython's float_divmod computes them.
function floatDivmod(vx: number, wx: number): [number, number] {
  let mod = vx % wx;
  let div = (vx - mod) / wx;
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx;
      div -= 1;
    }
  } else mod = wx < 0 ? -0 : 0;
  let floordiv: number;
  if (div) {
    floordiv = Math.floor(div);
    if (div - floordiv > 0.5) floordiv += 1;
  } else floordiv = vx / wx < 0 || Object.is(vx / wx, -0) ? -0 : 0;
  return [floordiv, mod];
}

function floatPow(x: number, y: number): number {
  if (y === 0) return 1;
  if (x === 1) return 1;
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0 && y < 0) throw pyErr("ZeroDivisionError", "0.0 cannot be raised to a negative power");
  if (x < 0 && Number.isFinite(x) && Number.isFinite(y) && !Number.isInteger(y)) throw new ExprError("a negative number to a fractional power is complex: not supported");
  if (x === -1 && !Number.isFinite(y)) return 1;
  const r = Math.pow(x, y);
  if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y)) throw pyErr("OverflowError", "(34, 'Numerical result out of range')");
  return r;
}

function intPow(a: bigint, b: bigint): PyValue {
  if (b < 0n) {
    if (a === 0n) throw pyErr("ZeroDivisionError", "0.0 cannot be raised to a negative power");
    return FLOAT(floatPow(toFloat({ t: "int", v: a }), Number(b)));
  }
  if (a === 0n || a === 1n) return INT(b === 0n ? 1n : a);
  if (a === -1n) return INT(b % 2n === 0n ? 1n : -1n);
  if (BigInt(bitLength(a)) * b > BigInt(MAX_BITS)) throw tooLarge(`an integer of more than ${MAX_BITS} bits`);
  return INT(a ** b);
}

/** a / b for ints, correctly rounded as Python computes it (also beyond 2**53). */
function intTrueDivide(a: bigint, b: bigint): number {
  const safe = 2n ** 53n;
  const neg = a < 0n !== b < 0n;
  if (a < 0n) a = -a;
  if (b < 0n) b = -b;
  if (a <= safe && b <= safe) return (neg ? -1 : 1) * (Number(a) / Number(b));
  if (a === 0n) return neg ? -0 : 0;
  const bits = (v: bigint): number => v.toString(2).length;
  // Scale so that the integer quotient has 55 or 56 bits, then round it to 53 by hand
  // (half to even, with the remainder as a sticky bit).
  const sh = 55 - (bits(a) - bits(b));
  const num = sh >= 0 ? a << BigInt(sh) : a;
  const den = sh >= 0 ? b : b << BigInt(-sh);
  let q = num / den;
  const sticky = num % den !== 0n;
  const extra = bits(q) - 53;
  let keep = q >> BigInt(extra);
  const rem = q & ((1n << BigInt(extra)) - 1n);
  const half = 1n << BigInt(extra - 1);
  if (rem > half || (rem === half && (sticky || (keep & 1n) === 1n))) keep += 1n;
  q = keep;
  const r = Number(q) * 2 ** (extra - sh);
  if (!Number.isFinite(r)) throw pyErr("OverflowError", "integer division result too large for a float");
  return neg ? -r : r;
}

function arith(op: string, x: Num, y: Num): PyValue {
  if (x.t === "complex" || y.t === "complex") {
    const [a, b] = toComplex(x);
    const [c, d] = toComplex(y);
    if (op === "+") return { t: "complex", re: a + c, im: b + d };
    if (op === "-") return { t: "complex", re: a - c, im: b - d };
    if (op === "*") return { t: "complex", re: a * c - b * d, im: a * d + b * c };
    if (op === "//" || op === "%") throw pyErr("TypeError", `unsupported operand type(s) for ${op}: '${x.t}' and '${y.t}'`);
    throw new ExprError(`complex ${op} is not supported`);
  }
  if (x.t === "int" && y.t === "int") {
    const a = x.v;
    const b = y.v;
    switch (op) {
      case "+":
        return INT(a + b);
      case "-":
        return INT(a - b);
      case "*":
        return INT(a * b);
      case "/":
        if (b === 0n) throw pyErr("ZeroDivisionError", "division by zero");
        return FLOAT(intTrueDivide(a, b));
      case "//":
      case "%": {
        if (b === 0n) throw pyErr("ZeroDivisionError", op === "//" ? "integer division or modulo by zero" : "integer modulo by zero");
        let q = a / b;
        let r = a % b;
        if (r !== 0n && r < 0n !== b < 0n) {
          q -= 1n;
          r += b;
        }
        return INT(op === "//" ? q : r);
      }
      case "**":
        return intPow(a, b);
    }
  }
  const a = toFloat(x);
  const b = toFloat(y);
  switch (op) {
    case "+":
      return FLOAT(a + b);
    case "-":
      return FLOAT(a - b);
    case "*":
      return FLOAT(a * b);
    case "/":
      if (b === 0) throw pyErr("ZeroDivisionError", "float division by zero");
      return FLOAT(a / b);
    case "//":
      if (b === 0) throw pyErr("ZeroDivisionError", "float floor division by zero");
      return FLOAT(floatDivmod(a, b)[0]);
    case "%":
      if (b === 0) throw pyErr("ZeroDivisionError", "float modulo");
      return FLOAT(floatDivmod(a, b)[1]);
    case "**":
      return FLOAT(floatPow(a, b));
  }
  throw new ExprError(`operator ${op} is not supported`);
}

/** `k` copies of `xs` end to end, in a packed array (flat() makes one that is slow to read). */
function repeated<T>(xs: readonly T[], k: number): T[] {
  const out: T[] = [];
  for (let r = 0; r < k; r++) for (const x of xs) out.push(x);
  return out;
}

function repeat(seq: PyValue, n: bigint): PyValue {
  const len = seq.t === "str" ? seq.v.length : seq.t === "bytes" ? seq.v.length : (seq as { items: PyValue[] }).items.length;
  const k = n <= 0n || len === 0 ? 0 : Number(n);
  if (len * k > MAX_ITEMS) throw tooLarge(`more than ${MAX_ITEMS} ${seq.t === "str" ? "characters" : seq.t === "bytes" ? "bytes" : "elements"}`);
  const { size, depth } = extentOf(seq);
  bound((size - 2) * k + 2, depth); // before a million copies of a big element are made (2: the brackets or quotes)
  tick(len * k);
  if (seq.t === "str") return STR(seq.v.repeat(k));
  if (seq.t === "bytes") return { t: "bytes", v: repeated(seq.v, k) };
  return { t: seq.t as "list" | "tuple", items: repeated((seq as { items: PyValue[] }).items, k) };
}

function binop(op: string, a: PyValue, b: PyValue): PyValue {
  if (a.t === "opaque" || b.t === "opaque") throw opaqueErr(a.t === "opaque" ? a : b);
  const na = asNum(a);
  const nb = asNum(b);
  if (["&", "|", "^", "<<", ">>"].includes(op)) {
    if (na?.t === "int" && nb?.t === "int") {
      const x = na.v;
      const y = nb.v;
      if (op === "<<" || op === ">>") {
        if (y < 0n) throw pyErr("ValueError", "negative shift count");
        if (op === "<<" && BigInt(bitLength(x)) + y > BigInt(MAX_BITS)) throw tooLarge(`an integer of more than ${MAX_BITS} bits`);
        return INT(op === "<<" ? x << y : x >> y);
      }
      const r = op === "&" ? x & y : op === "|" ? x | y : x ^ y;
      return a.t === "bool" && b.t === "bool" ? BOOL(r !== 0n) : INT(r);
    }
    if (isSetLike(a) && isSetLike(b) && op !== "<<" && op !== ">>") {
      const x = (a as { items: PyValue[] }).items;
      const y = (b as { items: PyValue[] }).items;
      const items = op === "&" ? x.filter((e) => contains(y, e)) : op === "|" ? [...x, ...y.filter((e) => !contains(x, e))] : [...x.filter((e) => !contains(y, e)), ...y.filter((e) => !contains(x, e))];
      return built({ t: setType(a), items });
    }
    throw pyErr("TypeError", `unsupported operand type(s) for ${op}: '${tn(a)}' and '${tn(b)}'`);
  }
  if (op === "@") throw new ExprError("the @ operator is not supported");
  if (na && nb) return arith(op, na, nb);
  if (op === "+") {
    if ((a.t === "str" || a.t === "bytes" || a.t === "list" || a.t === "tuple") && a.t === b.t) {
      const y = b as typeof a;
      if (a.t === "str") return STR(a.v + (y as { v: string }).v);
      const length = a.t === "bytes" ? a.v.length + (y as { v: number[] }).v.length : a.items.length + (y as { items: PyValue[] }).items.length;
      if (length > MAX_ITEMS) throw tooLarge(`more than ${MAX_ITEMS} ${a.t === "bytes" ? "bytes" : "elements"}`);
      const [ea, eb] = [extentOf(a), extentOf(y)];
      bound(ea.size + eb.size - 2, Math.max(ea.depth, eb.depth));
      tick(length);
      if (a.t === "bytes") return { t: "bytes", v: [...a.v, ...(y as { v: number[] }).v] };
      return { t: a.t, items: [...a.items, ...(y as { items: PyValue[] }).items] };
    }
    if (a.t === "str" || a.t === "list" || a.t === "tuple") throw pyErr("TypeError", `can only concatenate ${tn(a)} (not "${tn(b)}") to ${tn(a)}`);
  }
  if (op === "*") {
    const seqTypes = ["str", "bytes", "list", "tuple"];
    if (seqTypes.includes(a.t) && nb?.t === "int") return repeat(a, nb.v);
    if (seqTypes.includes(b.t) && na?.t === "int") return repeat(b, na.v);
  }
  if (op === "-" && isSetLike(a) && isSetLike(b)) {
    const y = (b as { items: PyValue[] }).items;
    return built({ t: setType(a), items: (a as { items: PyValue[] }).items.filter((e) => !contains(y, e)) });
  }
  if (op === "%" && (a.t === "str" || a.t === "bytes")) throw new ExprError("%-formatting is not supported");
  throw pyErr("TypeError", `unsupported operand type(s) for ${op}: '${tn(a)}' and '${tn(b)}'`);
}

function unary(op: string, v: PyValue): PyValue {
  if (v.t === "opaque") throw opaqueErr(v);
  const n = asNum(v);
  if (op === "~") {
    if (n?.t === "int") return INT(-n.v - 1n);
    throw pyErr("TypeError", `bad operand type for unary ~: '${tn(v)}'`);
  }
  if (!n) throw pyErr("TypeError", `bad operand type for unary ${op}: '${tn(v)}'`);
  if (op === "+") return n;
  if (n.t === "int") return INT(-n.v);
  if (n.t === "float") return FLOAT(-n.v);
  return { t: "complex", re: -n.re, im: -n.im };
}

/** The elements iteration yields: items, characters, byte values, dict keys. */
export function iterate(v: PyValue): PyValue[] {
  if (v.t === "bytes") tick(v.v.length);
  if (v.t === "dict") tick(v.entries.length);
  if ("items" in v) tick(v.items.length);
  switch (v.t) {
    case "str":
      return chars(v.v).map((c) => ({ t: "str", v: c }));
    case "bytes":
      return v.v.map((c) => ({ t: "int", v: BigInt(c) }));
    case "dict":
      return v.entries.map(([k]) => k);
    case "list":
    case "tuple":
    case "set":
    case "frozenset":
    case "dict_keys":
    case "dict_values":
    case "dict_items":
      return v.items;
    case "opaque":
      throw opaqueErr(v);
    default:
      throw pyErr("TypeError", `'${tn(v)}' object is not iterable`);
  }
}

function asIndex(v: PyValue, what: string): bigint {
  const n = asNum(v);
  if (n?.t === "int") return n.v;
  throw pyErr("TypeError", what);
}

/** Python's slice.indices(): the positions a slice selects in a sequence of `len` items. */
function sliceIndices(len: number, lower: PyValue, upper: PyValue, stepV: PyValue): number[] {
  const idx = (v: PyValue): bigint | undefined => (v.t === "none" ? undefined : asIndex(v, "slice indices must be integers or None or have an __index__ method"));
  const step = idx(stepV) ?? 1n;
  if (step === 0n) throw pyErr("ValueError", "slice step cannot be zero");
  const L = BigInt(len);
  const clamp = (v: bigint | undefined, dflt: bigint, lo: bigint, hi: bigint): bigint => {
    if (v === undefined) return dflt;
    if (v < 0n) v += L;
    return v < lo ? lo : v > hi ? hi : v;
  };
  const out: number[] = [];
  if (step > 0n) {
    const start = clamp(idx(lower), 0n, 0n, L);
    const stop = clamp(idx(upper), L, 0n, L);
    for (let i = start; i < stop; i += step) out.push(Number(i));
  } else {
    const start = clamp(idx(lower), L - 1n, -1n, L - 1n);
    const stop = clamp(idx(upper), -1n, -1n, L - 1n);
    for (let i = start; i > stop; i += step) out.push(Number(i));
  }
  tick(out.length);
  return out;
}

function subscript(x: PyValue, key: PyValue | { slice: [PyValue, PyValue, PyValue] }): PyValue {
  if (x.t === "opaque") throw opaqueErr(x);
  if ("slice" in key) {
    const [lo, up, st] = key.slice;
    if (x.t === "str") {
      const cs = chars(x.v);
      return STR(sliceIndices(cs.length, lo, up, st).map((i) => cs[i]).join(""));
    }
    if (x.t === "bytes") return { t: "bytes", v: sliceIndices(x.v.length, lo, up, st).map((i) => x.v[i]) };
    if (x.t === "list" || x.t === "tuple") return { t: x.t, items: sliceIndices(x.items.length, lo, up, st).map((i) => x.items[i]) };
    if (x.t === "dict") throw pyErr("TypeError", "unhashable type: 'slice'");
    throw pyErr("TypeError", `'${tn(x)}' object is not subscriptable`);
  }
  if (key.t === "opaque") throw opaqueErr(key);
  if (x.t === "dict") {
    hashable(key);
    const hit = x.entries.find(([k]) => pyEq(k, key));
    if (!hit) throw pyErr("KeyError", reprPreview(key, QUOTED));
    return hit[1];
  }
  if (x.t === "str" || x.t === "bytes" || x.t === "list" || x.t === "tuple") {
    const names: Record<string, string> = { str: "string", bytes: "byte", list: "list", tuple: "tuple" };
    const i = asIndex(key, x.t === "str" ? `string indices must be integers, not '${tn(key)}'` : `${names[x.t]} indices must be integers or slices, not ${tn(key)}`);
    const items: unknown[] = x.t === "str" ? chars(x.v) : x.t === "bytes" ? x.v : x.items;
    const j = i < 0n ? i + BigInt(items.length) : i;
    if (j < 0n || j >= BigInt(items.length)) throw pyErr("IndexError", x.t === "bytes" ? "index out of range" : `${names[x.t]} index out of range`);
    const e = items[Number(j)];
    if (x.t === "str") return STR(e as string);
    if (x.t === "bytes") return INT(BigInt(e as number));
    return e as PyValue;
  }
  throw pyErr("TypeError", `'${tn(x)}' object is not subscriptable`);
}

function parseIntText(s: string): PyValue {
  const t = s.trim();
  if (!/^[+-]?\d(?:_?\d)*$/.test(t)) throw pyErr("ValueError", `invalid literal for int() with base 10: ${reprPreview({ t: "str", v: s }, QUOTED)}`);
  return INT(BigInt(t.replace(/_/g, "")));
}

function parseFloatText(s: string): PyValue {
  const t = s.trim().toLowerCase().replace(/_/g, "");
  const m = /^([+-]?)(inf|infinity|nan)$/.exec(t);
  if (m) return FLOAT(m[2] === "nan" ? NaN : m[1] === "-" ? -Infinity : Infinity);
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t) || /__|^_|_$/.test(s.trim())) throw pyErr("ValueError", `could not convert string to float: ${reprPreview({ t: "str", v: s }, QUOTED)}`);
  return FLOAT(Number(t));
}

function extreme(name: "min" | "max", args: PyValue[], kwargs: Map<string, PyValue>): PyValue {
  for (const k of kwargs.keys()) if (k !== "default") throw new ExprError(`${name}() with ${k}= is not supported`);
  if (args.length === 0) throw pyErr("TypeError", `${name} expected at least 1 argument, got 0`);
  const items = args.length === 1 ? iterate(args[0]) : args;
  if (args.length > 1 && kwargs.has("default")) throw pyErr("TypeError", `Cannot specify a default for ${name}() with multiple positional arguments`);
  if (!items.length) {
    if (kwargs.has("default")) return kwargs.get("default")!;
    throw pyErr("ValueError", `${name}() arg is an empty sequence`);
  }
  let best = items[0];
  for (const x of items.slice(1)) if (order(name === "max" ? ">" : "<", x, best)) best = x;
  return best;
}

type Builtin = (args: PyValue[], kwargs: Map<string, PyValue>) => PyValue;

const arity = (name: string, args: PyValue[], kwargs: Map<string, PyValue>, min: number, max: number, kws: string[] = []): void => {
  for (const k of kwargs.keys()) if (!kws.includes(k)) throw pyErr("TypeError", `${name}() got an unexpected keyword argument '${k}'`);
  if (args.length < min || args.length > max) {
    throw pyErr("TypeError", max === min ? `${name}() takes exactly ${min === 1 ? "one argument" : `${min} arguments`} (${args.length} given)` : `${name}() expected at most ${max} arguments, got ${args.length}`);
  }
};

const BUILTINS = {
  len: (args, kw) => {
    arity("len", args, kw, 1, 1);
    const v = args[0];
    if (v.t === "str") return INT(BigInt(chars(v.v).length));
    if (v.t === "bytes") return INT(BigInt(v.v.length));
    if (v.t === "dict") return INT(BigInt(v.entries.length));
    if ("items" in v) return INT(BigInt(v.items.length));
    if (v.t === "opaque") throw opaqueErr(v);
    throw pyErr("TypeError", `object of type '${tn(v)}' has no len()`);
  },
  abs: (args, kw) => {
    arity("abs", args, kw, 1, 1);
    const n = asNum(args[0]);
    if (args[0].t === "opaque") throw opaqueErr(args[0]);
    if (!n) throw pyErr("TypeError", `bad operand type for abs(): '${tn(args[0])}'`);
    if (n.t === "int") return INT(n.v < 0n ? -n.v : n.v);
    if (n.t === "float") return FLOAT(Math.abs(n.v));
    return FLOAT(Math.hypot(n.re, n.im));
  },
  min: (args, kw) => extreme("min", args, kw),
  max: (args, kw) => extreme("max", args, kw),
  sum: (args, kw) => {
    arity("sum", args, kw, 1, 2, ["start"]);
    let acc: PyValue = args[1] ?? kw.get("start") ?? INT(0n);
    if (acc.t === "str") throw pyErr("TypeError", "sum() can't sum strings [use ''.join(seq) instead]");
    if (acc.t === "bytes") throw pyErr("TypeError", "sum() can't sum bytes [use b''.join(seq) instead]");
    for (const x of iterate(args[0])) acc = binop("+", acc, x);
    return acc;
  },
  sorted: (args, kw) => {
    arity("sorted", args, kw, 1, 1, ["reverse"]);
    const reverse = kw.has("reverse") ? truthy(kw.get("reverse")!) : false;
    const items = [...iterate(args[0])];
    // Array.prototype.sort is stable, as Python's sort is (also with reverse=True).
    items.sort((a, b) => (reverse ? (order("<", b, a) ? -1 : order("<", a, b) ? 1 : 0) : order("<", a, b) ? -1 : order("<", b, a) ? 1 : 0));
    return built({ t: "list", items });
  },
  str: (args, kw) => {
    arity("str", args, kw, 0, 1);
    if (!args.length) return STR("");
    if (args[0].t === "opaque") throw new ExprError(`str() of ${cutText(args[0].text, QUOTED)} is not known without running code`);
    return STR(literalToStr(args[0], MAX_ITEMS));
  },
  repr: (args, kw) => {
    arity("repr", args, kw, 1, 1);
    return STR(literalToRepr(args[0], MAX_ITEMS));
  },
  int: (args, kw) => {
    arity("int", args, kw, 0, 1);
    if (!args.length) return INT(0n);
    const v = args[0];
    const n = asNum(v);
    if (n?.t === "int") return INT(n.v);
    if (n?.t === "float") {
      if (Number.isNaN(n.v)) throw pyErr("ValueError", "cannot convert float NaN to integer");
      if (!Number.isFinite(n.v)) throw pyErr("OverflowError", "cannot convert float infinity to integer");
      return INT(BigInt(Math.trunc(n.v)));
    }
    if (v.t === "str") return parseIntText(v.v);
    if (v.t === "opaque") throw opaqueErr(v);
    throw pyErr("TypeError", `int() argument must be a string, a bytes-like object or a real number, not '${tn(v)}'`);
  },
  float: (args, kw) => {
    arity("float", args, kw, 0, 1);
    if (!args.length) return FLOAT(0);
    const v = args[0];
    const n = asNum(v);
    if (n && n.t !== "complex") return FLOAT(toFloat(n));
    if (v.t === "str") return parseFloatText(v.v);
    if (v.t === "opaque") throw opaqueErr(v);
    throw pyErr("TypeError", `float() argument must be a string or a real number, not '${tn(v)}'`);
  },
  bool: (args, kw) => {
    arity("bool", args, kw, 0, 1);
    return BOOL(args.length ? truthy(args[0]) : false);
  },
  list: (args, kw) => {
    arity("list", args, kw, 0, 1);
    return built({ t: "list", items: args.length ? [...iterate(args[0])] : [] });
  },
  tuple: (args, kw) => {
    arity("tuple", args, kw, 0, 1);
    return built({ t: "tuple", items: args.length ? [...iterate(args[0])] : [] });
  },
} satisfies Record<string, Builtin>;

// ---------------------------------------------------------------------------------------------
// Attributes and methods of built-in values: only those that change nothing (an allow-list per
// type); a method that would change its object is refused, whatever its arguments.

/** Public attributes of each built-in type (Python 3.11's dir()): a name not here is an AttributeError. */
const ATTRIBUTES: Partial<Record<PyValue["t"], string>> = {
  str: "capitalize casefold center count encode endswith expandtabs find format format_map index isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace istitle isupper join ljust lower lstrip maketrans partition removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title translate upper zfill",
  bytes: "capitalize center count decode endswith expandtabs find fromhex hex index isalnum isalpha isascii isdigit islower isspace istitle isupper join ljust lower lstrip maketrans partition removeprefix removesuffix replace rfind rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title translate upper zfill",
  list: "append clear copy count extend index insert pop remove reverse sort",
  tuple: "count index",
  dict: "clear copy fromkeys get items keys pop popitem setdefault update values",
  set: "add clear copy difference difference_update discard intersection intersection_update isdisjoint issubset issuperset pop remove symmetric_difference symmetric_difference_update union update",
  frozenset: "copy difference intersection isdisjoint issubset issuperset symmetric_difference union",
  int: "as_integer_ratio bit_count bit_length conjugate denominator from_bytes imag numerator real to_bytes",
  bool: "as_integer_ratio bit_count bit_length conjugate denominator from_bytes imag numerator real to_bytes",
  float: "as_integer_ratio conjugate fromhex hex imag is_integer real",
  complex: "conjugate imag real",
  dict_keys: "isdisjoint mapping",
  dict_values: "mapping",
  dict_items: "isdisjoint mapping",
};

/** Methods that change their object: refused with a message that says so. */
const MUTATING = new Set(["append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort", "popitem", "setdefault", "update", "add", "discard", "difference_update", "intersection_update", "symmetric_difference_update"]);

type Method = (self: PyValue, args: PyValue[], kw: Map<string, PyValue>) => PyValue;

/**
 * The arguments of `type.name()` by position: `names` in order, the first `required` of them
 * required; those in `keywords` may also be given by name (most built-in methods take none so).
 */
function bind(qual: string, args: PyValue[], kw: Map<string, PyValue>, names: string[], required: number, keywords: string[] = []): (PyValue | undefined)[] {
  const name = qual.slice(qual.indexOf(".") + 1);
  if (kw.size && !keywords.length) throw pyErr("TypeError", `${qual}() takes no keyword arguments`);
  if (args.length > names.length) throw pyErr("TypeError", `${name}() takes at most ${names.length} argument${names.length === 1 ? "" : "s"} (${args.length} given)`);
  const out: (PyValue | undefined)[] = names.map((_, i) => args[i]);
  for (const [k, v] of kw) {
    const i = names.indexOf(k);
    if (i < 0 || !keywords.includes(k)) throw pyErr("TypeError", `${name}() got an unexpected keyword argument '${k}'`);
    if (out[i] !== undefined) throw pyErr("TypeError", `argument for ${name}() given by name ('${k}') and position (${i + 1})`);
    out[i] = v;
  }
  const missing = out.slice(0, required).findIndex((v) => v === undefined);
  if (missing >= 0) throw pyErr("TypeError", `${name}() takes at least ${required} argument${required === 1 ? "" : "s"} (${args.length} given)`);
  return out;
}

const strArg = (qual: string, v: PyValue): string => {
  if (v.t === "opaque") throw opaqueErr(v);
  if (v.t !== "str") throw pyErr("TypeError", `${qual}() argument must be str, not ${tn(v)}`);
  return v.v;
};
/** A str argument, or undefined for None or an absent one. */
const optStr = (qual: string, v: PyValue | undefined): string | undefined => (v === undefined || v.t === "none" ? undefined : strArg(qual, v));
const intArg = (v: PyValue): bigint => {
  if (v.t === "opaque") throw opaqueErr(v);
  return asIndex(v, `'${tn(v)}' object cannot be interpreted as an integer`);
};
/** The int an argument gives, `dflt` for None or an absent one. */
const optInt = (v: PyValue | undefined, dflt: bigint): bigint => (v === undefined || v.t === "none" ? dflt : intArg(v));
/** A count such as a width or maxsplit, within what a number can index. */
const small = (n: bigint): number => (n > BigInt(MAX_ITEMS) ? MAX_ITEMS + 1 : n < -1n ? -1 : Number(n));

/** Python's whitespace (str.isspace, str.split() and str.strip() without arguments). */
const PY_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000";
const isSpace = (c: string): boolean => PY_SPACE.includes(c);
/** Line boundaries of str.splitlines() ("\r\n" is one). */
const LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029";

/**
 * The text from `start` to `end` (code points, as find() and count() take them) and where it
 * starts, or undefined where the start is past the end (CPython's ADJUST_INDICES).
 */
function window(cs: string[], start: PyValue | undefined, end: PyValue | undefined): { text: string; at: number } | undefined {
  const len = BigInt(cs.length);
  let a = optInt(start, 0n);
  let b = optInt(end, len);
  if (b > len) b = len;
  else if (b < 0n) b = b + len < 0n ? 0n : b + len;
  if (a < 0n) a = a + len < 0n ? 0n : a + len;
  if (a > b) return undefined;
  return { text: cs.slice(Number(a), Number(b)).join(""), at: Number(a) };
}

/** find/rfind over a str: the code point index of `sub` in the window, or -1. */
function strFind(qual: string, self: string, args: PyValue[], kw: Map<string, PyValue>, last: boolean): number {
  const [subV, start, end] = bind(qual, args, kw, ["sub", "start", "end"], 1);
  const sub = strArg(qual, subV!);
  const cs = chars(self);
  const hay = window(cs, start, end);
  if (hay === undefined) return -1;
  tick(hay.text.length);
  const at = last ? hay.text.lastIndexOf(sub) : hay.text.indexOf(sub);
  return at < 0 ? -1 : hay.at + chars(hay.text.slice(0, at)).length;
}

/** str.split / str.rsplit. */
function strSplit(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>, right: boolean): PyValue {
  const [sepV, maxV] = bind(qual, args, kw, ["sep", "maxsplit"], 0, ["sep", "maxsplit"]);
  const sep = optStr(qual, sepV);
  const max = small(optInt(maxV, -1n));
  tick(s.length);
  let parts: string[];
  if (sep === undefined) {
    // Runs of whitespace; from the right by splitting the reversed text (whitespace is one code unit).
    const text = right ? [...s].reverse().join("") : s;
    parts = [];
    let i = 0;
    for (;;) {
      while (i < text.length && isSpace(text[i])) i++;
      if (i >= text.length) break;
      if (max >= 0 && parts.length === max) {
        parts.push(text.slice(i));
        break;
      }
      let j = i;
      while (j < text.length && !isSpace(text[j])) j++;
      parts.push(text.slice(i, j));
      i = j;
    }
    if (right) parts = parts.map((p) => [...p].reverse().join("")).reverse();
  } else {
    if (sep === "") throw pyErr("ValueError", "empty separator");
    parts = s.split(sep);
    if (max >= 0 && parts.length > max + 1) parts = right ? [parts.slice(0, parts.length - max).join(sep), ...parts.slice(parts.length - max)] : [...parts.slice(0, max), parts.slice(max).join(sep)];
  }
  return built({ t: "list", items: parts.map(STR) });
}

function strStrip(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>, left: boolean, right: boolean): PyValue {
  const [charsV] = bind(qual, args, kw, ["chars"], 0);
  const set = optStr(qual, charsV);
  const strip = (c: string): boolean => (set === undefined ? isSpace(c) : set.includes(c));
  const cs = chars(s);
  let a = 0;
  let b = cs.length;
  if (left) while (a < b && strip(cs[a])) a++;
  if (right) while (b > a && strip(cs[b - 1])) b--;
  return STR(cs.slice(a, b).join(""));
}

function strPad(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>, how: "left" | "right" | "center"): PyValue {
  const [widthV, fillV] = bind(qual, args, kw, ["width", "fillchar"], 1);
  const width = small(intArg(widthV!));
  const fill = fillV === undefined ? " " : strArg(qual, fillV);
  if (chars(fill).length !== 1) throw pyErr("TypeError", "The fill character must be exactly one character long");
  const len = chars(s).length;
  if (width <= len) return STR(s);
  if (width > MAX_ITEMS) throw tooLarge(`a string of more than ${MAX_ITEMS} characters`);
  const marg = width - len;
  // CPython's centering: the extra character goes left when the width is odd.
  const left = how === "center" ? Math.floor(marg / 2) + (marg & width & 1) : how === "right" ? marg : 0;
  return STR(fill.repeat(left) + s + fill.repeat(marg - left));
}

const cased = (c: string): boolean => c.toLowerCase() !== c.toUpperCase();

function strPredicate(s: string, test: (c: string) => boolean): PyValue {
  const cs = chars(s);
  return BOOL(cs.length > 0 && cs.every(test));
}
/** isupper / islower: some cased character, and none of the other case. */
function strCase(s: string, upper: boolean): PyValue {
  const cs = chars(s);
  return BOOL(cs.some(cased) && cs.every((c) => !cased(c) || (upper ? c === c.toUpperCase() : c === c.toLowerCase())));
}

function strStartsEnds(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>, ends: boolean): PyValue {
  const [fixV, start, end] = bind(qual, args, kw, ["prefix", "start", "end"], 1);
  const fixes = fixV!.t === "tuple" ? fixV!.items : [fixV!];
  const hay = window(chars(s), start, end);
  return BOOL(fixes.some((f) => {
    if (f.t !== "str") throw pyErr("TypeError", `${qual.split(".")[1]} first arg must be str or a tuple of str, not ${tn(f)}`);
    return hay !== undefined && (ends ? hay.text.endsWith(f.v) : hay.text.startsWith(f.v));
  }));
}

function strCount(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>): PyValue {
  const [subV, start, end] = bind(qual, args, kw, ["sub", "start", "end"], 1);
  const sub = strArg(qual, subV!);
  const hay = window(chars(s), start, end);
  if (hay === undefined) return INT(0n);
  tick(hay.text.length);
  return INT(BigInt(sub === "" ? chars(hay.text).length + 1 : hay.text.split(sub).length - 1));
}

function strReplace(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>): PyValue {
  const [oldV, newV, countV] = bind(qual, args, kw, ["old", "new", "count"], 2);
  const [old, rep] = [strArg(qual, oldV!), strArg(qual, newV!)];
  const count = small(optInt(countV, -1n));
  const parts = old === "" ? ["", ...chars(s)] : s.split(old);
  const n = parts.length - 1;
  const k = count < 0 || count > n ? n : count;
  // Before building: the result's length (an empty `old` inserts `new` around every character).
  if (s.length + k * (rep.length - old.length) + (old === "" && k === n ? rep.length : 0) > MAX_ITEMS) throw tooLarge(`a string of more than ${MAX_ITEMS} characters`);
  tick(s.length + k * rep.length);
  if (old === "") return STR(parts.slice(1, k + 1).map((c) => rep + c).join("") + (k === n ? rep : "") + parts.slice(k + 1).join(""));
  return STR(parts.slice(0, k + 1).join(rep) + (k < n ? old + parts.slice(k + 1).join(old) : ""));
}

function strPartition(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>, right: boolean): PyValue {
  const [sepV] = bind(qual, args, kw, ["sep"], 1);
  const sep = strArg(qual, sepV!);
  if (sep === "") throw pyErr("ValueError", "empty separator");
  const at = right ? s.lastIndexOf(sep) : s.indexOf(sep);
  const parts = at < 0 ? (right ? ["", "", s] : [s, "", ""]) : [s.slice(0, at), sep, s.slice(at + sep.length)];
  return { t: "tuple", items: parts.map(STR) };
}

function strTitle(s: string): string {
  let prevCased = false;
  return chars(s).map((c) => {
    const out = prevCased ? c.toLowerCase() : c.toUpperCase();
    prevCased = cased(c);
    return out;
  }).join("");
}

function strSplitlines(qual: string, s: string, args: PyValue[], kw: Map<string, PyValue>): PyValue {
  const [keepV] = bind(qual, args, kw, ["keepends"], 0, ["keepends"]);
  const keep = keepV !== undefined && truthy(keepV);
  tick(s.length);
  const out: PyValue[] = [];
  let i = 0;
  let start = 0;
  while (i < s.length) {
    if (!LINE_BREAKS.includes(s[i])) {
      i++;
      continue;
    }
    const eol = s[i] === "\r" && s[i + 1] === "\n" ? 2 : 1;
    out.push(STR(s.slice(start, keep ? i + eol : i)));
    i += eol;
    start = i;
  }
  if (start < s.length) out.push(STR(s.slice(start)));
  return built({ t: "list", items: out });
}

const noArgs = (qual: string, args: PyValue[], kw: Map<string, PyValue>): void => void bind(qual, args, kw, [], 0);

/** A str method that takes no arguments and maps the text. */
const strMap = (f: (s: string) => string): Method => (self, args, kw) => (noArgs("str", args, kw), STR(f((self as { v: string }).v)));
/** A str predicate over its characters (False for the empty string). */
const strIs = (test: (c: string) => boolean): Method => (self, args, kw) => (noArgs("str", args, kw), strPredicate((self as { v: string }).v, test));

const STR_METHODS: Record<string, (s: string, args: PyValue[], kw: Map<string, PyValue>) => PyValue> = {
  split: (s, a, k) => strSplit("str.split", s, a, k, false),
  rsplit: (s, a, k) => strSplit("str.rsplit", s, a, k, true),
  splitlines: (s, a, k) => strSplitlines("str.splitlines", s, a, k),
  strip: (s, a, k) => strStrip("str.strip", s, a, k, true, true),
  lstrip: (s, a, k) => strStrip("str.lstrip", s, a, k, true, false),
  rstrip: (s, a, k) => strStrip("str.rstrip", s, a, k, false, true),
  find: (s, a, k) => INT(BigInt(strFind("str.find", s, a, k, false))),
  rfind: (s, a, k) => INT(BigInt(strFind("str.rfind", s, a, k, true))),
  index: (s, a, k) => {
    const i = strFind("str.index", s, a, k, false);
    if (i < 0) throw pyErr("ValueError", "substring not found");
    return INT(BigInt(i));
  },
  rindex: (s, a, k) => {
    const i = strFind("str.rindex", s, a, k, true);
    if (i < 0) throw pyErr("ValueError", "substring not found");
    return INT(BigInt(i));
  },
  count: (s, a, k) => strCount("str.count", s, a, k),
  startswith: (s, a, k) => strStartsEnds("str.startswith", s, a, k, false),
  endswith: (s, a, k) => strStartsEnds("str.endswith", s, a, k, true),
  replace: (s, a, k) => strReplace("str.replace", s, a, k),
  partition: (s, a, k) => strPartition("str.partition", s, a, k, false),
  rpartition: (s, a, k) => strPartition("str.rpartition", s, a, k, true),
  center: (s, a, k) => strPad("str.center", s, a, k, "center"),
  ljust: (s, a, k) => strPad("str.ljust", s, a, k, "left"),
  rjust: (s, a, k) => strPad("str.rjust", s, a, k, "right"),
  zfill: (s, a, k) => {
    const [widthV] = bind("str.zfill", a, k, ["width"], 1);
    const width = small(intArg(widthV!));
    const len = chars(s).length;
    if (width <= len) return STR(s);
    if (width > MAX_ITEMS) throw tooLarge(`a string of more than ${MAX_ITEMS} characters`);
    const sign = s[0] === "+" || s[0] === "-" ? s[0] : "";
    return STR(sign + "0".repeat(width - len) + s.slice(sign.length));
  },
  join: (s, a, k) => {
    const [itV] = bind("str.join", a, k, ["iterable"], 1);
    const items = iterate(itV!).map((x, i) => {
      if (x.t !== "str") throw pyErr("TypeError", `sequence item ${i}: expected str instance, ${tn(x)} found`);
      return x.v;
    });
    const length = items.reduce((n, x) => n + x.length, 0) + s.length * Math.max(0, items.length - 1);
    if (length > MAX_ITEMS) throw tooLarge(`a string of more than ${MAX_ITEMS} characters`);
    tick(length);
    return STR(items.join(s));
  },
  removeprefix: (s, a, k) => {
    const p = strArg("str.removeprefix", bind("str.removeprefix", a, k, ["prefix"], 1)[0]!);
    return STR(p && s.startsWith(p) ? s.slice(p.length) : s);
  },
  removesuffix: (s, a, k) => {
    const p = strArg("str.removesuffix", bind("str.removesuffix", a, k, ["suffix"], 1)[0]!);
    return STR(p && s.endsWith(p) ? s.slice(0, -p.length) : s);
  },
  isupper: (s, a, k) => (noArgs("str.isupper", a, k), strCase(s, true)),
  islower: (s, a, k) => (noArgs("str.islower", a, k), strCase(s, false)),
};

/** The methods of each type that change nothing. */
const METHODS: Partial<Record<PyValue["t"], Record<string, Method>>> = {
  str: {
    ...Object.fromEntries(Object.entries(STR_METHODS).map(([name, f]): [string, Method] => [name, (self, args, kw) => f((self as { v: string }).v, args, kw)])),
    upper: strMap((s) => s.toUpperCase()),
    lower: strMap((s) => s.toLowerCase()),
    swapcase: strMap((s) => chars(s).map((c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())).join("")),
    capitalize: strMap((s) => {
      const cs = chars(s);
      return cs.length ? cs[0].toUpperCase() + cs.slice(1).join("").toLowerCase() : "";
    }),
    title: strMap(strTitle),
    isdigit: strIs((c) => /\p{Nd}|[\u00b2\u00b3\u00b9\u2070-\u2079\u2080-\u2089\u2460-\u2468]/u.test(c)),
    isdecimal: strIs((c) => /\p{Nd}/u.test(c)),
    isnumeric: strIs((c) => /\p{N}/u.test(c)),
    isalpha: strIs((c) => /\p{L}/u.test(c)),
    isalnum: strIs((c) => /[\p{L}\p{N}]/u.test(c)),
    isspace: strIs(isSpace),
    isascii: (self, args, kw) => (noArgs("str.isascii", args, kw), BOOL(chars((self as { v: string }).v).every((c) => c.charCodeAt(0) < 128))),
  },
  list: {
    copy: (self, args, kw) => (noArgs("list.copy", args, kw), built({ t: "list", items: [...(self as { items: PyValue[] }).items] })),
    count: (self, args, kw) => seqCount("list.count", self, args, kw),
    index: (self, args, kw) => seqIndex("list.index", self, args, kw),
  },
  tuple: {
    count: (self, args, kw) => seqCount("tuple.count", self, args, kw),
    index: (self, args, kw) => seqIndex("tuple.index", self, args, kw),
  },
  dict: {
    keys: (self, args, kw) => (noArgs("dict.keys", args, kw), { t: "dict_keys", items: entriesOf(self).map(([k]) => k) }),
    values: (self, args, kw) => (noArgs("dict.values", args, kw), { t: "dict_values", items: entriesOf(self).map(([, v]) => v) }),
    items: (self, args, kw) => (noArgs("dict.items", args, kw), { t: "dict_items", items: entriesOf(self).map(([k, v]): PyValue => ({ t: "tuple", items: [k, v] })) }),
    copy: (self, args, kw) => (noArgs("dict.copy", args, kw), { t: "dict", entries: [...entriesOf(self)] }),
    get: (self, args, kw) => {
      const [key, dflt] = bind("dict.get", args, kw, ["key", "default"], 1);
      hashable(key!);
      return entriesOf(self).find(([k]) => pyEq(k, key!))?.[1] ?? dflt ?? { t: "none" };
    },
  },
  int: numberMethods(),
  bool: numberMethods(),
  float: {
    ...numberMethods(),
    is_integer: (self, args, kw) => (noArgs("float.is_integer", args, kw), BOOL(Number.isInteger((self as { v: number }).v))),
  },
  complex: { conjugate: (self, args, kw) => (noArgs("complex.conjugate", args, kw), { t: "complex", re: (self as { re: number }).re, im: -(self as { im: number }).im }) },
  set: setMethods("set"),
  frozenset: setMethods("frozenset"),
};

const entriesOf = (d: PyValue): [PyValue, PyValue][] => (d as { entries: [PyValue, PyValue][] }).entries;

function seqCount(qual: string, self: PyValue, args: PyValue[], kw: Map<string, PyValue>): PyValue {
  const [x] = bind(qual, args, kw, ["value"], 1);
  return INT(BigInt((self as { items: PyValue[] }).items.filter((e) => pyEq(e, x!)).length));
}

function seqIndex(qual: string, self: PyValue, args: PyValue[], kw: Map<string, PyValue>): PyValue {
  const [x, start, end] = bind(qual, args, kw, ["value", "start", "stop"], 1);
  const items = (self as { items: PyValue[] }).items;
  const len = BigInt(items.length);
  const at = (v: PyValue | undefined, dflt: bigint): number => {
    let i = optInt(v, dflt);
    if (i < 0n) i = i + len < 0n ? 0n : i + len;
    return Number(i > len ? len : i);
  };
  for (let i = at(start, 0n); i < at(end, len); i++) if (pyEq(items[i], x!)) return INT(BigInt(i));
  throw pyErr("ValueError", self.t === "list" ? `${reprPreview(x!, QUOTED)} is not in list` : "tuple.index(x): x not in tuple");
}

function numberMethods(): Record<string, Method> {
  const int = (v: PyValue): bigint => (asNum(v) as { v: bigint }).v;
  return {
    conjugate: (self, args, kw) => (noArgs("int.conjugate", args, kw), self.t === "float" ? self : INT(int(self))),
    bit_length: (self, args, kw) => (noArgs("int.bit_length", args, kw), INT(BigInt((int(self) < 0n ? -int(self) : int(self)).toString(2).replace(/^0$/, "").length))),
    bit_count: (self, args, kw) => (noArgs("int.bit_count", args, kw), INT(BigInt([...(int(self) < 0n ? -int(self) : int(self)).toString(2)].filter((c) => c === "1").length))),
  };
}

function setMethods(type: "set" | "frozenset"): Record<string, Method> {
  const items = (v: PyValue): PyValue[] => (v as { items: PyValue[] }).items;
  const others = (name: string, args: PyValue[], kw: Map<string, PyValue>): PyValue[][] => {
    if (kw.size) throw pyErr("TypeError", `${type}.${name}() takes no keyword arguments`);
    return args.map((a) => dedupe(iterate(a)));
  };
  const combine = (name: string, f: (acc: PyValue[], other: PyValue[]) => PyValue[]): Method => (self, args, kw) =>
    built({ t: type, items: others(name, args, kw).reduce(f, [...items(self)]) });
  const relation = (name: string, f: (a: PyValue[], b: PyValue[]) => boolean): Method => (self, args, kw) => {
    const [other] = bind(`${type}.${name}`, args, kw, ["other"], 1);
    return BOOL(f(items(self), dedupe(iterate(other!))));
  };
  return {
    copy: (self, args, kw) => (noArgs(`${type}.copy`, args, kw), { t: type, items: [...items(self)] }),
    union: combine("union", (acc, o) => [...acc, ...o.filter((e) => !contains(acc, e))]),
    intersection: combine("intersection", (acc, o) => acc.filter((e) => contains(o, e))),
    difference: combine("difference", (acc, o) => acc.filter((e) => !contains(o, e))),
    symmetric_difference: (self, args, kw) => {
      const [other] = bind(`${type}.symmetric_difference`, args, kw, ["other"], 1);
      const o = dedupe(iterate(other!));
      return built({ t: type, items: [...items(self).filter((e) => !contains(o, e)), ...o.filter((e) => !contains(items(self), e))] });
    },
    issubset: relation("issubset", (a, b) => a.every((e) => contains(b, e))),
    issuperset: relation("issuperset", (a, b) => b.every((e) => contains(a, e))),
    isdisjoint: relation("isdisjoint", (a, b) => !a.some((e) => contains(b, e))),
  };
}

/** Number attributes: real, imag, numerator, denominator (the only data attributes of built-in values). */
function attribute(v: PyValue, name: string): PyValue {
  const n = asNum(v);
  if (n && (name === "real" || name === "imag")) {
    if (n.t === "complex") return FLOAT(name === "real" ? n.re : n.im);
    if (n.t === "float") return FLOAT(name === "real" ? n.v : 0);
    return INT(name === "real" ? n.v : 0n);
  }
  if (n?.t === "int" && (name === "numerator" || name === "denominator")) return INT(name === "numerator" ? n.v : 1n);
  methodOf(v, name); // an unknown, mutating or unsupported name says so
  throw new ExprError(`${tn(v)}.${name} is a method: only a call of it, such as .${name}(), is evaluated`);
}

/** The pure method `name` of `v`'s type; a clear ExprError for an unknown, mutating or unsupported one. */
function methodOf(v: PyValue, name: string): Method {
  if (v.t === "opaque") throw new ExprError(`the attributes of ${cutText(v.text, QUOTED)} are not known without running code`);
  if (!(ATTRIBUTES[v.t] ?? "").split(" ").includes(name)) throw pyErr("AttributeError", `'${tn(v)}' object has no attribute '${name}'`);
  if (MUTATING.has(name)) throw new ExprError(`${tn(v)}.${name}() would change the ${tn(v)}: only methods that change nothing can be evaluated`);
  const m = METHODS[v.t]?.[name];
  if (!m) throw new ExprError(`${tn(v)}.${name}() is not supported`);
  return m;
}

/** The builtins an expression may call. */
export type SupportedBuiltin = keyof typeof BUILTINS;
export const SUPPORTED_BUILTINS: readonly string[] = Object.keys(BUILTINS);

function dedupe(items: PyValue[]): PyValue[] {
  const out: PyValue[] = [];
  for (const x of items) {
    hashable(x);
    if (!contains(out, x)) out.push(x);
  }
  return out;
}

function evaluate(n: Node, scope: Scope): PyValue {
  tick();
  switch (n.k) {
    case "lit":
      return n.v;
    case "name": {
      const v = scope.get(n.id);
      if (v === undefined) {
        if (Object.hasOwn(BUILTINS, n.id)) throw new ExprError(`the builtin ${n.id} can only be called, e.g. ${n.id}(x)`);
        throw pyErr("NameError", `name '${n.id}' is not defined`);
      }
      return v;
    }
    case "tuple":
    case "list":
      return built({ t: n.k, items: n.items.map((x) => evaluate(x, scope)) });
    case "set":
      // Python orders a set by hash; we keep the order of the display.
      return built({ t: "set", items: dedupe(n.items.map((x) => evaluate(x, scope))) });
    case "dict": {
      const entries: [PyValue, PyValue][] = [];
      for (const [kn, vn] of n.entries) {
        const k = evaluate(kn, scope);
        const v = evaluate(vn, scope);
        hashable(k);
        const hit = entries.find(([k2]) => pyEq(k2, k));
        if (hit) hit[1] = v; // the first key stays, the last value wins
        else entries.push([k, v]);
      }
      return built({ t: "dict", entries });
    }
    case "unary":
      return unary(n.op, evaluate(n.x, scope));
    case "bin":
      return binop(n.op, evaluate(n.a, scope), evaluate(n.b, scope));
    case "and": {
      const a = evaluate(n.a, scope);
      return truthy(a) ? evaluate(n.b, scope) : a;
    }
    case "or": {
      const a = evaluate(n.a, scope);
      return truthy(a) ? a : evaluate(n.b, scope);
    }
    case "not":
      return BOOL(!truthy(evaluate(n.x, scope)));
    case "cmp": {
      let left = evaluate(n.first, scope);
      for (const [op, rn] of n.rest) {
        const right = evaluate(rn, scope);
        if (!compare(op, left, right)) return BOOL(false);
        left = right;
      }
      return BOOL(true);
    }
    case "if":
      return truthy(evaluate(n.test, scope)) ? evaluate(n.body, scope) : evaluate(n.orelse, scope);
    case "index": {
      const x = evaluate(n.x, scope);
      if (n.index.k === "slice") {
        const none: PyValue = { t: "none" };
        const part = (p?: Node): PyValue => (p ? evaluate(p, scope) : none);
        return subscript(x, { slice: [part(n.index.lower), part(n.index.upper), part(n.index.step)] });
      }
      return subscript(x, evaluate(n.index, scope));
    }
    case "slice":
      throw new ExprError("a slice is only valid inside [...]");
    case "call": {
      if (scope.has(n.fn)) throw new ExprError(`calling ${n.fn} would run code: not supported`);
      const f = Object.hasOwn(BUILTINS, n.fn) ? (BUILTINS as Record<string, Builtin>)[n.fn] : undefined;
      if (!f) throw new ExprError(`calling ${n.fn}() is not supported (supported: ${SUPPORTED_BUILTINS.join(", ")})`);
      return f(...argumentsOf(n, scope));
    }
    case "attr":
      return attribute(evaluate(n.x, scope), n.name);
    case "method": {
      const self = evaluate(n.x, scope);
      return methodOf(self, n.name)(self, ...argumentsOf(n, scope));
    }
  }
}

/** A call's arguments, evaluated left to right: positional, then by keyword. */
function argumentsOf(n: { args: Node[]; kwargs: [string, Node][] }, scope: Scope): [PyValue[], Map<string, PyValue>] {
  const args = n.args.map((a) => evaluate(a, scope));
  const kwargs = new Map<string, PyValue>();
  for (const [k, v] of n.kwargs) {
    if (kwargs.has(k)) throw new ExprError(`keyword argument repeated: ${k}`);
    kwargs.set(k, evaluate(v, scope));
  }
  return [args, kwargs];
}

/** The names an expression can read: locals, parsed from their reprs when first read. */
interface Scope {
  get(name: string): PyValue | undefined;
  has(name: string): boolean;
}

function scopeOf(locals: Record<string, string>): Scope {
  const parsed = new Map<string, PyValue>();
  const has = (k: string): boolean => Object.hasOwn(locals, k);
  return {
    has,
    get(k) {
      if (!has(k)) return undefined;
      if (!parsed.has(k)) parsed.set(k, parseRepr(locals[k]));
      return parsed.get(k);
    },
  };
}

/** Runs one evaluation within its budget of work; its failures are ExprErrors. */
function bounded<T>(work: () => T): T {
  stepsLeft = MAX_STEPS;
  try {
    return work();
  } catch (e) {
    if (e instanceof ReprTooLong) throw tooLarge(e.message);
    // A long chain such as 1+1+...+1 nests as deep as it is long.
    if (e instanceof RangeError) throw new ExprError(`expression too complex to evaluate (${e.message})`);
    throw e;
  } finally {
    stepsLeft = Infinity;
  }
}

/** Evaluates `expr` over `locals` (name → repr) to a value; throws ExprError. */
export function evaluateValue(expr: string, locals: Record<string, string>): PyValue {
  return bounded(() => evaluate(parseExpression(expr), scopeOf(locals)));
}

/**
 * What evaluating `expr` would read, from its parse alone: the names it reads as variables, the
 * builtins and methods it calls, its binary operators, whether it writes a float literal, and
 * whether it builds a set (whose order in CPython follows hashes, salted per process for strings,
 * which this evaluator cannot follow). Throws ExprError where it does not parse.
 */
export function reads(expr: string): { names: string[]; builtins: string[]; methods: string[]; ops: string[]; float: boolean; set: boolean } {
  const names = new Set<string>();
  const builtins = new Set<string>();
  const methods = new Set<string>();
  const ops = new Set<string>();
  let float = false;
  let set = false;
  const walk = (n: Node | undefined): void => {
    if (!n) return;
    switch (n.k) {
      case "lit":
        if (n.v.t === "float" || n.v.t === "complex") float = true;
        return;
      case "name":
        names.add(n.id);
        return;
      case "tuple":
      case "list":
      case "set":
        if (n.k === "set") set = true;
        return n.items.forEach(walk);
      case "dict":
        return n.entries.forEach(([k, v]) => (walk(k), walk(v)));
      case "unary":
      case "not":
        return walk(n.x);
      case "bin":
        ops.add(n.op);
        return walk(n.a), walk(n.b);
      case "and":
      case "or":
        return walk(n.a), walk(n.b);
      case "cmp":
        return walk(n.first), n.rest.forEach(([, x]) => walk(x));
      case "if":
        return walk(n.test), walk(n.body), walk(n.orelse);
      case "index":
        return walk(n.x), walk(n.index);
      case "slice":
        return walk(n.lower), walk(n.upper), walk(n.step);
      case "call":
        builtins.add(n.fn);
        if (n.fn === "set" || n.fn === "frozenset") set = true;
        return n.args.forEach(walk), n.kwargs.forEach(([, x]) => walk(x));
      case "attr":
        return walk(n.x);
      case "method":
        methods.add(n.name);
        return walk(n.x), n.args.forEach(walk), n.kwargs.forEach(([, x]) => walk(x));
    }
  };
  walk(parseExpression(expr));
  return { names: [...names], builtins: [...builtins], methods: [...methods], ops: [...ops], float, set };
}

/** Evaluates `expr` over `locals` (name → repr): the repr of the result, as Python prints it. */
export function evaluateExpression(expr: string, locals: Record<string, string>): string {
  return bounded(() => literalToRepr(evaluate(parseExpression(expr), scopeOf(locals))));
}

/** A breakpoint condition: whether `expr` holds over `locals`; throws ExprError. */
export function evaluateCondition(expr: string, locals: Record<string, string>): boolean {
  return truthy(evaluateValue(expr, locals));
}

/** Whether a repr's value is true in Python; throws ExprError when that is not known (opaque reprs). */
export const isTruthyRepr = (repr: string): boolean => truthy(parseRepr(repr));

const STATEMENT_KEYWORDS = new Set(["import", "from", "def", "class", "return", "del", "pass", "raise", "global", "nonlocal", "assert", "with", "while", "for", "try", "break", "continue", "if", "elif", "else", "except", "finally", "async", "yield"]);

/**
 * Whether `src` is one Python expression as far as its token structure tells (balanced
 * brackets, no statement, no `;` or assignment at the top level): a message when it is not.
 * Used to check an entry call before anything runs; Python has the last word.
 */
export function checkSingleExpression(src: string): string | undefined {
  if (!src.trim()) return "the expression is empty";
  const stack: string[] = [];
  let first = true;
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "\\" && src[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (/\s/.test(c)) {
      if (c === "\n" && stack.length === 0 && src.slice(i).trim() !== "") return "expected a single expression, found a line break";
      i++;
      continue;
    }
    if (c === "#") {
      // A comment runs to the end of its line.
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    const q = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(src.slice(i));
    if (q && ["", "r", "u", "b", "br", "rb", "f", "fr", "rf"].includes(q[1].toLowerCase())) {
      // Skip the string (f-strings too: their braces are not ours to balance).
      let j = i + q[0].length;
      for (;;) {
        if (j >= src.length) return "unterminated string";
        if (src.startsWith(q[2], j)) break;
        // A backslash keeps the next character from ending the string, raw or not.
        if (src[j] === "\\") j++;
        else if (src[j] === "\n" && q[2].length === 1) return "unterminated string";
        j++;
      }
      i = j + q[2].length;
      first = false;
      continue;
    }
    const word = /^[\p{ID_Start}_][\p{ID_Continue}]*/u.exec(src.slice(i))?.[0];
    if (word) {
      if (first && STATEMENT_KEYWORDS.has(word) && !(word === "yield")) return `"${word}" starts a statement, not an expression`;
      i += word.length;
      first = false;
      continue;
    }
    first = false;
    if (c === "(" || c === "[" || c === "{") stack.push(c === "(" ? ")" : c === "[" ? "]" : "}");
    else if (c === ")" || c === "]" || c === "}") {
      if (stack.pop() !== c) return `unbalanced "${c}"`;
    } else if (stack.length === 0) {
      if (c === ";") return "expected a single expression, found \";\"";
      const prev = src[i - 1] ?? "";
      const augmented = src.slice(i - 2, i) === ">>" || src.slice(i - 2, i) === "<<";
      if (c === "=" && src[i + 1] !== "=" && (!"=<>!:".includes(prev) || augmented)) return "expected an expression, found an assignment";
    }
    i++;
  }
  if (stack.length) return `unclosed "${{ ")": "(", "]": "[", "}": "{" }[stack[stack.length - 1]]}"`;
  return undefined;
}

/** Whether Python text reads `name` as a whole name (`p` in `q = p + 1`, not in `x.p` or `pp`). */
export function mentions(text: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\p{ID_Continue}.])${escaped}(?![\\p{ID_Continue}])`, "u").test(text);
}
