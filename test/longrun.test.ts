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
import { runSealed, SEALED_PYTHONS } from "../adapter/real/sealed.js";
import { transition } from "../adapter/real/semantics.js";
import { buildDist } from "./support/dist.js";

const T = { timeout: 300_000 };
/** Whether the predictor's last fast landing has no index yet (no counting run has found it). */
const unplaced = (p: LongRunPredictor): boolean => (p as unknown as { landing?: unknown }).landing !== undefined;
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
const unref = (p: Predicted): string => shown({ ...p, ref: 0 });
const unreturned = (p: Predicted): Predicted => (p.step.frame ? { ...p, step: { ...p.step, frame: { ...p.step.frame, returned: undefined } } } : p);
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
  // A Continue into what no move reached yet runs fast: its landing's ref is not its index (the
  // first of a segment of refs), so states are compared here without refs, and refs for their order.
  const landings = new Set<number>();
  let fast = 0;
  for (const bps of [[{ line: 25 }], [{ line: 18 }], BREAKPOINTS]) {
    const fresh = LongRunPredictor.create(program, { maxEvents: WINDOW, objects: 0 }, first);
    for (const from of [1234, 500, 61, 0, 1500]) {
      const landed = await fresh.predict([stateAt(from)], { kind: "continue" }, { breakpoints: bps });
      const at = await truth.predict([stateAt(from)], { kind: "continue" }, { breakpoints: bps });
      // (a fast landing shows no value returned just before it, as debugpy's Continue shows none)
      assert.equal(unref(unreturned(landed)), unref(unreturned(at)), `Continue from event ${from}`);
      if (at.ref === undefined || at.ref >= n) continue;
      landings.add(at.ref);
      // (the landing's index is not known yet: a landing of a fast seek, not one in a window that was)
      if (landed.ref! > n && unplaced(fresh)) {
        fast++;
        // A move within the window where it landed needs no run, nor the landing's index (held).
        const next = await fresh.predict([landed], { kind: "step_over" }, { breakpoints: bps, held: true });
        const wantNext = await truth.predict([at], { kind: "step_over" }, { breakpoints: bps });
        assert.equal(unref(next), unref(wantNext), `Step Over from where a Continue from ${from} landed`);
        assert.equal(next.ref! - landed.ref!, wantNext.ref! - at.ref);
        const back = await fresh.predict([landed, next], { kind: "inv_step_over" }, { breakpoints: bps, held: true });
        assert.equal(unref(unreturned(back)), unref(unreturned(await truth.predict([wantNext], { kind: "inv_step_over" }, { breakpoints: bps }))));
        assert.equal(back.ref, landed.ref);
        // An expression there and one step on is answered by the same fast seek run again, held
        // there: no counting run finds the landing's index for it (the landing stays unplaced).
        for (const state of [landed, next]) {
          const locals = state.step.frame!.locals;
          for (const name of Object.keys(locals)) assert.equal((await fresh.inspect([state], name, 0))?.value, locals[name], `${name} where a Continue from ${from} landed`);
        }
        assert.ok(unplaced(fresh), "an expression needs no index");
      }
      const want = await truth.predict([stateAt(at.ref)], { kind: "inv_step_over" }, { breakpoints: bps });
      const got = await fresh.predict([landed], { kind: "inv_step_over" }, { breakpoints: bps });
      assert.equal(unref(got), unref(want), `Step Back from event ${at.ref}, where a Continue from ${from} landed`);
      assert.ok(got.ref! < landed.ref!, "a state before another has a lower ref");
      const again = await fresh.predict([got], { kind: "step_over" }, { breakpoints: bps });
      assert.equal(again.ref, landed.ref, "the same state, the same ref");
    }
  }
  assert.ok(landings.size >= 6, `${landings.size} landings`);
  assert.ok(fast >= 3, `${fast} fast landings`);
  // Step Over a call past the windows, then Step Back from where it landed: every event between is
  // deeper, so where the Step Over began is the latest earlier event at its depth.
  let past = 0;
  for (const from of whole.frames.flatMap((f, i) => (f.depth === 0 && f.event === "line" && f.line === 24 ? [i] : [])).slice(0, 10)) {
    const fresh = LongRunPredictor.create(program, { maxEvents: WINDOW, objects: 0 }, first);
    const landed = await fresh.predict([stateAt(from)], { kind: "step_over" });
    const at = await truth.predict([stateAt(from)], { kind: "step_over" });
    assert.equal(unref(landed), unref(at), `Step Over from event ${from}`);
    if (at.ref! - from > WINDOW) past++;
    const back = await fresh.predict([landed], { kind: "inv_step_over" });
    assert.equal(shown(back), shown(await truth.predict([stateAt(at.ref!)], { kind: "inv_step_over" })), `Step Back from event ${at.ref}, where a Step Over from ${from} landed`);
    assert.equal(back.ref, from);
    assert.equal((await fresh.predict([back], { kind: "step_over" })).ref, landed.ref, "the same state, the same ref");
  }
  assert.ok(past >= 3, `${past} Step Overs past a window`);
  // Step Over and Step Out that stop at a breakpoint in the calls they pass, however deep (the
  // engine's bounded Continue: PredictOptions.until), from every line 24 and from states in fib:
  // where the first hit or the move's own landing is (a condition read in the program's frame).
  const hitsOf = (bps: readonly { line: number; condition?: string }[]) => (i: number): boolean =>
    whole.frames[i].event === "line" && bps.some((b) => b.line === whole.frames[i].line && (!b.condition || `n == ${whole.frames[i].locals.n}` === b.condition));
  let deep = 0;
  let fastPast = 0;
  for (const bps of [[{ line: 3, condition: "n == 0" }], [{ line: 19 }, { line: 9 }]]) {
    const hit = hitsOf(bps);
    const fresh = LongRunPredictor.create(program, { maxEvents: WINDOW, objects: 0 }, first);
    const froms = whole.frames.flatMap((f, i) => ((f.line === 24 && f.depth === 0 && f.event === "line") || (f.func === "fib" && f.event === "line" && i % 97 === 0) ? [i] : []));
    for (const from of froms)
      for (const kind of ["step_over", "step_return"] as const) {
        const f = whole.frames[from];
        const until = kind === "step_over" ? { depth: f.depth } : { returnAt: f.depth };
        let want = from + 1;
        while (want < n && !hit(want) && !(kind === "step_over" ? whole.frames[want].depth <= f.depth : whole.frames[want].depth < f.depth || (whole.frames[want].depth === f.depth && whole.frames[want].event === "return"))) want++;
        const got = await fresh.predict([stateAt(from)], { kind: "continue" }, { breakpoints: bps, until });
        // (the state with what the run printed on the way)
        const printed = whole.frames.slice(from + 1, want + 1).map((g) => g.stdout ?? "").join("");
        const wanted: Predicted = want < n ? { step: { frame: { ...whole.frames[want], stdout: printed || undefined } } } : stateAt(n);
        assert.equal(unref(unreturned(got)), unref(unreturned(wanted)), `${kind} from ${from} with ${JSON.stringify(bps)}`);
        if (want - from > WINDOW && want < n && whole.frames[want].depth > f.depth) deep++;
        if (unplaced(fresh)) fastPast++;
        // (the next move from the state as given places any landing: states are compared by ref then)
        const back = await fresh.predict([got], { kind: "inv_step_into" });
        assert.equal(unref(back), unref(stateAt(want - 1)), `back one from ${want}`);
      }
  }
  assert.ok(deep >= 3, `${deep} stops at a breakpoint past a window into a call`);
  assert.ok(fastPast >= 3, `${fastPast} of them fast`);
  // An expression in the program's frame at a state past the first window, and a line run there, kept.
  const k = whole.frames.findIndex((f, i) => i > 1000 && f.depth === 0 && f.event === "line" && f.line === 24);
  const here = stateAt(k);
  const j = Number(whole.frames[k].locals.j);
  assert.equal((await long.inspect([here], "j * 2 + len(str(total))", 0))?.value, String(j * 2 + whole.frames[k].locals.total.length));
  const ran = await long.execute([here], "total = -1000", 0);
  assert.deepEqual([ran?.state.ref, ran?.state.step.frame?.locals.total, ran?.result], [k, "-1000", { value: "" }]);
  const changed = await long.predict([ran!.state], { kind: "step_over" });
  assert.equal(Number(changed.step.frame?.locals.total), Number(whole.frames[transition(whole.frames, k, { kind: "step_over" })].locals.total) - Number(whole.frames[k].locals.total) - 1000);
  // A line run where a fast seek landed, its index not known yet: by the run held there, kept;
  // moving on runs the program with it among its statements (from the landing's index, found then).
  const fresh = LongRunPredictor.create(program, { maxEvents: WINDOW, objects: 0 }, first);
  const bps = [{ line: 25 }];
  const landed = await fresh.predict([stateAt(1234)], { kind: "continue" }, { breakpoints: bps });
  assert.ok(unplaced(fresh), "the Continue went fast");
  const at = (await truth.predict([stateAt(1234)], { kind: "continue" }, { breakpoints: bps })).ref!;
  const set = await fresh.execute([landed], "total = -1000", 0);
  assert.deepEqual([set?.state.ref, set?.state.step.frame?.locals.total, set?.result], [landed.ref, "-1000", { value: "" }]);
  assert.ok(unplaced(fresh), "a line needs no index");
  assert.equal((await fresh.inspect([set!.state], "total * 2", 0))?.value, "-2000");
  const set2 = await fresh.execute([set!.state], "total -= 1", 0);
  assert.deepEqual([set2?.state.ref, set2?.state.step.frame?.locals.total], [landed.ref, "-1001"]);
  assert.ok(unplaced(fresh), "nor a second one");
  const on = await fresh.predict([set2!.state], { kind: "step_over" });
  const gain = Number(whole.frames[transition(whole.frames, at, { kind: "step_over" })].locals.total) - Number(whole.frames[at].locals.total);
  assert.equal(Number(on.step.frame?.locals.total), gain - 1001);
  const backAgain = await fresh.predict([set2!.state, on], { kind: "inv_step_over" });
  assert.deepEqual([backAgain.ref, backAgain.step.frame?.locals.total], [landed.ref, "-1001"]);
  assert.equal((await fresh.predict([backAgain], { kind: "step_over" })).step.frame?.locals.total, on.step.frame?.locals.total);
  // From the start to the end: all it printed, as printed (a fresh predictor: the line above changed the run).
  const end = await (await compare([])).long.predict([stateAt(0)], { kind: "continue" });
  assert.equal(end.step.exit?.stdout, (await truth.predict([stateAt(0)], { kind: "continue" })).step.exit?.stdout);
  assert.match(end.step.exit?.stdout ?? "", /^caught 0\nat 0 0\n/);
});

// A seek that goes fast (no trace function where no breakpoint is: sys.monitoring) lands where the
// same seek counted lands, with the same state and output, for programs that meet what it uses: every
// sys.monitoring tool id taken (before it starts, or while it goes: it goes on counting), and taken again by the next run (a clean interpreter), a handler of the runner's tick signal (never
// called, as under python3), a recursion past the program's own limit (raised where Python raises it).
test("a fast seek lands where a counting one does, in programs that take its tool ids, its signal, its recursion limit, or loop within one line", T, async () => {
  // (`marks`: its condition changes the program, which the seek that reads it leaves where it lands)
  const cases: { name: string; lines: string[]; seek: { places?: { line: number; condition?: string }[]; depth?: number }; after: number; fast: boolean; marks?: true }[] = [
    {
      // (taken while the seek goes fast: it gives its own up and goes on counting)
      name: "tools",
      lines: ["import sys", "for t in range(6):", "    sys.monitoring.use_tool_id(t, 'mine')", "total = 0", "for i in range(30000):", "    total += i", "print(total, [sys.monitoring.get_tool(t) for t in range(6)])", ""],
      seek: { places: [{ line: 7 }] },
      after: 3,
      fast: true,
    },
    {
      // (taken before it starts: it never goes fast)
      name: "tools_first",
      lines: ["import sys", "for t in range(6):", "    sys.monitoring.use_tool_id(t, 'mine')", "total = 0", "for i in range(30000):", "    total += i", "print(total, [sys.monitoring.get_tool(t) for t in range(6)])", ""],
      seek: { places: [{ line: 7 }] },
      after: 20,
      fast: false,
    },
    {
      name: "signal",
      lines: ["import signal", "got = []", "signal.signal(signal.SIGUSR2, lambda s, f: got.append(s))", "def spin(n):", "    t = 0", "    for i in range(n):", "        t += i", "    return t", "", "x = spin(600000)", "print(len(got), signal.getsignal(signal.SIGUSR2) is not signal.SIG_DFL, x)", ""],
      seek: { places: [{ line: 11 }] },
      after: 3,
      fast: true,
    },
    {
      name: "recursion",
      lines: ["import sys", "sys.setrecursionlimit(60)", "def down(n):", "    return down(n + 1) if n < 10_000 else n", "", "def spin(n):", "    t = 0", "    for i in range(n):", "        t += i", "    try:", "        down(0)", "    except RecursionError as e:", "        t = -t", "    return t", "", "x = spin(20000)", "print(x)", ""],
      seek: { places: [{ line: 17 }] },
      after: 3,
      fast: true,
    },
    {
      // (sys.settrace has a line event at each turn of a loop within one line, where sys.monitoring
      // has no LINE: a condition that holds at a later turn only, or at a later entry)
      name: "one_line_while",
      lines: ["def f(k):", "    x = 0", "    while x < 5: x += 1", "    for y in range(3): x += y", "    return [x * z for z in range(4)]", "", "for k in range(3000):", "    f(k)", "print('done')", ""],
      seek: { places: [{ line: 3, condition: "(x == 3 and k == 2000) or k == 2500" }] },
      after: 3,
      fast: true,
    },
    {
      name: "one_line_for",
      lines: ["def f(k):", "    x = 0", "    while x < 5: x += 1", "    for y in range(3): x += y", "    return [x * z for z in range(4)]", "", "for k in range(3000):", "    f(k)", "print('done')", ""],
      seek: { places: [{ line: 4, condition: "(x == 6 and k == 2100) or k == 2600" }] },
      after: 3,
      fast: true,
    },
    {
      // (a condition read at the first event past where a fast seek starts, once: it changes what it reads)
      name: "first_hit",
      lines: ["calls = []", "for k in range(5):", "    x = k", "print(len(calls))", ""],
      seek: { places: [{ line: 3, condition: "calls.append(1) or len(calls) == 1" }] },
      after: 2,
      fast: false,
      marks: true,
    },
    {
      // (hits in the frame the seek starts in, in a call it passes, and in a generator)
      name: "hits",
      lines: ["def g(n):", "    for i in range(n):", "        yield i", "", "def f(n):", "    t = 0", "    for v in g(n):", "        t += v", "    return t", "", "total = 0", "for k in range(400):", "    total += f(k % 50)", "print(total)", ""],
      seek: { places: [{ line: 8, condition: "v == 40 and k > 300" }, { line: 3, condition: "i == 45 and k == 395" }] },
      after: 3,
      fast: true,
    },
    {
      // (a Step Over with a breakpoint: the call passed over untraced, its breakpoint's line watched)
      name: "one_line_over",
      lines: ["def f(n):", "    for k in range(n):", "        x = 0", "        while x < 5: x += 1", "    return n", "", "f(3000)", "print('done')", ""],
      seek: { places: [{ line: 4, condition: "(x == 3 and k == 2000) or k == 2500" }], depth: 0 },
      after: 2,
      fast: true,
    },
  ];
  for (const [c, sealedPython] of cases.flatMap((c) => Object.keys(SEALED_PYTHONS).map((v) => [c, v] as const))) {
    const file = join(dir, `${c.name}.py`);
    writeFileSync(file, c.lines.join("\n"));
    const seek = { after: c.after, ...c.seek };
    const counted = await runSealed(file, { maxEvents: 5, objects: 0, window: { seek }, sealedPython });
    const fast = await runSealed(file, { maxEvents: 5, objects: 0, window: { seek, fast: true }, sealedPython });
    assert.equal(fast.window?.fast === true, c.fast, `${c.name} (${sealedPython}): went fast`);
    assert.ok(counted.frames.length > 0 && counted.window?.from !== undefined && counted.window.from > (c.fast ? 1000 : c.after), `${c.name}: landed at ${counted.window?.from}`);
    assert.deepEqual(
      fast.frames.map((f) => ({ ...f, returned: undefined, callers: undefined })),
      counted.frames.map((f) => ({ ...f, returned: undefined, callers: undefined })),
      `${c.name}: the same states`,
    );
    assert.equal(fast.exit.stdout, counted.exit.stdout, `${c.name}: the same output`);
    // Where a condition held: the same hit of the same place counted by both, and that place's
    // nth hit, sought with no condition read (counted or fast), is the same landing.
    if (!c.seek.places?.some((p) => p.condition)) continue;
    const hits = counted.window?.hits;
    assert.ok(hits && hits.n >= 1, `${c.name}: hits ${JSON.stringify(hits)}`);
    assert.deepEqual(fast.window?.hits, hits, `${c.name}: the same hits`);
    for (const again of [{ seek: { after: c.after, places: [hits.place], nth: hits.n } }, { seek: { after: c.after, places: [hits.place], nth: hits.n }, fast: true as const }]) {
      const nth = await runSealed(file, { maxEvents: 5, objects: 0, window: again, sealedPython });
      // (where the condition changed the program, the same event without that change, as a window's run records it)
      const states = (r: typeof nth) => r.frames.map((f) => (c.marks ? [f.event, f.line, f.depth] : { ...f, returned: undefined, callers: undefined }));
      assert.deepEqual(states(nth), states(counted), `${c.name} (${sealedPython}): its hit ${hits.n} of line ${hits.place.line}${again.fast ? ", fast" : ""}`);
      if (!again.fast) assert.equal(nth.window?.from, counted.window?.from, `${c.name}: the same index`);
    }
  }
  const signal = await runSealed(join(dir, "signal.py"), { maxEvents: 100, objects: 0, window: { seek: { after: 3, places: [{ line: 11 }] }, fast: true } });
  assert.match(signal.frames.map((f) => f.stdout ?? "").join("") + (signal.exit.stdout ?? ""), /^0 True 179999700000\n$/);
});
