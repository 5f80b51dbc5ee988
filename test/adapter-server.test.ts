// The adapter as a warm server (`node dist/adapter.js --listen=SOCKET --preload=`), as the
// extension runs it: one session per connection over the real protocol, sessions one after the
// other and side by side, a client that vanishes without a disconnect, and the end of the
// process when its parent closes its stdin.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import { runTrace } from "../adapter/real/hostRun.js";
import { connect, startServer, stopServer } from "./support/serve.js";
import { tcpAddress } from "../adapter/dap/serve.js";
import { buildDist } from "./support/dist.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const CALLS = join(ROOT, "test", "fixtures", "dap", "calls.py");
const DEMO = join(ROOT, "examples", "demo.py");
const THREAD = { threadId: 1 };

before(() => buildDist());

async function launch(dc: DebugClient, args: Record<string, unknown>): Promise<void> {
  const stopped = dc.waitForEvent("stopped");
  await Promise.all([dc.waitForEvent("initialized").then(() => dc.configurationDoneRequest()), dc.launch({ stopOnEntry: true, ...args })]);
  await stopped;
}

async function topLine(dc: DebugClient): Promise<number> {
  return (await dc.stackTraceRequest(THREAD)).body.stackFrames[0].line;
}

test("one warm process serves session after session, side by side, and outlives a client that vanishes", async () => {
  const trace = await runTrace(CALLS, { call: "main(3)" });
  const server = await startServer();
  try {
    // Record mode, twice in a row: each session is the real run.
    for (let k = 0; k < 2; k++) {
      const { dc, socket } = await connect(server);
      await launch(dc, { program: CALLS, call: "main(3)", mode: "record", trusted: true });
      assert.equal(await topLine(dc), trace.frames[0].line);
      await Promise.all([dc.nextRequest(THREAD), dc.waitForEvent("stopped")]);
      assert.equal(await topLine(dc), trace.frames[1].line, `session ${k}`);
      await dc.disconnectRequest({});
      socket.end();
    }
    // Two at once: a predict session on the (preloaded) bundled model beside a record session.
    const a = await connect(server);
    const b = await connect(server);
    await Promise.all([launch(a.dc, { program: DEMO, call: "total([3, 1, 2])", mode: "predict" }), launch(b.dc, { program: CALLS, call: "main(3)", mode: "record", trusted: true })]);
    const stack = (await a.dc.stackTraceRequest(THREAD)).body.stackFrames;
    assert.equal(stack[0].name, "total");
    assert.equal(await topLine(b.dc), trace.frames[0].line);
    // A client that goes without a word: the process and the other session carry on.
    a.socket.destroy();
    await Promise.all([b.dc.nextRequest(THREAD), b.dc.waitForEvent("stopped")]);
    assert.equal(await topLine(b.dc), trace.frames[1].line);
    await b.dc.disconnectRequest({});
    b.socket.end();
    assert.equal(server.proc.exitCode, null, server.stderr());
    // The preload runs in the background beside the sessions: its line comes when it is done.
    for (const until = Date.now() + 60_000; !/preloaded .*\.gguf on cpu/.test(server.stderr()) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 200));
    assert.match(server.stderr(), /preloaded .*\.gguf on cpu/);
  } finally {
    // Its parent closing stdin ends it.
    assert.equal(await stopServer(server), 0);
  }
});

test("--listen takes a TCP port on the loopback too, for clients that reach an adapter by TCP: a predict session over it", async () => {
  const server = await startServer(["--warm=false"], process.env, "127.0.0.1:0");
  try {
    const { dc, socket } = await connect(server);
    await launch(dc, { program: DEMO, call: "total([3, 1, 2])", mode: "predict" });
    assert.equal((await dc.stackTraceRequest(THREAD)).body.stackFrames[0].name, "total");
    await dc.disconnectRequest({});
    socket.end();
  } finally {
    assert.equal(await stopServer(server), 0);
  }
});

test("--listen reads a TCP address on the loopback only: another host is refused, never a port open to the network; a path is a socket", () => {
  assert.deepEqual(tcpAddress("4711"), { host: "127.0.0.1", port: 4711 });
  assert.deepEqual(tcpAddress("localhost:0"), { host: "localhost", port: 0 });
  assert.deepEqual(tcpAddress("[::1]:4711"), { host: "::1", port: 4711 });
  for (const other of ["0.0.0.0:4711", "192.168.1.2:4711", "example.org:80", "[::]:4711"]) assert.throws(() => tcpAddress(other), /loopback only/, other);
  assert.throws(() => tcpAddress("70000"), /not a TCP port/);
  for (const path of ["/tmp/adapter.sock", "\\\\.\\pipe\\ndbg", "/tmp/x:4711"]) assert.equal(tcpAddress(path), undefined, path);
});
