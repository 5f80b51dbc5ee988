// Predict mode over the real protocol with the bundled model, on the fixture programs and on
// programs written the way users write them (test/fixtures/userstyle: classes, several
// functions, module code, exceptions, generators, closures): every state of every session is one
// the program can be in. Each session steps in, over, out and continues to a breakpoint; its
// trajectory (ndbg/saveTrace) is then checked state by state against the rules of
// adapter/rules/reach.ts, each state from the session before it.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import { refusal } from "../../adapter/rules/refusal.js";
import { modelAloneRules, nextOf } from "../support/reach.js";
import { lastFrame } from "../../adapter/model/dialect.js";
import { parsePython } from "../../adapter/pyread/parse.js";
import { parse } from "../../adapter/format/trajectory.js";
import { ROOT, buildDist } from "../support/dist.js";
import { THREAD, launchToFirstStop, openSession, stopAfter } from "../support/dap.js";

const T = { timeout: 600_000 };
// Every third program of each folder (a model-alone session costs about a prediction a move; all
// of them took six minutes of the suite): NDBG_REACH_ALL=1 checks them all.
const PROGRAMS = ["programs", "userstyle"].flatMap((dir) =>
  readdirSync(join(ROOT, "test", "fixtures", dir))
    .filter((f) => f.endsWith(".py"))
    .sort()
    .filter((_, i) => process.env.NDBG_REACH_ALL === "1" || i % 3 === 0)
    .map((f) => join(ROOT, "test", "fixtures", dir, f)),
);

before(() => buildDist());

const MOVES: ((dc: DebugClient) => Promise<unknown>)[] = [
  (dc) => dc.stepInRequest(THREAD),
  (dc) => dc.stepInRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.stepInRequest(THREAD),
  (dc) => dc.stepInRequest(THREAD),
  (dc) => dc.stepOutRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
  (dc) => dc.continueRequest(THREAD),
  (dc) => dc.stepInRequest(THREAD),
  (dc) => dc.nextRequest(THREAD),
];

test("every predicted state of every session is reachable: no function never called, no name never bound, no lost parameter, no dropped caller", T, async () => {
  let states = 0;
  const refused: string[] = [];
  const rejected: string[] = [];
  for (const program of PROGRAMS) {
    const source = readFileSync(program, "utf8");
    const src = await parsePython(source);
    // A breakpoint past the middle of the file, for continue.
    const bp = src.statementLines[Math.floor(src.statementLines.length * 0.6)] ?? 1;
    const s = await openSession(120_000);
    try {
      // The model alone: its states are the subject (a sealed run's are real ones, which no rule needs to admit).
      const { first } = await launchToFirstStop(s.dc, { program, mode: "predict", compute: false, gpu: "cpu", threads: 1, stopOnEntry: true }, program, [{ line: bp }]);
      if (first.event !== "stopped") continue;
      for (const move of MOVES) if ((await stopAfter(s.dc, move)).event !== "stopped") break;
      rejected.push(...s.text().split("\n").filter((l) => /cannot be in/.test(l)).map((l) => `${program}: ${l}`));
      const text = ((await s.dc.customRequest("ndbg/saveTrace")).body as { text: string }).text;
      const trajectory = parse(text);
      const steps = trajectory.steps;
      // The rules the model alone is held to (no value CPython computed), of the Python version
      // whose states the session shows (3.12 runs comprehensions inline).
      const reach = modelAloneRules(src, trajectory.python);
      for (let k = 1; k < steps.length; k++) {
        const action = steps[k].action;
        assert.ok(action, `state ${k} of ${program} has its action`);
        const next = await nextOf(reach, steps.slice(0, k), action);
        const why = next && refusal(next, steps[k], lastFrame(steps.slice(0, k)));
        if (why) refused.push(`${program} state ${k} (${action.kind}): ${why}`);
        states++;
      }
    } finally {
      await s.dc.stop().catch(() => undefined);
    }
  }
  assert.deepEqual(refused, []);
  // The grammar and the check are one rule: no answer decoded with it was refused afterwards.
  assert.deepEqual(rejected, [], "the grammar let through states the check refused");
  assert.ok(states >= 100, `${states} predicted states checked over ${PROGRAMS.length} programs`);
});
