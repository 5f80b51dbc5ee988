// Trust in the adapter itself, over the real protocol (the built adapter): modes that run the
// program (record, compare) are refused unless the launch says the workspace is trusted, and a
// `restart` cannot turn a session into another mode. Predict and replay need no trust. The
// program writes a file when it runs, so "not run" is checked, not assumed.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { ROOT, buildDist } from "./support/dist.js";
import { THREAD, firstOf, launchToFirstStop, openSession } from "./support/dap.js";

const T = { timeout: 180_000 };
let dir = "";
let program = "";
let marker = "";

before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-adapter-trust-"));
  program = join(dir, "ran.py");
  marker = join(dir, "ran.txt");
  writeFileSync(program, `open(${JSON.stringify(marker)}, "w").write("ran")\n\ndef f(x):\n    y = x + 1\n    return y\n`);
});

after(() => rmSync(dir, { recursive: true, force: true }));

const UNTRUSTED = /Invalid launch configuration: (record|compare) mode runs the program, which needs a trusted workspace, and the client did not say this one is \("trusted": true\); predict and replay modes never run it$/;

test("record and compare launches are refused unless the client says the workspace is trusted, and the program never runs", T, async () => {
  for (const args of [
    { mode: "record" },
    { mode: "record", trusted: false },
    { mode: "compare", predictor: "record" },
    { mode: "compare", predictor: "model", trusted: false },
  ]) {
    const s = await openSession(30_000);
    try {
      await s.dc.initializeRequest();
      const ended = firstOf(s.dc, ["terminated"]);
      await assert.rejects(s.dc.launchRequest({ program, call: "f(1)", ...args } as unknown as DebugProtocol.LaunchRequestArguments), UNTRUSTED, JSON.stringify(args));
      await ended;
      assert.match(s.text("stderr"), /runs the program, which needs a trusted workspace/);
      assert.equal(existsSync(marker), false, `${JSON.stringify(args)}: the program ran`);
    } finally {
      await s.dc.stop();
    }
  }
  const s = await openSession(30_000);
  try {
    await s.dc.initializeRequest();
    await assert.rejects(s.dc.launchRequest({ program, mode: "record", trusted: "yes" } as DebugProtocol.LaunchRequestArguments), /"trusted" must be true or false, not "yes"/);
  } finally {
    await s.dc.stop();
  }
});

test("replay and predict need no trust; a restart cannot turn a predict session into a record session", T, async () => {
  const replay = await openSession(30_000);
  try {
    const trace = join(ROOT, "test", "golden", "minimal.ndbg");
    const { first } = await launchToFirstStop(replay.dc, { program: trace, mode: "replay", stopOnEntry: true }, trace);
    assert.equal(first.event, "stopped");
  } finally {
    await replay.dc.stop();
  }
  const s = await openSession(120_000);
  try {
    const { first } = await launchToFirstStop(s.dc, { program, call: "f(1)", mode: "predict", gpu: "cpu", threads: 1, stopOnEntry: true }, program);
    assert.equal(first.event, "stopped");
    assert.equal(existsSync(marker), false, "predict mode ran the program");
    // A restart to record mode: refused for want of trust, and with trust for the change of mode.
    const restart = (extra: object) => s.dc.restartRequest({ arguments: { type: "neural-python", request: "launch", program, call: "f(1)", mode: "record", ...extra } as unknown as DebugProtocol.LaunchRequestArguments });
    await assert.rejects(restart({}), UNTRUSTED);
    await assert.rejects(restart({ trusted: true }), /restart cannot change the mode \(predict to record\): start a new session in record mode$/);
    assert.equal(existsSync(marker), false, "a restart ran the program");
    // The session goes on as it was.
    const [top] = (await s.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal(top.name, "f");
    const [scope] = (await s.dc.scopesRequest({ frameId: top.id })).body.scopes;
    const locals = (await s.dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
    assert.deepEqual(Object.fromEntries(locals.map((v) => [v.name, v.value])), { x: "1" });
  } finally {
    await s.dc.stop();
  }
});
