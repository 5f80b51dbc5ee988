// Stepping beside debugpy: the same program of two functions and a loop, the same moves (Step
// Over, Into, Out), over DAP in record mode and in predict mode's sealed run, and through real
// debugpy (Debian's python3-debugpy for /usr/bin/python3, driven by adapter/real/debugpy.ts). At
// every stop the function, the line, the locals and the "(return) f" values shown must be
// debugpy's: Step Into stops on a body's first line, Step Over from a function's last line goes on
// to the caller's next line, Step Out stops on the calling line with the value returned (the
// caller's assignment not yet made), and a Step Over across a call shows what it returned.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { Debugpy, findDebugpyPython, type StepCommand } from "../adapter/real/debugpy.js";
import { buildDist } from "./support/dist.js";
import { THREAD, launchToFirstStop, openSession, stopAfter, ungrouped } from "./support/dap.js";

const T = { timeout: 240_000 };

const SOURCE = `def add(a, b):
    s = a + b
    return s


def run(n):
    total = 0
    for i in range(n):
        total = add(total, i)
    return total


result = run(3)
print(result)
`;
const BREAKPOINT = 7; // total = 0

/** The moves after the breakpoint's stop, and what each must show (the stop's function and line; debugpy's say the rest). */
const MOVES: [StepCommand, string][] = [
  ["next", "run:8"],
  ["next", "run:9"],
  ["stepIn", "add:2"], // the body's first line, not the def
  ["next", "add:3"],
  ["next", "run:8"], // from the last line: past the return, to the caller's next line, "(return) add" shown
  ["next", "run:9"],
  ["next", "run:8"], // over the call: "(return) add" shown
  ["next", "run:9"],
  ["stepIn", "add:2"],
  ["stepOut", "run:9"], // the calling line, total not yet assigned, "(return) add" shown
  ["next", "run:8"],
  ["stepOut", "<module>:13"],
  ["next", "<module>:14"],
];
/**
 * Stops where debugpy still shows the value returned before the last stop (it keeps the latest
 * return value in the frame until the next one): shown once, at the first stop after the return.
 */
const DEBUGPY_KEEPS = new Set([6, 8]);

interface Shown {
  where: string;
  locals: Record<string, string>;
  returns: Record<string, string>;
}

let dir = "";
let program = "";
let python = "";
let truth: Shown[] = [];

before(async () => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-steps-debugpy-"));
  program = join(dir, "loop.py");
  writeFileSync(program, SOURCE);
  python = await findDebugpyPython();
  truth = await debugpyStops();
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** debugpy's stops: the breakpoint's, then each move's. */
async function debugpyStops(): Promise<Shown[]> {
  const d = await Debugpy.launch({ python, program, cwd: dirname(program), timeout: 20, maxRepr: 1000 });
  try {
    await d.setBreakpoints([{ line: BREAKPOINT }]);
    const out: Shown[] = [];
    for (const cmd of ["continue", ...MOVES.map(([c]) => c)] as StepCommand[]) {
      const s = await d.command(cmd);
      assert.equal(s.kind, "stop", `debugpy stops after ${cmd}: ${JSON.stringify(s)}`);
      if (s.kind !== "stop") break;
      const f = s.frames[0];
      const { locals, returns } = await d.locals(f, f.name === "<module>");
      out.push({ where: `${f.name}:${f.line}`, locals, returns });
    }
    return out;
  } finally {
    await d.dispose();
  }
}

/** What the adapter shows at a stop: the top frame, its Locals (debugpy's groups opened), the "(return) f" values apart. */
async function shown(dc: import("@vscode/debugadapter-testsupport").DebugClient): Promise<Shown> {
  const [frame] = (await dc.stackTraceRequest(THREAD)).body.stackFrames;
  const [scope] = (await dc.scopesRequest({ frameId: frame.id })).body.scopes;
  const vars: DebugProtocol.Variable[] = await ungrouped(dc, (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables);
  const returns = Object.fromEntries(vars.filter((v) => v.name.startsWith("(return) ")).map((v) => [v.name.slice("(return) ".length), v.value]));
  const locals = Object.fromEntries(vars.filter((v) => !v.name.startsWith("(")).map((v) => [v.name, v.value]));
  return { where: `${frame.name}:${frame.line}`, locals, returns };
}

const REQUEST: Record<StepCommand, (dc: import("@vscode/debugadapter-testsupport").DebugClient) => Promise<unknown>> = {
  next: (dc) => dc.nextRequest(THREAD),
  stepIn: (dc) => dc.stepInRequest(THREAD),
  stepOut: (dc) => dc.stepOutRequest(THREAD),
  continue: (dc) => dc.continueRequest(THREAD),
};

test("debugpy's own stops for the moves, as this test reads them", () => {
  assert.deepEqual(truth.map((s) => s.where), [`run:${BREAKPOINT}`, ...MOVES.map(([, where]) => where)]);
  assert.deepEqual(truth[10].returns, { add: "3" }, "debugpy's Step Out: the value returned");
  assert.equal(truth[10].locals.total, "1", "debugpy's Step Out: the caller's assignment not yet made");
});

for (const [mode, launch] of [
  ["record", { mode: "record", trusted: true }],
  ["predict (sealed)", { mode: "predict", threads: 1 }],
] as const)
  test(`${mode}: every stop of Step Over, Into and Out is debugpy's, with the values returned`, T, async () => {
    const s = await openSession(120_000);
    try {
      await s.dc.initializeRequest();
      const { first } = await launchToFirstStop(s.dc, { ...launch, program, python }, program, [{ line: BREAKPOINT }]);
      assert.equal(first.event, "stopped", s.text());
      const ours: Shown[] = [await shown(s.dc)];
      for (const [cmd] of MOVES) {
        const e = await stopAfter(s.dc, REQUEST[cmd]);
        assert.equal(e.event, "stopped", `${cmd} after ${ours.at(-1)?.where}: ${s.text()}`);
        ours.push(await shown(s.dc));
      }
      ours.forEach((got, k) => {
        const want = truth[k];
        const what = `stop ${k} (${k ? MOVES[k - 1][0] : "the breakpoint"})`;
        assert.equal(got.where, want.where, `${what}: where`);
        assert.deepEqual(got.locals, want.locals, `${what}: the locals`);
        if (DEBUGPY_KEEPS.has(k)) {
          assert.deepEqual(want.returns, truth[k - 1].returns, `${what}: debugpy keeps the last stop's return value`);
          assert.deepEqual(got.returns, {}, `${what}: shown once, at the stop after the return`);
        } else assert.deepEqual(got.returns, want.returns, `${what}: the values returned`);
      });
    } finally {
      await s.dc.stop();
    }
  });

test("record: at the instruction granularity a step goes one event of the run, into a call's def and back out of it", T, async () => {
  const s = await openSession(120_000);
  try {
    const caps = (await s.dc.initializeRequest()).body!;
    assert.equal(caps.supportsSteppingGranularity, true);
    await launchToFirstStop(s.dc, { mode: "record", trusted: true, program, python }, program, [{ line: 9 }]);
    const at = async (): Promise<string> => (await shown(s.dc)).where;
    assert.equal(await at(), "run:9");
    await stopAfter(s.dc, (dc) => dc.stepInRequest({ ...THREAD, granularity: "instruction" }));
    assert.equal(await at(), "add:1", "the call event, on the def");
    await stopAfter(s.dc, (dc) => dc.stepBackRequest({ ...THREAD, granularity: "instruction" }));
    assert.equal(await at(), "run:9", "the event just before");
    await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
    assert.equal(await at(), "add:2", "a statement's step passes the call event");
    await stopAfter(s.dc, (dc) => dc.stepBackRequest(THREAD));
    assert.equal(await at(), "run:9", "and so does a statement's step back");
  } finally {
    await s.dc.stop();
  }
});
