// Python versions against real interpreters (adapter/model/pyversion.ts, adapter/rules/grammar.ts, reach.ts):
// every state that real runs on 3.10, 3.11, 3.12 and 3.13 reach, by every action, is one that
// version's frame grammar and reachable-state rules admit; and each version's rules refuse the
// other's comprehension states. The tracer writes the version of the Python that ran it, and
// does not crash 3.13.0-3.13.2 (CPython issue 128396). Each interpreter is looked for where
// Pythons are installed (test/support/pythons.ts); where one is missing its tests are skipped,
// saying which and where it was looked for.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { refusal } from "../../adapter/rules/refusal.js";
import { scopeTable } from "../../adapter/rules/grammar.js";
import { checkFrame } from "../../adapter/model/dialect.js";
import { parsePython } from "../../adapter/pyread/parse.js";
import { stateAt } from "../../adapter/tools/sampling.js";
import { tracerScript, type TraceResult } from "../../adapter/real/run.js";
import { TraceBatch } from "../../adapter/real/hostRun.js";
import { readPrograms, traceOf } from "../../adapter/tools/programs.js";
import { buildDist, NDBG, ROOT } from "../support/dist.js";
import { fixturePrograms, nextOf, refusedStates, rules } from "../support/reach.js";
import { realPython, type RealPython } from "../support/pythons.js";

const T = { timeout: 600_000 };
const found: Record<string, RealPython | string> = {};
for (const v of ["3.10", "3.11", "3.12", "3.13"]) found[v] = await realPython(v);
const python = (v: string): RealPython => found[v] as RealPython;
const skip = (...vs: string[]): string | false => vs.map((v) => found[v]).find((f): f is string => typeof f === "string") ?? false;

// list, dict and set comprehensions; a generator expression and a lambda, which keep their frames.
const COMPS = "def f(xs):\n    ys = [x * 2 for x in xs]\n    d = {k: k for k in ys}\n    s = {v for v in d}\n    g = sum(x for x in s)\n    h = (lambda a: a + 1)(g)\n    return h\n";
const INLINE = /<(list|dict|set)comp>/;

async function traceWith(v: string, source: string, call?: string): Promise<TraceResult> {
  const batch = new TraceBatch({ python: python(v).exe, maxEvents: 400, timeout: 10 });
  try {
    return await batch.trace({ source, ...(call ? { call } : {}) });
  } finally {
    await batch.close();
  }
}

for (const v of ["3.12", "3.13"]) {
  test(`${v}: the tracer's start record, the trace's header and ndbg data's sessions name the version`, { ...T, skip: skip(v) }, () => {
    buildDist();
    const dir = mkdtempSync(join(tmpdir(), "ndbg-pyversion-traces-"));
    try {
      const program = join(dir, "comps.py");
      writeFileSync(program, COMPS);
      const records = execFileSync(python(v).exe, [tracerScript(), program, "--call", "f([1, 2])"], { encoding: "utf8" }).trim().split("\n");
      assert.deepEqual(JSON.parse(records[0]), { event: "start", python: v });
      const trace = execFileSync(process.execPath, [NDBG, "trace", program, "--call", "f([1, 2])", "--python", python(v).exe], { encoding: "utf8" });
      assert.match(trace, new RegExp(`^#ndbg 2 python${v.replace(".", "\\.")} `));
      assert.doesNotMatch(trace, INLINE);
      const programs = join(dir, "programs.jsonl");
      writeFileSync(programs, JSON.stringify({ id: "comps", code: COMPS, input: "[1, 2]" }) + "\n");
      const out = join(dir, "sessions.jsonl");
      execFileSync(process.execPath, [NDBG, "data", "--programs", programs, "--out", out, "--samples-per-program", "2", "--python", python(v).exe], { encoding: "utf8" });
      const sessions = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l).text as string);
      assert.equal(sessions.length, 2);
      for (const s of sessions) assert.ok(s.startsWith(`#ndbg 2 python${v}\n`), s.slice(0, 40));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test("3.12 runs comprehensions inline: its trace passes 3.12's rules and fails 3.11's; a 3.11 trace the other way round", { ...T, skip: skip("3.11", "3.12") }, async () => {
  const src = await parsePython(COMPS);
  const runs = { "3.11": await traceWith("3.11", COMPS, "f([1, 2])"), "3.12": await traceWith("3.12", COMPS, "f([1, 2])") };
  assert.deepEqual([runs["3.11"].python, runs["3.12"].python], ["3.11", "3.12"]);
  const funcs = (v: "3.11" | "3.12"): string[] => [...new Set(runs[v].frames.map((f) => f.func))].sort();
  assert.deepEqual(funcs("3.11"), ["f", "f.<locals>.<dictcomp>", "f.<locals>.<genexpr>", "f.<locals>.<lambda>", "f.<locals>.<listcomp>", "f.<locals>.<setcomp>"]);
  assert.deepEqual(funcs("3.12"), ["f", "f.<locals>.<genexpr>", "f.<locals>.<lambda>"]);
  // 3.12: the comprehension's variable is a local of f on its line while it runs, and gone after it.
  const f = runs["3.12"].frames.filter((x) => x.func === "f");
  assert.deepEqual(f.filter((x) => x.line === 2).map((x) => x.locals.x), [undefined, "1", "2"]);
  assert.deepEqual(f.find((x) => x.line === 3)!.locals, { xs: "[1, 2]", ys: "[2, 4]" });

  const refused = async (run: TraceResult, v: string): Promise<string[]> => {
    const reach = rules(src, v);
    const table = scopeTable(src, v);
    const out: string[] = [];
    for (let i = 0; i + 1 < run.frames.length; i++) {
      const truth = stateAt(run, i + 1, i, { kind: "step_into" });
      const next = await nextOf(reach, [stateAt(run, i, i)], { kind: "step_into" });
      const why = next ? refusal(next, truth, run.frames[i]) : `no rules for ${run.frames[i].func}`;
      if (why) out.push(why);
      try {
        checkFrame(run.frames[i + 1], table, "");
      } catch (e) {
        out.push((e as Error).message);
      }
    }
    return out;
  };
  assert.deepEqual(await refused(runs["3.12"], "3.12"), []);
  assert.deepEqual(await refused(runs["3.11"], "3.11"), []);
  // 3.11's rules expect a <listcomp> frame: f with the comprehension's variable is not one of its states.
  const as311 = await refused(runs["3.12"], "3.11");
  assert.ok(as311.some((r) => /f has no local "x"/.test(r)) && as311.some((r) => /f has no local "k"/.test(r)), as311.join("\n"));
  // 3.12's rules know no <listcomp>, <dictcomp> or <setcomp> frame: the grammar names none of them.
  const as312 = await refused(runs["3.11"], "3.12");
  for (const name of ["listcomp", "dictcomp", "setcomp"]) assert.ok(as312.some((r) => r.includes(`"f.<locals>.<${name}>", which this program does not define`)), as312.join("\n"));
});

// 3.10, which the rules do not name, is read as 3.11 (the nearest they know).
for (const v of ["3.10", "3.11", "3.12", "3.13"]) {
  test(`${v}: every state of real runs of the fixture programs, by every action, is one ${v}'s grammar and rules admit`, { ...T, skip: skip(v) }, async () => {
    const batch = new TraceBatch({ python: python(v).exe, maxEvents: 400, timeout: 10 });
    let checked = 0;
    const refused: string[] = [];
    try {
      for (const p of fixturePrograms()) {
        const run = await batch.trace({ source: p.code });
        assert.equal(run.python, v);
        if (p.name.startsWith("comprehensions/")) assert.equal(run.exit.status, "normal", `${p.name}: ${run.exit.value}`);
        if (run.exit.status === "limit" || !run.frames.length) continue;
        const src = await parsePython(p.code);
        const table = scopeTable(src, v);
        for (const f of run.frames) assert.doesNotThrow(() => checkFrame(f, table, ""), `${p.name}: ${f.event} ${f.line} ${f.func}`);
        if (Number(v.split(".")[1]) >= 12) assert.ok(!run.frames.some((f) => INLINE.test(f.func)), p.name);
        const r = await refusedStates(rules(src, v), run, p.name);
        checked += r.checked;
        refused.push(...r.refused);
      }
    } finally {
      await batch.close();
    }
    assert.ok(checked > 30_000, `${checked} cases checked`);
    assert.deepEqual(refused.slice(0, 10), [], `${refused.length} true states refused`);
  });
}

test("3.12 and 3.13 on the real-code held-out: every frame is one the grammar admits; every state of the programs with comprehensions one the rules allow", { ...T, skip: skip("3.12", "3.13") }, async () => {
  const programs = await readPrograms(join(ROOT, "training", "heldout", "realcode.jsonl"));
  for (const v of ["3.12", "3.13"]) {
    const batch = new TraceBatch({ python: python(v).exe, maxEvents: 400, timeout: 10 });
    let inline = 0;
    const refused: string[] = [];
    try {
      for (const p of programs) {
        const run = await batch.trace(traceOf(p));
        const src = await parsePython(p.code);
        const table = scopeTable(src, v);
        for (const f of run.frames) assert.doesNotThrow(() => checkFrame(f, table, ""), `${v} ${p.id}: ${f.event} ${f.line} ${f.func}`);
        if (run.exit.status === "limit" || !src.nested.some((n) => INLINE.test(n.name))) continue;
        inline++;
        refused.push(...(await refusedStates(rules(src, v), run, `${v} ${p.id}`)).refused);
      }
    } finally {
      await batch.close();
    }
    assert.ok(inline >= 50, `${inline} programs with comprehensions`);
    assert.deepEqual(refused.slice(0, 10), [], `${refused.length} true states refused`);
  }
});

test("3.13.0-3.13.2 do not crash on a comprehension variable that shares a closure's cell: what cannot be read is left out, the rest is 3.12's", { ...T, skip: skip("3.12", "3.13") }, async () => {
  const code = readFileSync(join(ROOT, "test", "fixtures", "comprehensions", "cells.py"), "utf8");
  const [a, b] = [await traceWith("3.12", code), await traceWith("3.13", code)];
  assert.equal(b.exit.status, "normal", b.exit.value);
  assert.deepEqual(
    b.frames.map((f) => `${f.event} ${f.line} ${f.func}`),
    a.frames.map((f) => `${f.event} ${f.line} ${f.func}`),
  );
  const crashes = /^3\.13\.[0-2]$/.test(execFileSync(python("3.13").exe, ["-c", "import platform; print(platform.python_version())"], { encoding: "utf8" }).trim());
  const left: string[] = [];
  for (const [i, f] of b.frames.entries()) {
    const want = a.frames[i].locals;
    for (const [name, value] of Object.entries(f.locals)) assert.equal(value, want[name], `${f.line} ${name}`);
    for (const name of Object.keys(want)) if (!(name in f.locals)) left.push(`${f.event} ${f.line} ${name}`);
  }
  // Only the comprehension's own variable, while it holds a plain value (3.12 shows it), and only where 3.13 would crash.
  if (crashes) assert.deepEqual(left, ["line 2 x", "line 2 x", "line 6 k", "line 6 k", "line 8 k", "exception 8 k", "line 8 k"]);
  else assert.deepEqual(left, []);
});
