// Expressions over values rebuilt from reprs, by CPython, sealed (`askPython` and `evaluateValues`,
// adapter/real/sealed.ts; `evaluate` in adapter/python/sealed.py): a list of expressions evaluated
// by the host's Python over the same values, compared exactly (reprs, and the exception type where
// Python raises one); then what a repr that is no value, a shadowed builtin, a statement run over
// the values and an iterable's items give, and the bounds.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { askPython, evaluateValues, sealedChild } from "../adapter/real/sealed.js";
import { findPython } from "../adapter/real/hostRun.js";

after(() => sealedChild().close());

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

// Views print as calls (dict_items([...])): no literal, so no value to rebuild.
const VIEWS = /\b(kv|ks|vs)\b/;

test("expressions over rebuilt values evaluate exactly as the host's Python evaluates them over the originals", async () => {
  const python = await findPython();
  const run = spawnSync(python, ["-c", PY_EVAL], { input: JSON.stringify(EXPRESSIONS), encoding: "utf8", timeout: 30_000 });
  assert.equal(run.status, 0, run.stderr);
  const { locals, results } = JSON.parse(run.stdout) as { locals: Record<string, string>; results: string[] };
  assert.equal(results.length, EXPRESSIONS.length);
  const got = await evaluateValues(locals, EXPRESSIONS);
  let raised = 0;
  let views = 0;
  EXPRESSIONS.forEach((expr, i) => {
    const [want, r] = [results[i], got[i]];
    if (VIEWS.test(expr) && /^\w+$/.test(expr)) assert.equal("value" in r ? r.value : r.error, want, `${expr} alone is its repr`);
    else if (VIEWS.test(expr)) {
      views++;
      assert.ok("error" in r && r.unknown !== undefined && /is not known here, only its repr: dict_/.test(r.error), `${expr}: ${JSON.stringify(r)}`);
    } else if (want.startsWith("!")) {
      raised++;
      assert.ok("error" in r && r.error.startsWith(`${want.slice(1)}: `) || ("error" in r && r.error === want.slice(1)), `${expr} should raise ${want.slice(1)}: ${JSON.stringify(r)}`);
    } else assert.equal("value" in r ? r.value : r.error, want, expr);
  });
  assert.ok(raised > 20 && views > 5, `${raised} raise, ${views} read views`);
});

test("a name whose repr is no value is named (alone, it is its repr); a shadowed builtin has no value; each expression has values of its own", async () => {
  const names = { xs: "[1, 2]", obj: "<__main__.Foo object at 0x...>", cut: "[1, 2…(cut)" };
  const [method, cut, shadowed, popped, again, alone] = await askPython(names, ["obj.total()", "len(cut)", "len(xs)", "xs.pop()", "xs", "obj"], { hidden: ["len"] });
  assert.ok("value" in alone && alone.value === names.obj && alone.type === "Foo", "a name alone is its repr, an object's too");
  assert.deepEqual(method, { error: "the value of obj is not known here, only its repr: <__main__.Foo object at 0x...>", unknown: "obj" });
  assert.ok("error" in cut && cut.unknown === "cut");
  assert.ok("error" in shadowed && shadowed.unknown === "len" && /program's own name/.test(shadowed.error));
  assert.ok("value" in popped && popped.value === "2");
  assert.ok("value" in again && again.value === "[1, 2]", "xs.pop() changed a copy");
  // Values are rebuilt once per repr and kept: what one request changed is not what the next one reads.
  const [changed] = await askPython(names, [{ exec: "xs.append(3); xs[0] = 9" }]);
  assert.ok("names" in changed && changed.names.xs === "[9, 2, 3]");
  const [later] = await askPython({ ys: "[1, 2]", ...names }, ["xs + ys"]);
  assert.ok("value" in later && later.value === "[1, 2, 1, 2]", JSON.stringify(later));
});

test("a statement run over the values answers the names it bound or changed; an iterable, its first items; each with what it read", async () => {
  const names = { d: "{'a': 1}", x: "3", xs: "[1, 2, 3]" };
  const [assign, swap, printed, items, range, comp] = await askPython(names, [
    { exec: "d['b'] = x; x += 1" },
    { exec: "a, b = xs[0], xs[-1]" },
    { exec: "print(x, *xs, sep='-')" },
    { items: "enumerate(xs)", max: 2 },
    { items: "range(10**12)", max: 3 },
    "[y * 2 for y in xs if y != {1}]",
  ]);
  assert.deepEqual(assign, { names: { d: "{'a': 1, 'b': 3}", x: "4" }, reads: { names: ["d", "x"], calls: [], methods: false, set: false, scopes: false } });
  assert.ok("names" in swap && swap.names.a === "1" && swap.names.b === "3");
  assert.ok("names" in printed && printed.stdout === "3-1-2-3\n" && printed.reads!.calls.includes("print"));
  assert.deepEqual(items, { items: ["(0, 1)", "(1, 2)"], more: true, reads: { names: ["enumerate", "xs"], calls: ["enumerate"], methods: false, set: false, scopes: false } });
  assert.ok("items" in range && range.items.length === 3 && range.more);
  assert.ok("value" in comp && comp.value === "[2, 4, 6]" && comp.reads!.scopes && comp.reads!.set);
});

test("what an expression tries, it tries in the sandbox; a value too large is cut; one that takes too long is stopped and the next answered", async () => {
  const [proc, file, big, str] = await evaluateValues({}, ["__import__('os').system('true')", "open('/etc/hostname').read()", "['a' * 10**6] * 10**6", "'b' * 10**6"]);
  assert.ok("error" in proc && /starts no processes/.test(proc.error));
  assert.ok("error" in file && /FileNotFoundError|No such file/.test(file.error));
  const [exit, after] = await evaluateValues({}, ["__import__('sys').exit(3)", "1 + 1"]);
  assert.ok("error" in exit && exit.error === "SystemExit: 3" && "value" in after && after.value === "2", "exit() ends the expression, not the process");
  assert.ok("value" in big && big.cut && big.value.length < 2_000 && big.str.length < 2_000);
  assert.ok("value" in str && str.cut && str.str.length <= 100_000 + 10);
  const t0 = performance.now();
  const [slow] = await evaluateValues({}, ["10**10**10"]);
  assert.ok("error" in slow && /took longer than 5 s/.test(slow.error), JSON.stringify(slow));
  assert.ok(performance.now() - t0 < 30_000);
  const [next] = await evaluateValues({ n: "2" }, ["n ** 10"]);
  assert.ok("value" in next && next.value === "1024");
});
