// ndbg eval, end to end: the built CLI on a few programs with a real GGUF (a tiny llama with
// random weights, written by scripts/tiny-model.sh --random), the real tracer and real Python
// executing the asserts. A random model is wrong nearly always, so these tests check that the
// figures are computed right (against an independent recomputation from real traces) and that
// pass/fail is decided by execution, never that the model is accurate.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { argumentText, assertFor, returnLineFromCode, type CruxReport } from "../adapter/tools/cruxeval.js";
import { checkAsserts, type AssertCase } from "../adapter/tools/asserts.js";
import type { CompareReport } from "../adapter/tools/compare.js";
import { readPrograms, traceOf, type Program } from "../adapter/tools/programs.js";
import { score, sampleCases, type ActionFigures, type StepsItem, type StepsReport } from "../adapter/tools/steps.js";
import { findFunction } from "../adapter/pyread/source.js";
import { parsePython } from "../adapter/pyread/parse.js";
import { transition } from "../adapter/real/semantics.js";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace, TraceBatch } from "../adapter/real/hostRun.js";
import { ACTION_KINDS, sameExit, sameFrame, sameLocals, type Frame, type Step } from "../adapter/format/trajectory.js";
import { ROOT, buildDist, ndbgWithin, type Result } from "./support/dist.js";
import { CRUXEVAL, cruxevalSkip } from "./support/cruxeval.js";

const T = { timeout: 240_000 };
const dir = mkdtempSync(join(tmpdir(), "ndbg-eval-"));
let gguf = "";

const ndbg = ndbgWithin(200_000);
/** The last line of stdout, as JSON. */
const lastJson = <X>(r: Result): X => JSON.parse(r.stdout.trim().split("\n").at(-1)!) as X;

// CRUXEval-shaped programs chosen so that every action has somewhere to go: loops, a helper
// call, output, defaults, *args / keyword-only / **kwargs, two returns.
const PROGRAMS: Program[] = [
  { id: "loop", code: "def f(n):\n    s = 0\n    for i in range(n):\n        s += i\n    return s\n", input: "4", output: "6" },
  {
    id: "helper",
    code: "def g(x):\n    y = x * 2\n    print('g', y)\n    return y\n\ndef f(a, b=1):\n    t = g(a) + b\n    u = [t, a]\n    return u\n",
    input: "2",
    output: "[5, 2]",
  },
  {
    id: "kinds",
    code: "def f(text, *rest, sep='-', **kw):\n    parts = [text, *rest]\n    if kw:\n        return sep.join(parts) + '!' + ','.join(sorted(kw))\n    return sep.join(parts)\n",
    input: "'a', 'b', sep='+', z=1",
    output: "'a+b!z'",
  },
];
const DATA = join(dir, "programs.jsonl");
writeFileSync(DATA, PROGRAMS.map((p) => JSON.stringify(p)).join("\n") + "\n");

/** Each program traced by the one-process tracer (not the batch the command uses). */
const traces = new Map<string, TraceResult>();

before(async () => {
  buildDist();
  gguf = execFileSync("bash", ["scripts/tiny-model.sh", join(dir, "model"), "--random"], { cwd: ROOT, encoding: "utf8", timeout: 120_000, stdio: ["ignore", "pipe", "pipe"] }).trim().split("\n").at(-1)!;
  for (const p of PROGRAMS) {
    const file = join(dir, `${p.id}.py`);
    writeFileSync(file, p.code);
    traces.set(p.id, await runTrace(file, { call: `f(${p.input})`, timeout: 20 }));
  }
});

after(() => rmSync(dir, { recursive: true, force: true }));

const ratio = (k: number, n: number): number | null => (n ? k / n : null);

/** The true state after an action, rebuilt from the trace: a frame with the output written on the way, or the exit. */
function truthOf(run: TraceResult, from: number, to: number): Step {
  const n = run.frames.length;
  let out = "";
  for (let k = from + 1; k <= Math.min(to, n - 1); k++) out += run.frames[k].stdout ?? "";
  if (to === n) {
    out += run.exit.stdout ?? "";
    return { exit: { status: run.exit.status, ...(run.exit.value !== undefined ? { value: run.exit.value } : {}), ...(out ? { stdout: out } : {}) } };
  }
  const { stdout: _s, ...f } = run.frames[to];
  return { frame: { ...f, ...(out && to > from ? { stdout: out } : {}) } };
}

/** The baselines, by their definitions: the next line of the same call, locals unchanged. */
function baselineOf(cur: Frame, truth: Step): { exact: boolean; line: boolean; locals: boolean } {
  const t = truth.frame;
  if (!t) return { exact: false, line: false, locals: false };
  const line = t.line === cur.line + 1;
  const locals = sameLocals(t.locals, cur.locals);
  const exact = line && locals && t.event === "line" && t.depth === cur.depth && t.func === cur.func && t.value === undefined && !t.stdout;
  return { exact, line, locals };
}

test("eval steps: every figure is recomputed from the real traces and the answers", T, async () => {
  const r = await ndbg("eval", "steps", "--no-sealed", "--data", DATA, "--model", gguf, "--threads", "1", "--max-tokens", "48", "--actions-per-program", "2", "--seed", "5", "--json");
  assert.equal(r.code, 0, r.stderr);
  const rep = lastJson<StepsReport & { command: string }>(r);
  assert.equal(rep.command, "eval steps");
  assert.deepEqual(rep.programs, { total: 3, evaluated: 3, skipped: {} });
  assert.equal(rep.model?.dialect, "native");
  assert.equal(rep.model?.threads, 1);

  // The cases: as sampled on the real trace, each from a frame where the action moves.
  const expected: string[] = [];
  for (const p of PROGRAMS) {
    const run = traces.get(p.id)!;
    for (const c of sampleCases(run.frames, 2, 5, p.id)) {
      assert.ok(c.from < run.frames.length, "cases start at a frame");
      assert.notEqual(c.to, c.from, "the action moves");
      assert.equal(c.to, transition(run.frames, c.from, c.action, []));
      if (c.action.kind === "breakpoint" && c.to < run.frames.length) assert.equal(run.frames[c.to].line, c.action.line);
      expected.push(`${p.id} ${c.action.kind} ${c.action.line ?? ""} ${c.from} ${c.to}`);
    }
  }
  assert.deepEqual(rep.items.map((x) => `${x.id} ${x.action} ${x.line ?? ""} ${x.from} ${x.to}`), expected);
  for (const a of ACTION_KINDS) assert.ok(rep.actions[a].count > 0, `${a} was evaluated`);

  // Each item: truth from the trace, baselines by definition, the model's score from its answer.
  for (const it of rep.items) {
    const run = traces.get(it.id)!;
    const truth = truthOf(run, it.from, it.to);
    assert.deepEqual(it.truth.frame ?? it.truth.exit, truth.frame ?? truth.exit, `truth of ${it.id} ${it.action} from ${it.from}`);
    assert.deepEqual(it.baseline, baselineOf(run.frames[it.from], truth), `baseline of ${it.id} ${it.action} from ${it.from}`);
    const p = it.predicted;
    assert.equal(p === undefined, it.error !== undefined, "an answer or an error, never both");
    const exact = !!p && (p.frame && truth.frame ? sameFrame(p.frame, truth.frame) : p.exit && truth.exit ? sameExit(p.exit, truth.exit) : false);
    assert.equal(it.exact, exact);
    const bothExit = !!p?.exit && !!truth.exit;
    assert.equal(it.lineOk, bothExit || (!!p?.frame && !!truth.frame && p.frame.line === truth.frame.line));
    assert.equal(it.localsOk, bothExit || (!!p?.frame && !!truth.frame && sameLocals(p.frame.locals, truth.frame.locals)));
    assert.ok(it.ms > 0 && it.tokens >= 0);
  }

  // Per action and overall: rates of the items.
  const check = (f: ActionFigures, xs: StepsItem[]): void => {
    const n = xs.length;
    const k = (pred: (x: StepsItem) => boolean): number => xs.filter(pred).length;
    assert.equal(f.count, n);
    assert.equal(f.exact, ratio(k((x) => x.exact), n));
    assert.equal(f.line, ratio(k((x) => x.lineOk), n));
    assert.equal(f.locals, ratio(k((x) => x.localsOk), n));
    assert.deepEqual(f.baseline, { exact: ratio(k((x) => x.baseline.exact), n), line: ratio(k((x) => x.baseline.line), n), locals: ratio(k((x) => x.baseline.locals), n) });
    assert.equal(f.errors, k((x) => x.error !== undefined));
    assert.equal(f.tokens, xs.reduce((s, x) => s + x.tokens, 0));
  };
  for (const a of ACTION_KINDS) check(rep.actions[a], rep.items.filter((x) => x.action === a));
  check(rep.overall, rep.items);
  assert.ok(rep.overall.tokens > 0, "the model generated tokens");
  assert.ok(rep.time.totalMs >= rep.time.predictMs && rep.time.predictMs > 0);

  // The baselines hold where they should: from `s = 0` step_over lands on the next line with `s` new.
  const loop = traces.get("loop")!;
  assert.deepEqual(baselineOf(loop.frames[1], truthOf(loop, 1, 2)), { exact: false, line: true, locals: false });
});

test("eval steps: the cases whose true next state is an exception or the error exit have figures of their own", T, async () => {
  const data = join(dir, "raising.jsonl");
  const progs = [
    { id: "divides", code: "def f(xs):\n    total = 0\n    for x in xs:\n        total += 10 // x\n    return total\n", input: "[2, 0, 5]" },
    { id: "checks", code: "def g(v):\n    if v < 0:\n        raise ValueError(v)\n    return v\n\ndef f(a, b):\n    s = g(a)\n    s += g(b)\n    return s\n", input: "1, -2" },
    PROGRAMS[0],
  ];
  writeFileSync(data, progs.map((p) => JSON.stringify(p)).join("\n") + "\n");
  const r = await ndbg("eval", "steps", "--no-sealed", "--data", data, "--model", gguf, "--threads", "1", "--max-tokens", "48", "--actions-per-program", "2", "--json");
  assert.equal(r.code, 0, r.stderr);
  const rep = lastJson<StepsReport>(r);
  const raising = rep.items.filter((x) => x.truth.frame?.event === "exception" || x.truth.exit?.status === "error");
  assert.ok(raising.length >= 4, `${raising.length} cases end in an exception`);
  assert.ok(raising.some((x) => x.truth.exit) && raising.some((x) => x.truth.frame), "both an exception event and the error exit");
  assert.ok(raising.every((x) => x.id !== "loop"), "a program that returns has none");
  assert.equal(rep.exceptions.count, raising.length);
  assert.equal(rep.exceptions.exact, raising.filter((x) => x.exact).length / raising.length);
  assert.equal(rep.exceptions.errors, raising.filter((x) => x.error !== undefined).length);
  const table = await ndbg("eval", "steps", "--no-sealed", "--data", data, "--model", gguf, "--threads", "1", "--max-tokens", "24", "--limit", "1");
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^exception +\d+ .*error exit\)$/m);
});

test("eval steps: the readable table names every action, then the overall row", T, async () => {
  const r = await ndbg("eval", "steps", "--no-sealed", "--data", DATA, "--model", gguf, "--threads", "1", "--max-tokens", "24", "--limit", "1");
  assert.equal(r.code, 0, r.stderr);
  for (const a of [...ACTION_KINDS, "overall"]) assert.match(r.stdout, new RegExp(`^${a} +\\d+ `, "m"));
  assert.match(r.stdout, /programs: 1 evaluated of 1/);
  assert.match(r.stdout, /line\+1/);
});

test("the checker: a correct prediction passes and a wrong one fails, by executing the assert", T, async () => {
  const cases = PROGRAMS.flatMap((p) => [
    assertFor("output", p, p.output!), // right
    assertFor("input", p, p.input), // right
    assertFor("output", p, "None"), // wrong
    assertFor("input", p, p.id === "loop" ? "5" : "'zz'"), // wrong value or a TypeError
  ]);
  const got = await checkAsserts(cases, { timeout: 5 });
  assert.deepEqual(got.map((g) => g.pass), PROGRAMS.flatMap(() => [true, true, false, false]));
  assert.equal(got[2].error, "AssertionError");

  // A bad item fails only itself: it hangs, crashes, exits, eats memory or smuggles in statements.
  const ok = assertFor("output", PROGRAMS[0], "6");
  const bad: Program[] = [
    { id: "hang", code: "def f(x):\n    while True:\n        pass\n", input: "1", output: "1" },
    { id: "exit", code: "import os\ndef f(x):\n    os._exit(0)\n", input: "1", output: "1" },
    { id: "sysexit", code: "import sys\ndef f(x):\n    sys.exit(1)\n", input: "1", output: "1" },
    { id: "memory", code: "def f(x):\n    return 'a' * (10 ** 11)\n", input: "1", output: "1" },
    { id: "noise", code: "def f(x):\n    print('x' * 100000)\n    return x\n", input: "1", output: "1" },
  ];
  const mixed = [ok, ...bad.map((p) => assertFor("output", p, p.output!)), ok, assertFor("output", PROGRAMS[0], "6\nraise SystemExit"), assertFor("input", PROGRAMS[0], "4), print(1"), ok];
  const res = await checkAsserts(mixed, { timeout: 1 });
  assert.deepEqual(res.map((x) => x.pass), [true, false, false, false, false, true, true, false, false, true]);
  assert.equal(res[1].error, "timeout");
  assert.match(res[7].error!, /does not parse/);
  assert.match(res[8].error!, /not one call of f/);
});

test("eval cruxeval: output (step_return and step_over) and input, pass@1 from executed asserts", T, async () => {
  for (const task of ["output", "input"] as const) {
    const r = await ndbg("eval", "cruxeval", "--data", DATA, "--task", task, "--model", gguf, "--threads", "1", "--max-tokens", "48", "--max-steps", "4", "--json");
    assert.equal(r.code, 0, r.stderr);
    const rep = lastJson<CruxReport & { command: string }>(r);
    assert.equal(rep.command, "eval cruxeval");
    assert.equal(rep.task, task);
    assert.equal(rep.count, 3);
    const methods = task === "output" ? ["step_return", "step_over"] : ["inv_step_return"];
    assert.deepEqual(Object.keys(rep.methods), methods);
    assert.deepEqual(rep.items.map((i) => i.id), PROGRAMS.map((p) => p.id));
    for (const m of methods) {
      const as = rep.items.map((i) => i.attempts[m]);
      const passed = as.filter((a) => a.pass).length;
      assert.equal(rep.methods[m].passed, passed);
      assert.equal(rep.methods[m].passAt1, passed / 3);
      assert.equal(rep.methods[m].predicted, as.filter((a) => a.prediction !== undefined).length);
      for (const a of as) {
        assert.ok(a.pass === false || a.prediction !== undefined, "only a prediction can pass");
        assert.ok(a.pass || a.error, "a failure says why");
        if (m === "step_over") assert.ok(a.steps! >= 1 && a.steps! <= 4, "step_over runs are bounded");
      }
    }
    // Whatever was predicted is judged again by the same checker: the same verdicts.
    const again = rep.items.flatMap((it) => methods.filter((m) => it.attempts[m].prediction !== undefined).map((m) => ({ it, m })));
    const verdicts = await checkAsserts(again.map(({ it, m }) => assertFor(task, PROGRAMS.find((p) => p.id === it.id)!, it.attempts[m].prediction!)));
    again.forEach(({ it, m }, i) => assert.equal(verdicts[i].pass, it.attempts[m].pass));
    assert.equal(rep.items[0].expected, task === "output" ? "6" : "4");
  }
  const text = await ndbg("eval", "cruxeval", "--data", DATA, "--task", "input", "--model", gguf, "--threads", "1", "--max-tokens", "24", "--limit", "1");
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /CRUXEval-I \(input prediction\) on 1 item\n/);
  assert.match(text.stdout, /pass@1 +\d+\.\d%/);
});

test("the checker calls a program's own function when the line names one (\"entry\")", T, async () => {
  const prog = { id: "named", code: "def double_all(xs):\n    return [x * 2 for x in xs]\n", input: "[1, 2]", output: "[2, 4]", entry: "double_all" };
  const verdicts = await checkAsserts([assertFor("output", prog, "[2, 4]"), assertFor("output", prog, "[2, 5]"), assertFor("input", prog, "[1, 2]"),
    assertFor("input", { ...prog, entry: undefined }, "[1, 2]")]);
  assert.deepEqual(verdicts.map((v) => v.pass), [true, false, true, false]);
  assert.match(verdicts[3].error ?? "", /NameError: name 'f' is not defined/, "without the entry the call is f(...)");
});

test("a state is scored whole (exact), by its line, and by its locals; no answer scores nothing", () => {
  const at: Frame = { event: "line", line: 3, depth: 0, func: "f", locals: { n: "4", s: "0" } };
  assert.deepEqual(score({ frame: at }, { frame: { ...at, locals: { s: "0", n: "4" } } }), { exact: true, line: true, locals: true });
  assert.deepEqual(score({ frame: { ...at, stdout: "x\n" } }, { frame: at }), { exact: false, line: true, locals: true });
  assert.deepEqual(score({ frame: { ...at, line: 4 } }, { frame: at }), { exact: false, line: false, locals: true });
  assert.deepEqual(score({ frame: { ...at, locals: { n: "4" } } }, { frame: at }), { exact: false, line: true, locals: false });
  assert.deepEqual(score({ exit: { status: "normal" } }, { exit: { status: "normal" } }), { exact: true, line: true, locals: true });
  assert.deepEqual(score({ exit: { status: "normal", stdout: "1" } }, { exit: { status: "normal" } }), { exact: false, line: true, locals: true });
  assert.deepEqual(score({ exit: { status: "normal" } }, { frame: at }), { exact: false, line: false, locals: false });
  assert.deepEqual(score(undefined, { frame: at }), { exact: false, line: false, locals: false });
});

test("the checker passes every CRUXEval answer, output and input", { ...T, skip: cruxevalSkip() }, async () => {
  const progs = await readPrograms(CRUXEVAL, { needOutput: true });
  for (const task of ["output", "input"] as const) {
    const res = await checkAsserts(progs.map((p) => assertFor(task, p, task === "output" ? p.output! : p.input)));
    const failed = res.map((r, i) => (r.pass ? "" : `${progs[i].id}: ${r.error}`)).filter(Boolean);
    assert.deepEqual(failed, [], `${task}: the right answers pass`);
  }
  // A perfect inverse call: the real call frame's locals, written as arguments, pass (but for
  // arguments whose repr is no Python, such as a lambda's).
  const batch = new TraceBatch({ maxEvents: 2000, timeout: 5 });
  const perfect: AssertCase[] = [];
  try {
    for (const p of progs) {
      const run = await batch.trace({ source: p.code, call: `f(${p.input})` });
      perfect.push(assertFor("input", p, argumentText(findFunction(await parsePython(p.code), "f")!, run.frames[0].locals)));
    }
  } finally {
    await batch.close();
  }
  const inv = await checkAsserts(perfect);
  const wrong = perfect.filter((c, i) => !inv[i].pass && !c.call.includes("<function"));
  assert.deepEqual(wrong, []);
  assert.ok(inv.filter((r) => r.pass).length >= progs.length - 2);
  // Answers of the wrong item fail, where Python holds the two answers different (True == 1).
  const equal = (a: string, b: string): boolean => a === b || [["True", "1"], ["False", "0"]].some((g) => g.includes(a) && g.includes(b));
  const shifted = progs.slice(0, 100).map((p, i) => ({ p, other: progs[(i + 1) % 100] })).filter(({ p, other }) => !equal(p.output!, other.output!));
  const res = await checkAsserts(shifted.map(({ p, other }) => assertFor("output", p, other.output!)));
  assert.ok(res.every((r) => !r.pass));
});

test("the inverse call's argument text and return line come from the code", async () => {
  const src = await parsePython(PROGRAMS[2].code);
  const f = findFunction(src, "f")!;
  assert.equal(argumentText(f, { text: "'a'", rest: "('b',)", sep: "'+'", kw: "{'z': 1}" }), "'a', *('b',), sep='+', **{'z': 1}");
  assert.equal(argumentText(f, { rest: "()", sep: "'+'", kw: "{}" }), "*(), sep='+', **{}");
  const g = findFunction(await parsePython(PROGRAMS[1].code), "f")!;
  assert.equal(argumentText(g, { b: "3", a: "1", t: "7" }), "1, 3", "parameter order; other locals are not arguments");
  assert.equal(argumentText(g, { b: "3" }), "b=3", "after a missing parameter, by name");
  // The last return statement of f itself, not of a nested function; else its last statement.
  assert.equal(returnLineFromCode(src, f), 5);
  const nested = await parsePython("def f(x):\n    def g():\n        return 1\n    y = g() + x\n    if y: return y\n    print(y)\n");
  assert.equal(returnLineFromCode(nested, findFunction(nested, "f")!), 5);
  const none = await parsePython("def f(x):\n    x.append(1)\n    x.sort()\n");
  assert.equal(returnLineFromCode(none, findFunction(none, "f")!), 3);
});

test("eval compare: models side by side on the same sets; each figure is that model's own eval on the set", T, async () => {
  const other = join(dir, "other.gguf");
  writeFileSync(other, readFileSync(gguf));
  const args = ["--model", gguf, "--model", other, "--set", `two=${DATA}:2`, "--set", `all=${DATA}`, "--cruxeval", DATA, "--threads", "1", "--max-tokens", "24"];
  const r = await ndbg("eval", "compare", ...args, "--json");
  assert.equal(r.code, 0, r.stderr);
  const rep = lastJson<CompareReport>(r);
  assert.deepEqual(rep.models, [gguf, other]);
  assert.deepEqual(rep.steps.map((s) => [s.set, s.reports.length, s.reports[0].programs.total]), [["two", 2, 2], ["all", 2, 3]]);
  assert.deepEqual(rep.cruxeval.map((c) => [c.task, c.reports.length, c.reports[0].count]), [["output", 2, 3], ["input", 2, 3]]);
  // The same weights under two names answer alike, case by case: one sitting, one adapter.
  for (const s of rep.steps) assert.deepEqual(s.reports[1].items.map((x) => [x.id, x.action, x.exact]), s.reports[0].items.map((x) => [x.id, x.action, x.exact]));
  // Each set's figures are those `eval steps` gives on it alone.
  const alone = lastJson<StepsReport>(await ndbg("eval", "steps", "--no-sealed", "--data", DATA, "--limit", "2", "--model", other, "--threads", "1", "--max-tokens", "24", "--json"));
  assert.deepEqual(rep.steps[0].reports[1].overall.count, alone.overall.count);
  assert.deepEqual(rep.steps[0].reports[1].items.map((x) => [x.id, x.action, x.from, x.to, x.exact]), alone.items.map((x) => [x.id, x.action, x.from, x.to, x.exact]));

  const t = await ndbg("eval", "compare", ...args);
  assert.equal(t.code, 0, t.stderr);
  assert.match(t.stdout, /^\| action \| two \| all \|$/m);
  for (const a of [...ACTION_KINDS, "overall", "exception"]) assert.match(t.stdout, new RegExp(`^\\| ${a} \\| `, "m"));
  const f = rep.steps[1].reports[1].overall;
  const p = (x: number | null): string => String(Math.round(1000 * x!) / 10);
  const last = rep.steps[1].reports;
  assert.ok(t.stdout.includes(`| overall | `) && t.stdout.includes(`${p(last[0].overall.exact)} → **${p(f.exact)}** / ${p(last[0].overall.line)} → ${p(f.line)} / ${p(last[0].overall.locals)} → ${p(f.locals)} (${f.count}) |`), t.stdout);
  assert.match(t.stdout, /^\| output \| step_return \| [\d.]+ → \*\*[\d.]+\*\* \| \d+ → \d+ of 3 \| \d+ → \d+ \|$/m);
  assert.match(t.stdout, /^\| input \| inv_step_return \| /m);

  const bad = await ndbg("eval", "compare", "--model", gguf, "--set", "nothing");
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /NAME=PATH/);
  const none = await ndbg("eval", "compare", "--model", gguf);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /nothing to compare on/);
  const data = await ndbg("eval", "compare", "--data", DATA);
  assert.equal(data.code, 2);
  assert.match(data.stderr, /--set NAME=PATH/);
});

test("a line with \"script\": true is a script: traced whole, with no entry and no input", async () => {
  const file = join(dir, "scripts.jsonl");
  const code = "class Tally:\n    def __init__(self):\n        self.n = 0\n\n\ntally = Tally()\nprint(tally.n)\n";
  writeFileSync(file, JSON.stringify({ id: "s", code, input: "", script: true }) + "\n" + JSON.stringify(PROGRAMS[0]) + "\n");
  const [script, call] = await readPrograms(file);
  assert.deepEqual(script, { id: "s", code, input: "", script: true });
  assert.deepEqual(traceOf(script!), { source: code });
  assert.equal(call!.script, undefined);
  await assert.rejects(readPrograms(file, { needOutput: true }), /scripts\.jsonl:1: a script has no call whose output/);
  for (const [bad, why] of [
    [{ id: "s", code, input: "", script: true, entry: "f" }, /a script runs whole: it has no "entry", and its "input" is ""/],
    [{ id: "s", code, input: "1", script: true }, /a script runs whole/],
    [{ id: "s", code, input: "", script: "yes" }, /"script" must be true or false/],
  ] as const) {
    writeFileSync(file, JSON.stringify(bad) + "\n");
    await assert.rejects(readPrograms(file), why);
  }
});

test("eval: bad input is a clear error", T, async () => {
  let r = await ndbg("eval");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /steps, cruxeval, hybrid or compare/);
  r = await ndbg("eval", "steps");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--data is missing/);
  r = await ndbg("eval", "cruxeval", "--data", DATA);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--task is missing/);
  r = await ndbg("eval", "steps", "--data", join(dir, "missing.jsonl"), "--model", gguf);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot read .*missing\.jsonl/);
  const bad = join(dir, "bad.jsonl");
  writeFileSync(bad, JSON.stringify(PROGRAMS[0]) + "\n{oops\n");
  r = await ndbg("eval", "steps", "--data", bad, "--model", gguf);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /bad\.jsonl:2: not a JSON object/);
  const noOut = join(dir, "noout.jsonl");
  writeFileSync(noOut, JSON.stringify({ id: "a", code: "def f(x):\n    return x\n", input: "1" }) + "\n");
  r = await ndbg("eval", "cruxeval", "--data", noOut, "--task", "output", "--model", gguf);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /"output" string is needed/);
  r = await ndbg("eval", "steps", "--data", DATA, "--model", join(dir, "none.gguf"));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /model file not found/);
  r = await ndbg("eval", "steps", "--data", DATA, "--actions-per-program", "0");
  assert.equal(r.code, 2);
});
