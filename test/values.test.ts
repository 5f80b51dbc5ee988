// Reprs into values and trees (adapter/format/values.ts): hand-written cases for every literal form, and
// reprs written by a real Python checked to read back and print exactly as Python printed them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  bytesRepr, floatRepr, literalToRepr, MAX_REPR, parseLiteral, parseRepr, readNumber, readString, ReprTooLong, reprPreview, reprToNode, strRepr,
  ValueSyntaxError, valueAtPath, type PyValue, type ValueNode,
} from "../adapter/format/values.js";
import { findPython } from "../adapter/real/hostRun.js";

const int = (v: number | bigint): PyValue => ({ t: "int", v: BigInt(v) });
const str = (v: string): PyValue => ({ t: "str", v });

test("numbers, booleans and None", () => {
  assert.deepEqual(parseRepr("42"), int(42));
  assert.deepEqual(parseRepr("-7"), int(-7));
  assert.deepEqual(parseRepr("123456789012345678901234567890"), int(123456789012345678901234567890n));
  assert.deepEqual(parseRepr("3.5"), { t: "float", v: 3.5 });
  assert.deepEqual(parseRepr("1e-05"), { t: "float", v: 1e-5 });
  assert.deepEqual(parseRepr("-1.5e+300"), { t: "float", v: -1.5e300 });
  assert.deepEqual(parseRepr("inf"), { t: "float", v: Infinity });
  assert.deepEqual(parseRepr("-inf"), { t: "float", v: -Infinity });
  assert.ok(Number.isNaN((parseRepr("nan") as { v: number }).v));
  assert.ok(Object.is((parseRepr("-0.0") as { v: number }).v, -0));
  assert.deepEqual(parseRepr("(1+2j)"), { t: "complex", re: 1, im: 2 });
  assert.deepEqual(parseRepr("(1.5-2.5j)"), { t: "complex", re: 1.5, im: -2.5 });
  assert.deepEqual(parseRepr("2j"), { t: "complex", re: 0, im: 2 });
  assert.deepEqual(parseRepr("-2j"), { t: "complex", re: 0, im: -2 });
  assert.deepEqual(parseRepr("(inf+nanj)").t, "complex");
  assert.deepEqual(parseRepr("True"), { t: "bool", v: true });
  assert.deepEqual(parseRepr("False"), { t: "bool", v: false });
  assert.deepEqual(parseRepr("None"), { t: "none" });
});

test("number literals in expression syntax", () => {
  assert.deepEqual(readNumber("0x_ff", 0)?.value, int(255));
  assert.deepEqual(readNumber("0o17", 0)?.value, int(15));
  assert.deepEqual(readNumber("0b1010", 0)?.value, int(10));
  assert.deepEqual(readNumber("1_000_000", 0)?.value, int(1000000));
  assert.deepEqual(readNumber(".5", 0)?.value, { t: "float", v: 0.5 });
  assert.deepEqual(readNumber("5.", 0)?.value, { t: "float", v: 5 });
  assert.deepEqual(readNumber("1E3", 0)?.value, { t: "float", v: 1000 });
  assert.deepEqual(readNumber("3J", 0)?.value, { t: "complex", re: 0, im: 3 });
  assert.deepEqual(readNumber("00", 0)?.value, int(0));
  assert.equal(readNumber("x1", 0), undefined);
  assert.throws(() => readNumber("012", 0), ValueSyntaxError);
  assert.throws(() => readNumber("1abc", 0), ValueSyntaxError);
});

test("str and bytes in every quote and escape form", () => {
  const s = (text: string): PyValue | undefined => readString(text, 0)?.value;
  assert.deepEqual(s("'abc'"), str("abc"));
  assert.deepEqual(s('"it\'s"'), str("it's"));
  assert.deepEqual(s("'it\\'s'"), str("it's"));
  assert.deepEqual(s("'a\\nb\\tc\\r\\\\'"), str("a\nb\tc\r\\"));
  assert.deepEqual(s("'\\x00\\x7f\\xe9'"), str("\x00\x7f\u00e9"));
  assert.deepEqual(s("'\\u1234\\U0001f600'"), str("\u1234\u{1f600}"));
  assert.deepEqual(s("'\\101\\0'"), str("A\0"));
  assert.deepEqual(s("'\\a\\b\\f\\v'"), str("\x07\b\f\v"));
  assert.deepEqual(s("'\\d'"), str("\\d"), "an unknown escape keeps its backslash");
  assert.deepEqual(s("'😀 é'"), str("😀 é"));
  assert.deepEqual(s("'\\ud800'"), str("\ud800"), "a lone surrogate, as Python writes it");
  assert.deepEqual(s("'''a'b\"c\nd'''"), str("a'b\"c\nd"));
  assert.deepEqual(s('"""x"""'), str("x"));
  assert.deepEqual(s("r'\\n\\''"), str("\\n\\'"));
  assert.deepEqual(s("R'a\\b'"), str("a\\b"));
  assert.deepEqual(s("u'x'"), str("x"));
  assert.deepEqual(s("b'\\x00\\xffA'"), { t: "bytes", v: [0, 255, 65] });
  assert.deepEqual(s('b"it\'s"'), { t: "bytes", v: [...Buffer.from("it's")] });
  assert.deepEqual(s("rb'\\x00'"), { t: "bytes", v: [...Buffer.from("\\x00")] });
  assert.deepEqual(s("Br'\\u'"), { t: "bytes", v: [...Buffer.from("\\u")] });
  assert.deepEqual(s("b'\\u1234'"), { t: "bytes", v: [...Buffer.from("\\u1234")] }, "\\u is no escape in bytes");
  assert.equal(s("x'a'"), undefined);
  assert.throws(() => s("'abc"), ValueSyntaxError);
  assert.throws(() => s("'a\nb'"), ValueSyntaxError);
  assert.throws(() => s("f'{x}'"), /f-strings/);
  assert.throws(() => s("b'é'"), /ASCII/);
  assert.throws(() => s("'\\x4'"), /truncated/);
  assert.throws(() => s("'\\N{DASH}'"), /not supported/);
  assert.deepEqual(parseLiteral("'a' \"b\""), str("ab"), "adjacent literals join");
});

test("containers: list, tuple, 1-tuple, dict, set, frozenset, nested", () => {
  assert.deepEqual(parseRepr("[]"), { t: "list", items: [] });
  assert.deepEqual(parseRepr("[1, 'a', None]"), { t: "list", items: [int(1), str("a"), { t: "none" }] });
  assert.deepEqual(parseRepr("()"), { t: "tuple", items: [] });
  assert.deepEqual(parseRepr("(1,)"), { t: "tuple", items: [int(1)] });
  assert.deepEqual(parseRepr("(1)"), int(1));
  assert.deepEqual(parseRepr("(1, (2,), [3])"), { t: "tuple", items: [int(1), { t: "tuple", items: [int(2)] }, { t: "list", items: [int(3)] }] });
  assert.deepEqual(parseRepr("{}"), { t: "dict", entries: [] });
  assert.deepEqual(parseRepr("{'a': 1, (1, 2): [3]}"), { t: "dict", entries: [[str("a"), int(1)], [{ t: "tuple", items: [int(1), int(2)] }, { t: "list", items: [int(3)] }]] });
  assert.deepEqual(parseRepr("{1, 2}"), { t: "set", items: [int(1), int(2)] });
  assert.deepEqual(parseRepr("set()"), { t: "set", items: [] });
  assert.deepEqual(parseRepr("frozenset({1})"), { t: "frozenset", items: [int(1)] });
  assert.deepEqual(parseRepr("frozenset()"), { t: "frozenset", items: [] });
  assert.deepEqual(parseRepr("[{'k': {1, 2}}, frozenset({(1,)})]"), {
    t: "list",
    items: [{ t: "dict", entries: [[str("k"), { t: "set", items: [int(1), int(2)] }]] }, { t: "frozenset", items: [{ t: "tuple", items: [int(1)] }] }],
  });
  assert.deepEqual(parseRepr("[1, 2, ]"), { t: "list", items: [int(1), int(2)] });
  assert.deepEqual(parseRepr("  [ 1 ,2 ]  "), { t: "list", items: [int(1), int(2)] });
});

test("anything else is opaque text, also inside containers", () => {
  for (const r of ["<object object at 0x...>", "Foo(a=1)", "deque([1, 2])", "Counter({'a': 1})", "<function f at 0x...>", "Ellipsis", "<repr failed: ValueError>", "[1, 2", "1 2", "'abc", "x"]) {
    assert.deepEqual(parseRepr(r), { t: "opaque", text: r }, r);
  }
  assert.deepEqual(parseRepr("[1, <__main__.Foo object at 0x...>, 3]"), { t: "list", items: [int(1), { t: "opaque", text: "<__main__.Foo object at 0x...>" }, int(3)] });
  assert.deepEqual(parseRepr("{'a': Foo(x=[1, 2], y='),'), 'b': 2}"), { t: "dict", entries: [[str("a"), { t: "opaque", text: "Foo(x=[1, 2], y='),')" }], [str("b"), int(2)]] });
  assert.deepEqual(parseRepr("{<Key at 0x...>: 1}"), { t: "dict", entries: [[{ t: "opaque", text: "<Key at 0x...>" }, int(1)]] });
  assert.deepEqual(parseRepr("[defaultdict(<class 'int'>, {'a': 1})]"), { t: "list", items: [{ t: "opaque", text: "defaultdict(<class 'int'>, {'a': 1})" }] });
  // Python's own marks for a container that holds itself.
  assert.deepEqual(parseRepr("[1, [...]]"), { t: "list", items: [int(1), { t: "opaque", text: "[...]" }] });
  assert.deepEqual(parseRepr("{'me': {...}}"), { t: "dict", entries: [[str("me"), { t: "opaque", text: "{...}" }]] });
  // The tracer cuts long reprs with a marker: never a literal.
  const cut = "[1, 2, 3, 4…(+5000 chars)";
  assert.deepEqual(parseRepr(cut), { t: "opaque", text: cut });
  assert.deepEqual(parseRepr("'aaaa…(+10 chars)"), { t: "opaque", text: "'aaaa…(+10 chars)" });
  // Deep nesting is read without exhausting the stack.
  const deep = "[".repeat(5000) + "]".repeat(5000);
  assert.equal(parseRepr(deep).t, "list");
  const d150 = "[".repeat(150) + "]".repeat(150);
  const siblings = parseRepr(`[${d150}, ${d150}, 1]`) as { t: string; items: PyValue[] };
  assert.deepEqual(siblings.items.map((x) => x.t), ["list", "list", "int"], "depth is restored after a part too deep to read");
});

test("trees for the Variables view", () => {
  const node = reprToNode("{'a': [1, (2,)], 3: {4}, 'o': <Foo object at 0x...>}");
  assert.equal(node.kind, "dict");
  assert.equal(node.type, "dict");
  assert.equal(node.display, "{'a': [1, (2,)], 3: {4}, 'o': <Foo object at 0x...>}");
  const names = node.children!.map((c) => c.name);
  assert.deepEqual(names, ["'a'", "3", "'o'"]);
  const list = node.children![0].node;
  assert.equal(list.kind, "list");
  assert.equal(list.display, "[1, (2,)]");
  assert.deepEqual(list.children!.map((c) => [c.name, c.node.display, c.node.kind]), [["[0]", "1", "int"], ["[1]", "(2,)", "tuple"]]);
  assert.deepEqual(list.children![1].node.children!.map((c) => c.name), ["[0]"]);
  assert.deepEqual(node.children![1].node.children!.map((c) => [c.name, c.node.display]), [["[0]", "4"]]);
  const obj = node.children![2].node;
  assert.deepEqual([obj.kind, obj.display, obj.type, obj.children], ["text", "<Foo object at 0x...>", "Foo", undefined]);
  const leaf: ValueNode = reprToNode("Point(x=1, y=2)");
  assert.deepEqual([leaf.kind, leaf.display, leaf.type, leaf.children], ["text", "Point(x=1, y=2)", "Point", undefined]);
  assert.deepEqual(reprToNode("'s'").children, undefined, "strings are leaves");
  assert.equal(reprToNode("1.0").type, "float");
  assert.equal(reprToNode("None").type, "NoneType");
  // The top of a tree shows the text as given, even where Python would print it differently.
  assert.equal(reprToNode("[1,2]").display, "[1,2]");
  assert.equal(reprToNode("[1,2]").children![1].node.display, "2");
});

test("reprs printed as CPython prints them", () => {
  assert.equal(floatRepr(1e16), "1e+16");
  assert.equal(floatRepr(123456789012345.6), "123456789012345.6");
  assert.equal(floatRepr(0.0001), "0.0001");
  assert.equal(floatRepr(0.00001), "1e-05");
  assert.equal(floatRepr(-0), "-0.0");
  assert.equal(floatRepr(2), "2.0");
  assert.equal(floatRepr(1 / 3), "0.3333333333333333");
  assert.equal(strRepr("it's"), '"it\'s"');
  assert.equal(strRepr(`it's "x"`), `'it\\'s "x"'`);
  assert.equal(strRepr("\x00\n\u00a0\u200b😀é\ud800"), "'\\x00\\n\\xa0\\u200b😀é\\ud800'");
  assert.equal(bytesRepr([0, 39, 65, 255]), `b"\\x00'A\\xff"`);
  assert.equal(literalToRepr({ t: "tuple", items: [int(1)] }), "(1,)");
  assert.equal(literalToRepr({ t: "set", items: [] }), "set()");
  assert.equal(literalToRepr({ t: "frozenset", items: [int(1)] }), "frozenset({1})");
  assert.equal(literalToRepr({ t: "complex", re: 0, im: -2 }), "-2j");
  assert.equal(literalToRepr({ t: "complex", re: -0, im: 1 }), "(-0+1j)");
  assert.equal(literalToRepr({ t: "complex", re: 1, im: NaN }), "(1+nanj)");
});

// Values Python writes reprs of: each must read back as a literal and print exactly the same.
const PY_VALUES = String.raw`
import json, random, sys
random.seed(7)
vals = [0, -1, 10**30, -10**25, 1.5, -0.0, 1e16, 1e-5, 0.1 + 0.2, 1/3, 2.5e-300, 1.7976931348623157e308, float('inf'), float('-inf'),
  1j, -2j, 1+2j, complex(-0.0, -1), complex(1.5, float('inf')), complex(0, -0.0), 1e16j,
  True, False, None, '', 'abc', "it's", 'say "hi"', 'both \' and "', 'tab\tnew\nline\r\\', '\x00\x1f\x7f\x80\xa0\xad',
  'é😀中文', '\u200b\u2028\u2029\ufeff', '\ud800', '\U0010ffff', '\ue000',
  b'', b'\x00\xff', b"it's", b'\'"', bytes(range(0, 256, 7)),
  [], [1, [2, [3, []]]], (), (1,), ((1,),), (1, 'a', None), {}, {'a': 1, 2: [3], (4, 5): {'b': None}},
  {1, 2, 3}, set(), frozenset(), frozenset({1}), [{1: (2.5, 'x')}, {'k': frozenset({3})}],
  {'nested': {'deeper': [1.0, -2.5e-07, {'x': b'y'}]}}]
vals += [random.uniform(-1e6, 1e6) for _ in range(100)] + [random.random() * 10 ** random.randint(-30, 30) for _ in range(100)]
vals += [random.getrandbits(200) - 2**199 for _ in range(20)]
json.dump([repr(v) for v in vals], sys.stdout)
`;

test("reprs from a real Python read back and print exactly the same", async () => {
  const python = await findPython();
  const run = spawnSync(python, ["-c", PY_VALUES], { encoding: "utf8", timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  const reprs: string[] = JSON.parse(run.stdout);
  assert.ok(reprs.length > 250);
  for (const r of reprs) {
    const v = parseRepr(r);
    assert.notEqual(v.t, "opaque", `${r} should read as a literal`);
    assert.equal(literalToRepr(v), r);
  }
});

test("reprs are written under a limit, and the Variables view makes children only when they are expanded", () => {
  const shared = parseRepr("[0, 1, 2]");
  const wide = { t: "list" as const, items: Array(1_000).fill(shared) };
  assert.throws(() => literalToRepr(wide, 1_000), ReprTooLong);
  assert.equal(literalToRepr(wide).length, 1_000 * 11);
  assert.equal(reprPreview(wide, 20), "[[0, 1, 2], [0, 1, 2…");
  assert.ok(MAX_REPR >= 1_000_000);
  // A 3-million-character repr: the tree is read at once, one level of children when asked.
  const repr = `[${Array(1_000).fill(`[${Array(1_000).fill("0").join(", ")}]`).join(", ")}]`;
  const t0 = performance.now();
  const node = reprToNode(repr);
  assert.equal(node.children?.length, 1_000);
  assert.equal(node.children?.[999].node.display, `[${Array(1_000).fill("0").join(", ")}]`);
  assert.equal(node.children?.[0].node.children?.[999].node.display, "0");
  assert.ok(performance.now() - t0 < 2_000);
});

test("valueAtPath finds what the Variables view names: items of containers by index and key, recorded objects by attribute, nothing made up", () => {
  const locals = { xs: "[10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110]", d: "{'k': [1, (2, 3)], 1: 'one'}", cart: "<__main__.Cart object at 0x...>", s: "{1, 2}" };
  const objects = {
    cart: [["owner", "'ana'", "cart.owner"], ["items", "[<__main__.Item object at 0x...>]", "cart.items"]] as [string, string, string][],
    "cart.items[0]": [["name", "'pen'", "cart.items[0].name"]] as [string, string, string][],
  };
  const at = (path: string): string | undefined => valueAtPath(locals, objects, path)?.display;
  assert.equal(at("xs[1]"), "20");
  assert.equal(at("xs[10]"), "110", "xs[10] is not read as xs[1] and more");
  assert.equal(at("d['k'][1][0]"), "2");
  assert.equal(at("d[1]"), "'one'");
  assert.equal(at("cart"), locals.cart);
  assert.equal(at("cart.owner"), "'ana'");
  assert.equal(at("cart.items[0].name"), "'pen'");
  for (const none of ["xs[11]", "d['x']", "cart.total", "cart.items[1]", "s[0]", "ys", "xs[1] + 1", "cart.owner.upper()"]) assert.equal(at(none), undefined, none);
});
