// The expression evaluator (adapter/format/expr.ts): a list of expressions evaluated by a real Python
// over the same locals, compared with ours exactly (reprs, and the exception type where Python
// raises one); then what must be refused without running anything, and the helpers around it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  checkSingleExpression, evaluateCondition, evaluateExpression, ExprError, isTruthyRepr, parseExpression,
} from "../adapter/format/expr.js";
import { findPython } from "../adapter/real/tracer.js";

const LOCALS_PY = String.raw`dict(n=5, x=2.5, s='hello', e='', lst=[3, 1, 2], t=(1, 'a', None), d={'a': 1, 'b': [1, 2]},
  st={1, 2, 3}, fs=frozenset({4}), b=b'abc', f=True, z=0, neg=-7, big=10**20, c=1+2j,
  nested=[[1, 2], [3, [4, 5]]], u='é😀x', none=None, q="it's", fl=[0.5, 0.25, 2.0],
  text='the cat the dog', csv='a,b,,c', ws=' \t a  b\n c \u3000', lines='one\ntwo\r\nthree\r', title="they're 1st bill's", num='-42',
  kv={'a': 1, 'b': [2]}.items(), ks={'x': 1, 'y': 2}.keys(), vs={'x': 1}.values())`;

const EXPRESSIONS = String.raw`
n + 1
n - 10
n * x
n / 2
n / 3
7 // 2
-7 // 2
7 % -3
-7 % 3
7.5 // 2
-7.5 % 2
5 // -2.0
0.0 // -3
2 ** 10
2 ** -2
big * big
big // 7
big / 7
big / 3 / 10**15
(10**40 + 1) / 10**20
n ** 2 ** 2
-n ** 2
(-n) ** 2
x ** 2
x ** 0.5
1 / 0
n // 0
n % 0
1.0 / 0
x // 0
x % 0.0
0 ** -1
~n
-f
+f
f + f
f * 3
c + 1
c * c
c - 2j
3j * 2j
abs(c)
abs(neg)
abs(-x)
n & 3
n | 8
n ^ 1
n << 3
big >> 10
f & False
True | False
n << -1
s + '!'
s * 2
2 * lst
lst * 0
lst + [4]
t + (5,)
s + 1
1 + s
lst + t
s[0]
s[-1]
s[1:3]
s[::-1]
s[::2]
s[5:1:-1]
lst[1:]
lst[:-1]
lst[::-2]
lst[1:100]
lst[-100:2]
lst[::0]
t[1]
u[1]
len(u)
u[::-1]
u + s
b[0]
b[1:]
b + b'!'
nested[1][1][0]
nested[-1][-1][-1]
d['b'][1]
d['a'] + d['b'][0]
d['zz']
lst[10]
s[10]
t[5]
lst['a']
s['a']
n[0]
lst[n - 4]
s[n - 5:]
1 < n < 10
1 < n > 10
n == 5.0
n == 5 == 5.0
x > n
s < 'help'
s == 'hello'
lst == [3, 1, 2]
lst < [3, 2]
t == (1, 'a', None)
(1, 2) < (1, 2, 0)
st == {3, 2, 1}
st == fs
fs <= {4, 5}
{1} < st
st > {1}
d == {'b': [1, 2], 'a': 1}
1 == 1.0
True == 1
None == 0
none is None
n is not None
s != 'x'
1 < 'a'
[1] < (1,)
b'a' < b'b'
u > s
float('nan') == float('nan')
big > 1e20
big == 1e20
big + 1 > 1e20
2**53 + 1 == 2.0**53
2 in lst
5 not in lst
'ell' in s
'a' in d
1 in d
'x' in t
None in t
3 in st
97 in b
b'bc' in b
[1] in d
1 in 5
1 in s
n and s
z and s
z or e or 'default'
not lst
not e
lst and lst[0]
n if f else x
s if z else lst
none or 0
len(s)
len(lst) + len(d) + len(st) + len(t) + len(fs) + len(b)
len(e)
len(n)
min(lst)
max(lst)
min(3, 1, 2)
max(s)
max(lst, default=0)
min([], default=0)
max([])
sum(lst)
sum(lst, 10)
sum(fl)
sum([s])
sum(['a'], '')
sorted(lst)
sorted(s)
sorted(lst, reverse=True)
sorted(d)
sorted([1, 'a'])
sorted(fl + lst)
str(n)
str(x)
str(lst)
str(s)
str(b)
str(none)
repr(s)
repr(q)
repr(lst)
int(x)
int(-x)
int('42')
int(' -7 ')
int('4_2')
int('x')
int(f)
int(float('inf'))
float(n)
float('1e3')
float(' -2.5 ')
float('nan') != 0
bool(e)
bool(lst)
list(s)
tuple(lst)
list(d)
list(b)
abs(s)
[n, x, s]
(n,)
(n, x)
{'k': n, 'k2': [x]}
{1: 'a', True: 'b'}
{1, 1.0, True}
{[1]: 2}
n, s
[]
()
{}
0x10 + 0o10 + 0b10
1_000 * 2
'a' 'b'
r'\n'
b'\x00' + b'\xff'
'\u00e9\t'
1e3
1.5e-7 * 2
0.1 + 0.2
1e308 * 10
-1e308 * 10
1e16 + 1
lst[0] * s
st | {4}
st & {2, 3, 9}
st - {1}
st ^ {3, 4}
q
u
(1)
((1, 2),)
-x // 1
nope + 1
text.split()
text.split(' ')
text.split(None, 1)
text.split(maxsplit=2)
text.rsplit(None, 1)
text.rsplit(' ', 2)
csv.split(',')
csv.split(',', 1)
csv.rsplit(',', 1)
"a,b".split(",")[0]
ws.split()
ws.split(None, 1)
ws.rsplit(None, 1)
ws.strip()
ws.lstrip()
ws.rstrip()
s.strip('ho')
s.split('')
e.split()
e.split(',')
lines.splitlines()
lines.splitlines(True)
lines.splitlines(keepends=True)
s.upper()
s.lower()
title.title()
title.capitalize()
title.swapcase()
u.upper()
s.startswith('he')
s.startswith(('x', 'hel'))
s.startswith('l', 2)
s.endswith('lo', 0, 5)
s.endswith('l', 0, 4)
s.startswith(1)
s.find('l')
s.rfind('l')
s.find('l', 3)
s.find('l', -2)
s.find('z')
s.find('', 5)
s.find('', 6)
u.find('x')
s.index('l')
s.index('z')
s.rindex('l')
s.count('l')
s.count('')
text.count('the')
s.replace('l', 'L')
s.replace('l', 'L', 1)
s.replace('', '-')
s.replace('', '-', 2)
'-'.join(['a', 'b', 'c'])
', '.join(d)
''.join(lst)
' '.join(text.split()[::-1])
s.partition('l')
s.rpartition('l')
s.partition('z')
s.rpartition('z')
s.partition('')
s.center(11, '*')
s.center(10)
s.ljust(8, '.')
s.rjust(8)
s.center(3)
s.center(9, 'ab')
num.zfill(6)
s.zfill(7)
s.removeprefix('he')
s.removesuffix('lo')
num.isdigit()
num[1:].isdigit()
s.isalpha()
s.isalnum()
'a1'.isalnum()
ws.isspace()
' \t'.isspace()
e.isalpha()
s.isupper()
'HI!'.isupper()
s.islower()
'123'.islower()
s.isascii()
u.isascii()
s.upper().lower() == s
len(text.split())
len(lst[1:])
d.keys()
d.values()
d.items()
list(d.items())
len(d.items())
'a' in d.keys()
1 in d.values()
('a', 1) in d.items()
d.keys() == {'a', 'b'}
d.items() == d.items()
d.values() == d.values()
sorted(d.keys(), reverse=True)
sorted(d.keys() | {'c'})
d.keys() - {'a'}
d.keys()[0]
d.get('a')
d.get('zz')
d.get('zz', 0)
d.get('b', 0)[1]
d.get([1])
d.copy()
lst.index(1)
lst.index(2, 1)
lst.index(9)
lst.count(1)
lst.copy()
t.index('a')
t.index(9)
t.count(None)
st.union({4}, [5])
st.intersection([2, 3, 9])
st.difference({1})
st.symmetric_difference({3, 4})
st.issubset([1, 2, 3, 4])
st.issuperset({1})
st.isdisjoint({9})
fs.union({5})
fs.copy()
c.real
c.imag
c.conjugate()
n.real
n.imag
n.numerator
n.denominator
x.is_integer()
fl[2].is_integer()
n.bit_length()
neg.bit_length()
z.bit_length()
f.real
s.nope
s.nope()
lst.nope()
n.nope
kv
ks
vs
len(kv)
list(kv)
sorted(ks)
'x' in ks
('a', 1) in kv
ks == {'x', 'y'}
kv == {('a', 1)}
sum(vs)
ks[0]
`.trim().split("\n");

const PY_EVAL = String.raw`
import json, sys
L = ${LOCALS_PY}
out = {"locals": {k: repr(v) for k, v in L.items()}, "results": []}
for expr in json.load(sys.stdin):
    try:
        r = repr(eval(expr, {"__builtins__": __builtins__}, dict(L)))
    except Exception as ex:
        r = "!" + type(ex).__name__
    out["results"].append(r)
json.dump(out, sys.stdout)
`;

test("expressions evaluate exactly as Python evaluates them", async () => {
  const python = await findPython();
  const run = spawnSync(python, ["-c", PY_EVAL], { input: JSON.stringify(EXPRESSIONS), encoding: "utf8", timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  const { locals, results } = JSON.parse(run.stdout) as { locals: Record<string, string>; results: string[] };
  assert.equal(results.length, EXPRESSIONS.length);
  let raised = 0;
  EXPRESSIONS.forEach((expr, i) => {
    const want = results[i];
    if (want.startsWith("!")) {
      raised++;
      const type = want.slice(1);
      assert.throws(() => evaluateExpression(expr, locals), (e: unknown) => e instanceof ExprError && e.message.startsWith(`${type}: `), `${expr} should raise ${type}`);
    } else {
      let got: string;
      try {
        got = evaluateExpression(expr, locals);
      } catch (e) {
        assert.fail(`${expr}: Python gives ${want}, we threw ${(e as Error).message}`);
      }
      assert.equal(got, want, expr);
    }
  });
  assert.ok(raised > 20 && raised < EXPRESSIONS.length - 150, `${raised} of ${EXPRESSIONS.length} raise`);
});

test("what would run code, or cannot be known, is refused", () => {
  const locals = { s: "'hi'", lst: "[1, 2]", obj: "<Foo object at 0x...>", p: "Point(x=1, y=2)", len: "3" };
  for (const expr of [
    "lst.sort()", "lst.append(3)", "s.format(1)", "s.upper", "obj.x", "obj.f()", "open('f')", "print(1)", "__import__('os')", "exec('x')", "[i for i in lst]",
    "{k: 1 for k in lst}", "(i for i in lst)", "lambda: 1", "(y := 1)", "x = 1", "s; s", "f'{s}'", "*lst", "obj + 1",
    "obj == 1", "not obj", "len(obj)", "obj[0]", "p.x", "str(obj)", "len(s)", "'%s' % s", "lst @ lst", "", "   ", "s\ns",
    "(1, 2", "1 +", "[1,, 2]", "f(1)", "sorted(lst, key=len)", "1 if s", "yield 1", "await s", "s is lst", "# comment",
    "'\\N{BULLET}'", "(-8) ** 0.5", "1j / 2", "1j ** 2",
  ]) {
    assert.throws(() => evaluateExpression(expr, locals), ExprError, JSON.stringify(expr));
  }
  // Opaque values can still be shown and passed around, and compared by identity with None.
  assert.equal(evaluateExpression("obj", locals), "<Foo object at 0x...>");
  assert.equal(evaluateExpression("[obj, p]", locals), "[<Foo object at 0x...>, Point(x=1, y=2)]");
  assert.equal(evaluateExpression("repr(p)", locals), "'Point(x=1, y=2)'");
  assert.equal(evaluateExpression("obj is None", locals), "False");
  assert.equal(evaluateExpression("obj is not None", locals), "True");
  // Limits keep a condition from eating the machine.
  assert.throws(() => evaluateExpression("'a' * 10**9", {}), /too large/);
  assert.throws(() => evaluateExpression("2 ** 10**9", {}), /too large/);
  assert.throws(() => evaluateExpression("1 << 10**9", {}), /too large/);
  assert.throws(() => evaluateExpression("(" .repeat(500) + "1" + ")".repeat(500), {}), /nested too deeply/);
  assert.throws(() => evaluateExpression("1+" .repeat(6000) + "1", {}), ExprError);
  assert.throws(() => evaluateExpression("-" .repeat(500) + "1", {}), /nested too deeply/);
  // A chain as long as an expression may be: a result, or a clear refusal where the stack ends first.
  try {
    assert.equal(evaluateExpression("1" + "+1".repeat(4900), {}), "4901");
  } catch (e) {
    assert.ok(e instanceof ExprError, String(e));
  }
  assert.equal(evaluateExpression("[] * 10**30 + list(b'' * 10**20)", {}), "[]");
  // Methods: those that would change their object are refused by name, and results keep the bounds.
  assert.throws(() => evaluateExpression("lst.append(3)", locals), /list\.append\(\) would change the list: only methods that change nothing/);
  assert.throws(() => evaluateExpression("{}.update(a=1)", {}), /dict\.update\(\) would change the dict/);
  assert.throws(() => evaluateExpression("s.upper", locals), /str\.upper is a method/);
  assert.throws(() => evaluateExpression("obj.name.upper()", locals), /attributes of <Foo object at 0x\.\.\.> are not known without running code/);
  assert.throws(() => evaluateExpression("('a' * 10**6).replace('', 'xx')", {}), /too large/);
  assert.throws(() => evaluateExpression("'ab'.center(10**7)", {}), /too large/);
  assert.throws(() => evaluateExpression("('a,' * 10**6).split(',')", {}), /too large/);
  assert.throws(() => evaluateExpression("'-'.join(['ab' * 10**5] * 10)", {}), /too large/);
  assert.equal(evaluateExpression("(1 >> 10**30, -5 >> 10**30)", {}), "(0, -1)");
});

test("names come only from the locals given", () => {
  assert.throws(() => evaluateExpression("x", {}), /NameError: name 'x' is not defined/);
  assert.equal(evaluateExpression("x", { x: "[1, {'a': (2,)}]" }), "[1, {'a': (2,)}]");
  // A local that shadows a builtin is a value, and calling it would run code.
  assert.equal(evaluateExpression("len", { len: "3" }), "3");
  assert.throws(() => evaluateExpression("len(x)", { len: "3", x: "[]" }), /would run code/);
  // Locals that are never read need not parse.
  assert.equal(evaluateExpression("a + 1", { a: "1", junk: "<<<" }), "2");
  assert.equal(evaluateExpression("__x__", { __x__: "'dunder'" }), "'dunder'");
  assert.equal(evaluateExpression("été + 1", { "été": "1" }), "2");
});

test("conditions and truthiness", () => {
  const locals = { i: "3", s: "''", lst: "[0]", none: "None", obj: "<Foo object at 0x...>" };
  assert.equal(evaluateCondition("i == 3", locals), true);
  assert.equal(evaluateCondition("i > 3", locals), false);
  assert.equal(evaluateCondition("s", locals), false);
  assert.equal(evaluateCondition("lst", locals), true);
  assert.equal(evaluateCondition("none", locals), false);
  assert.equal(evaluateCondition("i % 2 == 1 and lst[0] == 0", locals), true);
  assert.throws(() => evaluateCondition("obj", locals), ExprError);
  assert.equal(isTruthyRepr("[]"), false);
  assert.equal(isTruthyRepr("0.0"), false);
  assert.equal(isTruthyRepr("nan"), true);
  assert.equal(isTruthyRepr("'x'"), true);
  assert.equal(isTruthyRepr("frozenset()"), false);
  assert.throws(() => isTruthyRepr("Foo()"), ExprError);
});

test("parseExpression checks syntax without values", () => {
  assert.doesNotThrow(() => parseExpression("a[1:2] + len(b) if c else d"));
  assert.throws(() => parseExpression("a +"), /invalid syntax/);
  assert.throws(() => parseExpression("a = 1"), /single expression/);
});

test("checkSingleExpression: entry calls are one expression", () => {
  const fine = [
    "f()", "f([1, 2], b=3)", "f(lambda x: x + 1, key='a=b')", "f(\n  1,  # one\n  2)", "Stack().push(1)", "f(x == 1)",
    "f(x <= 1, y != 2)", "f(*args)", "f(f'{x}')", "f('a;b')", "f(\"#\")", "f(x) # trailing", "f(r'\\\\')", "f('''a\nb''')",
  ];
  for (const ok of fine) assert.equal(checkSingleExpression(ok), undefined, ok);
  for (const [bad, why] of [
    ["", /empty/], ["   ", /empty/], ["f(1); g(2)", /;/], ["x = f()", /assignment/], ["x += 1", /assignment/], ["x >>= 1", /assignment/],
    ["f(1)\ng(2)", /line break/], ["f((1)", /unclosed/], ["f(1))", /unbalanced/], ["import os", /statement/], ["def f(): pass", /statement/],
    ["f('abc)", /unterminated/], ["f(1) # x\ng(2)", /line break/],
  ] as const) {
    assert.match(checkSingleExpression(bad) ?? "", why, bad);
  }
});

test("only the evaluator's builtins are builtins: the names JavaScript objects carry (constructor, toString) are not", () => {
  assert.throws(() => evaluateExpression("constructor(1)", {}), (e: unknown) => e instanceof ExprError && /calling constructor\(\) is not supported/.test(e.message));
  assert.throws(() => evaluateExpression("toString", {}), (e: unknown) => e instanceof ExprError && /NameError: name 'toString' is not defined/.test(e.message));
  assert.equal(evaluateExpression("len(constructor)", { constructor: "[1, 2]" }), "2");
});
