// Hostile requests over the real protocol: the built adapter driven by a DAP client, predict mode
// with the bundled model on the CPU (no program runs). Expressions whose values would print in
// gigabytes, ill-typed and oversized arguments, unsupported requests and out-of-range launch
// values each get a quick error response that names what is wrong, without a stack trace or an
// echo of the input, and the session answers the next request as before.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { buildDist } from "./support/dist.js";
import { THREAD, launchToFirstStop, openSession, type Session } from "./support/dap.js";

const T = { timeout: 180_000 };
let dir = "";
let program = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-hardening-"));
  program = join(dir, "show.py");
  writeFileSync(program, 'def show(x):\n    y = x * 2\n    print("y is", y)\n    return y\n');
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** Any request, its arguments as given (even ill-typed); resolves with the whole response, or rejects after `ms`. */
function raw(dc: DebugClient, command: string, args?: unknown, ms = 10_000): Promise<DebugProtocol.Response> {
  const client = dc as unknown as { doSend(command: string, args: unknown, done: (r: DebugProtocol.Response) => void): void };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer to ${command} within ${ms} ms`)), ms);
    client.doSend(command, args, (r) => {
      clearTimeout(timer);
      resolve(r);
    });
  });
}

/** An error response that names what is wrong, with no stack trace, no echo of a big input; answered within `ms`. */
async function refused(dc: DebugClient, command: string, args: unknown, why: RegExp, ms = 5_000): Promise<DebugProtocol.Response> {
  const t0 = performance.now();
  const r = await raw(dc, command, args, ms);
  const took = performance.now() - t0;
  assert.equal(r.success, false, `${command} ${JSON.stringify(args)?.slice(0, 80)}: answered success`);
  assert.match(r.message ?? "", why, `${command}: ${r.message}`);
  assertClean(r);
  assert.ok(took < ms, `${command} took ${Math.round(took)} ms`);
  return r;
}

/** No stack trace, and no more than a few hundred characters of message, anywhere in a response. */
function assertClean(r: DebugProtocol.Response): void {
  const text = JSON.stringify(r);
  assert.doesNotMatch(text, /\bat [^ ]+ \(|\.(js|ts):\d+:\d+|_stack/, `${r.command}: a stack trace in ${text.slice(0, 300)}`);
  assert.ok((r.message ?? "").length < 600, `${r.command}: a message of ${r.message?.length} characters`);
}

/** Launches show(3) with the model alone (its states can be edited), stopped at the entry; the top frame's id and locals reference. */
async function start(s: Session): Promise<{ frameId: number; locals: number }> {
  const { first } = await launchToFirstStop(s.dc, { program, call: "show(3)", mode: "predict", compute: false, gpu: "cpu", threads: 1, stopOnEntry: true }, program);
  assert.equal(first.event, "stopped");
  const [top] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
  const [scope] = (await s.dc.scopesRequest({ frameId: top.id })).body.scopes;
  return { frameId: top.id, locals: scope.variablesReference };
}

/** The session still answers: its state, and an evaluation over it. */
async function stillAnswers(dc: DebugClient, frameId: number): Promise<void> {
  assert.equal((await dc.threadsRequest()).body.threads.length, 1);
  assert.equal((await dc.evaluateRequest({ expression: "x + 1", frameId, context: "repl" })).body.result, "4");
}

test("expressions whose values would print in gigabytes: a quick answer cut short in every context; too large as a variable's new value", T, async () => {
  const s = await openSession(60_000);
  try {
    const { frameId, locals } = await start(s);
    for (const context of ["watch", "hover", "repl"])
      for (const expression of ["['a'*10**6]*10**6", "[[[0]*1000]*1000]*1000", "sorted([x, 0] * 500000)"]) {
        const t0 = performance.now();
        const r = await raw(s.dc, "evaluate", { expression, frameId, context }, 5_000);
        assert.equal(r.success, true, `${expression}: ${r.message}`);
        assert.match((r.body as { result: string }).result, /…\(cut\)/, expression);
        assert.ok((r.body as { result: string }).result.length < 2_000, expression);
        assert.ok(performance.now() - t0 < 5_000, `${expression} took ${Math.round(performance.now() - t0)} ms`);
      }
    await refused(s.dc, "setVariable", { variablesReference: locals, name: "x", value: "[[[0]*1000]*1000]*1000" }, /^cannot set x to \[\[\[0\]\*1000\]\*1000\]\*1000: too large to set/, 5_000);
    await refused(s.dc, "evaluate", { expression: "10**10**10", frameId, context: "repl" }, /took longer than 5 s/, 30_000);
    await stillAnswers(s.dc, frameId);
    // The same value below the bounds is set.
    const set = await s.dc.setVariableRequest({ variablesReference: locals, name: "x", value: "[[0] * 3] * 2" });
    assert.equal(set.body.value, "[[0, 0, 0], [0, 0, 0]]");
  } finally {
    await s.dc.stop();
  }
});

test("setVariable: oversized values and names are refused by field; names every object has are not locals", T, async () => {
  const s = await openSession(60_000);
  try {
    const { frameId, locals } = await start(s);
    const long = "1 + ".repeat(5_000) + "1";
    await refused(s.dc, "setVariable", { variablesReference: locals, name: "x", value: long }, /^setVariable: "value" is 20001 characters long \(at most 10000\)$/);
    await refused(s.dc, "setVariable", { variablesReference: locals, name: "x", value: 5 }, /^setVariable: "value" must be a string, not 5$/);
    await refused(s.dc, "setVariable", { variablesReference: locals, name: ["x"], value: "5" }, /^setVariable: "name" must be a string, not an array of 1$/);
    await refused(s.dc, "setVariable", { variablesReference: "1", name: "x", value: "5" }, /^setVariable: "variablesReference" must be a whole number, not "1"$/);
    for (const name of ["__proto__", "constructor", "toString", "hasOwnProperty"])
      await refused(s.dc, "setVariable", { variablesReference: locals, name, value: "5" }, new RegExp(`there is no local named "${name}" here`));
    await stillAnswers(s.dc, frameId);
    assert.equal((await s.dc.setVariableRequest({ variablesReference: locals, name: "x", value: "x * 10" })).body.value, "30");
  } finally {
    await s.dc.stop();
  }
});

test("setBreakpoints: every ill-typed argument gets an error naming it, and the next good request is answered", T, async () => {
  const s = await openSession(60_000);
  try {
    const { frameId } = await start(s);
    const source = { path: program };
    const cases: [unknown, RegExp][] = [
      [undefined, /^setBreakpoints: the arguments are required$/],
      ["x", /^setBreakpoints: the arguments must be an object, not "x"$/],
      [{ breakpoints: [{ line: 2 }] }, /^setBreakpoints: "source" is required$/],
      [{ source: "show.py", breakpoints: [] }, /^setBreakpoints: "source" must be an object, not "show.py"$/],
      [{ source: { path: 7 } }, /^setBreakpoints: "source.path" must be a string, not 7$/],
      [{ source: { path: program, sourceReference: "1" } }, /"source.sourceReference" must be a whole number, not "1"$/],
      [{ source, breakpoints: { line: 2 } }, /^setBreakpoints: "breakpoints" must be an array, not an object$/],
      [{ source, breakpoints: "2" }, /"breakpoints" must be an array, not "2"$/],
      [{ source, breakpoints: [2] }, /"breakpoints\[0\]" must be an object, not 2$/],
      [{ source, breakpoints: [{ line: 2 }, { line: "3" }] }, /"breakpoints\[1\].line" must be a whole number, not "3"$/],
      [{ source, breakpoints: [{ line: 2.5 }] }, /"breakpoints\[0\].line" must be a whole number, not 2.5$/],
      [{ source, breakpoints: [{}] }, /"breakpoints\[0\].line" is required$/],
      [{ source, breakpoints: [{ line: 2, condition: 1 }] }, /"breakpoints\[0\].condition" must be a string, not 1$/],
      [{ source, breakpoints: [{ line: 2, condition: ["x"] }] }, /"breakpoints\[0\].condition" must be a string, not an array of 1$/],
      [{ source, breakpoints: [{ line: 2, hitCondition: {} }] }, /"breakpoints\[0\].hitCondition" must be a string, not an object$/],
      [{ source, lines: ["2"] }, /"lines\[0\]" must be a whole number, not "2"$/],
      [{ source, breakpoints: [], sourceModified: "no" }, /"sourceModified" must be true or false, not "no"$/],
      [{ source, breakpoints: Array(10_001).fill({ line: 2 }) }, /"breakpoints" has 10001 entries \(at most 10000\)$/],
      [{ source: { path: "p".repeat(100_000) }, breakpoints: [{ line: "x".repeat(100_000) }] }, /"breakpoints\[0\].line" must be a whole number, not "x{60}…"$/],
    ];
    for (const [args, why] of cases) await refused(s.dc, "setBreakpoints", args, why);
    const good = await s.dc.setBreakpointsRequest({ source, breakpoints: [{ line: 3, condition: "y > 1" }] });
    assert.deepEqual(good.body.breakpoints.map((b) => [b.line, b.verified]), [[3, true]]);
    // A condition too long to evaluate is reported on its breakpoint, not echoed.
    const long = await s.dc.setBreakpointsRequest({ source, breakpoints: [{ line: 3, condition: "y + ".repeat(20_000) + "1" }] });
    assert.match(long.body.breakpoints[0].message ?? "", /^condition: expression longer than 10000 characters; it stops there every time$/);
    await stillAnswers(s.dc, frameId);
  } finally {
    await s.dc.stop();
  }
});

test("unsupported requests are refused with a reason, and no request's error carries a stack trace", T, async () => {
  const s = await openSession(60_000);
  try {
    const { frameId } = await start(s);
    await refused(s.dc, "attach", { program }, /^attach is not supported: start a session with launch/);
    await refused(s.dc, "goto", { threadId: 1, targetId: 1 }, /^goto is not supported/);
    await refused(s.dc, "setExpression", { expression: "x", value: "1", frameId }, /^setExpression is not supported/);
    await refused(s.dc, "restartFrame", { frameId }, /^restartFrame is not supported/);
    // Every request the adapter handles, with arguments missing, of the wrong type, or with wrong fields.
    const commands = ["initialize", "setBreakpoints", "stackTrace", "scopes", "variables", "evaluate", "setVariable", "source", "cancel", "exceptionInfo", "pause", "ndbg/compare", "ndbg/saveTrace", "modules", "nosuch"];
    const bad: unknown[] = [undefined, "x", [1, 2], { frameId: "1", variablesReference: {}, expression: 1, sourceReference: [], requestId: "r", levels: "all" }];
    for (const command of commands)
      for (const args of bad) {
        const r = await raw(s.dc, command, args);
        assertClean(r);
        if (!r.success) assert.ok(r.message, `${command}: an error without a message`);
      }
    await stillAnswers(s.dc, frameId);
  } finally {
    await s.dc.stop();
  }
});

test("launch: a timeout past what Node's timers can wait is refused with the limit, and a long value is not echoed", T, async () => {
  for (const [args, why] of [
    [{ timeout: 2_147_483 }, /^Invalid launch configuration: "timeout" must be at most 1000000 seconds \(about 11 days\), not 2147483$/],
    [{ timeout: 1e300 }, /"timeout" must be at most 1000000 seconds/],
    [{ mode: "m".repeat(1_000_000) }, /^Invalid launch configuration: "mode" must be one of predict, record, compare, replay, hybrid, not "m{60}…"$/],
    [{ threads: "t".repeat(1_000_000) }, /"threads" must be a whole number of CPU threads \(0 chooses from the machine\), not "t{60}…"$/],
  ] as const) {
    const s = await openSession(30_000);
    try {
      await refused(s.dc, "launch", { program, call: "show(3)", mode: "record", trusted: true, ...args }, why);
    } finally {
      await s.dc.stop();
    }
  }
});
