// The reachable-state rules (adapter/rules/reach.ts) against real runs: every state a real run
// goes to under every action is one they allow, from the true state alone (as `eval steps`
// asks) and from the whole session before it (as a debugging session asks); and the impossible
// states users met (a frame of a function never called, names it never binds, a lost parameter,
// a return where there is none, callers dropped) are refused, with a reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Reach, callStack } from "../adapter/rules/reach.js";
import { refusal } from "../adapter/rules/refusal.js";
import { jsonGrammar, nativeGrammar, reachGrammar, scopeTable } from "../adapter/rules/grammar.js";
import { getBackend, disposeAll } from "../adapter/model/backend.js";
import { parsePython } from "../adapter/pyread/parse.js";
import { stateAt } from "../adapter/tools/sampling.js";
import { TraceBatch } from "../adapter/real/hostRun.js";
import { readPrograms, traceOf } from "../adapter/tools/programs.js";
import type { Action, Frame, Step } from "../adapter/format/trajectory.js";
import { actions, fixturePrograms, nextOf, refusedStates, rules } from "./support/reach.js";

const T = { timeout: 240_000 };

test("every state a real run reaches, by every action, is one the rules allow (from the state alone and from the whole session); every state they decide is the true one", T, async () => {
  const batch = new TraceBatch({ maxEvents: 400, timeout: 10 });
  let checked = 0;
  let decided = 0;
  const refused: string[] = [];
  try {
    for (const p of fixturePrograms()) {
      const run = await batch.trace({ source: p.code });
      if (run.exit.status === "limit" || !run.frames.length) continue;
      const r = await refusedStates(rules(await parsePython(p.code), run.python), run, p.name);
      checked += r.checked;
      decided += r.decided;
      refused.push(...r.refused);
    }
  } finally {
    await batch.close();
  }
  assert.ok(checked > 20_000 && decided > 2_000, `${checked} cases checked, ${decided} states decided`);
  assert.deepEqual(refused.slice(0, 10), [], `${refused.length} true states refused`);
});

test("every state of real runs of the real-code held-out (functions written by people, with their calls), by every action, is one the rules allow; every state they decide is the true one", T, async () => {
  const programs = await readPrograms(join(import.meta.dirname, "..", "training", "heldout", "realcode.jsonl"));
  const batch = new TraceBatch({ maxEvents: 400, timeout: 10 });
  let checked = 0;
  let decided = 0;
  const refused: string[] = [];
  try {
    for (const p of programs) {
      const run = await batch.trace(traceOf(p));
      if (run.exit.status === "limit" || !run.frames.length) continue;
      const r = await refusedStates(rules(await parsePython(p.code), run.python), run, p.id ?? "?");
      checked += r.checked;
      decided += r.decided;
      refused.push(...r.refused);
    }
  } finally {
    await batch.close();
  }
  assert.ok(programs.length >= 600 && checked > 500_000 && decided > 50_000, `${programs.length} programs, ${checked} cases checked, ${decided} states decided`);
  assert.deepEqual(refused.slice(0, 10), [], `${refused.length} true states refused`);
});

// examples/demo.py: total(values) calls running_max(values) on line 12, prints on 13, returns on 14.
const DEMO = readFileSync(join(import.meta.dirname, "..", "examples", "demo.py"), "utf8");
const call = (locals: Record<string, string>): Step => ({ frame: { event: "call", line: 11, depth: 0, func: "total", locals } });
const line = (n: number, locals: Record<string, string>, extra: Partial<Frame> = {}): Frame => ({ event: "line", line: n, depth: 0, func: "total", locals, ...extra });
const V = { values: "[3, 1, 2]" };

async function why(history: Step[], action: Action, step: Step): Promise<string | undefined> {
  const reach = rules(await parsePython(DEMO));
  const next = (await nextOf(reach, history, action));
  assert.ok(next, "the demo's states have rules");
  return refusal(next, step, history[history.length - 1].frame);
}

test("impossible states are refused, each with its reason; the true ones pass", async () => {
  const at12: Step[] = [call(V), { action: { kind: "step_into" }, frame: line(12, V) }];
  const into = { kind: "step_into" } as const;
  const over = { kind: "step_over" } as const;
  // Into the call on line 12: running_max, one deeper, with exactly its parameter.
  assert.equal(await why(at12, into, { frame: { event: "call", line: 1, depth: 1, func: "running_max", locals: V } }), undefined);
  assert.match((await why(at12, into, { frame: { event: "call", line: 1, depth: 2, func: "running_max", locals: V } }))!, /depth 2/);
  assert.match((await why(at12, into, { frame: { event: "call", line: 11, depth: 1, func: "total", locals: V } }))!, /call event in total cannot follow/);
  assert.match((await why(at12, into, { frame: { event: "call", line: 1, depth: 1, func: "running_max", locals: { values: "[3]", n: "2" } } }))!, /no local "n"/);
  // Over line 12: maxima is bound, values kept, nothing of running_max's.
  const real = { values: "[3, 1, 2]", maxima: "[3, 3, 3]" };
  assert.equal(await why(at12, over, { frame: line(13, real) }), undefined);
  assert.match((await why(at12, over, { frame: line(13, { ...real, best: "3" }) }))!, /no local "best"/);
  assert.match((await why(at12, over, { frame: line(13, V) }))!, /assigns maxima/);
  assert.match((await why(at12, over, { frame: line(13, { maxima: "[3, 3, 3]" }) }))!, /lost its parameter values|dropped a local/);
  assert.match((await why(at12, over, { frame: line(13, { values: "'3'", maxima: "[3, 3, 3]" }) }))!, /values cannot change its type/);
  assert.match((await why(at12, over, { frame: { ...line(13, real), event: "return", value: "9" } }))!, /return event in total cannot follow/); // a return a line early
  assert.match((await why(at12, over, { exit: { status: "normal" } }))!, /cannot exit here/);
  assert.equal(await why(at12, over, { frame: { ...line(12, V), event: "exception", value: "TypeError()" } }), undefined);
  // Out of running_max: its return stands on its return line with a value, or unwinds without one.
  const inMax: Step[] = [...at12, { action: into, frame: { event: "call", line: 1, depth: 1, func: "running_max", locals: V } }, { action: into, frame: { event: "line", line: 5, depth: 1, func: "running_max", locals: { ...V, best: "None", out: "[]", v: "3" } } }];
  const ret = (n: number, value?: string): Step => ({ frame: { event: "return", line: n, depth: 1, func: "running_max", locals: { ...V, best: "3", out: "[3, 3, 3]", v: "2" }, ...(value ? { value } : {}) } });
  const out = { kind: "step_return" } as const;
  assert.equal(await why(inMax, out, ret(8, "[3, 3, 3]")), undefined);
  assert.equal(await why(inMax, out, ret(5)), undefined);
  assert.match((await why(inMax, out, ret(5, "[3]")))!, /cannot stand on line 5|has no value/);
  // After the return, the caller comes back: total at depth 0, never running_max.
  const returned: Step[] = [...inMax, { action: out, ...ret(8, "[3, 3, 3]") }];
  assert.deepEqual(callStack(returned).map((f) => f?.func), ["total", "running_max"]);
  assert.equal(await why(returned, over, { frame: line(13, real) }), undefined);
  assert.match((await why(returned, over, { frame: { event: "line", line: 13, depth: 0, func: "running_max", locals: real } }))!, /line event in running_max|line 13 of running_max/);
});

// A script's first steps pass over definitions. The model once answered step_into at its start with
// the last line and nothing bound, and `acct = 10` after `acct = Account(...)`.
const BANK = `class InsufficientFunds(Exception):
    pass


class Account:
    def __init__(self, owner):
        self.owner = owner


def open_account(owner):
    return Account(owner)


acct = open_account("ada")
`;

test("a script's definitions: its first statement after the start, a def or class passed binds its name, the next line is past its body", async () => {
  const reach = rules(await parsePython(BANK));
  const mod = (n: number, locals: Record<string, string> = {}, extra: Partial<Frame> = {}): Frame => ({ event: "line", line: n, depth: 0, func: "<module>", locals, ...extra });
  const whyHere = async (history: Step[], action: Action, frame: Frame): Promise<string | undefined> => refusal((await nextOf(reach, history, action))!, { frame }, history[history.length - 1].frame);
  const into = { kind: "step_into" } as const;
  const over = { kind: "step_over" } as const;
  const start: Step[] = [{ frame: { event: "call", line: 1, depth: 0, func: "<module>", locals: {} } }];
  assert.equal(await whyHere(start, into, mod(1)), undefined);
  assert.match((await whyHere(start, into, mod(14)))!, /cannot stand on line 14/);
  // Past `class InsufficientFunds`: the next class, with the name bound.
  const at1: Step[] = [...start, { action: into, frame: mod(1) }];
  const E = { InsufficientFunds: "<class '__main__.InsufficientFunds'>" };
  assert.equal(await whyHere(at1, over, mod(5, E)), undefined);
  assert.match((await whyHere(at1, over, mod(14, E)))!, /cannot stand on line 14/);
  assert.match((await whyHere(at1, over, mod(5)))!, /line 1 assigns InsufficientFunds/);
  // Into it: the class body starts on its own header, then runs its body.
  const body: Frame = { event: "call", line: 5, depth: 1, func: "Account", locals: {} };
  const at5: Step[] = [...at1, { action: over, frame: mod(5, E) }];
  assert.equal(await whyHere(at5, into, body), undefined);
  const inBody: Step[] = [...at5, { action: into, frame: body }];
  assert.equal(await whyHere(inBody, into, { ...body, event: "line" }), undefined);
  assert.match((await whyHere(inBody, into, { ...body, event: "line", line: 6 }))!, /cannot stand on line 6/);
  const onHeader: Step[] = [...inBody, { action: into, frame: { ...body, event: "line" } }];
  assert.equal(await whyHere(onHeader, into, { ...body, event: "line", line: 6 }), undefined);
  assert.match((await whyHere(onHeader, into, { ...body, event: "line", line: 6, locals: { __init__: "<function Account.__init__ at 0x...>" } }))!, /__init__ cannot change on line 5/);
  // Past `def open_account`: a function of that name, nothing else.
  const A = { ...E, Account: "<class '__main__.Account'>" };
  const at10: Step[] = [...at5, { action: over, frame: mod(10, A) }];
  assert.equal(await whyHere(at10, over, mod(14, { ...A, open_account: "<function open_account at 0x...>" })), undefined);
  assert.match((await whyHere(at10, over, mod(14, { ...A, open_account: "10" })))!, /open_account is <function open_account at 0x\.\.\.> in <module>, not 10/);
  // So do a class's name and a function's wherever the module's frame holds them, after a jump too.
  const jump = { kind: "breakpoint", line: 14 } as const;
  assert.equal(await whyHere(at1, jump, mod(14, { ...A, open_account: "<function open_account at 0x...>" })), undefined);
  assert.match((await whyHere(at1, jump, mod(14, { ...A, Account: "<class '__main__.Account=<class '__main__.Account'>" })))!, /Account is <class '__main__.Account'> in <module>/);
  // A function's call goes on to its first statement only.
  const call: Step[] = [...at10, { action: over, frame: mod(14, { ...A, open_account: "<function open_account at 0x...>" }) }, { action: into, frame: { event: "call", line: 10, depth: 1, func: "open_account", locals: { owner: "'ada'" } } }];
  assert.equal(await whyHere(call, into, { event: "line", line: 11, depth: 1, func: "open_account", locals: { owner: "'ada'" } }), undefined);
  assert.match((await whyHere(call, into, { event: "line", line: 10, depth: 1, func: "open_account", locals: { owner: "'ada'" } }))!, /cannot stand on line 10/);
  // Out of the module, or back in it from a callee: its names stay, in order, and its return is None.
  const at14: Step[] = [...at10, { action: over, frame: mod(14, { ...A, open_account: "<function open_account at 0x...>" }) }];
  const names = { ...A, open_account: "<function open_account at 0x...>", acct: "<__main__.Account object at 0x...>" };
  const out = { kind: "step_return" } as const;
  assert.equal(await whyHere(at14, out, mod(14, names, { event: "return", value: "None" })), undefined);
  assert.match((await whyHere(at14, out, mod(14, names, { event: "return", value: "'Is'" })))!, /a return of <module> is None/);
  const { Account: _, ...lost } = names;
  assert.match((await whyHere(at14, out, mod(14, lost, { event: "return", value: "None" })))!, /<module>'s names are InsufficientFunds, Account, open_account first/);
  const back: Step[] = [...call, { action: into, frame: { event: "line", line: 11, depth: 1, func: "open_account", locals: { owner: "'ada'" } } }, { action: over, frame: { event: "return", line: 11, depth: 1, func: "open_account", locals: { owner: "'ada'" }, value: "<__main__.Account object at 0x...>" } }];
  assert.equal(await whyHere(back, over, mod(14, names, { event: "return", value: "None" })), undefined);
  assert.match((await whyHere(back, over, mod(14, { ...names, open_account: "<function open_account at 0x...>", Account: "5" }, { event: "return", value: "None" })))!, /Account cannot change here/);
  // The grammar says the same: the def's name can only be written as its function.
  const g = reachGrammar((await nextOf(reach, at10, over))!, (t) => JSON.stringify(t));
  assert.match(g, /"open_account=<function open_account at 0x\.\.\.>"/);
  assert.doesNotMatch(g, /"open_account=" /);
});

test("`x = C(...)` at a script's top level, C a class of the file with object's repr, binds an object of C; not where C has a repr of its own or the call goes on", async () => {
  const code = `class Box:
    def __init__(self, size):
        self.size = size


class Tag:
    def __repr__(self):
        return "Tag()"


b = Box(3)
t = Tag()
n = Box(2).size
`;
  const reach = rules(await parsePython(code));
  const classes = { Box: "<class '__main__.Box'>", Tag: "<class '__main__.Tag'>" };
  const at = (line: number, locals: Record<string, string>): Step[] => [{ frame: { event: "line", line, depth: 0, func: "<module>", locals } }];
  const next = (line: number, locals: Record<string, string>): Step => ({ frame: { event: "line", line, depth: 0, func: "<module>", locals } });
  const over = { kind: "step_over" } as const;
  const why = async (from: number, locals: Record<string, string>, to: number, after: Record<string, string>): Promise<string | undefined> => refusal((await nextOf(reach, at(from, locals), over))!, next(to, after), at(from, locals)[0].frame);
  assert.equal(await why(11, classes, 12, { ...classes, b: "<__main__.Box object at 0x...>" }), undefined);
  assert.match((await why(11, classes, 12, { ...classes, b: "3" }))!, /line 11 binds b to <__main__\.Box object at 0x\.\.\.>/);
  const withB = { ...classes, b: "<__main__.Box object at 0x...>" };
  assert.equal(await why(12, withB, 13, { ...withB, t: "Tag()" }), undefined);
  assert.equal(await why(13, { ...withB, t: "Tag()" }, 13, { ...withB, t: "Tag()" }), undefined);
  assert.equal(refusal((await nextOf(reach, at(13, { ...withB, t: "Tag()" }), { kind: "step_return" }))!, { frame: { event: "return", line: 13, depth: 0, func: "<module>", locals: { ...withB, t: "Tag()", n: "2" }, value: "None" } }, undefined), undefined);
});

test("a statement the evaluator computes from the locals (`x = a + 1`, `a, b = b, a + b`, `t += a`) sets exactly that value, which the grammar writes, and nothing else changes; not where the value holds a set, a builtin is shadowed, the name is a function's global or a class prints itself", async () => {
  const code = `def fib(n):
    a, b = 0, 1
    total = 0
    for i in range(n):
        a, b = b, a + b
        total += a  # the sum so far
    seen = {a, b}
    label = 'n=' + str(n)
    return total
`;
  const reach = rules(await parsePython(code));
  const at = (line: number, locals: Record<string, string>): Step[] => [{ frame: { event: "line", line, depth: 0, func: "fib", locals } }];
  const over = { kind: "step_over" } as const;
  const why = async (r: Reach, from: Step[], line: number, locals: Record<string, string>): Promise<string | undefined> => refusal((await nextOf(r, from, over))!, { frame: { event: "line", line, depth: 0, func: from[0].frame!.func, locals } }, from[0].frame);
  const loop = { n: "5", a: "1", b: "1", total: "1", i: "1" };
  assert.equal(await why(reach, at(5, loop), 6, { ...loop, b: "2" }), undefined);
  assert.match((await why(reach, at(5, loop), 6, { ...loop, b: "3" }))!, /line 5 sets b to 2, not 3/);
  assert.match((await why(reach, at(5, loop), 6, { ...loop, b: "2", total: "9" }))!, /total cannot change on line 5/, "nothing runs but the assignment");
  assert.equal(await why(reach, at(6, { ...loop, b: "2" }), 4, { ...loop, b: "2", total: "2" }), undefined, "a trailing comment is no part of the value");
  assert.match((await why(reach, at(6, { ...loop, b: "2" }), 4, { ...loop, b: "2" }))!, /line 6 sets total to 2, not 1/, "a changed value must be written");
  const first = at(2, { n: "5" });
  assert.match((await why(reach, first, 3, { n: "5", a: "0", b: "0" }))!, /line 2 sets b to 1/);
  const grammar = reachGrammar((await nextOf(reach, first, over))!, (t) => JSON.stringify(t));
  assert.ok(grammar.includes('"a=0"') && grammar.includes('"b=1"'), "the grammar writes the values");
  // A set's order follows hashes in CPython: its value is the model's.
  const end = { n: "5", a: "5", b: "8", total: "12" };
  assert.equal(await why(reach, at(7, end), 8, { ...end, seen: "{8, 5}" }), undefined);
  assert.equal(await why(reach, at(8, { ...end, seen: "{8, 5}" }), 9, { ...end, seen: "{8, 5}", label: "'n=5'" }), undefined);
  assert.match((await why(reach, at(8, { ...end, seen: "{8, 5}" }), 9, { ...end, seen: "{8, 5}", label: "'n=6'" }))!, /sets label to 'n=5'/);
  // A builtin the file shadows, a function's global, a class that prints itself: not computed.
  const shadow = rules(await parsePython("def len(x):\n    return 0\n\ndef f(s):\n    k = len(s)\n    return k\n"));
  assert.equal(await why(shadow, at(5, { s: "'abc'" }).map((x) => ({ frame: { ...x.frame!, func: "f" } })), 6, { s: "'abc'", k: "0" }), undefined);
  const glob = rules(await parsePython("g = 0\n\ndef f():\n    global g\n    g = 1\n    x = 2\n    return x\n"));
  assert.equal((await nextOf(glob, at(5, {}).map((x) => ({ frame: { ...x.frame!, func: "f" } })), over))!.frames.some((n) => n.values), false);
  const printed = rules(await parsePython("class P:\n    def __repr__(self):\n        return '1'\n\ndef f(p):\n    q = p\n    return q\n"));
  assert.equal((await nextOf(printed, at(6, { p: "1" }).map((x) => ({ frame: { ...x.frame!, func: "f" } })), over))!.frames.some((n) => n.values), false);
});

test("an `if`, `elif` or `while` test the evaluator computes from the locals goes on to the branch it takes, and only there; a test it does not compute leaves both", async () => {
  const code = `LIMIT = 100

def grade(score, bonus):
    if score + bonus >= 90:  # with the bonus
        g = 'A'
    elif score >= 80:
        g = 'B'
    else:
        # a comment before the body
        g = 'C'
    while score > LIMIT:
        score -= 10
    if score in {1, 2}:
        g = '?'
    return g
`;
  const reach = rules(await parsePython(code));
  const at = (line: number, locals: Record<string, string>): Step[] => [{ frame: { event: "line", line, depth: 0, func: "grade", locals } }];
  const over = { kind: "step_over" } as const;
  const why = async (from: number, locals: Record<string, string>, to: number): Promise<string | undefined> => refusal((await nextOf(reach, at(from, locals), over))!, { frame: { event: "line", line: to, depth: 0, func: "grade", locals } }, at(from, locals)[0].frame);
  assert.equal(await why(4, { score: "85", bonus: "0" }, 6), undefined);
  assert.match((await why(4, { score: "85", bonus: "0" }, 5))!, /cannot stand on line 5/);
  assert.equal(await why(4, { score: "85", bonus: "5" }, 5), undefined);
  assert.equal(await why(6, { score: "85", bonus: "0" }, 7), undefined);
  assert.match((await why(6, { score: "85", bonus: "0" }, 10))!, /cannot stand on line 10/);
  assert.equal(await why(6, { score: "70", bonus: "0" }, 10), undefined, "else: its body's first statement");
  assert.match((await why(6, { score: "70", bonus: "0" }, 7))!, /cannot stand on line 7/);
  // A global the frame does not hold, a set literal (CPython orders it by hashes): not computed, either way.
  assert.equal(await why(11, { score: "85", bonus: "0", g: "'B'" }, 12), undefined);
  assert.equal(await why(11, { score: "85", bonus: "0", g: "'B'" }, 13), undefined);
  assert.equal(await why(13, { score: "85", bonus: "0", g: "'B'" }, 14), undefined);
  assert.equal(await why(13, { score: "85", bonus: "0", g: "'B'" }, 15), undefined);
  const loop = rules(await parsePython("def f(n):\n    while n > 0:\n        n -= 1\n    return n\n"));
  const loopAt = (locals: Record<string, string>): Step[] => [{ frame: { event: "line", line: 2, depth: 0, func: "f", locals } }];
  const to = (line: number, n: string): Step => ({ frame: { event: "line", line, depth: 0, func: "f", locals: { n } } });
  assert.equal(refusal((await nextOf(loop, loopAt({ n: "2" }), over))!, to(3, "2"), loopAt({ n: "2" })[0].frame), undefined);
  assert.match(refusal((await nextOf(loop, loopAt({ n: "2" }), over))!, to(4, "2"), loopAt({ n: "2" })[0].frame)!, /cannot stand on line 4/);
  assert.equal(refusal((await nextOf(loop, loopAt({ n: "0" }), over))!, to(4, "0"), loopAt({ n: "0" })[0].frame), undefined);
});

test("a `return` or `yield` of a value computed from the locals returns exactly it, with the locals as they are; not inside a `try` or `with`, nor where the value is not computed", async () => {
  const code = `def area(w, h):
    scale = 2
    return w * h * scale, 'cm'

def gen(n):
    yield n + 1
    yield

def guarded(x):
    try:
        return x + 1
    finally:
        x = 0

def called(x):
    return area(x, x)
`;
  const reach = rules(await parsePython(code));
  const at = (func: string, line: number, locals: Record<string, string>): Step[] => [{ frame: { event: "line", line, depth: 0, func, locals } }];
  const over = { kind: "step_over" } as const;
  const why = async (from: Step[], locals: Record<string, string>, value: string): Promise<string | undefined> =>
    refusal((await nextOf(reach, from, over))!, { frame: { event: "return", line: from[0].frame!.line, depth: 0, func: from[0].frame!.func, locals, value } }, from[0].frame);
  const here = { w: "3", h: "4", scale: "2" };
  assert.equal(await why(at("area", 3, here), here, "(24, 'cm')"), undefined);
  assert.match((await why(at("area", 3, here), here, "(12, 'cm')"))!, /a return of area is \(24, 'cm'\)/);
  assert.match((await why(at("area", 3, here), { ...here, scale: "3" }, "(24, 'cm')"))!, /scale cannot change here/);
  assert.match((await why(at("area", 3, here), { ...here, w: "5" }, "(24, 'cm')"))!, /sets w to 3/);
  const grammar = reachGrammar((await nextOf(reach, at("area", 3, here), over))!, (t) => JSON.stringify(t));
  assert.ok(grammar.includes(`"(24, 'cm')"`), "the grammar writes the value");
  assert.equal(await why(at("gen", 6, { n: "1" }), { n: "1" }, "2"), undefined);
  assert.match((await why(at("gen", 6, { n: "1" }), { n: "1" }, "1"))!, /a return of gen is 2/);
  assert.equal(await why(at("gen", 7, { n: "1" }), { n: "1" }, "None"), undefined);
  // (a finally runs between the value and the return; a call's value is its own)
  assert.equal(await why(at("guarded", 11, { x: "1" }), { x: "0" }, "2"), undefined);
  assert.equal(await why(at("called", 16, { x: "2" }), { x: "2" }, "(8, 'cm')"), undefined);
  assert.equal(await why(at("called", 16, { x: "2" }), { x: "2" }, "7"), undefined);
});

test("a `for` header goes into its body or out of the loop; over items computed from the locals, with the next item (or the first, where the loop may start again), only its targets changing", async () => {
  const code = `def walk(xs, n):
    total = 0
    for i, x in enumerate(xs):
        total += x
    for k in range(n):
        for j in range(2):
            total += j
    for y in xs:
        xs.append(y)
        break
    return total
`;
  const reach = rules(await parsePython(code));
  const at = (line: number, locals: Record<string, string>): Step[] => [{ frame: { event: "line", line, depth: 0, func: "walk", locals } }];
  const over = { kind: "step_over" } as const;
  const why = async (from: number, locals: Record<string, string>, to: number, after: Record<string, string>): Promise<string | undefined> => refusal((await nextOf(reach, at(from, locals), over))!, { frame: { event: "line", line: to, depth: 0, func: "walk", locals: after } }, at(from, locals)[0].frame);
  const start = { xs: "[5, 7]", n: "2", total: "0" };
  assert.equal(await why(3, start, 4, { ...start, i: "0", x: "5" }), undefined, "the first item");
  assert.match((await why(3, start, 4, { ...start, i: "1", x: "7" }))!, /line 3 sets i to 0, not 1/);
  assert.match((await why(3, start, 5, start))!, /cannot stand on line 5/, "two items: no exit yet");
  const second = { ...start, total: "5", i: "0", x: "5" };
  assert.equal(await why(3, second, 4, { ...second, i: "1", x: "7" }), undefined, "the next item");
  assert.match((await why(3, second, 4, { ...second, i: "1", x: "7", total: "6" }))!, /total cannot change on line 3/);
  const last = { ...start, total: "12", i: "1", x: "7" };
  assert.equal(await why(3, last, 5, last), undefined, "after the last item: out of the loop");
  assert.match((await why(3, last, 4, { ...last, i: "0", x: "5" }))!, /cannot stand on line 4/, "the loop does not start again");
  // An inner loop starts again in each pass of the outer one: after its last item, its first or the exit.
  const inner = { ...start, total: "1", k: "0", j: "1" };
  assert.equal(await why(6, inner, 5, inner), undefined);
  assert.equal(await why(6, { ...inner, k: "1" }, 7, { ...inner, k: "1", j: "0" }), undefined);
  assert.match((await why(6, inner, 7, { ...inner, j: "1" }))!, /cannot stand on line 7|sets j to 0/);
  // A body that mutates the iterable: the items are the model's; still the body or the exit.
  const mutating = { ...start, total: "12", k: "1", j: "1" };
  assert.equal(await why(8, mutating, 9, { ...mutating, y: "99" }), undefined);
  assert.match((await why(8, mutating, 2, mutating))!, /cannot stand on line 2/);
});

test("an item assigned (`d[k] = EXPR`, `xs[i], xs[j] = xs[j], xs[i]`, `d[k] += 1`) or appended (`xs.append(EXPR)`) from computed values gives the list or dict exactly that value; another name may hold the same object", async () => {
  const code = `def tally(words, alias):
    counts = {}
    seen = alias
    for w in words:
        counts[w] = counts.get(w, 0) + 1
        seen.append(w)
    pair = [1, 2]
    pair[0], pair[1] = pair[1], pair[0]
    counts['a'] += 10
    pair[5] = 0
    return counts
`;
  const reach = rules(await parsePython(code));
  const at = (line: number, locals: Record<string, string>): Step[] => [{ frame: { event: "line", line, depth: 0, func: "tally", locals } }];
  const over = { kind: "step_over" } as const;
  const why = async (from: number, locals: Record<string, string>, to: number, after: Record<string, string>): Promise<string | undefined> => refusal((await nextOf(reach, at(from, locals), over))!, { frame: { event: "line", line: to, depth: 0, func: "tally", locals: after } }, at(from, locals)[0].frame);
  const s = { words: "['a', 'b', 'a', 'c']", alias: "['a', 'b']", counts: "{'a': 1, 'b': 1}", seen: "['a', 'b']", w: "'a'" };
  assert.equal(await why(5, s, 6, { ...s, counts: "{'a': 2, 'b': 1}" }), undefined);
  assert.match((await why(5, s, 6, { ...s, counts: "{'a': 1, 'b': 1, 'a': 2}" }))!, /sets counts to \{'a': 2, 'b': 1\}/);
  assert.equal(await why(5, { ...s, w: "'c'" }, 6, { ...s, w: "'c'", counts: "{'a': 1, 'b': 1, 'c': 1}" }), undefined, "a new key goes last");
  assert.match((await why(6, s, 4, s))!, /sets seen to \['a', 'b', 'a'\]/, "the appended list must be written");
  assert.equal(await why(6, s, 4, { ...s, seen: "['a', 'b', 'a']", alias: "['a', 'b', 'a']" }), undefined, "the same list under another name");
  const end = { ...s, counts: "{'a': 2, 'b': 1, 'c': 1}", pair: "[1, 2]" };
  assert.equal(await why(8, end, 9, { ...end, pair: "[2, 1]" }), undefined, "a swap");
  assert.match((await why(8, end, 9, { ...end, pair: "[2, 2]" }))!, /sets pair to \[2, 1\]/);
  assert.match((await why(9, end, 10, { ...end, counts: "{'a': 2, 'b': 1, 'c': 1}" }))!, /sets counts to \{'a': 12, 'b': 1, 'c': 1\}/);
  // (an index past the end raises: the model's to tell)
  assert.equal((await nextOf(reach, at(10, end), over))!.frames.some((n) => n.values), false);
});

test("a print of computed values writes exactly their text, and changes nothing; not where print is shadowed or writes to a file", async () => {
  const code = `total = 3
names = ['a', 'b']
print("total:", total, names)
print(total, end="")
print(*names)
x = 1
`;
  const reach = rules(await parsePython(code));
  const locals = { total: "3", names: "['a', 'b']" };
  const at = (line: number): Step[] => [{ frame: { event: "line", line, depth: 0, func: "<module>", locals } }];
  const over = { kind: "step_over" } as const;
  const why = async (from: number, to: number, stdout: string | undefined, after = locals): Promise<string | undefined> =>
    refusal((await nextOf(reach, at(from), over))!, { frame: { event: "line", line: to, depth: 0, func: "<module>", locals: after, ...(stdout !== undefined ? { stdout } : {}) } }, at(from)[0].frame);
  assert.equal(await why(3, 4, "total: 3 ['a', 'b']\n"), undefined);
  assert.match((await why(3, 4, "total: 4\n"))!, /line 3 writes "total: 3 \['a', 'b'\]\\n", not "total: 4\\n"/);
  assert.match((await why(3, 4, undefined))!, /line 3 writes/);
  assert.match((await why(3, 4, "total: 3 ['a', 'b']\n", { ...locals, total: "4" }))!, /total cannot change on line 3/);
  assert.equal(await why(4, 5, "3"), undefined, "end=''");
  // (CPython runs the print: an unpacked tuple prints its items)
  assert.equal(await why(5, 6, "a b\n"), undefined, "*names");
  assert.match((await why(5, 6, "anything\n"))!, /line 5 writes "a b\\n"/);
  const grammar = reachGrammar((await nextOf(reach, at(3), over))!, (t) => JSON.stringify(t));
  assert.ok(grammar.includes(JSON.stringify("total: 3 ['a', 'b']\n")), "the grammar writes the output");
  const shadowed = rules(await parsePython("def print(*a):\n    return 0\n\nprint(1)\nx = 2\n"));
  const s: Step[] = [{ frame: { event: "line", line: 4, depth: 0, func: "<module>", locals: { print: "<function print at 0x...>" } } }];
  assert.equal((await nextOf(shadowed, s, over))!.frames.some((n) => n.stdout !== undefined), false);
});

test("an import runs once and falls through to the next statement (the model stayed on a script's `import math`)", async () => {
  const reach = rules(await parsePython("import math\nfrom math import pi\nx = math.tau - pi\n"));
  const at1: Step[] = [{ frame: { event: "line", line: 1, depth: 0, func: "<module>", locals: {} } }];
  const to = (line: number, locals: Record<string, string> = {}): Step => ({ frame: { event: "line", line, depth: 0, func: "<module>", locals } });
  const over = { kind: "step_over" } as const;
  assert.equal(refusal((await nextOf(reach, at1, over))!, to(2), at1[0].frame), undefined);
  assert.match(refusal((await nextOf(reach, at1, over))!, to(1), at1[0].frame)!, /cannot stand on line 1/);
  assert.match(refusal((await nextOf(reach, at1, over))!, to(3), at1[0].frame)!, /cannot stand on line 3/);
  const at2: Step[] = [{ frame: { event: "line", line: 2, depth: 0, func: "<module>", locals: {} } }];
  assert.equal(refusal((await nextOf(reach, at2, over))!, to(3, { pi: "3.141592653589793" }), at2[0].frame), undefined);
});

test("the grammars written from the rules parse in llama.cpp, for every state and action of a real run", T, async () => {
  const llama = await getBackend({ gpu: "cpu" });
  try {
    const batch = new TraceBatch({ maxEvents: 400, timeout: 10 });
    const run = await batch.trace({ source: DEMO, call: "total([3, 1, 2])" });
    await batch.close();
    const reach = rules(await parsePython(DEMO));
    const texts = new Set<string>();
    for (let i = 0; i < run.frames.length; i++)
      for (const a of actions(run)) {
        const next = (await nextOf(reach, [stateAt(run, i, i)], a));
        if (next) texts.add(reachGrammar(next, (t) => JSON.stringify(t)));
      }
    assert.ok(texts.size > 10, `${texts.size} grammars`);
    for (const text of texts) await llama.createGrammar({ grammar: text });
  } finally {
    await disposeAll();
  }
});

// ---- the Python version (adapter/model/pyversion.ts) ----
// 3.12 runs list, dict and set comprehensions inline (PEP 709): no frame of their own, their
// locals in the frame that runs them while they run. 3.11's side is checked against real traces
// here; 3.12's against hand-written states with the version given explicitly, and against real
// 3.12 and 3.13 traces in test/slow/pyversion-traces.test.ts.
const COMPS = "def f(xs):\n    ys = [x * 2 for x in xs]\n    d = {k: k for k in ys}\n    s = {v for v in d}\n    g = sum(x for x in s)\n    h = (lambda a: a + 1)(g)\n    return h\n";
const fAt = (n: number, locals: Record<string, string>): Frame => ({ event: "line", line: n, depth: 0, func: "f", locals });

test("3.11: every state of a real run of list, dict and set comprehensions is allowed; on 3.12 their frames are refused", T, async () => {
  const batch = new TraceBatch({ maxEvents: 400, timeout: 10 });
  const run = await batch.trace({ source: COMPS, call: "f([1, 2])" });
  await batch.close();
  assert.equal(run.python, "3.11", "this check needs the 3.11 tracer");
  const comps = new Set(run.frames.map((f) => f.func).filter((f) => /<(list|dict|set)comp>/.test(f)));
  assert.deepEqual([...comps].sort(), ["f.<locals>.<dictcomp>", "f.<locals>.<listcomp>", "f.<locals>.<setcomp>"]);
  const src = await parsePython(COMPS);
  const on = { "3.11": rules(src, "3.11"), "3.12": rules(src, "3.12") };
  const refused: Record<string, string[]> = { "3.11": [], "3.12": [] };
  for (let i = 0; i + 1 < run.frames.length; i++) {
    const truth = stateAt(run, i + 1, i, { kind: "step_into" });
    for (const v of ["3.11", "3.12"] as const) {
      const next = (await nextOf(on[v], [stateAt(run, i, i)], { kind: "step_into" }));
      const why = next ? refusal(next, truth, run.frames[i]) : `no rules for ${run.frames[i].func}`;
      if (why) refused[v].push(`${truth.frame!.func}: ${why}`);
    }
  }
  assert.deepEqual(refused["3.11"], []);
  // 3.12 has no rules inside a comprehension's frame, and refuses every step into one.
  const intoComp = refused["3.12"].filter((r) => /^f\.<locals>\.<(list|dict|set)comp>: .*(cannot follow|does not define|no rules|not a function)/.test(r));
  assert.ok(intoComp.length >= 3, refused["3.12"].join("\n"));
  assert.ok(refused["3.12"].every((r) => /<(list|dict|set)comp>/.test(r)), refused["3.12"].join("\n"));
});

test("the frame grammar names <listcomp>, <dictcomp>, <setcomp> on 3.11 and not on 3.12; <genexpr> and <lambda> on both", async () => {
  const src = await parsePython(COMPS);
  const funcs = (python?: string): string[] => scopeTable(src, python).flatMap((s) => [s.func, ...s.nested.map((n) => n.func)]).sort();
  const both = ["<module>", "f", "f.<locals>.<genexpr>", "f.<locals>.<lambda>"];
  assert.deepEqual(funcs("3.11"), [...both, "f.<locals>.<dictcomp>", "f.<locals>.<listcomp>", "f.<locals>.<setcomp>"].sort());
  assert.deepEqual(funcs(undefined), funcs("3.11"), "an unknown version is read as 3.11 (the version of every trace before format 2)");
  assert.deepEqual(funcs("3.12"), both.sort());
  assert.deepEqual(funcs("3.13"), both.sort());
  const tok = (t: string): string => JSON.stringify(t);
  assert.match(nativeGrammar(src, tok, undefined, "3.11"), /<listcomp>/);
  assert.doesNotMatch(nativeGrammar(src, tok, undefined, "3.12"), /<listcomp>|<dictcomp>|<setcomp>/);
  assert.match(nativeGrammar(src, tok, undefined, "3.12"), /<genexpr>/);
  assert.doesNotMatch(jsonGrammar(src, "3.12"), /<listcomp>/);
  // A generator expression inside a list comprehension is named after the function on 3.12 (the comprehension has no frame).
  const nested = await parsePython("def f(xs):\n    return [sum(y for y in x) for x in xs]\n");
  assert.deepEqual(scopeTable(nested, "3.11")[1].nested.map((n) => n.func).sort(), ["f.<locals>.<listcomp>", "f.<locals>.<listcomp>.<genexpr>"]);
  assert.deepEqual(scopeTable(nested, "3.12")[1].nested.map((n) => n.func), ["f.<locals>.<genexpr>"]);
});

test("3.12: a step into an inline list comprehension stays in the function, its variable there while it runs; 3.11 refuses that state and admits the frame", async () => {
  const src = await parsePython(COMPS);
  const at2: Step[] = [{ frame: { event: "call", line: 1, depth: 0, func: "f", locals: { xs: "[1, 2]" } } }, { action: { kind: "step_into" }, frame: fAt(2, { xs: "[1, 2]" }) }];
  const into = { kind: "step_into" } as const;
  const why = async (python: string, step: Step): Promise<string | undefined> => {
    const next = (await nextOf(rules(src, python), at2, into));
    assert.ok(next);
    return refusal(next, step, at2[1].frame);
  };
  const inline = { frame: fAt(2, { xs: "[1, 2]", x: "1" }) };
  const listcomp = { frame: { event: "call", line: 2, depth: 1, func: "f.<locals>.<listcomp>", locals: {} } } as Step;
  // The comprehension's loop, inline: f on line 2 again with x; then line 3 with ys, x gone again (locals in full).
  assert.equal(await why("3.12", inline), undefined);
  assert.equal(await why("3.12", { frame: fAt(3, { xs: "[1, 2]", ys: "[2, 4]" }) }), undefined);
  assert.match((await why("3.12", listcomp))!, /<listcomp>/);
  assert.equal(await why("3.11", listcomp), undefined);
  assert.match((await why("3.11", inline))!, /"x"/);
  // From inside the loop, x changes from one element to the next.
  const loop: Step[] = [...at2, { action: into, ...inline }];
  const next = (await nextOf(rules(src, "3.12"), loop, into))!;
  assert.equal(refusal(next, { frame: fAt(2, { xs: "[1, 2]", x: "2" }) }, inline.frame), undefined);
  assert.equal(refusal(next, { frame: fAt(3, { xs: "[1, 2]", ys: "[2, 4]" }) }, inline.frame), undefined);
});

test("a step the program decides wholly is computed: the entry's first line, an assignment, a test, a loop's next item, the end of an if branch, a call of its own function with computed arguments, the return to it; a jump runs through decided steps to its stop", async () => {
  const reach = rules(await parsePython(DEMO));
  const rm = (n: number, locals: Record<string, string>, event: Frame["event"] = "line"): Frame => ({ event, line: n, depth: 1, func: "running_max", locals });
  const entered: Step[] = [call(V), { action: { kind: "step_into" }, frame: line(12, V) }, { action: { kind: "step_into" }, frame: rm(1, V, "call") }];
  const into = { kind: "step_into" } as const;
  const over = { kind: "step_over" } as const;
  const after = (s: Step[], f: Frame): Step[] => [...s, { action: over, frame: f }];
  assert.deepEqual(await reach.decided(entered, into), rm(2, V), "the entry goes to the first line, locals as bound");
  const at5 = after(entered, rm(5, { ...V, best: "None", out: "[]", v: "3" }));
  assert.deepEqual(await reach.decided(at5, over), rm(6, { ...V, best: "None", out: "[]", v: "3" }), "`best is None` holds: into the branch");
  const at6 = after(entered, rm(6, { ...V, best: "None", out: "[]", v: "3" }));
  assert.deepEqual(await reach.decided(at6, over), rm(7, { ...V, best: "3", out: "[]", v: "3" }), "`best = v`, then past the if");
  const at7 = after(entered, rm(7, { ...V, best: "3", out: "[]", v: "3" }));
  assert.deepEqual(await reach.decided(at7, over), rm(4, { ...V, best: "3", out: "[3]", v: "3" }), "the append, then back to the loop's header");
  const at4 = after(entered, rm(4, { ...V, best: "3", out: "[3]", v: "3" }));
  assert.deepEqual(await reach.decided(at4, over), rm(5, { ...V, best: "3", out: "[3]", v: "1" }), "the next item");
  // The jumps: step out of running_max, and a breakpoint on 7, from line 5.
  const done = { ...V, best: "3", out: "[3, 3, 3]", v: "2" };
  assert.deepEqual(await reach.ahead(at5, { kind: "step_return" }), { frame: { ...rm(8, done, "return"), value: "[3, 3, 3]" } });
  assert.deepEqual(await reach.ahead(at4, { kind: "breakpoint", line: 7 }), { frame: rm(7, { ...V, best: "3", out: "[3]", v: "1" }) });
  assert.deepEqual(await reach.ahead(at4, { kind: "continue" }, [6, 7]), { frame: rm(7, { ...V, best: "3", out: "[3]", v: "1" }) });
  // total's line 12 calls running_max with computed arguments: into it, its parameter bound; over it, every step of it decided, to its value.
  const at12: Step[] = [call(V), { action: into, frame: line(12, V) }];
  assert.deepEqual(await reach.decided(at12, into), rm(1, V, "call"));
  const maxima = { ...V, maxima: "[3, 3, 3]" };
  assert.deepEqual(await reach.decided(at12, over), line(13, maxima));
  // Back from its return (in a session, where the caller is known): the value bound, on to the next line.
  assert.deepEqual(await reach.decided([...at12, { action: into, frame: rm(1, V, "call") }, { action: { kind: "step_return" }, frame: { ...rm(8, done, "return"), value: "[3, 3, 3]" } }], over), line(13, maxima));
  // total to its return: the call run through, the print's output, sum computed.
  assert.deepEqual(await reach.ahead(at12, { kind: "step_return" }), { frame: { event: "return", line: 14, depth: 0, func: "total", locals: maxima, value: "9", stdout: "maxima: [3, 3, 3]\n" } });
  // A call whose callee reads what the rules cannot compute (a module's function): entered, not run through; a jump passes no state.
  const opaque = rules(await parsePython("import math\n\ndef f(x):\n    y = g(x)\n    return y\n\ndef g(x):\n    return math.sqrt(x)\n"));
  const fAt4: Step[] = [{ frame: { event: "call", line: 3, depth: 0, func: "f", locals: { x: "4" } } }, { action: into, frame: { event: "line", line: 4, depth: 0, func: "f", locals: { x: "4" } } }];
  assert.deepEqual(await opaque.decided(fAt4, into), { event: "call", line: 7, depth: 1, func: "g", locals: { x: "4" } });
  assert.equal(await opaque.decided(fAt4, over), undefined);
  assert.deepEqual(await opaque.ahead(fAt4, { kind: "step_return" }), { passed: [] });
  // Back from a callee that changed a list it was given in place: the caller's name holds the change; not where the callee rebound that parameter (the list it changed is out of sight).
  const lists = rules(await parsePython("def f(xs):\n    n = g(xs)\n    m = h(xs)\n    return n\n\ndef g(xs):\n    xs.append(1)\n    return len(xs)\n\ndef h(xs):\n    xs.append(1)\n    xs = xs + [2]\n    return len(xs)\n"));
  const inList = (n: number, locals: Record<string, string>): Step => ({ action: into, frame: { event: "line", line: n, depth: 0, func: "f", locals } });
  const ret = (func: string, line: number, locals: Record<string, string>, value: string): Step => ({ action: { kind: "step_return" }, frame: { event: "return", line, depth: 1, func, locals, value } });
  const listCall: Step = { frame: { event: "call", line: 1, depth: 0, func: "f", locals: { xs: "[0]" } } };
  const viaG: Step[] = [listCall, inList(2, { xs: "[0]" }), { action: into, frame: { event: "call", line: 6, depth: 1, func: "g", locals: { xs: "[0]" } } }, ret("g", 8, { xs: "[0, 1]" }, "2")];
  assert.deepEqual(await lists.decided(viaG, over), { event: "line", line: 3, depth: 0, func: "f", locals: { xs: "[0, 1]", n: "2" } });
  const viaH: Step[] = [listCall, inList(3, { xs: "[0, 1]", n: "2" }), { action: into, frame: { event: "call", line: 10, depth: 1, func: "h", locals: { xs: "[0, 1]" } } }, ret("h", 13, { xs: "[0, 1, 1, 2]" }, "4")];
  assert.equal(await lists.decided(viaH, over), undefined);
  // A list given as an item of another (`g(box[0])`), changed in place: the caller's box changes too, under no name the callee had: left to the model.
  const items = rules(await parsePython("def f(box):\n    n = g(box[0])\n    return n\n\ndef g(xs):\n    xs.append(1)\n    return len(xs)\n"));
  const box: Step[] = [{ frame: { event: "call", line: 1, depth: 0, func: "f", locals: { box: "[[0]]" } } }, { action: into, frame: { event: "line", line: 2, depth: 0, func: "f", locals: { box: "[[0]]" } } }];
  assert.deepEqual(await items.decided(box, into), { event: "call", line: 5, depth: 1, func: "g", locals: { xs: "[0]" } });
  assert.equal(await items.decided([...box, { action: into, frame: { event: "call", line: 5, depth: 1, func: "g", locals: { xs: "[0]" } } }, ret("g", 7, { xs: "[0, 1]" }, "2")], over), undefined);
  assert.equal(await items.decided(box, over), undefined);
  // A breakpoint a loop never reaches (line 6 only runs while a value beats the best): the states passed, back into total and up to its return.
  const tail = await reach.ahead(after(entered, rm(5, { ...V, best: "3", out: "[3]", v: "1" })), { kind: "breakpoint", line: 6 });
  assert.ok("passed" in tail, JSON.stringify(tail));
  assert.deepEqual(tail.passed.map((s) => [s.frame!.func, s.frame!.event, s.frame!.line]).slice(-4), [["running_max", "return", 8], ["total", "line", 13], ["total", "line", 14], ["total", "return", 14]]);
  assert.equal(tail.passed.at(-1)?.frame?.value, "9");
  // An object is passed on as it is; a comparison with one is its class's code (`__eq__`): left to the model.
  const objects = rules(await parsePython("class P:\n    pass\n\ndef f(a, b):\n    c = a\n    same = a == b\n    return same\n"));
  const objs = { a: "<__main__.P object at 0x...>", b: "<__main__.P object at 0x...>" };
  const inF = (n: number, locals: Record<string, string>): Step => ({ action: into, frame: { event: "line", line: n, depth: 0, func: "f", locals } });
  const fCall: Step = { frame: { event: "call", line: 4, depth: 0, func: "f", locals: objs } };
  assert.deepEqual(await objects.decided([fCall, inF(5, objs)], over), { event: "line", line: 6, depth: 0, func: "f", locals: { ...objs, c: objs.a } });
  assert.equal(await objects.decided([fCall, inF(6, { ...objs, c: objs.a })], over), undefined);
  // A def whose default is computed binds its function; one with an annotation (evaluated there) is left to the model.
  const defs = rules(await parsePython("N = 3\n\ndef f(k=N):\n    return k\n\ndef g(k: int):\n    return k\n\nprint(f())\n"));
  const mod = (n: number, locals: Record<string, string>): Step => ({ action: into, frame: { event: "line", line: n, depth: 0, func: "<module>", locals } });
  const start: Step = { frame: { event: "call", line: 1, depth: 0, func: "<module>", locals: {} } };
  assert.deepEqual(await defs.decided([start, mod(3, { N: "3" })], over), { event: "line", line: 6, depth: 0, func: "<module>", locals: { N: "3", f: "<function f at 0x...>" } });
  assert.equal(await defs.decided([start, mod(6, { N: "3", f: "<function f at 0x...>" })], over), undefined);
});
