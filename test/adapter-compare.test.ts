// Compare mode over the real protocol: the built adapter (`node dist/adapter.js`) driven by
// @vscode/debugadapter-testsupport's DebugClient, with real debugpy beside the prediction. With a
// recording of the program as the predicted side (launch attribute "predictor": "record") the two
// sides must agree at every step, and the "Real (debugpy)" scope must hold what the tracer records
// at the same state. Mismatches are made on purpose (an edited predicted state; a program that
// runs differently under debugpy) and must be flagged exactly where the two sides differ.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { transition } from "../adapter/real/semantics.js";
import { findDebugpyPython } from "../adapter/real/debugpy.js";
import { checkPair, stateLabel } from "../adapter/predictors/comparePairs.js";
import type { RealState } from "../adapter/predictors/compareReal.js";
import type { CompareSnapshot, StateView } from "../adapter/protocol.js";
import { parse, parseMany, type Action, type Step } from "../adapter/format/trajectory.js";
import { ROOT, buildDist } from "./support/dist.js";
import { randomModel } from "./support/models.js";
import { THREAD, firstOf, launchToFirstStop, openSession, stopAfter, type Session } from "./support/dap.js";

const FIX = join(ROOT, "test", "fixtures", "compare");
const CALLS = join(FIX, "calls.py");
const SCRIPT = join(FIX, "script.py");
const CRUX = join(FIX, "cruxeval_5.py");
const DIVERGES = join(FIX, "diverges.py");
const SHOP = join(ROOT, "examples", "shop.py");
const T = { timeout: 300_000 };

let dir = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-compare-"));
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A state of the ndbg/compare answer, back as a step. */
function viewStep(v: StateView): Step {
  if (v.kind === "exit") return { exit: { status: v.status!, ...(v.value !== undefined ? { value: v.value } : {}) } };
  return {
    frame: {
      event: v.event!, line: v.line!, depth: v.depth!, func: v.func!, locals: v.locals!,
      ...(v.file !== undefined ? { file: v.file } : {}), ...(v.value !== undefined ? { value: v.value } : {}),
    },
  };
}

// ---- the real run, for expectations ----

const traces = new Map<string, Promise<TraceResult>>();
/** The tracer's run, with the Python compare mode uses (the recording on the predicted side is made with it too). */
function realRun(program: string, call?: string): Promise<TraceResult> {
  const key = `${program}|${call ?? ""}`;
  if (!traces.has(key)) traces.set(key, findDebugpyPython().then((python) => runTrace(program, { call, python })));
  return traces.get(key)!;
}

const stateAt = (trace: TraceResult, i: number): Step => (i < trace.frames.length ? { frame: trace.frames[i] } : { exit: trace.exit });

// ---- a client ----

// A compare launch starts debugpy and a recording beside it: in a full run, beside two other files and the Python suites, one went unanswered for a minute.
const open = (): Promise<Session> => openSession(120_000);

async function launch(s: Session, args: Record<string, unknown>, bps: number[] = []): Promise<DebugProtocol.Event> {
  return (await launchToFirstStop(s.dc, { mode: "compare", predictor: "record", trusted: true, stopOnEntry: true, ...args }, args.program as string, bps.map((line) => ({ line })))).first;
}

const REQUESTS: Record<string, (dc: DebugClient) => Promise<unknown>> = {
  step_into: (dc) => dc.stepInRequest(THREAD),
  step_over: (dc) => dc.nextRequest(THREAD),
  step_return: (dc) => dc.stepOutRequest(THREAD),
  continue: (dc) => dc.continueRequest(THREAD),
};

/** One action; resolves with the stop it leads to, or the end of the session. */
const act = (s: Session, kind: Action["kind"]): Promise<DebugProtocol.Event> => stopAfter(s.dc, REQUESTS[kind]);

interface Scopes {
  names: string[];
  predicted: DebugProtocol.Variable[];
  real: DebugProtocol.Variable[];
}

async function compareScopes(s: Session): Promise<Scopes> {
  const frames = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
  const scopes = (await s.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
  const vars = async (i: number): Promise<DebugProtocol.Variable[]> => (await s.dc.variablesRequest({ variablesReference: scopes[i].variablesReference })).body.variables;
  return { names: scopes.map((x) => x.name), predicted: await vars(0), real: await vars(1) };
}

const row = (vars: DebugProtocol.Variable[], name: string): string | undefined => vars.find((v) => v.name === name)?.value;
const plain = (vars: DebugProtocol.Variable[]): Record<string, string> => Object.fromEntries(vars.filter((v) => !v.name.startsWith("(")).map((v) => [v.name, v.value]));
const marked = (vars: DebugProtocol.Variable[]): string[] => vars.filter((v) => v.value.includes("≠ real")).map((v) => v.name);

/**
 * What the session answers for a local of the current state, asked three ways: a watch, a hover,
 * and the Predicted scope (its "≠ real" mark aside). They must be one answer.
 */
async function oneAnswer(s: Session, name: string): Promise<string> {
  const frameId = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames[0].id;
  const watch = (await s.dc.evaluateRequest({ expression: name, frameId, context: "watch" })).body.result;
  const hover = (await s.dc.evaluateRequest({ expression: name, frameId, context: "hover" })).body.result;
  const shown = row((await compareScopes(s)).predicted, name)?.split("  ≠ real ")[0];
  assert.deepEqual({ hover, shown }, { hover: watch, shown: watch }, `${name}: watch, hover and Variables`);
  return watch;
}

async function snapshot(s: Session): Promise<CompareSnapshot> {
  return (await s.dc.customRequest("ndbg/compare")).body as CompareSnapshot;
}

/** The Real scope against the tracer's state: what debugpy observed must be what the tracer recorded. */
function expectReal(scopes: Scopes, want: Step, unobserved: readonly string[], where: string): void {
  const label = stateLabel(want, unobserved as RealState["unobserved"]);
  assert.ok(row(scopes.real, "(state)")?.startsWith(label), `${where}: real (state) ${row(scopes.real, "(state)")} / tracer ${label}`);
  const f = want.frame;
  if (!f) return;
  if (unobserved.includes("locals")) assert.equal(row(scopes.real, "(locals)"), "not observed by debugpy here", where);
  else assert.deepEqual(plain(scopes.real), f.locals, `${where}: real locals`);
  if ((f.event === "return" || f.event === "exception") && !unobserved.includes("value"))
    assert.equal(row(scopes.real, f.event === "return" ? "(return)" : "(exception)"), f.value ?? "(none)", `${where}: real value`);
}

/** A small seeded generator, so a failing walk can be replayed. */
function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (x * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/**
 * Walks a program in compare mode with a recording on the predicted side: at every stop the two
 * scopes are there, nothing is marked, and the Real scope holds the tracer's state there.
 */
async function agreeingWalk(program: string, call: string | undefined, bps: number[], pick: () => Action["kind"]): Promise<CompareSnapshot> {
  const trace = await realRun(program, call);
  const s = await open();
  try {
    let ev = await launch(s, { program, call, stopOnEntry: true }, bps);
    // A script's entry stop is its first line, as debugpy's is: the module's call event is passed.
    let i = call === undefined && trace.frames[0]?.event === "call" && trace.frames[0].func === "<module>" ? 1 : 0;
    for (let n = 0; n < 300 && ev.event === "stopped"; n++) {
      const where = `${program.split("/").pop()} ${call ?? ""} step ${n}`;
      const scopes = await compareScopes(s);
      assert.deepEqual(scopes.names, ["Predicted", "Real (debugpy)"]);
      assert.deepEqual(marked(scopes.predicted), [], `${where}: nothing is marked`);
      const snap = await snapshot(s);
      assert.equal(snap.current?.check?.exact, true, `${where}: ${JSON.stringify(snap.current)}`);
      expectReal(scopes, stateAt(trace, i), snap.current!.real.unobserved ?? [], where);
      const kind = pick();
      i = transition(trace.frames, i, { kind }, bps?.map((line) => ({ line })));
      ev = await act(s, kind);
    }
    assert.equal(ev.event, "terminated", "the walk reached the end");
    assert.equal(i, trace.frames.length, "the predicted side ended where the real run ended");
    const snap = await snapshot(s);
    assert.equal(snap.agreement.states.agree, snap.agreement.states.total);
    assert.equal(snap.agreement.compared, snap.agreement.steps);
    assert.equal(snap.firstDivergence, null);
    assert.match(s.text("console"), /Compare summary over (\d+) steps: states \1\/\1 \(100%\)/);
    return snap;
  } finally {
    await s.dc.stop();
  }
}

// ---- tests ----

test("with a recording as the predicted side, both sides agree at every step and Real holds the tracer's states", T, async () => {
  const into = (): Action["kind"] => "step_into";
  const snap = await agreeingWalk(CALLS, "total([3, 1, 2])", [], into);
  assert.ok(snap.history.some((p) => p.real.origin === "rebuilt" && p.real.event === "call"), "calls are rebuilt");
  assert.ok(snap.history.some((p) => p.real.event === "return" && p.real.value === "[3, 3, 3]"), "a return value comes from debugpy");
  await agreeingWalk(SCRIPT, undefined, [], into);
  await agreeingWalk(CRUX, "f('DSUWeqExTQdCMGpqur', 'a', 'x')", [], into);
  const kinds: Action["kind"][] = ["step_into", "step_into", "step_over", "step_return", "continue"];
  for (const [program, call, bps] of [[CALLS, "mixed(3)", [48, 64]], [CALLS, "crash(0)", [30, 35]], [SCRIPT, undefined, [5, 11]]] as const) {
    const r = rng(1);
    await agreeingWalk(program, call, [...bps], () => kinds[Math.floor(r() * kinds.length)]);
  }
});

test("an edited predicted state is flagged exactly there, and resync replaces it with the real one; watch, hover and Variables give one answer", T, async () => {
  const s = await open();
  try {
    await launch(s, { program: CALLS, call: "total([3, 1, 2])" });
    for (const k of ["step_into", "step_into", "step_into", "step_into", "step_into"] as const) await act(s, k);
    let scopes = await compareScopes(s);
    assert.equal(row(scopes.predicted, "best"), "None");
    const frames = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    const predictedRef = (await s.dc.scopesRequest({ frameId: frames[0].id })).body.scopes[0].variablesReference;
    const realRef = (await s.dc.scopesRequest({ frameId: frames[0].id })).body.scopes[1].variablesReference;
    await assert.rejects(s.dc.setVariableRequest({ variablesReference: realRef, name: "best", value: "1" }), /real program's variables are shown, not set/);
    await s.dc.setVariableRequest({ variablesReference: predictedRef, name: "best", value: "99" });
    scopes = await compareScopes(s);
    assert.deepEqual(marked(scopes.predicted), ["best"]);
    assert.equal(row(scopes.predicted, "best"), "99  ≠ real None");
    assert.equal(row(scopes.real, "best"), "None");
    let snap = await snapshot(s);
    assert.deepEqual(snap.current?.check?.differing, ["best"]);
    assert.equal(snap.current?.check?.exact, false);
    assert.equal(snap.current?.edited, true);
    assert.equal(snap.firstDivergence, snap.current?.index);
    assert.equal(await oneAnswer(s, "best"), "99");
    // Resync: the predicted state is the real one again.
    snap = (await s.dc.customRequest("ndbg/resync")).body as CompareSnapshot;
    assert.equal(snap.current?.resynced, true);
    scopes = await compareScopes(s);
    assert.deepEqual(marked(scopes.predicted), []);
    assert.equal(row(scopes.predicted, "best"), "None");
    assert.equal(await oneAnswer(s, "best"), "None");
    // The recording replays on from the real run: the next state agrees.
    await act(s, "step_into");
    scopes = await compareScopes(s);
    assert.deepEqual(marked(scopes.predicted), []);
    assert.equal((await snapshot(s)).current?.check?.exact, true);
    assert.match(s.text("console"), /best = 99 ≠ real None/);
  } finally {
    await s.dc.stop();
  }
});

test("a conditional breakpoint: continue passes the hits whose condition is false on both sides, one pair per continue", T, async () => {
  const s = await open();
  try {
    // Line 8 runs once per value; `v < best` holds for 1 (best 3) and 2 (best 5) only.
    const args = { mode: "compare", predictor: "record", trusted: true, program: CALLS, call: "total([3, 1, 5, 2])", stopOnEntry: true };
    let ev = (await launchToFirstStop(s.dc, args, CALLS, [{ line: 8, condition: "v < best" }])).first;
    const stops: string[] = [];
    for (let n = 0; n < 5 && ev.event === "stopped"; n++) {
      const snap = await snapshot(s);
      assert.equal(snap.current?.check?.exact, true, `stop ${n}: ${JSON.stringify(snap.current)}`);
      assert.equal(snap.history.length, n + 1, "one pair per user action");
      if (n > 0) stops.push(`${snap.current?.real.line} v=${await oneAnswer(s, "v")} best=${await oneAnswer(s, "best")}`);
      ev = await act(s, "continue");
    }
    assert.equal(ev.event, "terminated");
    assert.deepEqual(stops, ["8 v=1 best=3", "8 v=2 best=5"]);
    const snap = await snapshot(s);
    assert.equal(snap.current?.real.kind, "exit");
    assert.equal(snap.agreement.states.agree, snap.agreement.states.total);
  } finally {
    await s.dc.stop();
  }
});

test("a real run that differs from the recording is flagged exactly where it differs: a value, a line", T, async () => {
  for (const [call, differing] of [["ids()", "pid"], ["branch()", "seen"]] as const) {
    const trace = await realRun(DIVERGES, call);
    const s = await open();
    try {
      let ev = await launch(s, { program: DIVERGES, call });
      let i = 0;
      while (ev.event === "stopped") {
        const snap = await snapshot(s);
        const pair = snap.current!;
        const scopes = await compareScopes(s);
        // Flags equal a recomputation from the two states, and sit on the differing names only.
        const predicted = stateAt(trace, i);
        const real: RealState = { step: pair.real.kind === "frame" ? { frame: { event: pair.real.event!, line: pair.real.line!, depth: pair.real.depth!, func: pair.real.func!, locals: pair.real.locals!, ...(pair.real.value !== undefined ? { value: pair.real.value } : {}) } } : { exit: { status: pair.real.status! } }, unobserved: pair.real.unobserved ?? [], origin: pair.real.origin! };
        assert.deepEqual(pair.check, checkPair(predicted, real) ?? null, `step ${pair.index}`);
        const want = pair.check?.differing ?? [];
        assert.deepEqual(marked(scopes.predicted).filter((n) => !n.startsWith("(")).sort(), [...want].sort());
        if (predicted.frame && differing in predicted.frame.locals && !pair.real.unobserved?.includes("locals") && pair.real.locals && differing in pair.real.locals) assert.ok(want.includes(differing), `${differing} is flagged at step ${pair.index}`);
        i = transition(trace.frames, i, { kind: "step_into" });
        ev = await act(s, "step_into");
      }
      const snap = await snapshot(s);
      assert.ok(snap.firstDivergence !== null, `${call}: a divergence was found`);
      if (call === "branch()") {
        // The recording takes the else branch (line 20), the real run the if branch (line 18).
        const lineMismatch = snap.history.find((p) => p.check?.line === false);
        assert.equal(lineMismatch?.predicted.line, 20);
        assert.equal(lineMismatch?.real.line, 18);
        assert.match(s.text("console"), /line 20 ≠ real 18/);
      } else {
        assert.ok(snap.history.every((p) => p.check?.line !== false), "ids(): only a value differs");
      }
    } finally {
      await s.dc.stop();
    }
  }
});

test("resync launch option: each mismatching state is replaced by the real one, and the figures say per step", T, async () => {
  const s = await open();
  try {
    let ev = await launch(s, { program: DIVERGES, call: "ids()", resync: true });
    while (ev.event === "stopped") {
      const snap = await snapshot(s);
      assert.equal(snap.mode, "resync");
      const scopes = await compareScopes(s);
      assert.deepEqual(marked(scopes.predicted), [], "the state shown is the real one");
      for (const name of Object.keys(plain(scopes.predicted))) await oneAnswer(s, name);
      if (snap.current?.check && !snap.current.check.exact) assert.equal(snap.current.resynced, true);
      ev = await act(s, "step_into");
    }
    const snap = await snapshot(s);
    assert.ok(snap.history.some((p) => p.resynced), "some state was resynced");
    // A saved session keeps each resynced state as it was predicted, so it scores the predictor.
    const [predicted] = parseMany(((await s.dc.customRequest("ndbg/saveTrace")).body as { text: string }).text);
    const paired = predicted.meta?.paired as number[];
    for (const p of snap.history.filter((x) => x.resynced)) assert.deepEqual(predicted.steps[paired[p.index]].frame?.locals, p.predicted.locals, `saved step ${paired[p.index]}`);
    assert.match(s.text("console"), /resynced: the next step starts from the real state/);
    assert.match(s.text("console"), /per step, resynced/);
  } finally {
    await s.dc.stop();
  }
});

test("a real program that never gets there ends its side at the time limit; the prediction goes on", T, async () => {
  const s = await open();
  try {
    // Under debugpy the function loops forever; the recording does not.
    let ev = await launch(s, { program: DIVERGES, call: "hangs_for_real(1)", timeout: 1 }, [29]);
    assert.equal(ev.event, "stopped");
    ev = await act(s, "continue");
    assert.equal(ev.event, "stopped", "the prediction stops at its breakpoint");
    let snap = await snapshot(s);
    assert.equal(snap.real.ended, true);
    assert.match(snap.real.note ?? "", /did not reach its next stop within 1 s \(it was at line 2[78]/);
    assert.equal(snap.current?.check, null, "no real state: not compared");
    let scopes = await compareScopes(s);
    assert.match(row(scopes.real, "(state)") ?? "", /^no real state/);
    assert.deepEqual(marked(scopes.predicted), []);
    ev = await act(s, "step_into");
    assert.equal(ev.event, "stopped", "the prediction goes on");
    snap = await snapshot(s);
    assert.equal(snap.current?.check, null);
    assert.equal(snap.agreement.steps, 2);
    assert.equal(snap.agreement.compared, 0, "the two steps without a real state are not counted");
    assert.match(s.text("console"), /The real program's side has ended: the real program did not reach its next stop within 1 s/);
  } finally {
    await s.dc.stop();
  }
});

test("a prediction that the program ended where the real one goes on: the session follows debugpy to the program's end", T, async () => {
  const s = await open();
  try {
    // The recording (the predicted side) exits at the function's first line; under debugpy it runs on.
    let ev = await launch(s, { program: DIVERGES, call: "ends_early_when_recorded(4)", stopOnEntry: true });
    assert.equal(ev.event, "stopped");
    const lines: number[] = [];
    for (let i = 0; i < 10 && ev.event === "stopped"; i++) {
      ev = await act(s, "step_over");
      if (ev.event === "stopped") lines.push((await s.dc.stackTraceRequest(THREAD)).body.stackFrames[0].line);
    }
    assert.equal(ev.event, "terminated", "the session ends with debugpy's program");
    // After the predicted end the session stood at the real states: the last stop is the function's
    // return, a line the recording never reached.
    const def = readFileSync(DIVERGES, "utf8").split("\n").findIndex((l) => l.includes("def ends_early_when_recorded")) + 1;
    assert.equal(lines.at(-1), def + 5, `stops: ${lines.join(", ")}`);
    const snap = await snapshot(s);
    const early = snap.history.findIndex((p) => p.predicted.kind === "exit" && p.real.kind === "frame");
    assert.ok(early > 0 && snap.history[early].resynced, "the early end is paired with the real state, and the session stood at the real one");
    assert.equal(snap.history.at(-1)?.real.kind, "exit", "the last pair is the real program's end");
    assert.match(s.text("console"), /The prediction says the program ended here; the real program goes on/);
    assert.match(s.text("console"), /The real program exited normally/);
  } finally {
    await s.dc.stop();
  }
});

test("an object on the real side opens into its attributes as debugpy shows them, and the recording's side into the tracer's: the same", T, async () => {
  const s = await open();
  try {
    // examples/shop.py stopped on `due = cart.total()`: both sides hold the cart.
    const due = readFileSync(SHOP, "utf8").split("\n").findIndex((l) => l.startsWith("due = ")) + 1;
    assert.equal((await launch(s, { program: SHOP }, [due])).event, "stopped");
    assert.equal((await act(s, "continue")).event, "stopped");
    const frames = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal(frames[0].line, due);
    const scopes = (await s.dc.scopesRequest({ frameId: frames[0].id })).body.scopes;
    const opened = async (scope: number): Promise<string[]> => {
      const vars = (await s.dc.variablesRequest({ variablesReference: scopes[scope].variablesReference })).body.variables;
      const cart = vars.find((v) => v.name === "cart");
      assert.ok(cart && cart.variablesReference > 0, `${scopes[scope].name}: cart opens (${JSON.stringify(cart)})`);
      return (await s.dc.variablesRequest({ variablesReference: cart.variablesReference })).body.variables.map((v) => `${v.name}=${v.value}`);
    };
    // (debugpy lists attributes by name, the tracer in the order they were set)
    const real = await opened(1);
    assert.deepEqual(real, ["items=[('pen', 2, 3), ('pad', 4, 1)]", "owner='ana'"]);
    assert.deepEqual((await opened(0)).sort(), real);
  } finally {
    await s.dc.stop();
  }
});

test("a real program that crashes, or reads its (empty) input, ends with the same error on both sides", T, async () => {
  for (const [program, call, error] of [[CALLS, "crash(0)", "ZeroDivisionError('division by zero')"], [join(FIX, "asks.py"), undefined, "EOFError('EOF when reading a line')"]] as const) {
    const s = await open();
    try {
      const ev = await launch(s, { program, call, stopOnEntry: false });
      assert.equal(ev.event, "terminated");
      const quoted = error.replace(/[()]/g, "\\$&");
      assert.match(s.text(), new RegExp(`The real program ended with an error: ${quoted}`));
      assert.match(s.text(), new RegExp(`Program ended with an error: ${quoted}`));
      const snap = await snapshot(s);
      assert.equal(snap.current?.real.kind, "exit");
      assert.equal(snap.current?.real.value, error);
      assert.equal(snap.current?.check?.exact, true);
    } finally {
      await s.dc.stop();
    }
  }
});

test("saveTrace: both trajectories in the one format in compare mode, the session's one otherwise", T, async () => {
  const trace = await realRun(CALLS, "chain(1)");
  let s = await open();
  try {
    let ev = await launch(s, { program: CALLS, call: "chain(1)" });
    const kinds: Action["kind"][] = ["step_into", "step_into", "step_over", "step_into", "step_return", "step_into"];
    for (const k of kinds) if (ev.event === "stopped") ev = await act(s, k);
    const text = ((await s.dc.customRequest("ndbg/saveTrace")).body as { text: string }).text;
    const [predicted, real] = parseMany(text);
    assert.equal(predicted.meta?.side, "predicted");
    assert.equal(real.meta?.side, "real");
    assert.equal(real.meta?.debugger, "debugpy");
    assert.equal(predicted.meta?.call, "chain(1)");
    // One step of the trajectory each (compare mode takes the paper's actions), and the first state.
    assert.equal(real.steps.length, kinds.length + 1);
    let i = 0;
    real.steps.forEach((step, k) => {
      if (k > 0) i = transition(trace.frames, i, step.action!);
      const unobserved = ((real.meta?.unobserved as Record<string, string[]> | undefined) ?? {})[String(k)] ?? [];
      const c = checkPair(stateAt(trace, i), { step, unobserved: unobserved as RealState["unobserved"], origin: "stop" });
      assert.ok(c?.exact, `real step ${k} is the tracer's state ${i}`);
      // (what only a debugger shows of a real run is not written: a return's caller, a value just returned)
      const bare = (x: object | undefined): object | undefined => (x ? { ...x, stdout: undefined, caller: undefined, returned: undefined } : x);
      assert.deepEqual(bare(predicted.steps[k].frame ?? predicted.steps[k].exit), bare(stateAt(trace, i).frame ?? stateAt(trace, i).exit), `predicted step ${k}`);
    });
  } finally {
    await s.dc.stop();
  }
  // Record mode: the one trajectory.
  s = await open();
  try {
    const first = firstOf(s.dc, ["stopped"]);
    await Promise.all([s.dc.waitForEvent("initialized").then(() => s.dc.configurationDoneRequest()), s.dc.launch({ mode: "record", trusted: true, program: CALLS, call: "chain(1)", stopOnEntry: true })]);
    await first;
    await act(s, "step_into");
    const text = ((await s.dc.customRequest("ndbg/saveTrace")).body as { text: string }).text;
    const t = parse(text);
    assert.equal(t.meta?.mode, "record");
    assert.equal(t.steps.length, 2);
    assert.equal(t.steps[1].action?.kind, "step_into");
    await assert.rejects(s.dc.customRequest("ndbg/compare"), /not in compare mode/);
  } finally {
    await s.dc.stop();
  }
});

test("compare mode runs forwards only, and says how to get debugpy when the Python has none", T, async () => {
  let s = await open();
  try {
    await launch(s, { program: CALLS, call: "chain(1)" });
    await act(s, "step_into");
    await assert.rejects(s.dc.stepBackRequest(THREAD), /compare mode runs forwards only/);
  } finally {
    await s.dc.stop();
  }
  s = await open();
  try {
    const ended = firstOf(s.dc, ["terminated"]);
    await assert.rejects(s.dc.launch({ mode: "compare", predictor: "record", trusted: true, program: CALLS, call: "chain(1)", python: "/nonexistent/python3" }), /debugger \(debugpy\) is needed[\s\S]*python3-debugpy/);
    await ended;
  } finally {
    await s.dc.stop();
  }
});

test("with the model predicting: the protocol holds, flags equal a recomputation, and Real still follows the real run", T, async () => {
  const model = randomModel(join(dir, "random.gguf"), 2);
  const program = join(FIX, "tiny.py"); // short enough for the tiny model's context
  const call = "fib(3)";
  const trace = await realRun(program, call);
  const s = await open();
  try {
    let ev = await launch(s, { program, call, predictor: "model", model, gpu: "cpu", threads: 1 });
    let i = 0;
    let pairs = 1;
    for (let n = 0; n < 6 && ev.event === "stopped"; n++) {
      const snap = await snapshot(s);
      const pair = snap.current!;
      // One pair per action whose prediction succeeded; a failed one leaves both sides where they were.
      if (snap.history.length === pairs + 1) i = transition(trace.frames, i, { kind: "step_into" });
      else assert.equal(snap.history.length, pairs, "no pair for a failed prediction");
      pairs = snap.history.length;
      // The flags are those of the two states shown, whatever the model wrote.
      const real: RealState = { step: viewStep(pair.real), unobserved: pair.real.unobserved ?? [], origin: pair.real.origin! };
      assert.deepEqual(pair.check, checkPair(viewStep(pair.predicted), real) ?? null);
      const frames = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
      if (frames.length) {
        const scopes = await compareScopes(s);
        // The model's side says it is predicted, with the state's confidence (none for the given first state).
        assert.equal(scopes.names[1], "Real (debugpy)");
        assert.match(scopes.names[0], n === 0 ? /^Predicted$/ : /^Predicted(?: \(\d+%(?: ⚠ low confidence)?\))?$/);
        assert.deepEqual(marked(scopes.predicted).filter((x) => !x.startsWith("(")).sort(), [...(pair.check?.differing ?? [])].sort());
        // The real side follows the user's actions over the real run, not the prediction.
        expectReal(scopes, stateAt(trace, i), pair.real.unobserved ?? [], `model step ${n}`);
      }
      const a = snap.agreement;
      assert.ok(a.states.agree <= a.states.total && a.states.total === a.compared);
      ev = await act(s, "step_into");
    }
    assert.match(s.text("console"), /compare · first state: /);
  } finally {
    await s.dc.stop();
  }
});
