// Python values as the debugger sees them: parsed from the reprs a trace or a model gives, shown
// as expandable trees in the Variables view, and rebuilt as values by CPython (python/sealed.py). Only literal
// syntax is read; any other repr (`<Foo object at 0x...>`, `Foo(a=1)`, a cut repr) is opaque text.
import type { Objects } from "./trajectory.js";

export type PyValue =
  | { t: "int"; v: bigint }
  | { t: "bool"; v: boolean }
  | { t: "float"; v: number }
  | { t: "complex"; re: number; im: number }
  | { t: "none" }
  | { t: "str"; v: string }
  | { t: "bytes"; v: number[] }
  | { t: "list" | "tuple" | "set" | "frozenset"; items: PyValue[] }
  /** A dict's keys(), values() or items() (only computed, never read from a repr): its elements in order. */
  | { t: "dict_keys" | "dict_values" | "dict_items"; items: PyValue[] }
  | { t: "dict"; entries: [PyValue, PyValue][] }
  /** A repr that is not a literal: shown as it is, never computed on. */
  | { t: "opaque"; text: string };

export type PyType = PyValue["t"];

export class ValueSyntaxError extends Error {}

/**
 * What CPython is asked over values rebuilt from reprs (`evaluate` in adapter/python/sealed.py):
 * an expression; a statement run over them (the rules of the model alone ask this: an assignment,
 * a print); or an iterable's first `max` items.
 */
export type Evaluation = string | { exec: string } | { items: string; max: number };

/**
 * What an expression or statement reads, by CPython's reading of it: names loaded, names called,
 * whether a method is called, whether a set is built, whether it has scopes of its own (a
 * comprehension, a generator, a lambda: frames of their own when the program runs).
 */
export interface Reads {
  names: string[];
  calls: string[];
  methods: boolean;
  set: boolean;
  scopes: boolean;
}

/**
 * One Python expression evaluated over values rebuilt from reprs (by CPython, sealed:
 * `evaluateValues` in adapter/real/sealed.ts): its repr, its str() (a log message's text), its
 * truth (a condition's; absent where bool() raised), its type and whether the repr was cut short
 * (`cut`: too long to send whole, as the tracer cuts one); or the error, one line
 * ("NameError: name 'x' is not defined"), with `unknown`, the name it read whose repr is no value
 * (`<__main__.Cart object at 0x...>`), where that was why. `stdout`: what it printed; `reads`:
 * what it read.
 */
export type ValueResult = ({ value: string; str: string; type: string; truth?: boolean; cut?: true; reads?: Reads } | { error: string; unknown?: string }) & { stdout?: string };

/** CPython's answer to one Evaluation: an expression's (ValueResult), a statement's (the names it bound or changed, their reprs), an iterable's items. */
export type Answer = ValueResult | RanAnswer | ItemsAnswer;
/** A statement run: the names it bound or changed, with their reprs. */
export type RanAnswer = { names: Record<string, string>; reads?: Reads; stdout?: string };
/** An iterable's first items (`more`: it has more than were asked). */
export type ItemsAnswer = { items: string[]; more?: true; reads?: Reads; stdout?: string };

/** Asks CPython, sealed, each evaluation over `names` (name -> repr); `hidden` names have no value there (a builtin the program shadows). */
export type PythonAsk = (names: Record<string, string>, entries: readonly Evaluation[], opts?: { hidden?: readonly string[]; signal?: AbortSignal }) => Promise<Answer[]>;

// ---------------------------------------------------------------------------------------------
// Reading literals

const isIdPart = (c: string): boolean => /[\w\u00b7]/.test(c) || (c > "\x7f" && /[\p{ID_Continue}]/u.test(c));

const DIGITS = "[0-9](?:_?[0-9])*";
// Sticky (matched at lastIndex): no copy of the rest of a long repr for each number in it.
const DECIMAL = new RegExp(`(?:(${DIGITS})?\\.(${DIGITS})?|(${DIGITS}))(?:[eE][+-]?${DIGITS})?[jJ]?`, "y");
const PREFIXED = /0([xX](?:_?[0-9a-fA-F])+|[oO](?:_?[0-7])+|[bB](?:_?[01])+)/y;

/**
 * Reads a number literal at `pos` (no sign): ints (with `_`, 0x/0o/0b), floats, imaginary.
 * Returns undefined when there is no number there.
 */
export function readNumber(src: string, pos: number): { value: PyValue; end: number } | undefined {
  const c = src.charCodeAt(pos);
  if (!(c >= 48 && c <= 57) && c !== 46) return undefined; // a digit or "." (checked first: reprs hold millions of values)
  // A plain small int, the most common value, without the regular expressions.
  let stop = pos;
  while (stop < src.length && src.charCodeAt(stop) >= 48 && src.charCodeAt(stop) <= 57) stop++;
  const next = src[stop] ?? " ";
  if (stop > pos && stop - pos <= 15 && (c !== 48 || stop - pos === 1) && next !== "." && !isIdPart(next))
    return { value: { t: "int", v: BigInt(Number(src.slice(pos, stop))) }, end: stop };
  PREFIXED.lastIndex = pos;
  let m = PREFIXED.exec(src);
  if (m) {
    const end = pos + m[0].length;
    if (isIdPart(src[end] ?? " ")) throw new ValueSyntaxError(`invalid number literal at ${pos}`);
    return { value: { t: "int", v: BigInt(m[0].replace(/_/g, "").toLowerCase()) }, end };
  }
  DECIMAL.lastIndex = pos;
  m = DECIMAL.exec(src);
  if (!m || m[0] === "." || /^\.[eEjJ]/.test(m[0])) return undefined;
  let text = m[0];
  let end = pos + text.length;
  // "1.e5" is a float, but "1." followed by a name ("1.real") is an attribute: not ours to read.
  if (isIdPart(src[end] ?? " ")) throw new ValueSyntaxError(`invalid number literal at ${pos}`);
  const imag = /[jJ]$/.test(text);
  if (imag) text = text.slice(0, -1);
  const clean = text.replace(/_/g, "");
  if (imag) return { value: { t: "complex", re: 0, im: Number(clean) }, end };
  if (/[.eE]/.test(clean)) return { value: { t: "float", v: Number(clean) }, end };
  if (/^0+[1-9]/.test(clean)) throw new ValueSyntaxError(`leading zeros in a decimal integer literal at ${pos}`);
  return { value: { t: "int", v: BigInt(clean) }, end };
}

const STRING_START = new Set("'\"rRbBuUfF");
const SIMPLE_ESCAPES: Record<string, number> = { "\\": 92, "'": 39, '"': 34, a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11 };

/**
 * Reads one string or bytes literal at `pos`, with any prefix (r, u, b, br, rb; f-strings are
 * refused), either quote, triple quotes and every escape Python knows except \N{...}.
 */
export function readString(src: string, pos: number): { value: PyValue; end: number } | undefined {
  if (!STRING_START.has(src[pos])) return undefined;
  const m = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(src.slice(pos));
  if (!m) return undefined;
  const prefix = m[1].toLowerCase();
  if (!["", "r", "u", "b", "br", "rb", "f", "fr", "rf"].includes(prefix)) return undefined;
  if (prefix.includes("f")) throw new ValueSyntaxError("f-strings are not supported");
  const raw = prefix.includes("r");
  const bytes = prefix.includes("b");
  const quote = m[2];
  let i = pos + m[0].length;
  const units: number[] = []; // code points (str) or byte values (bytes)
  for (;;) {
    if (i >= src.length) throw new ValueSyntaxError(`unterminated string literal at ${pos}`);
    if (src.startsWith(quote, i)) {
      i += quote.length;
      break;
    }
    const c = src.codePointAt(i)!;
    const ch = String.fromCodePoint(c);
    if ((c === 10 || c === 13) && quote.length === 1) throw new ValueSyntaxError(`unterminated string literal at ${pos}`);
    if (bytes && c > 127) throw new ValueSyntaxError("bytes can only contain ASCII literal characters");
    if (ch !== "\\") {
      units.push(c);
      i += ch.length;
      continue;
    }
    if (i + 1 >= src.length) throw new ValueSyntaxError(`unterminated string literal at ${pos}`);
    const e = String.fromCodePoint(src.codePointAt(i + 1)!);
    if (raw) {
      // A raw string keeps the backslash; it still stops a quote from ending the string.
      units.push(92, e.codePointAt(0)!);
      i += 1 + e.length;
      continue;
    }
    i += 1 + e.length;
    if (e === "\n") continue;
    if (e in SIMPLE_ESCAPES) units.push(SIMPLE_ESCAPES[e]);
    else if (e >= "0" && e <= "7") {
      const o = /^[0-7]{1,3}/.exec(src.slice(i - 1))![0];
      i += o.length - 1;
      const v = parseInt(o, 8);
      if (bytes) units.push(v & 0xff);
      else units.push(v);
    } else if (e === "x" || (!bytes && (e === "u" || e === "U"))) {
      const n = e === "x" ? 2 : e === "u" ? 4 : 8;
      const hex = src.slice(i, i + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw new ValueSyntaxError(`truncated \\${e} escape at ${i - 2}`);
      const v = parseInt(hex, 16);
      if (v > 0x10ffff) throw new ValueSyntaxError(`illegal Unicode character at ${i - 2}`);
      units.push(v);
      i += n;
    } else if (e === "N" && !bytes) throw new ValueSyntaxError("\\N{...} escapes are not supported");
    else units.push(92, e.codePointAt(0)!);
  }
  if (bytes) return { value: { t: "bytes", v: units }, end: i };
  // Lone surrogates (e.g. '\ud800') stay as they are, as in Python.
  let s = "";
  for (const u of units) s += u >= 0xd800 && u <= 0xdfff ? String.fromCharCode(u) : String.fromCodePoint(u);
  return { value: { t: "str", v: s }, end: i };
}

/** Reads adjacent string literals as one ('a' 'b' is 'ab'); str and bytes do not mix. */
function readStrings(src: string, pos: number, skip: (p: number) => number): { value: PyValue; end: number } | undefined {
  const first = readString(src, pos);
  if (!first) return undefined;
  let { value, end } = first;
  for (;;) {
    const p = skip(end);
    const next = readString(src, p);
    if (!next) return { value, end };
    if (next.value.t !== value.t) throw new ValueSyntaxError("cannot mix bytes and nonbytes literals");
    value = value.t === "str" ? { t: "str", v: value.v + (next.value as { v: string }).v } : { t: "bytes", v: [...(value as { v: number[] }).v, ...(next.value as { v: number[] }).v] };
    end = next.end;
  }
}

/** The deepest nesting a repr is read with. */
export const MAX_NESTING = 100;
const OPEN: Record<string, string> = { "(": ")", "[": "]", "{": "}" };

/** Recursive-descent reader of a repr. Elements of a container that are not literals become opaque. */
class ReprReader {
  pos = 0;
  depth = 0;
  constructor(readonly src: string) {}

  ws(p = this.pos): number {
    const s = this.src;
    for (; p < s.length; p++) {
      const c = s.charCodeAt(p);
      if (!(c === 32 || (c >= 9 && c <= 13) || (c > 127 && /\s/.test(s[p])))) break;
    }
    return p;
  }
  skip(): void {
    this.pos = this.ws();
  }
  peek(): string | undefined {
    return this.src[this.pos];
  }
  expect(c: string): void {
    this.skip();
    if (this.src[this.pos] !== c) throw new ValueSyntaxError(`expected "${c}" at ${this.pos}`);
    this.pos++;
  }

  value(opaqueOk: boolean): PyValue {
    this.skip();
    const start = this.pos;
    // Python writes a container that holds itself as [...] or {...}.
    const self = this.src[start] === "[" || this.src[start] === "{" ? /^(\[\.\.\.\]|\{\.\.\.\})/.exec(this.src.slice(start, start + 5)) : null;
    if (self && opaqueOk) {
      this.pos += 5;
      return { t: "opaque", text: self[0] };
    }
    this.depth++;
    try {
      if (this.depth > MAX_NESTING) throw new ValueSyntaxError("a repr nested too deeply");
      return this.literal();
    } catch (e) {
      if (!opaqueOk || !(e instanceof ValueSyntaxError)) throw e;
      this.pos = start;
      return this.opaque();
    } finally {
      this.depth--;
    }
  }

  literal(): PyValue {
    const c = this.peek();
    if (c === undefined) throw new ValueSyntaxError("unexpected end of repr");
    if (c === "-" || c === "+") {
      // Reprs carry a sign only on numbers: -1, -0.5, (-0-1j) inside complex.
      this.pos++;
      this.skip();
      const n = this.literal();
      if (n.t === "int") return c === "-" ? { t: "int", v: -n.v } : n;
      if (n.t === "float") return c === "-" ? { t: "float", v: -n.v } : n;
      // "-2j" is the repr of complex(0, -2): the real part stays +0.
      if (n.t === "complex" && n.re === 0 && !Object.is(n.re, -0)) return c === "-" ? { t: "complex", re: 0, im: -n.im } : n;
      throw new ValueSyntaxError(`a sign must be followed by a number at ${this.pos}`);
    }
    const str = readStrings(this.src, this.pos, (p) => this.ws(p));
    if (str) {
      this.pos = str.end;
      return str.value;
    }
    const num = readNumber(this.src, this.pos);
    if (num) {
      this.pos = num.end;
      return num.value;
    }
    if (c === "[") return this.sequence("list", "[", "]");
    if (c === "(") return this.paren();
    if (c === "{") return this.braces();
    const word = /^[A-Za-z_]\w*/.exec(this.src.slice(this.pos))?.[0];
    if (word === "frozenset" && this.src[this.pos + word.length] === "(") {
      this.pos += word.length + 1;
      this.skip();
      if (this.peek() === ")") {
        this.pos++;
        return { t: "frozenset", items: [] };
      }
      const inner = this.braces();
      if (inner.t !== "set") throw new ValueSyntaxError("frozenset(...) must hold a set display");
      this.expect(")");
      return { t: "frozenset", items: inner.items };
    }
    if ((word === "dict_keys" || word === "dict_values" || word === "dict_items") && this.src[this.pos + word.length] === "(") {
      // A dict view, as Python prints one: its elements in a list display.
      this.pos += word.length + 1;
      this.expect("[");
      const inner = this.items("]");
      if (word === "dict_items" && !inner.items.every((x) => x.t === "tuple" && x.items.length === 2)) throw new ValueSyntaxError("dict_items(...) must hold (key, value) pairs");
      this.expect(")");
      return { t: word, items: inner.items };
    }
    if (word === "set" && this.src.startsWith("set()", this.pos)) {
      this.pos += 5;
      return { t: "set", items: [] };
    }
    const consts: Record<string, PyValue> = {
      True: { t: "bool", v: true },
      False: { t: "bool", v: false },
      None: { t: "none" },
      inf: { t: "float", v: Infinity },
      nan: { t: "float", v: NaN },
      infj: { t: "complex", re: 0, im: Infinity },
      nanj: { t: "complex", re: 0, im: NaN },
    };
    if (word && word in consts && !isIdPart(this.src[this.pos + word.length] ?? " ") && this.src[this.pos + word.length] !== "(") {
      this.pos += word.length;
      return consts[word];
    }
    throw new ValueSyntaxError(`not a literal at ${this.pos}`);
  }

  /** Items up to `close`, with an optional trailing comma; `trailing` tells whether there was one. */
  items(close: string): { items: PyValue[]; trailing: boolean } {
    const items: PyValue[] = [];
    let trailing = false;
    for (;;) {
      this.skip();
      if (this.peek() === close) {
        this.pos++;
        return { items, trailing };
      }
      items.push(this.value(true));
      this.skip();
      if (this.peek() === ",") {
        this.pos++;
        trailing = true;
      } else {
        this.expect(close);
        return { items, trailing: false };
      }
    }
  }

  sequence(t: "list", open: string, close: string): PyValue {
    this.expect(open);
    return { t, items: this.items(close).items };
  }

  /** A tuple, a parenthesized value, or a complex such as (1+2j). */
  paren(): PyValue {
    const start = this.pos;
    const cm = /^\((-?(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|inf|nan))([+-])((?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|inf|nan))j\)/.exec(this.src.slice(start));
    if (cm) {
      this.pos += cm[0].length;
      const num = (s: string): number => (s.endsWith("inf") ? (s.startsWith("-") ? -Infinity : Infinity) : s.endsWith("nan") ? NaN : Number(s));
      return { t: "complex", re: num(cm[1]), im: cm[2] === "-" ? -num(cm[3]) : num(cm[3]) };
    }
    this.expect("(");
    const { items, trailing } = this.items(")");
    if (items.length === 1 && !trailing) return items[0];
    return { t: "tuple", items };
  }

  braces(): PyValue {
    this.expect("{");
    this.skip();
    if (this.peek() === "}") {
      this.pos++;
      return { t: "dict", entries: [] };
    }
    const first = this.value(true);
    this.skip();
    if (this.peek() !== ":") {
      // A set display.
      const items = [first];
      if (this.peek() === ",") {
        this.pos++;
        items.push(...this.items("}").items);
      } else this.expect("}");
      return { t: "set", items };
    }
    const entries: [PyValue, PyValue][] = [];
    let key = first;
    for (;;) {
      this.expect(":");
      entries.push([key, this.value(true)]);
      this.skip();
      if (this.peek() === ",") {
        this.pos++;
        this.skip();
        if (this.peek() === "}") {
          this.pos++;
          return { t: "dict", entries };
        }
        key = this.value(true);
      } else {
        this.expect("}");
        return { t: "dict", entries };
      }
    }
  }

  /**
   * An element that is not a literal (`<Foo object at 0x1>`, `Foo(a=1)`, `deque([1])`): it
   * runs to the next top-level "," or closing bracket, skipping strings and nested brackets.
   */
  opaque(): PyValue {
    const start = this.pos;
    const stack: string[] = [];
    let angle = 0;
    while (this.pos < this.src.length) {
      const c = this.src[this.pos];
      if (stack.length === 0 && angle === 0 && (c === "," || c === ")" || c === "]" || c === "}" || (c === ":" && this.pos > start))) break;
      if (c in OPEN) stack.push(OPEN[c]);
      else if (c === ")" || c === "]" || c === "}") {
        if (stack.pop() !== c) throw new ValueSyntaxError(`unbalanced "${c}" at ${this.pos}`);
      } else if (c === "<" && this.pos === start) angle++;
      else if (c === "<" && angle > 0) angle++;
      else if (c === ">" && angle > 0) angle--;
      else if ((c === "'" || c === '"') && angle === 0) {
        const s = readString(this.src, this.pos);
        if (s) {
          this.pos = s.end;
          continue;
        }
      }
      this.pos++;
    }
    if (stack.length || angle) throw new ValueSyntaxError("unbalanced brackets in a repr");
    const text = this.src.slice(start, this.pos).trim();
    if (!text) throw new ValueSyntaxError(`expected a value at ${start}`);
    return { t: "opaque", text };
  }
}

/** Reads a whole literal (throws ValueSyntaxError when `text` is not one). */
export function parseLiteral(text: string): PyValue {
  const r = new ReprReader(text);
  const v = r.value(false);
  r.skip();
  if (r.pos !== text.length) throw new ValueSyntaxError(`unexpected text at ${r.pos}`);
  return v;
}

/** A repr as a value: a literal where it reads as one (opaque parts inside), else opaque text. */
export function parseRepr(repr: string): PyValue {
  try {
    return parseLiteral(repr);
  } catch (e) {
    if (e instanceof ValueSyntaxError) return { t: "opaque", text: repr };
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Writing reprs, exactly as CPython does

/** repr(float): shortest round-trip digits, fixed notation for exponents -4..15, else scientific. */
export function floatRepr(x: number, addDotZero = true): string {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (x === 0) return (Object.is(x, -0) ? "-0" : "0") + (addDotZero ? ".0" : "");
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "");
  const exp = Number(expText);
  const sign = x < 0 ? "-" : "";
  if (exp >= -4 && exp < 16) {
    let s: string;
    if (exp < 0) s = "0." + "0".repeat(-exp - 1) + digits;
    else if (digits.length <= exp + 1) s = digits + "0".repeat(exp + 1 - digits.length) + (addDotZero ? ".0" : "");
    else s = digits.slice(0, exp + 1) + "." + digits.slice(exp + 1);
    return sign + s;
  }
  const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
  return `${sign}${m}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
}

export function complexRepr(re: number, im: number): string {
  const imText = floatRepr(im, false) + "j";
  if (re === 0 && !Object.is(re, -0)) return imText;
  const reText = floatRepr(re, false);
  const sign = im < 0 || Object.is(im, -0) ? "" : "+";
  return `(${reText}${sign}${imText})`;
}

// Characters Python's str.isprintable() rejects: other (Cc, Cf, Cs, Co, Cn) and separators except space.
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

const hex = (n: number, width: number): string => n.toString(16).padStart(width, "0");

export function strRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (let i = 0; i < s.length; ) {
    const c = s.codePointAt(i)!;
    // A lone surrogate counts as one code point, as in Python.
    const ch = c >= 0xd800 && c <= 0xdfff ? s[i] : String.fromCodePoint(c);
    i += ch.length;
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (c < 0x20 || c === 0x7f) out += "\\x" + hex(c, 2);
    else if (c < 0x7f) out += ch;
    else if (ch !== " " && NON_PRINTABLE.test(ch)) out += c < 0x100 ? "\\x" + hex(c, 2) : c < 0x10000 ? "\\u" + hex(c, 4) : "\\U" + hex(c, 8);
    else out += ch;
  }
  return out + quote;
}

export function bytesRepr(b: readonly number[]): string {
  const hasSingle = b.includes(39);
  const quote = hasSingle && !b.includes(34) ? '"' : "'";
  let out = "b" + quote;
  for (const c of b) {
    const ch = String.fromCharCode(c);
    if (ch === quote || ch === "\\") out += "\\" + ch;
    else if (c === 9) out += "\\t";
    else if (c === 10) out += "\\n";
    else if (c === 13) out += "\\r";
    else if (c < 0x20 || c >= 0x7f) out += "\\x" + hex(c, 2);
    else out += ch;
  }
  return out + quote;
}

/** The most characters a repr is written with unless the caller says otherwise: past it, writing stops. */
export const MAX_REPR = 4_000_000;

/** A repr that would pass its limit: writing stops there, so no more memory goes to it. */
export class ReprTooLong extends Error {}

/** Writes `v`'s repr; stops (complete: false) once it passes `limit` characters, with the text up to there. */
function writeRepr(v: PyValue, limit: number): { text: string; complete: boolean } {
  const parts: string[] = [];
  let length = 0;
  const full = {};
  const put = (s: string): void => {
    parts.push(s);
    length += s.length;
    if (length > limit) throw full;
  };
  const items = (xs: readonly PyValue[]): void => xs.forEach((x, i) => (i && put(", "), write(x)));
  const write = (x: PyValue): void => {
    switch (x.t) {
      case "list":
        return put("["), items(x.items), put("]");
      case "tuple":
        return put("("), items(x.items), put(x.items.length === 1 ? ",)" : ")");
      case "set":
        return x.items.length ? (put("{"), items(x.items), put("}")) : put("set()");
      case "frozenset":
        return x.items.length ? (put("frozenset({"), items(x.items), put("})")) : put("frozenset()");
      case "dict_keys":
      case "dict_values":
      case "dict_items":
        return put(`${x.t}([`), items(x.items), put("])");
      case "dict":
        put("{");
        x.entries.forEach(([k, e], i) => (i && put(", "), write(k), put(": "), write(e)));
        return put("}");
      default:
        return put(scalarRepr(x));
    }
  };
  try {
    write(v);
  } catch (e) {
    if (e !== full) throw e;
    return { text: parts.join("").slice(0, limit), complete: false };
  }
  return { text: parts.join(""), complete: true };
}

function scalarRepr(v: Exclude<PyValue, { items: PyValue[] } | { t: "dict" }>): string {
  switch (v.t) {
    case "int":
      return v.v.toString();
    case "bool":
      return v.v ? "True" : "False";
    case "float":
      return floatRepr(v.v);
    case "complex":
      return complexRepr(v.re, v.im);
    case "none":
      return "None";
    case "str":
      return strRepr(v.v);
    case "bytes":
      return bytesRepr(v.v);
    case "opaque":
      return v.text;
  }
}

/**
 * repr() of a value, as Python prints it; throws ReprTooLong past `limit` characters (a value
 * that repeats a shared element prints it each time, so a small value can have a huge repr).
 */
export function literalToRepr(v: PyValue, limit = MAX_REPR): string {
  const r = writeRepr(v, limit);
  if (!r.complete) throw new ReprTooLong(`its repr is longer than ${limit} characters`);
  return r.text;
}

/** The start of a value's repr for showing: at most `limit` characters, "…" where it was cut. */
export function reprPreview(v: PyValue, limit: number): string {
  const r = writeRepr(v, limit);
  return r.complete ? r.text : r.text + "…";
}

/** Text cut to at most `limit` characters for a message ("…" where it was cut): never echo a huge input. */
export const cutText = (s: string, limit = 200): string => (s.length > limit ? s.slice(0, limit) + "…" : s);

/** How large a value prints and how deeply it nests, counting a shared element each time it is printed. */
export interface Extent {
  /** About the characters of its repr (escapes aside, and within a few): enough to bound it. */
  size: number;
  /** Levels of containers: 0 for a scalar, 1 for [1], 2 for [[1]]. */
  depth: number;
}

const extents = new WeakMap<PyValue, Extent>();
const SAFE = 2n ** 53n;

/** A value's Extent; remembered per container (and big int), so [x] * 10**6 measures x once. */
export function extentOf(v: PyValue): Extent {
  switch (v.t) {
    case "str":
      return { size: v.v.length + 2, depth: 0 };
    case "bytes":
      return { size: v.v.length + 3, depth: 0 };
    case "opaque":
      return { size: v.text.length, depth: 0 };
    case "int":
      if (v.v > -SAFE && v.v < SAFE) return { size: String(v.v).length, depth: 0 };
      break;
    case "none":
    case "bool":
      return { size: 4, depth: 0 };
    case "float":
    case "complex":
      return { size: 3, depth: 0 };
  }
  const known = extents.get(v);
  if (known) return known;
  let e: Extent;
  if (v.t === "int") e = { size: Math.ceil(((v.v < 0n ? -v.v : v.v).toString(16).length * 4) * Math.log10(2)) + 1, depth: 0 };
  else {
    const parts = v.t === "dict" ? v.entries.flat() : (v as { items: PyValue[] }).items;
    e = { size: 2, depth: 0 };
    for (const x of parts) {
      const xe = extentOf(x);
      e.size += xe.size + 2;
      e.depth = Math.max(e.depth, xe.depth);
    }
    e.depth++;
  }
  extents.set(v, e);
  return e;
}

/** str() of a value: the text itself for str, the repr for everything else we hold. */
export const literalToStr = (v: PyValue, limit = MAX_REPR): string => (v.t === "str" ? v.v : literalToRepr(v, limit));

export const TYPE_NAMES: Record<PyType, string> = {
  int: "int", bool: "bool", float: "float", complex: "complex", none: "NoneType", str: "str", bytes: "bytes",
  list: "list", tuple: "tuple", set: "set", frozenset: "frozenset", dict: "dict", opaque: "object",
  dict_keys: "dict_keys", dict_values: "dict_values", dict_items: "dict_items",
};

/** The type name of a value; for opaque reprs, read from shapes like `<Foo object at ...>` or `Foo(...)`. */
export function typeName(v: PyValue): string {
  if (v.t !== "opaque") return TYPE_NAMES[v.t];
  // The tracer writes addresses as "0x...".
  const m = /^<(?:[\w.]+\.)?(\w+) object at 0x(?:[0-9a-fA-F]+|\.\.\.)>$/.exec(v.text) ?? /^([A-Za-z_][\w.]*)\(/.exec(v.text);
  return m ? m[1].split(".").pop()! : "";
}

// ---------------------------------------------------------------------------------------------
// Trees for the Variables view

export type NodeKind = Exclude<PyType, "opaque"> | "text";

export interface ValueNode {
  kind: NodeKind;
  /** What the view shows for the value: its repr (the original text at the top of a tree). */
  display: string;
  /** The Python type name, where known ("" for opaque text whose type cannot be read). */
  type: string;
  /** Children of containers, in order: `[i]` for sequences and sets, key reprs for dicts. */
  children?: ValueChild[];
}

export interface ValueChild {
  name: string;
  node: ValueNode;
}

/** Characters a child's display is cut to (the top of a tree shows its own text). */
const MAX_CHILD_DISPLAY = 100_000;

/** The tree of one value; a container's children are made when first read, one level at a time. */
export function valueToNode(v: PyValue, display?: string): ValueNode {
  const kind: NodeKind = v.t === "opaque" ? "text" : v.t;
  const node: ValueNode = { kind, display: display ?? reprPreview(v, MAX_CHILD_DISPLAY), type: typeName(v) };
  const child = (name: string, x: PyValue): ValueChild => ({ name, node: valueToNode(x) });
  let make: (() => ValueChild[]) | undefined;
  if ("items" in v) make = () => v.items.map((x, i) => child(`[${i}]`, x));
  else if (v.t === "dict") make = () => v.entries.map(([k, x]) => child(reprPreview(k, MAX_CHILD_DISPLAY), x));
  if (make) {
    let children: ValueChild[] | undefined;
    Object.defineProperty(node, "children", { enumerable: true, get: () => (children ??= make()) });
  }
  return node;
}

/** Parses a repr into a tree for the Variables view; anything that is not a literal is a text leaf. */
export function reprToNode(repr: string): ValueNode {
  return valueToNode(parseRepr(repr), repr);
}

/** A child a value opens into, with the expression that names it (none for a set's element). */
export interface OpenedChild extends ValueChild {
  path?: string;
}

/** A name, its attributes and subscripts (`cart.items[0]`): written as it is before `[i]` or `.name`. */
const PLAIN_PATH = /^[\p{ID_Start}_][\p{ID_Continue}]*(?:\.[\p{ID_Start}_][\p{ID_Continue}]*|\[[^[\]]*\])*$/u;

/** The children the run recorded for the object at `path`, where it has any. */
export const recordedChildren = (objects: Objects | undefined, path: string | undefined): Objects[string] | undefined =>
  path !== undefined && objects && Object.hasOwn(objects, path) && objects[path].length ? objects[path] : undefined;

/**
 * What a value opens into, each child named from `path`: an object into the children the run
 * recorded for it (`objects`, by path), as debugpy opens it; a container into the items its repr
 * shows (`x[0]`, `d['k']`, `(a + b)[1]`). The Variables view shows these, and a watch of a
 * child's expression finds it by them (`valueAtPath`).
 */
export function openValue(node: ValueNode, path: string | undefined, objects: Objects | undefined): OpenedChild[] {
  const recorded = recordedChildren(objects, path);
  if (recorded) return recorded.map(([name, repr, at]) => ({ name, node: reprToNode(repr), path: at }));
  const base = path && (PLAIN_PATH.test(path) ? path : `(${path})`);
  const childPath = (name: string): string | undefined => {
    if (!base) return undefined;
    if (node.kind === "list" || node.kind === "tuple") return `${base}${name}`;
    if (node.kind === "dict") return `${base}[${name}]`;
    return undefined; // set elements cannot be named
  };
  return (node.children ?? []).map((ch) => {
    const at = childPath(ch.name);
    return { ...ch, ...(at !== undefined ? { path: at } : {}) };
  });
}

/** The name a path starts from (`cart` of `cart.items[0]`), where it starts from one. */
export const rootName = (path: string): string | undefined => /^[\p{ID_Start}_][\p{ID_Continue}]*/u.exec(path)?.[0];

/**
 * The value `path` names among a frame's locals and recorded objects (`cart.items[1].name`, an
 * evaluateName of the Variables view), found by opening its values as the view does; undefined
 * where it names none.
 */
export function valueAtPath(locals: Record<string, string>, objects: Objects | undefined, path: string): ValueNode | undefined {
  const root = rootName(path);
  if (root === undefined || !Object.hasOwn(locals, root)) return undefined;
  let at = root;
  let node = reprToNode(locals[root]);
  while (at !== path) {
    const next = openValue(node, at, objects).find((c) => c.path !== undefined && (c.path === path || (path.startsWith(c.path) && ".[".includes(path[c.path.length]))));
    if (!next) return undefined;
    at = next.path!;
    node = next.node;
  }
  return node;
}
