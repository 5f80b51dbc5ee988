// Python expressions read as text (adapter/pyread/expressions.ts): whether a text is one expression,
// by its token structure and by tree-sitter's grammar, and whether it names a variable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkSingleExpression, expressionProblem, mentions } from "../adapter/pyread/expressions.js";

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

test("expressionProblem: a condition or log part that Python cannot read is refused before it is evaluated", async () => {
  for (const ok of ["x > 1", "a[1:2] + len(b) if c else d", "[y for y in ys if y]", "(lambda q: q)(1)", "f'{x!r:>4}'", "(x is not None and\n y)", "{**d, 'k': 1}"])
    assert.equal(await expressionProblem(ok), undefined, ok);
  for (const [bad, why] of [["a +", /invalid syntax/], ["a = 1", /assignment/], ["x >", /invalid syntax/], ["x if y", /invalid syntax/], ["1 2", /invalid syntax/], ["return x", /statement/], ["", /empty/]] as const)
    assert.match((await expressionProblem(bad)) ?? "", why, bad);
});

test("mentions: a whole name, not an attribute or a longer name", () => {
  assert.equal(mentions("q = p + 1", "p"), true);
  assert.equal(mentions("x.p + pp", "p"), false);
  assert.equal(mentions("total(items)", "items"), true);
});
