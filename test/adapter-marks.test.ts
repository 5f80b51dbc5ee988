// Every guess marked, over the real protocol: the built adapter driven by a DAP client, the
// bundled model predicting on the CPU. With the model alone ("compute": false) the scope names the state's confidence,
// each variable's type says "predicted", values below the lowConfidence threshold carry the
// "⚠ low confidence" mark, hover / watch / REPL answers say they are predicted, and nothing the
// model writes is sent as the program's stdout (how predicted output is labelled: test/marks.test.ts;
// the model alone, held to no value CPython computed, writes no output for this program's print).
// The first state (bound from the entry call) is no guess and carries no mark. (A value computed
// from a guess, marked "from a predicted value", is a sealed or hybrid run's: test/adapter-hybrid.test.ts.)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { THREAD, launchToFirstStop, openSession, stopAfter, type Session } from "./support/dap.js";
import { REQUESTS, type StatsBody } from "../adapter/protocol.js";
import { bundledModel } from "../adapter/model/resolve.js";
import { calibrated, calibrationPath, readCalibration } from "../adapter/model/calibration.js";

const T = { timeout: 180_000 };
let dir = "";
let program = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-marks-"));
  program = join(dir, "show.py");
  // Line 9 follows from the entry alone; the rest, twice's value, z and the print, are the model's guesses.
  writeFileSync(program, 'FACTOR = 2\n\n\ndef twice(v):\n    return v * FACTOR\n\n\ndef show(x):\n    y = twice(x)\n    z = y + 1\n    print("y is", z)\n    return twice(y)\n');
});

after(() => rmSync(dir, { recursive: true, force: true }));

const LOW = "⚠ low confidence";

interface Stop {
  line: number;
  scope: DebugProtocol.Scope;
  vars: DebugProtocol.Variable[];
  evaluate: (context: string) => Promise<DebugProtocol.EvaluateResponse["body"]>;
}

/** The top frame's scope, its variables, and an evaluate of its first local in a given context. */
async function inspect(dc: DebugClient): Promise<Stop> {
  const [top] = (await dc.stackTraceRequest(THREAD)).body.stackFrames;
  const [scope] = (await dc.scopesRequest({ frameId: top.id })).body.scopes;
  const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
  const name = vars.find((v) => !v.name.startsWith("("))?.name ?? "x";
  return { line: top.line, scope, vars, evaluate: async (context) => (await dc.evaluateRequest({ expression: name, frameId: top.id, context })).body };
}

/** Steps over to the end (at most `max` steps), inspecting each stop. */
async function stepToEnd(s: Session, max: number, each: (stop: Stop, n: number) => Promise<void>): Promise<void> {
  for (let n = 1; n <= max; n++) {
    const e = await stopAfter(s.dc, (dc) => dc.nextRequest(THREAD));
    if (e.event === "terminated") return;
    await each(await inspect(s.dc), n);
  }
}

test("the model alone: scope, variables, hover, watch and REPL say the values are predicted, with the confidence; predicted output is labelled", T, async () => {
  const s = await openSession(60_000);
  const confidences: number[] = [];
  s.dc.on("ndbg/model", (e: DebugProtocol.Event) => typeof e.body?.confidence === "number" && confidences.push(e.body.confidence));
  try {
    // Threshold 1: every state the model predicts is below it, so every value carries the low mark.
    const { first } = await launchToFirstStop(s.dc, { program, call: "show(3)", mode: "predict", compute: false, gpu: "cpu", threads: 1, lowConfidence: 1, stopOnEntry: true }, program);
    assert.equal(first.event, "stopped");
    // The entry state is bound from the call: no guess, no mark.
    const entry = await inspect(s.dc);
    assert.equal(entry.scope.name, "Locals");
    assert.deepEqual(entry.vars.map((v) => [v.name, v.value, v.type]), [["x", "3", "int"]]);
    assert.equal((await entry.evaluate("hover")).result, "3");
    let predicted = 0;
    let edits = 0;
    await stepToEnd(s, 6, async (stop, n) => {
      const returning = stop.vars.some((v) => v.name.startsWith("(return)"));
      predicted++;
      const word = "predicted";
      const c = confidences.at(-1);
      assert.equal(typeof c, "number", `step ${n}: the model's confidence in the ndbg/model event`);
      const pct = `${Math.round(c! * 100)}%`;
      const low = c! < 1;
      assert.equal(stop.scope.name, `Predicted locals (${pct}${low ? ` ${LOW}` : ""})`, `step ${n}`);
      assert.ok(stop.vars.length > 0, `step ${n}: the state has variables`);
      for (const v of stop.vars) {
        assert.match(v.type ?? "", new RegExp(`${word} \\(${pct}\\)$`), `step ${n}: ${v.name}'s type says ${word}`);
        assert.equal(v.value.endsWith(`  ${LOW}`), low, `step ${n}: ${v.name} = ${v.value}`);
      }
      for (const context of ["hover", "watch", "repl"]) {
        const r = await stop.evaluate(context);
        assert.match(r.result, new RegExp(`  \\(${word}, ${pct}${low ? ` ${LOW}` : ""}\\)$`), `step ${n}, ${context}: ${r.result}`);
        assert.match(r.type ?? "", /predicted/);
      }
      // Copy Value gets the bare value.
      assert.doesNotMatch((await stop.evaluate("clipboard")).result, /predicted/);
      // (at the return: a state computed from an edited one would have no confidence to show)
      if (!edits && low && returning && stop.vars.some((v) => v.name === "x")) {
        edits++;
        // VS Code starts an edit from the value shown: the mark is not part of the new value.
        // The edited state is the user's: no confidence any more, no low mark, still a prediction.
        const set = await s.dc.setVariableRequest({ variablesReference: stop.scope.variablesReference, name: "x", value: `7  ${LOW}` });
        assert.equal(set.body.value, "7");
        const edited = await inspect(s.dc);
        assert.equal(edited.scope.name, "Predicted locals");
        const x = edited.vars.find((v) => v.name === "x")!;
        assert.deepEqual([x.value, x.type], ["7", "int · predicted"]);
        assert.equal((await edited.evaluate("hover")).result, "7  (predicted)");
      }
    });
    assert.ok(predicted >= 2, `at least two predicted stops (got ${predicted})`);
    assert.equal(edits, 1, "a low-confidence value was edited");
    assert.ok(confidences.some((c) => c < 1), "a state below the threshold of 1 was marked");
    // Nothing the program wrote: the model alone runs nothing.
    assert.equal(s.text("stdout"), "", "no output event claims to be the program's stdout");
    const said = s.text("console");
    assert.match(said, /Program exited normally \(predicted, \d+% sure\)\.|Program ended with an error: .* \(predicted, \d+% sure\)/);
  } finally {
    await s.dc.stop();
  }
});

test("the confidence shown is the shipped calibration of the model's token probabilities, and the default low mark is below 50%", T, async () => {
  const model = bundledModel()!;
  const shipped = await readCalibration(model);
  assert.ok(shipped, "the bundled model has its calibration");
  const s = await openSession(60_000);
  try {
    // No lowConfidence: the default threshold, 0.5.
    await launchToFirstStop(s.dc, { program, call: "show(3)", mode: "predict", compute: false, gpu: "cpu", threads: 1, stopOnEntry: true }, program);
    let checked = 0;
    await stepToEnd(s, 4, async (stop, n) => {
      const stats = (await s.dc.customRequest(REQUESTS.stats, {})).body as StatsBody;
      assert.equal(stats.model?.calibration, calibrationPath(model), "the session names the calibration it shows");
      // One model call per step with the model alone: the last one is this state's.
      const st = stats.steps.at(-1)!;
      assert.equal(typeof st.logProb, "number");
      const raw = { mean: st.confidence, min: st.minConfidence, logProb: st.logProb!, tokens: st.generatedTokens + 1 };
      const p = calibrated(shipped.calibration, raw);
      const pct = `${Math.round(p * 100)}%`;
      assert.equal(stop.scope.name, `Predicted locals (${pct}${p < 0.5 ? ` ${LOW}` : ""})`, `step ${n}: the calibrated ${p}, not the mean token probability ${st.confidence}`);
      for (const v of stop.vars) assert.match(v.type ?? "", new RegExp(`predicted \\(${pct}\\)$`), `step ${n}: ${v.name}`);
      checked++;
    });
    assert.ok(checked >= 2, `at least two predicted stops (got ${checked})`);
  } finally {
    await s.dc.stop();
  }
});

test("the model alone: with lowConfidence 0 the states are marked predicted, none as low confidence", T, async () => {
  const s = await openSession(60_000);
  try {
    await launchToFirstStop(s.dc, { program, call: "show(3)", mode: "predict", compute: false, gpu: "cpu", threads: 1, lowConfidence: 0, stopOnEntry: true }, program);
    let stops = 0;
    await stepToEnd(s, 3, async (stop) => {
      stops++;
      assert.match(stop.scope.name, /^Predicted locals \(\d+%\)$/);
      for (const v of stop.vars) assert.doesNotMatch(v.value, /⚠/);
      assert.match((await stop.evaluate("watch")).result, /  \((predicted|from a predicted value), \d+%\)$/);
    });
    assert.ok(stops > 0);
  } finally {
    await s.dc.stop();
  }
  const bad = await openSession(60_000);
  try {
    await bad.dc.initializeRequest({ adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true });
    await assert.rejects(bad.dc.launch({ program, call: "show(3)", mode: "predict", lowConfidence: 2 }), /"lowConfidence" must be a number from 0 to 1/);
  } finally {
    await bad.dc.stop();
  }
});

test("record mode: real values carry no mark, and the program's output is its stdout", T, async () => {
  const s = await openSession(60_000);
  try {
    await launchToFirstStop(s.dc, { program, call: "show(3)", mode: "record", trusted: true, lowConfidence: 1, stopOnEntry: true }, program);
    let stops = 0;
    await stepToEnd(s, 6, async (stop) => {
      stops++;
      assert.equal(stop.scope.name, "Locals");
      for (const v of stop.vars) {
        assert.doesNotMatch(v.type ?? "", /predicted/);
        assert.doesNotMatch(v.value, /⚠/);
      }
      for (const context of ["hover", "watch", "repl"]) assert.doesNotMatch((await stop.evaluate(context)).result, /predicted/);
    });
    assert.equal(stops, 5, "lines 9 to 12 of show, then the return");
    assert.equal(s.text("stdout"), "y is 7\n");
    assert.doesNotMatch(s.text(), /predicted/);
  } finally {
    await s.dc.stop();
  }
});
