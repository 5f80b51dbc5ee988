// One golden DAP transcript: a record-mode session of the built adapter (`node dist/adapter.js`)
// driven through a fixed sequence of requests (initialize, launch, setBreakpoints,
// configurationDone, stackTrace, scopes, variables, next, stepIn, stepOut, continue, evaluate,
// disconnect; a stackTrace after each move shows where it stopped), every message both ways
// written down in wire order (ours as command and arguments) and compared byte for byte with
// test/fixtures/transcript/record.txt. Before comparing, what differs between runs and machines
// is normalized: the adapter's seq numbers (a count of its messages; the request_seq it answers
// stays) and the fixture folder's path. A record session's messages hold no timings (a field
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

test("a record-mode session's DAP transcript is the golden one, byte for byte after normalizing", { timeout: 120_000 }, async () => {
  buildDist();
  const s = new Recorder();
  try {
    const thread = { threadId: 1 };
    await s.request("initialize", { clientID: "transcript", adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true, supportsVariableType: true });
    const initialized = s.event("initialized");
    const launched = s.request("launch", { mode: "record", trusted: true, program: PROGRAM, stopOnEntry: false });
    // The adapter answers the launch once the client may configure: waiting for both keeps the
    // order of the messages on the wire fixed.
    await initialized;
    await launched;
    const first = s.event("stopped", "terminated");
    await s.request("setBreakpoints", { source: { path: PROGRAM }, breakpoints: [{ line: 7 }, { line: 10, condition: "total > 0" }] });
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
  const got = normalize(s.lines);
  if (process.env.NDBG_REGENERATE) writeFileSync(EXPECTED, got);
  assert.equal(got, readFileSync(EXPECTED, "utf8"), "the transcript changed (meant? regenerate: see this file's header)");
});
