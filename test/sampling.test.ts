// Training examples sampled from real traces: the texts parse back with the one parser, every
// target is the state the debugger semantics give on the real run (checked against record mode's
// predictor), the policy draws the configured actions, and everything is deterministic for a seed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TraceResult } from "../adapter/real/run.js";
import { TraceBatch, findPython } from "../adapter/real/hostRun.js";
import { RecordedPredictor } from "../adapter/predictors/recorded.js";
import { ACTION_KINDS, TOKENS, parse, sameExit, sameFrame, type ActionKind, type Step } from "../adapter/format/trajectory.js";
import {
  DEFAULT_MIX,
  Rng,
  checkSample,
  codePointSpans,
  drawKind,
  resolveMix,
  sampleOne,
  samplePrograms,
  type Sample,
  type SampleOptions,
} from "../adapter/tools/sampling.js";
import { buildDist, ndbgWithin, sh } from "./support/dist.js";

const dir = mkdtempSync(join(tmpdir(), "ndbg-sampling-"));

const ndbg = ndbgWithin(120_000);
const readJsonl = (p: string): Record<string, unknown>[] =>
  readFileSync(p, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

// Hand-written programs with what the generator makes rarely: nested calls, an exception
// caught across frames, output, a class, a program that fails.
const HANDMADE: { id: string; code: string; input: string }[] = [
  {
    id: "calls",
    code: `def norm(w):
    w = w.strip().lower()
    print('norm', w)
    return w

def f(words):
    seen = {}
    for w in words:
        k = norm(w)
        seen[k] = seen.get(k, 0) + 1
    return sorted(seen.items())
`,
    input: "[' A', 'b ', 'a']",
  },
  {
    id: "catch",
    code: `def parse(s):
    if not s.isdigit():
        raise ValueError(s)
    return int(s)

def f(parts):
    total = 0
    for p in parts:
        try:
            total += parse(p)
        except ValueError:
            total -= 1
    return total
`,
    input: "['1', 'x', '22']",
  },
  {
    id: "rec",
    code: `def f(n):
    if n <= 1:
        return [n]
    return f(n - 1) + [n * n]
`,
    input: "4",
  },
  {
    id: "class",
    code: `class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def __repr__(self):
        return f'Stack({self.items})'

def f(xs):
    st = Stack()
    for x in [y for y in xs if y % 2]:
        st.push(x)
    return st.items
`,
    input: "[1, 2, 3, 5]",
  },
  { id: "fails", code: "def f(d):\n    k = 'a'\n    return d[k]\n", input: "{}" },
  { id: "astral", code: "def f(s):\n    t = s + '\u{1F600}'\n    return t * 2\n", input: "'ab'" },
];

let programs: { id: string; code: string; input: string }[] = [];
const runs = new Map<string, TraceResult>();

before(async () => {
  buildDist();
  const py = await findPython();
  const gen = join(dir, "programs.jsonl");
  // Test material, never training data: no corpus to exclude.
  const r = await sh(py, ["training/programs.py", "--count", "40", "--seed", "21", "--out", gen, "--quiet", "--no-exclude"], { timeout: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  programs = [...HANDMADE, ...(readJsonl(gen) as typeof programs)];
  writeFileSync(join(dir, "all.jsonl"), programs.map((p) => JSON.stringify(p)).join("\n") + "\n");
  const batch = new TraceBatch({ timeout: 10, maxEvents: 2000 });
  try {
    for (const p of programs) runs.set(p.id, await batch.trace({ source: p.code, call: `f(${p.input})` }));
  } finally {
    await batch.close();
  }
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** The state record mode gives for `action` from trace index `from`: the oracle for every target. */
async function oracle(run: TraceResult, from: number, action: Step["action"]): Promise<{ step: Step; ref: number }> {
  const rp = new RecordedPredictor(run);
  const n = run.frames.length;
  const current: Step = from < n ? { frame: run.frames[from] } : { exit: run.exit };
  const p = await rp.predict([{ step: current, ref: from }], action!);
  return { step: p.step, ref: p.ref! };
}

/** Checks one sample against the real run; returns the parsed steps. */
async function verify(run: TraceResult, s: Sample, maxChars: number): Promise<Step[]> {
  assert.ok(s.text.length <= maxChars, `${s.text.length} > ${maxChars}`);
  const t = parse(s.text);
  assert.equal(t.source, run.source);
  assert.equal(t.meta, undefined, "examples carry no metadata, as model prompts");
  assert.equal(t.steps.length, s.targets.length + 1);
  assert.equal(s.actions.length, s.targets.length);
  checkSample(run, s);
  // The context: the recorded state (for an inverse call, a return without its locals).
  const ctx = t.steps[0];
  const n = run.frames.length;
  assert.ok(ctx.frame && !ctx.action && s.refs[0] < n);
  const real = run.frames[s.refs[0]];
  if (s.inverseCall) {
    assert.equal(ctx.frame.event, "return");
    assert.deepEqual(ctx.frame.locals, {});
    assert.equal(ctx.frame.value, real.value);
    assert.equal(s.actions[0].kind, "inv_step_return");
  } else {
    assert.ok(sameFrame(ctx.frame, real), "the context state is the recorded one");
  }
  // Each target: the state the semantics give on the real run, starting from the context's index.
  let from = s.refs[0];
  for (let k = 1; k < t.steps.length; k++) {
    const got = t.steps[k];
    assert.deepEqual(got.action, s.actions[k - 1]);
    const want = await oracle(run, from, got.action);
    assert.equal(want.ref, s.refs[k], `step ${k}: ${got.action!.kind} from ${from}`);
    if (want.step.frame) assert.ok(got.frame && sameFrame(got.frame, want.step.frame), `step ${k} (${got.action!.kind}) differs from the real state`);
    else assert.ok(got.exit && sameExit(got.exit, want.step.exit!), `step ${k} should be the exit`);
    // Its span is exactly the state's text: it opens with the state token and the newline follows.
    const [a, b] = s.targets[k - 1];
    const span = s.text.slice(a, b);
    assert.ok(span.startsWith(TOKENS.frame) || span.startsWith("<|exit_"), span);
    assert.equal(s.text[b], "\n");
    assert.ok(s.text.slice(0, a).endsWith("|>" + (got.action!.line ?? "") + "\n") && s.text.slice(0, a).lastIndexOf(TOKENS.action) > s.text.slice(0, a).lastIndexOf(TOKENS.frame));
    assert.equal(parse(s.text.slice(0, b + 1)).steps.length, k + 1, "a prefix ending at a target parses");
    from = want.ref;
  }
  return t.steps;
}

test("sampled examples parse back and every target is the real transition", async () => {
  const opts: SampleOptions = { maxChars: 2400 };
  let checked = 0;
  const seen = new Set<ActionKind>();
  let inverse = 0;
  for (const p of programs) {
    const run = runs.get(p.id)!;
    for (const s of samplePrograms(run, 3, 7, p.id, opts)) {
      await verify(run, s, 2400);
      checked += s.targets.length;
      for (const a of s.actions) seen.add(a.kind);
      if (s.inverseCall) inverse++;
    }
  }
  assert.ok(checked > 500, `only ${checked} targets checked`);
  assert.deepEqual([...seen].sort(), [...ACTION_KINDS].sort(), "every action kind occurs");
  assert.ok(inverse > 0, "some examples are inverse calls");
});

test("the inverse call recovers the arguments from the return value", async () => {
  const run = runs.get("calls")!;
  const s = sampleOne(run, new Rng(3), { inverseCall: 1, mix: { inv_step_return: 1, step_into: 1 } });
  assert.ok(s.inverseCall);
  const steps = await verify(run, s, 2400);
  const call = steps[1].frame!;
  assert.equal(call.event, "call");
  assert.equal(call.func, steps[0].frame!.func);
  const args = run.frames[s.refs[1]].locals;
  assert.deepEqual(call.locals, args);
  if (steps[0].frame!.depth === 0) assert.deepEqual(call.locals, { words: "[' A', 'b ', 'a']" });
});

test("the policy draws the configured mix", () => {
  // Drawing alone: frequencies follow the weights.
  const mix = resolveMix({ step_into: 5, step_over: 3, breakpoint: 1, inv_step_over: 1 });
  const rng = new Rng(1);
  const counts: Record<string, number> = {};
  const N = 40_000;
  for (let i = 0; i < N; i++) {
    const k = drawKind(rng, mix)!;
    counts[k] = (counts[k] ?? 0) + 1;
  }
  assert.deepEqual(Object.keys(counts).sort(), ["breakpoint", "inv_step_over", "step_into", "step_over"]);
  for (const [k, w] of [["step_into", 0.5], ["step_over", 0.3], ["breakpoint", 0.1], ["inv_step_over", 0.1]] as const)
    assert.ok(Math.abs(counts[k] / N - w) < 0.01, `${k}: ${counts[k] / N} vs ${w}`);
  // In whole examples: only the actions given weight occur.
  for (const only of [{ step_into: 1 }, { step_over: 2, inv_step_over: 1 }, { breakpoint: 1, continue: 1, inv_step_into: 1 }]) {
    const allowed = new Set(Object.keys(only));
    let total = 0;
    for (const p of programs) {
      for (const s of samplePrograms(runs.get(p.id)!, 2, 5, p.id, { mix: only, inverseCall: 1 })) {
        for (const a of s.actions) assert.ok(allowed.has(a.kind), `${a.kind} is not in ${[...allowed]}`);
        total += s.actions.length;
      }
    }
    assert.ok(total > 20);
  }
  // Without inverse weights there is no inverse call; the default mix is mostly single steps.
  assert.ok(DEFAULT_MIX.step_into + DEFAULT_MIX.step_over > 0.5);
  assert.throws(() => resolveMix({ step_into: -1 }), /non-negative/);
  assert.throws(() => resolveMix({ jump: 1 } as never), /unknown action/);
  assert.throws(() => resolveMix({ step_into: 0 }), /weight 0/);
});

test("deterministic for a seed, whatever else is sampled", () => {
  const run = runs.get("catch")!;
  const a = samplePrograms(run, 4, 11, "catch");
  const b = samplePrograms(run, 4, 11, "catch");
  assert.deepEqual(a, b);
  assert.notDeepEqual(samplePrograms(run, 4, 12, "catch"), a);
  // Every program's examples depend on (seed, id) only.
  for (const p of programs.slice(0, 3)) samplePrograms(runs.get(p.id)!, 2, 11, p.id);
  assert.deepEqual(samplePrograms(run, 4, 11, "catch"), a);
});

test("examples fit the character budget; a program that cannot fit gives none", () => {
  for (const p of programs.slice(0, 20)) {
    const run = runs.get(p.id)!;
    for (const s of samplePrograms(run, 2, 3, p.id, { maxChars: 600 })) assert.ok(s.text.length <= 600);
  }
  const run = runs.get("class")!;
  assert.deepEqual(samplePrograms(run, 2, 3, "class", { maxChars: 100 }), []);
});

test("spans count code points, as Python indexes the text", () => {
  const run = runs.get("astral")!;
  const [s] = samplePrograms(run, 1, 1, "astral", { mix: { step_into: 1 }, fromStart: 1 });
  assert.ok(/\u{1F600}/u.test(s.text));
  const cps = Array.from(s.text);
  for (const [[a, b], [ua, ub]] of codePointSpans(s.text, s.targets).map((sp, i) => [sp, s.targets[i]] as const)) {
    assert.equal(cps.slice(a, b).join(""), s.text.slice(ua, ub));
  }
});

test("ndbg data: traces and samples a programs file, deterministically", async () => {
  const input = join(dir, "all.jsonl");
  const out1 = join(dir, "s1.jsonl");
  const out2 = join(dir, "s2.jsonl");
  const r1 = await ndbg("data", "--programs", input, "--out", out1, "--samples-per-program", "2", "--seed", "3", "--check");
  assert.equal(r1.code, 0, r1.stderr);
  const r2 = await ndbg("data", "--programs", input, "--out", out2, "--samples-per-program", "2", "--seed", "3");
  assert.equal(r2.code, 0, r2.stderr);
  assert.equal(readFileSync(out1, "utf8"), readFileSync(out2, "utf8"));
  const summary = JSON.parse(r1.stderr);
  assert.equal(summary.programs, programs.length);
  assert.equal(summary.traced, programs.length);
  const rows = readJsonl(out1) as { id: string; text: string; targets: [number, number][] }[];
  assert.equal(rows.length, summary.samples);
  assert.ok(rows.length >= programs.length);
  assert.equal(rows.reduce((a, r) => a + r.targets.length, 0), summary.targets);
  assert.equal(new Set(rows.map((r) => r.id)).size, rows.length);
  for (const r of rows) {
    assert.deepEqual(Object.keys(r), ["id", "text", "targets"]);
    const t = parse(r.text);
    assert.equal(t.steps.length, r.targets.length + 1);
    const cps = Array.from(r.text);
    for (const [a, b] of r.targets) assert.match(cps.slice(a, b).join(""), /^(<\|frame_sep\|>|<\|exit_)/);
  }
  // The same examples as the library gives for the same seed and id.
  const calls = rows.filter((r) => r.id.startsWith("calls#"));
  const lib = samplePrograms(runs.get("calls")!, 2, 3, "calls");
  assert.deepEqual(calls.map((r) => r.text), lib.map((s) => s.text));
  // A mix on the command line is what the examples use.
  const out3 = join(dir, "s3.jsonl");
  const r3 = await ndbg("data", "--programs", input, "--out", out3, "--mix", "step_over=1,inv_step_over=1", "--inverse-call", "0");
  assert.equal(r3.code, 0, r3.stderr);
  const s3 = JSON.parse(r3.stderr);
  assert.deepEqual(Object.keys(s3.actions).filter((k) => s3.actions[k] > 0).sort(), ["inv_step_over", "step_over"]);
});

test("ndbg data: a program that names its function (\"entry\") is called by that name", async () => {
  const input = join(dir, "named.jsonl");
  const code = "def running_total(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n";
  writeFileSync(input, JSON.stringify({ id: "named", code, input: "[1, 2]", output: "3", entry: "running_total" }) + "\n");
  const out = join(dir, "named-out.jsonl");
  const r = await ndbg("data", "--programs", input, "--out", out, "--samples-per-program", "3", "--seed", "1", "--check");
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stderr).traced, 1);
  const frames = readJsonl(out).flatMap((row) => parse(row.text as string).steps.flatMap((s) => (s.frame ? [s.frame] : [])));
  assert.ok(frames.length > 3);
  for (const f of frames) assert.equal(f.func, "running_total");
  assert.ok(frames.some((f) => f.event === "return" && f.value === "3"), "the run is the call running_total([1, 2])");
  writeFileSync(input, JSON.stringify({ id: "named", code, input: "[1, 2]", entry: "running total" }) + "\n");
  const bad = await ndbg("data", "--programs", input, "--out", out + "2");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /named\.jsonl:1: "entry" must be the name of the program's function/);
});

test("ndbg data: bad input is a clear error and writes nothing", async () => {
  const out = join(dir, "bad-out.jsonl");
  let r = await ndbg("data", "--out", out);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--programs is missing/);
  const bad = join(dir, "bad.jsonl");
  writeFileSync(bad, JSON.stringify(programs[0]) + "\n{not json\n");
  r = await ndbg("data", "--programs", bad, "--out", out);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /bad\.jsonl:2: not a JSON object/);
  assert.ok(!existsSync(out) && !existsSync(out + ".part"));
  writeFileSync(bad, JSON.stringify({ code: "def f(): pass" }) + "\n");
  r = await ndbg("data", "--programs", bad, "--out", out);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /"code" and "input"/);
  r = await ndbg("data", "--programs", join(dir, "missing.jsonl"), "--out", out);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot read/);
  r = await ndbg("data", "--programs", bad, "--out", out, "--mix", "jump=1");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown action "jump"/);
  r = await ndbg("data", "--programs", bad, "--out", out, "--max-chars", "ten");
  assert.equal(r.code, 2);
  assert.ok(!existsSync(out));
});
