// The evaluator's bounds (adapter/format/expr.ts, adapter/format/values.ts): a value built by an expression is
// bounded by the size of its repr (a shared element counted each time it prints), its nesting,
// and the work of the evaluation; each refusal is an ExprError that comes quickly. What worked
// below the bounds still works, and messages never quote a huge value.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine } from "../adapter/engine/engine.js";
import { evaluateCondition, evaluateExpression, ExprTooLarge } from "../adapter/format/expr.js";
import type { Predictor } from "../adapter/engine/predictor.js";
import { RecordedPredictor } from "../adapter/predictors/recorded.js";
import { runTrace } from "../adapter/real/tracer.js";
import { MAX_REPR, ReprTooLong, literalToRepr, parseRepr, reprPreview, reprToNode } from "../adapter/format/values.js";

/** Evaluates and times it: the error (or the result) and the milliseconds it took. */
function timed(expr: string, locals: Record<string, string> = {}): { result?: string; error?: unknown; ms: number } {
  const t0 = performance.now();
  try {
    const result = evaluateExpression(expr, locals);
    return { result, ms: performance.now() - t0 };
  } catch (error) {
    return { error, ms: performance.now() - t0 };
  }
}

/** `expr` is refused as too large, as an ExprTooLarge, within `ms` (before: minutes and gigabytes). */
function refusedQuickly(expr: string, why: RegExp, locals: Record<string, string> = {}, ms = 2_000): void {
  const r = timed(expr, locals);
  assert.ok(r.error instanceof ExprTooLarge, `${expr}: ${r.result === undefined ? String(r.error) : `answered ${r.result.length} characters`}`);
  assert.match((r.error as Error).message, /^too large to evaluate: /, expr);
  assert.match((r.error as Error).message, why, expr);
  assert.ok(r.ms < ms, `${expr} took ${Math.round(r.ms)} ms`);
}

test("values that repeat a shared element are measured as they would print, and refused at once", () => {
  // Before: 128 s and 4.2 GB (killed), and a 51 s freeze.
  refusedQuickly("['a'*10**6]*10**6", /repr would have about 1000\d{9} characters \(at most 4000000\)/);
  refusedQuickly("[[[0]*1000]*1000]*1000", /repr would have about 3\d{9} characters/);
  // Comparing or measuring such a value never gets to build it.
  refusedQuickly("len([[[0]*1000]*1000]*1000)", /repr would have/);
  refusedQuickly("[[[0]*1000]*1000]*1000 == [[[0]*1000]*1000]*1000", /repr would have/);
  // Concatenation adds sizes; a set or dict display counts its elements' sizes.
  refusedQuickly("[[0]*1000]*1000 + [[0]*1000]*1000", /repr would have/);
  refusedQuickly("{1: ['x'*10**6]*5, 2: 3}", /repr would have/);
  // A local holding a big value, repeated.
  const x = `[${"7, ".repeat(2_000)}7]`;
  refusedQuickly("[x] * 1000", /repr would have/, { x });
  assert.equal(evaluateExpression("len([x] * 100)", { x }), "100");
});

test("every bound answers 'too large to evaluate' and names the bound", () => {
  for (const [expr, why] of [
    ["'a' * 10**9", /^too large to evaluate: more than 1000000 characters$/],
    ["b'a' * 10**9", /^too large to evaluate: more than 1000000 bytes$/],
    ["[0] * 10**9", /^too large to evaluate: more than 1000000 elements$/],
    ["[0] * 10**6 + [0]", /^too large to evaluate: more than 1000000 elements$/],
    ["'a' * 10**6 + 'b'", /^too large to evaluate: a string of more than 1000000 characters$/],
    ["2 ** 10**9", /^too large to evaluate: an integer of more than 100000 bits$/],
    ["1 << 10**9", /^too large to evaluate: an integer of more than 100000 bits$/],
  ] as const)
    refusedQuickly(expr, why);
});

test("values nest at most 100 levels deep, as deep as a repr is read back", () => {
  const deep = "[".repeat(100) + "]".repeat(100);
  assert.equal(evaluateExpression("len(x)", { x: deep }), "1");
  refusedQuickly("[x]", /nest 101 levels deep \(at most 100\)/, { x: deep });
  refusedQuickly("(x,)", /nest 101 levels deep/, { x: deep });
  refusedQuickly("{1: x}", /nest 101 levels deep/, { x: deep });
});

test("one evaluation has a budget of work: sorting, comparing and summing a million elements stop early", () => {
  refusedQuickly("sorted([1, 0] * 500000)", /more than 5000000 steps of work/);
  refusedQuickly("max('ab' * 500000)", /steps of work/);
  refusedQuickly("sum([[0] * 1000] * 1000, [])", /steps of work/);
  // Big integers cost with their size.
  refusedQuickly(Array(660).fill("(10**15000)**2").join("+"), /steps of work/);
  // The budget is per evaluation: the next one starts afresh.
  assert.equal(evaluateExpression("sorted([3, 1, 2] * 1000)[-1]", {}), "3");
  assert.equal(evaluateCondition("sum([1] * 10**6) == 10**6", {}), true);
});

test("below the bounds, values as large as before are still computed, quickly", () => {
  const r = timed("[0] * 10**6");
  assert.equal(r.result?.length, 3 * 10 ** 6);
  assert.ok(r.ms < 2_000, `${Math.round(r.ms)} ms`);
  assert.equal(evaluateExpression("len([[0] * 1000] * 1000)", {}), "1000");
  assert.equal(evaluateExpression("[[0] * 1000] * 1000 == [[0] * 1000] * 1000", {}), "True");
  assert.equal(evaluateExpression("len('a' * 10**6)", {}), "1000000");
  assert.equal(evaluateExpression("len(str([[0] * 1000] * 300))", {}), "900600");
  // str() and repr() of a value whose text would pass a million characters.
  refusedQuickly("repr([[0] * 1000] * 400)", /repr is longer than 1000000 characters/);
  // A string whose escapes make its repr four times as long as its text.
  refusedQuickly("['\\x00' * 1000] * 1000", /repr is longer than 4000000 characters/);
});

test("messages quote at most a few hundred characters of a value or an expression", () => {
  const big = "'" + "k".repeat(50_000) + "'";
  for (const [expr, locals] of [
    ["int(s)", { s: big }],
    ["d[s]", { d: "{1: 2}", s: big }],
    ["o + 1", { o: `<Foo ${"x".repeat(50_000)}>` }],
    ["str(o)", { o: `<Foo ${"x".repeat(50_000)}>` }],
    ["1 + " + "9".repeat(9_000) + " +", {}],
  ] as const) {
    const r = timed(expr, locals);
    assert.ok(r.error instanceof Error && !(r.error instanceof ExprTooLarge), expr.slice(0, 40));
    assert.ok((r.error as Error).message.length < 500, `${expr.slice(0, 40)}: a message of ${(r.error as Error).message.length} characters`);
  }
  assert.match((timed("int(s)", { s: big }).error as Error).message, /^ValueError: invalid literal for int\(\) with base 10: 'k{199}…$/);
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

test("the engine does not ask the predictor for a value too large to compute; other expressions it cannot compute, it does", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-expr-limits-"));
  try {
    const program = join(dir, "p.py");
    writeFileSync(program, "def f(x):\n    y = x + 1\n    return y\n");
    const recorded = new RecordedPredictor(await runTrace(program, { call: "f(2)" }));
    // The recording, answering questions as a chat model does (a recording itself answers none).
    const asked: string[] = [];
    const answering: Predictor = {
      source: recorded.source,
      start: (o) => recorded.start(o),
      predict: (h, a, o) => recorded.predict(h, a, o),
      evaluate: async (_h, expression) => (asked.push(expression), "42"),
      dispose: () => {},
    };
    const engine = new Engine(answering);
    await engine.start();
    assert.equal((await engine.evaluate("x * 10")).value, "20");
    assert.equal((await engine.evaluate("x.bit_length()")).value, "2"); // a pure method of a built-in value: computed
    assert.equal((await engine.evaluate("x.to_bytes(2, 'big')")).value, "42");
    await assert.rejects(engine.evaluate("['a'*10**6]*10**6"), /^Error: cannot evaluate "\['a'\*10\*\*6\]\*10\*\*6": too large to evaluate: its repr would have/);
    await assert.rejects(engine.evaluate("sorted([x, 0] * 500000)"), /too large to evaluate: more than 5000000 steps of work/);
    assert.deepEqual(asked, ["x.to_bytes(2, 'big')"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
