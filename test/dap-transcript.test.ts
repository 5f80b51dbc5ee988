// Golden DAP transcripts: a record-mode session, and a predict-mode one (the program run sealed, the
// model filling a function not written yet), each of the built adapter (`node dist/adapter.js`)
// driven through a fixed sequence of requests (initialize, launch, setBreakpoints,
// configurationDone, stackTrace, scopes, variables, next, stepIn, stepOut, continue, evaluate,
// disconnect; a stackTrace after each move shows where it stopped), every message both ways
// written down in wire order (ours as command and arguments) and compared byte for byte with
// test/fixtures/transcript/record.txt (predict.txt). Before comparing, what differs between runs and machines
// is normalized: the adapter's seq numbers (a count of its messages; the request_seq it answers
// stays), the fixture folder's path and, in predict mode, the model's timings; there the
// confidence shown may be a point or two off the golden one (see that test). A record session's messages hold no timings (a field
// that starts to carry one shows up as a diff). Any other change to what the adapter says is a
// diff to read: when it is meant, regenerate the file with
//   NDBG_REGENERATE=1 node --import tsx --test test/dap-transcript.test.ts
// and commit it with the change that caused it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { DapClient } from "../adapter/real/dapClient.js";
import { frameReader } from "../adapter/dap/framing.js";
import { ADAPTER, ROOT, buildDist } from "./support/dist.js";

const FIX = join(ROOT, "test", "fixtures", "transcript");
const PROGRAM = join(FIX, "program.py");
const EXPECTED = join(FIX, "record.txt");
const UNFINISHED = join(FIX, "unfinished.py");
const EXPECTED_PREDICT = join(FIX, "predict.txt");
const WAIT = 30_000;

/** A session whose every message, sent (">") or received ("<"), is one line of the transcript, in wire order. */
class Recorder {
  readonly lines: string[] = [];
  readonly client = new DapClient("adapter", process.execPath, [ADAPTER]);

  constructor() {
    // A second reader on the adapter's stdout: the client resolves responses a microtask after
    // their events, so the wire order is read here, from the bytes.
    const reader = frameReader((f) => this.lines.push("< " + ("body" in f ? f.body.toString("utf8") : `(broken frame: ${f.problem})`)));
    this.client.child.stdout!.on("data", (d: Buffer) => reader.push(d));
  }

  /** Sends a request; resolves with its response. */
  async request(command: string, args?: object): Promise<DebugProtocol.Response> {
    const sent = this.client.send(command, args, WAIT);
    // DapClient numbers its requests 1, 2, ... in the order they are sent: the same every run.
    this.lines.push("> " + JSON.stringify({ command, arguments: args }));
    const { msg } = await sent;
    assert.ok(msg.success, `${command} failed: ${msg.message}`);
    return msg;
  }

  /** The next event of one of these names. */
  event(...names: string[]): Promise<DebugProtocol.Event> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => (off(), reject(new Error(`no ${names.join(" or ")} event within ${WAIT} ms`))), WAIT);
      const off = this.client.onEvent((e) => {
        if (!names.includes(e.event)) return;
        clearTimeout(timer);
        off();
        resolve(e);
      });
    });
  }

  /** A move: its response and the stop (or end) it leads to. */
  async move(command: string, args: object): Promise<DebugProtocol.Event> {
    const stop = this.event("stopped", "terminated");
    await this.request(command, args);
    return stop;
  }
}

/** The transcript with what varies between runs and machines replaced: the adapter's seq numbers, the fixture folder. */
function normalize(lines: string[]): string {
  const text = lines.map((l) => l.replace(/^< \{"seq":\d+,/, '< {"seq":"#",')).join("\n") + "\n";
  return text.replaceAll(JSON.stringify(FIX).slice(1, -1), "<fixtures>");
}

const CHANGED = "the transcript changed (meant? regenerate: see this file's header)";

/**
 * One session through the fixed sequence of requests, its transcript compared with `expected`:
 * `launch` decides the mode; breakpoints on the lines given (the second with a condition).
 */
async function transcript(
  program: string,
  launch: Record<string, unknown>,
  lines: [number, number],
  expected: string,
  vary: (text: string) => string = (t) => t,
  same: (got: string, want: string) => void = (got, want) => assert.equal(got, want, CHANGED),
): Promise<void> {
  buildDist();
  const s = new Recorder();
  try {
    const thread = { threadId: 1 };
    await s.request("initialize", { clientID: "transcript", adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true, supportsVariableType: true });
    const initialized = s.event("initialized");
    const launched = s.request("launch", { ...launch, program, stopOnEntry: false });
    // The adapter answers the launch once the client may configure: waiting for both keeps the
    // order of the messages on the wire fixed.
    await initialized;
    await launched;
    const first = s.event("stopped", "terminated");
    await s.request("setBreakpoints", { source: { path: program }, breakpoints: [{ line: lines[0] }, { line: lines[1], condition: "total > 0" }] });
    await s.request("configurationDone");
    assert.equal((await first).event, "stopped");
    const { body } = (await s.request("stackTrace", { ...thread, startFrame: 0, levels: 20 })) as DebugProtocol.StackTraceResponse;
    const { body: scopes } = (await s.request("scopes", { frameId: body.stackFrames[0].id })) as DebugProtocol.ScopesResponse;
    await s.request("variables", { variablesReference: scopes.scopes[0].variablesReference });
    // After each move, where it stopped: the top frame.
    let top = 0;
    for (const command of ["next", "stepIn", "stepOut", "continue"]) {
      assert.equal((await s.move(command, thread)).event, "stopped", command);
      top = ((await s.request("stackTrace", { ...thread, startFrame: 0, levels: 1 })) as DebugProtocol.StackTraceResponse).body.stackFrames[0].id;
    }
    await s.request("evaluate", { expression: "total * 10", frameId: top, context: "watch" });
    await s.request("disconnect", { terminateDebuggee: true });
  } finally {
    s.client.kill();
  }
  const got = vary(normalize(s.lines));
  if (process.env.NDBG_REGENERATE) writeFileSync(expected, got);
  same(got, readFileSync(expected, "utf8"));
}

test("a record-mode session's DAP transcript is the golden one, byte for byte after normalizing", { timeout: 120_000 }, async () => {
  await transcript(PROGRAM, { mode: "record", trusted: true }, [7, 10], EXPECTED);
});

test("a predict-mode session's (sealed, a function not written yet) is the golden one: exact stops, the hole's value marked", { timeout: 240_000 }, async () => {
  // The model's greedy answer on one CPU thread is the same every run; its timings and the checkout's place are not.
  const timings = (t: string): string => t.replaceAll(JSON.stringify(ROOT).slice(1, -1), "<root>").replace(/"(ms|loadMs|promptMs|generateMs|tokensPerSecond|msPerToken|firstStepMs|elapsedMs)":[\d.e+-]+/g, '"$1":"#"');
  // Its probabilities differ in their last bits with the CPU's kernels (llama.cpp picks AVX2,
  // AVX-512 or AMX ones as the machine has them): a confidence such as 51% reads 52% on another
  // machine, whose greedy answer is the same. Each percentage must be within 2 points of its golden one.
  const PERCENT = /\d+(?=%)/g;
  const near = (got: string, want: string): void => {
    assert.equal(got.replace(PERCENT, "#"), want.replace(PERCENT, "#"), CHANGED);
    const [g, w] = [got, want].map((t) => (t.match(PERCENT) ?? []).map(Number));
    assert.ok(w.length > 0, "the golden transcript shows the hole's confidence");
    g.forEach((p, i) => assert.ok(Math.abs(p - w[i]) <= 2, `confidence ${p}% where the golden transcript says ${w[i]}%`));
  };
  // (the hole's confidence is near the default low mark, 0.5: a threshold away from it keeps the mark the same on every machine)
  await transcript(UNFINISHED, { mode: "predict", threads: 1, gpu: "cpu", lowConfidence: 0.3 }, [7, 10], EXPECTED_PREDICT, timings, near);
});
