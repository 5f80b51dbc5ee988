// The trace language server's framing on stdio (dist/server.cjs --stdio): after a broken frame
// (a Content-Length that is no number, negative, too short, too long or missing; a body that is
// no JSON) the server logs it, answers the broken request with an error where its id can be
// read, and answers the next request. Before, the first such frame left it deaf for good.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT, buildDist } from "./support/dist.js";
import { Raw, frame } from "./support/raw.js";

before(() => buildDist());

const SERVER = join(ROOT, "dist", "server.cjs");
const request = (id: number, method: string, params: unknown = {}): string => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const initialize = (id: number): Buffer => frame(request(id, "initialize", { processId: null, rootUri: null, capabilities: {} }));
const raw = (header: string, body: string): Buffer => Buffer.from(`${header}\r\n\r\n${body}`);

const CASES: { name: string; bytes: Buffer; log: RegExp; answered?: number }[] = [
  { name: "a Content-Length that is no number", bytes: raw("Content-Length: abc", request(7, "shutdown")), log: /its Content-Length "abc" is not a number of bytes/ },
  { name: "a negative Content-Length", bytes: raw("Content-Length: -5", request(7, "shutdown")), log: /its Content-Length "-5" is not a number of bytes/ },
  { name: "a Content-Length too short", bytes: raw("Content-Length: 5", request(7, "shutdown")), log: /its body is not JSON/ },
  { name: "a Content-Length too long", bytes: raw("Content-Length: 500", request(7, "shutdown")), log: /its Content-Length \(500\) is more than the \d+ bytes before the next header/, answered: 7 },
  { name: "a Content-Length of 20 digits", bytes: raw("Content-Length: 99999999999999999999", request(7, "shutdown")), log: /is not a number of bytes/ },
  { name: "a header without Content-Length", bytes: raw("Content-Type: x", request(7, "shutdown")), log: /a header without Content-Length/ },
  { name: "a body that is no JSON", bytes: frame('{"jsonrpc":"2.0","id":7,'), log: /its body is not JSON/, answered: 7 },
  { name: "a null body", bytes: frame("null"), log: /its body is null, not a message object/ },
  { name: "junk with no header", bytes: Buffer.alloc(20_000, "x"), log: /bytes outside a message/ },
];

function start() {
  const proc = spawn(process.execPath, [SERVER, "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
  const out = { proc, stderr: "", answer: (id: number) => r.waitFor((m) => m.id === id, 10_000, `the answer to request ${id}`) };
  proc.stderr!.setEncoding("utf8").on("data", (d: string) => (out.stderr += d));
  const r = new Raw(proc.stdin!, proc.stdout!);
  return out;
}

test("a Content-Length too long that ends inside the next header, that header arriving in pieces: the next request is still read", { timeout: 60_000 }, async () => {
  for (const [extra, split] of [[15, 15], [3, 3], [19, 19], [1, 1]]) {
    const s = start();
    try {
      const broken = request(7, "shutdown");
      s.proc.stdin!.write(raw(`Content-Length: ${broken.length + extra}`, broken));
      const next = initialize(1);
      s.proc.stdin!.write(next.subarray(0, split));
      await new Promise((r) => setTimeout(r, 100));
      s.proc.stdin!.write(next.subarray(split));
      assert.ok((await s.answer(1)).result, `${extra} bytes too long, split at ${split}`);
      assert.match(s.stderr, /is more than the \d+ bytes before the next header/);
    } finally {
      s.proc.kill();
    }
  }
});

for (const c of CASES) {
  test(`after ${c.name} the language server logs it and answers the next request`, { timeout: 30_000 }, async () => {
    const s = start();
    const { proc, answer } = s;
    try {
      proc.stdin!.write(c.bytes);
      proc.stdin!.write(initialize(1));
      const init = await answer(1);
      assert.ok(init.result, `initialize after ${c.name}: ${JSON.stringify(init)}`);
      assert.match(s.stderr, new RegExp(`invalid message.*${c.log.source}`));
      if (c.answered !== undefined) assert.match((await answer(c.answered)).error?.message ?? "", c.log);
      // And the server still reads a request split anywhere.
      const next = frame(request(2, "shutdown", null));
      proc.stdin!.write(next.subarray(0, 7));
      proc.stdin!.write(next.subarray(7));
      assert.equal((await answer(2)).error, undefined);
    } finally {
      proc.kill();
    }
  });
}
