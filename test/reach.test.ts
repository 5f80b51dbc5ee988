// The reachable-state rules (adapter/model/reach.ts) against real runs: every state a real run
// goes to under every action is one they allow, from the true state alone (as `eval steps`
// asks) and from the whole session before it (as a debugging session asks); and the impossible
// states users met (a frame of a function never called, names it never binds, a lost parameter,
// a return where there is none, callers dropped) are refused, with a reason.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Reach, callStack, refusal } from "../adapter/model/reach.js";
import { reachGrammar } from "../adapter/model/grammar.js";
import { getBackend, disposeAll } from "../adapter/model/backend.js";
import { parsePython } from "../adapter/pyread/pysource.js";
import { stateAt, type Recording } from "../adapter/tools/sampling.js";
import { transition } from "../adapter/real/semantics.js";
import { TraceBatch } from "../adapter/real/tracer.js";
import type { Action, Frame, Step } from "../adapter/format/trajectory.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const T = { timeout: 240_000 };

/** The programs: the fixture scripts, and programs written the way users write them (classes, several functions, module code, exceptions, generators, closures). */
function programs(): { name: string; code: string }[] {
  const out: { name: string; code: string }[] = [];
  for (const dir of ["programs", "userstyle"])
    for (const f of readdirSync(join(FIXTURES, dir)).filter((x) => x.endsWith(".py")).sort()) out.push({ name: `${dir}/${f}`, code: readFileSync(join(FIXTURES, dir, f), "utf8") });
  return out;
}

/** Every action from state i of a run: the steps, continue, and breakpoints on lines it runs. */
function actions(run: Recording): Action[] {
  const lines = [...new Set(run.frames.filter((f) => f.event === "line" && f.file === undefined).map((f) => f.line))];
  const out: Action[] = (["step_into", "step_over", "step_return", "continue", "inv_step_into", "inv_step_over", "inv_step_return"] as const).map((kind) => ({ kind }));
  for (const line of lines.slice(0, 4)) out.push({ kind: "breakpoint", line }, { kind: "inv_breakpoint", line });
  return out;
}

test("every state a real run reaches, by every action, is one the rules allow (from the state alone and from the whole session)", T, async () => {
  const batch = new TraceBatch({ maxEvents: 400, timeout: 10 });
  let checked = 0;
  const refused: string[] = [];
  try {
    for (const p of programs()) {
      const run = await batch.trace({ source: p.code });
      if (run.exit.status === "limit" || !run.frames.length) continue;
      const reach = new Reach(await parsePython(p.code));
      const session: Step[] = [];
      for (let i = 0; i < run.frames.length; i++) {
        session.push(stateAt(run, i, Math.max(0, i - 1), i ? { kind: "step_into" } : undefined));
        for (const a of actions(run)) {
          const truth = stateAt(run, transition(run.frames, i, a), i, a);
          for (const history of [[stateAt(run, i, i)], session]) {
            const next = reach.next(history, a);
            checked++;
            const why = next ? refusal(next, truth, history[history.length - 1].frame) : `no rules for ${history[history.length - 1].frame?.func}`;
            if (why) refused.push(`${p.name} state ${i} ${a.kind}${a.line ?? ""}: ${why}`);
          }
        }
      }
    }
  } finally {
    await batch.close();
  }
  assert.ok(checked > 20_000, `${checked} cases checked`);
  assert.deepEqual(refused.slice(0, 10), [], `${refused.length} true states refused`);
});

// examples/demo.py: total(values) calls running_max(values) on line 12, prints on 13, returns on 14.
const DEMO = readFileSync(join(import.meta.dirname, "..", "examples", "demo.py"), "utf8");
const call = (locals: Record<string, string>): Step => ({ frame: { event: "call", line: 11, depth: 0, func: "total", locals } });
const line = (n: number, locals: Record<string, string>, extra: Partial<Frame> = {}): Frame => ({ event: "line", line: n, depth: 0, func: "total", locals, ...extra });
const V = { values: "[3, 1, 2]" };

async function why(history: Step[], action: Action, step: Step): Promise<string | undefined> {
  const reach = new Reach(await parsePython(DEMO));
  const next = reach.next(history, action);
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

test("the grammars written from the rules parse in llama.cpp, for every state and action of a real run", T, async () => {
  const llama = await getBackend({ gpu: "cpu" });
  try {
    const batch = new TraceBatch({ maxEvents: 400, timeout: 10 });
    const run = await batch.trace({ source: DEMO, call: "total([3, 1, 2])" });
    await batch.close();
    const reach = new Reach(await parsePython(DEMO));
    const texts = new Set<string>();
    for (let i = 0; i < run.frames.length; i++)
      for (const a of actions(run)) {
        const next = reach.next([stateAt(run, i, i)], a);
        if (next) texts.add(reachGrammar(next, (t) => JSON.stringify(t)));
      }
    assert.ok(texts.size > 10, `${texts.size} grammars`);
    for (const text of texts) await llama.createGrammar({ grammar: text });
  } finally {
    await disposeAll();
  }
});
