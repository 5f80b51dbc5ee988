// A long run, a window at a time (adapter/predictors/longRun.ts), against the same run recorded
// whole: with windows of 60 events over a run of about 2,400 (recursion, a generator, exceptions
// caught, output), every action from states all along the run lands on the same event, with the
// same state and the same output, whether the move stays in a window, seeks forwards past it,
// reads back past it, or needs the run's skeleton. Real sealed runs on both sides.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Action } from "../adapter/format/trajectory.js";
import type { Predicted } from "../adapter/engine/predictor.js";
import { LongRunPredictor } from "../adapter/predictors/longRun.js";
import { RecordedPredictor } from "../adapter/predictors/recorded.js";
import { runSealed } from "../adapter/real/sealed.js";
import { transition } from "../adapter/real/semantics.js";
import { buildDist } from "./support/dist.js";

const T = { timeout: 300_000 };
const WINDOW = 60;
const PROGRAM = [
  "def fib(n):",
  "    if n < 2:",
  "        return n",
  "    return fib(n - 1) + fib(n - 2)",
  "",
  "",
  "def squares(k):",
  "    for i in range(k):",
  "        yield i * i",
  "",
  "",
  "def risky(x):",
  "    try:",
  "        if x % 7 == 0:",
  "            raise ValueError(x)",
  "        return x",
  "    except ValueError:",
  '        print("caught", x)',
  "        return -x",
  "",
  "",
  "total = 0",
  "for j in range(30):",
  "    total += risky(j) + fib(j % 9)",
  "    if j % 10 == 0:",
  '        print("at", j, total)',
  "print(sum(squares(20)), total)",
  "",
].join("\n");

let dir = "";
let program = "";
before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-longrun-"));
  program = join(dir, "prog.py");
  writeFileSync(program, PROGRAM);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const ACTIONS: Action[] = [
  { kind: "step_into" },
  { kind: "step_over" },
  { kind: "step_return" },
  { kind: "continue" },
  { kind: "inv_step_into" },
  { kind: "inv_step_over" },
  { kind: "inv_step_return" },
];
const BREAKPOINTS = [{ line: 18 }, { line: 26 }];

/** What a state shows: where it stands, its values, what was printed on the way to it. */
const shown = (p: Predicted): string => JSON.stringify([p.ref, p.step.frame ? { ...p.step.frame, objects: undefined, ids: undefined } : p.step.exit]);

test("a long run recorded a window at a time answers every move as the run recorded whole", T, async () => {
  const whole = await runSealed(program, { maxEvents: 100_000, objects: 0 });
  assert.equal(whole.exit.status, "normal");
  const n = whole.frames.length;
  assert.ok(n > 2000, `${n} events`);
  const truth = new RecordedPredictor(whole);
  const first = await runSealed(program, { maxEvents: WINDOW, objects: 0 });
  assert.equal(first.limit, "events");
  const states = [0, 1, 37, 59, 60, 61, 500, 1234, 1500, 1501, 1999, n - 40, n - 2, n - 1, n];
  const stateAt = (i: number): Predicted => ({ step: i < n ? { frame: whole.frames[i] } : { exit: whole.exit }, ref: i });
  const compare = async (actions: readonly Action[]): Promise<{ long: LongRunPredictor; said: string[] }> => {
    const said: string[] = [];
    const long = LongRunPredictor.create(program, { maxEvents: WINDOW, objects: 0, console: (line) => said.push(line) }, first);
    for (const from of states)
      for (const action of actions) {
        const want = await truth.predict([stateAt(from)], action, { breakpoints: BREAKPOINTS });
        const got = await long.predict([stateAt(from)], action, { breakpoints: BREAKPOINTS });
        assert.equal(shown(got), shown(want), `${action.kind} from event ${from}`);
      }
    return { long, said };
  };
  const skeleton = `the run has ${n.toLocaleString("en-US")} events`;
  // Forwards: over the windows, or by seeking where the move lands; no skeleton.
  const forwards = await compare(ACTIONS.filter((a) => !a.kind.startsWith("inv_")));
  assert.ok(!forwards.said.some((line) => line.includes(skeleton)), forwards.said.join("\n"));
  // Every move: back over long calls, the run's skeleton.
  const { long, said } = await compare(ACTIONS);
  assert.ok(said.some((line) => line.includes(skeleton)), said.join("\n"));
  // Continue past the windows, then Step Back from where it landed: the seek saw what is behind
  // the landing (line 25 after the calls of line 24, siblings and recursion), so no run looks for it.
  const landings = new Set<number>();
  for (const bps of [[{ line: 25 }], [{ line: 18 }], BREAKPOINTS]) {
    const fresh = LongRunPredictor.create(program, { maxEvents: WINDOW, objects: 0 }, first);
    for (const from of [0, 61, 500, 1234]) {
      const landed = await fresh.predict([stateAt(from)], { kind: "continue" }, { breakpoints: bps });
      if (landed.ref === undefined || landed.ref >= n) continue;
      landings.add(landed.ref);
      const want = await truth.predict([stateAt(landed.ref)], { kind: "inv_step_over" }, { breakpoints: bps });
      const got = await fresh.predict([landed], { kind: "inv_step_over" }, { breakpoints: bps });
      assert.equal(shown(got), shown(want), `Step Back from event ${landed.ref}, where a Continue from ${from} landed`);
    }
  }
  assert.ok(landings.size >= 6, `${landings.size} landings`);
  // Step Over a call past the windows, then Step Back from where it landed: every event between is
  // deeper, so where the Step Over began is the latest earlier event at its depth.
  let past = 0;
  for (const from of whole.frames.flatMap((f, i) => (f.depth === 0 && f.event === "line" && f.line === 24 ? [i] : [])).slice(0, 10)) {
    const fresh = LongRunPredictor.create(program, { maxEvents: WINDOW, objects: 0 }, first);
    const landed = await fresh.predict([stateAt(from)], { kind: "step_over" });
    assert.equal(shown(landed), shown(await truth.predict([stateAt(from)], { kind: "step_over" })), `Step Over from event ${from}`);
    if (landed.ref! - from > WINDOW) past++;
    const back = await fresh.predict([landed], { kind: "inv_step_over" });
    assert.equal(shown(back), shown(await truth.predict([stateAt(landed.ref!)], { kind: "inv_step_over" })), `Step Back from event ${landed.ref}, where a Step Over from ${from} landed`);
    assert.equal(back.ref, from);
  }
  assert.ok(past >= 3, `${past} Step Overs past a window`);
  // An expression in the program's frame at a state past the first window, and a line run there, kept.
  const k = whole.frames.findIndex((f, i) => i > 1000 && f.depth === 0 && f.event === "line" && f.line === 24);
  const here = stateAt(k);
  const j = Number(whole.frames[k].locals.j);
  assert.equal((await long.inspect([here], "j * 2 + len(str(total))", 0))?.value, String(j * 2 + whole.frames[k].locals.total.length));
  const ran = await long.execute([here], "total = -1000", 0);
  assert.deepEqual([ran?.state.ref, ran?.state.step.frame?.locals.total, ran?.result], [k, "-1000", { value: "" }]);
  const changed = await long.predict([ran!.state], { kind: "step_over" });
  assert.equal(Number(changed.step.frame?.locals.total), Number(whole.frames[transition(whole.frames, k, { kind: "step_over" })].locals.total) - Number(whole.frames[k].locals.total) - 1000);
  // From the start to the end: all it printed, as printed (a fresh predictor: the line above changed the run).
  const end = await (await compare([])).long.predict([stateAt(0)], { kind: "continue" });
  assert.equal(end.step.exit?.stdout, (await truth.predict([stateAt(0)], { kind: "continue" })).step.exit?.stdout);
  assert.match(end.step.exit?.stdout ?? "", /^caught 0\nat 0 0\n/);
});
