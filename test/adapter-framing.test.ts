// DAP framing over the real protocol: raw bytes into the built adapter's stdin (and a --listen
// socket), its stdout read frame by frame. After every broken frame (a body that is no JSON or
// no message, a wrong, missing or absurd Content-Length, junk between messages, nesting 100k
// deep, a message over the size limit) the adapter is still running and answers the next
// `initialize`; a broken request whose seq and command can be read gets an error response naming
// what is wrong; reading a big message takes time linear in its size. The reader itself is
// checked to give the same frames however the bytes are split into chunks.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { frameReader, MAX_MESSAGE_BYTES, decode, type Frame } from "../adapter/dap/framing.js";
import { ADAPTER, buildDist } from "./support/dist.js";
import { Raw, frame } from "./support/raw.js";

before(() => buildDist());

const request = (seq: number, command: string, args?: unknown): string => JSON.stringify({ seq, type: "request", command, ...(args !== undefined ? { arguments: args } : {}) });
const initialize = (seq: number): Buffer => frame(request(seq, "initialize", { adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true }));
const deep = (n: number): string => "[".repeat(n) + "]".repeat(n);

interface Adapter {
  proc: ChildProcess;
  raw: Raw;
  stderr: () => string;
  exited: () => number | null | undefined;
}

function startAdapter(): Adapter {
  const proc = spawn(process.execPath, [ADAPTER], { stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  let code: number | null | undefined;
  proc.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  proc.on("exit", (c) => (code = c));
  proc.stdin!.on("error", () => {}); // a dead adapter shows as its exit code, not an EPIPE here
  return { proc, raw: new Raw(proc.stdin!, proc.stdout!), stderr: () => err, exited: () => code };
}

async function stop(a: Adapter): Promise<void> {
  if (a.exited() !== undefined) return;
  const gone = new Promise((r) => a.proc.once("exit", r));
  a.proc.kill();
  await gone;
}

/** A broken frame, and what the adapter must do with it: answer request `answer` with an error matching `why`, or log `why`. */
interface Case {
  name: string;
  bytes: Buffer;
  why: RegExp;
  answer?: number;
}

const CASES: Case[] = [
  { name: "a body that is no JSON", bytes: frame("{abc}"), why: /its body is not JSON/ },
  { name: "a request that is no JSON (trailing comma)", bytes: frame('{"seq":3,"type":"request","command":"threads",}'), why: /its body is not JSON/, answer: 3 },
  { name: "a null body", bytes: frame("null"), why: /its body is null, not a message object/ },
  { name: "an array body", bytes: frame("[1,2]"), why: /its body is an array of 2, not a message object/ },
  { name: "a number body", bytes: frame("42"), why: /its body is 42, not a message object/ },
  { name: "a string body", bytes: frame('"threads"'), why: /its body is "threads", not a message object/ },
  { name: "an empty object", bytes: frame("{}"), why: /"type" must be "request", "response" or "event", not undefined/ },
  { name: "an unknown type", bytes: frame('{"seq":4,"type":"bogus","command":"threads"}'), why: /"type" must be .* not "bogus"/, answer: 4 },
  { name: "a request without a command", bytes: frame('{"seq":5,"type":"request"}'), why: /a request's "command" must be a name, not undefined/ },
  { name: "a request with a string seq", bytes: frame('{"seq":"6","type":"request","command":"threads"}'), why: /a request's "seq" must be a whole number, not "6"/ },
  { name: "invalid UTF-8", bytes: frame(Buffer.from([0xff, 0xfe, 0x7b, 0x7d])), why: /its body is not JSON/ },
  { name: "a Content-Length too short", bytes: Buffer.from(`Content-Length: 10\r\n\r\n${request(8, "threads")}`), why: /its body is not JSON/ },
  { name: "a Content-Length too long", bytes: Buffer.from(`Content-Length: 500\r\n\r\n${request(9, "threads")}`), why: /its Content-Length \(500\) is more than the 46 bytes before the next header/, answer: 9 },
  { name: "a Content-Length far too long", bytes: Buffer.from(`Content-Length: 999999999999999\r\n\r\n${request(10, "threads")}`), why: /its Content-Length \(999999999999999\) is more than the 47 bytes/, answer: 10 },
  { name: "a Content-Length that is no number", bytes: Buffer.from(`Content-Length: abc\r\n\r\n${request(11, "threads")}`), why: /its Content-Length "abc" is not a number of bytes: 47 bytes skipped/, answer: 11 },
  { name: "a negative Content-Length", bytes: Buffer.from(`Content-Length: -5\r\n\r\n${request(12, "threads")}`), why: /its Content-Length "-5" is not a number of bytes/, answer: 12 },
  { name: "an empty Content-Length", bytes: Buffer.from(`Content-Length: \r\n\r\n${request(13, "threads")}`), why: /its Content-Length "" is not a number of bytes/, answer: 13 },
  { name: "a Content-Length of 20 digits", bytes: Buffer.from(`Content-Length: 99999999999999999999\r\n\r\n${request(14, "threads")}`), why: /is not a number of bytes/, answer: 14 },
  { name: "a Content-Length of 0", bytes: Buffer.from("Content-Length: 0\r\n\r\n"), why: /a message with an empty body/ },
  { name: "a header without Content-Length", bytes: Buffer.from(`Content-Type: application/json\r\n\r\n${request(15, "threads")}`), why: /a header without Content-Length/, answer: 15 },
  { name: "junk before a header", bytes: Buffer.from("hello\r\n"), why: /bytes outside a message/ },
  { name: "junk with no line break at all", bytes: Buffer.alloc(100_000, "x"), why: /bytes outside a message .*: 100000 bytes skipped/ },
  { name: "JSON 100k deep", bytes: frame(deep(100_000)), why: /a message nested more than 1000 deep/ },
  { name: "a request 100k deep", bytes: frame(`{"seq":16,"type":"request","command":"evaluate","arguments":{"expression":"1","x":${deep(100_000)}}}`), why: /nested more than 1000 deep/, answer: 16 },
  { name: "a response nobody asked for", bytes: frame('{"seq":17,"type":"response","request_seq":99,"command":"x","success":true}'), why: /^$/ },
  { name: "an event from the client", bytes: frame('{"seq":18,"type":"event","event":"x"}'), why: /^$/ },
];

test("after every broken frame the adapter answers what it can read, logs the rest, and still answers initialize", { timeout: 300_000 }, async (t) => {
  for (const c of CASES) {
    await t.test(c.name, async () => {
      const a = startAdapter();
      try {
        a.raw.input.write(c.bytes);
        a.raw.input.write(initialize(1000));
        const init = await a.raw.response(1000);
        assert.equal(init.success, true, `initialize after ${c.name}: ${init.message}`);
        if (c.answer !== undefined) {
          const r = await a.raw.response(c.answer);
          assert.equal(r.success, false);
          assert.match(r.message ?? "", c.why);
          assert.match(r.message ?? "", /^invalid message: /);
        }
        assert.match(a.stderr(), c.why.source === "^$" ? /^$/ : new RegExp(`invalid message.*${c.why.source}`));
        assert.equal(a.exited(), undefined, "the adapter exited");
        // Only the answers expected: initialize's (and the initialized event is not sent before launch).
        const responses = a.raw.messages.filter((m) => m.type === "response").map((m) => m.request_seq);
        assert.deepEqual(responses.sort(), [...(c.answer !== undefined ? [c.answer] : []), 1000].sort());
      } finally {
        await stop(a);
      }
    });
  }
});

test("a message over the size limit is skipped as it arrives and answered; one just under it is read in linear time", { timeout: 300_000 }, async () => {
  const a = startAdapter();
  try {
    const pad = (n: number, seq: number): Buffer => {
      const head = `{"seq":${seq},"type":"request","command":"evaluate","arguments":{"expression":"`;
      const tail = `","context":"repl"}}`;
      return Buffer.from(head + "1".repeat(n - head.length - tail.length) + tail);
    };
    const t0 = performance.now();
    a.raw.input.write(frame(pad(MAX_MESSAGE_BYTES + 1024, 1)));
    const over = await a.raw.response(1, 60_000);
    const tOver = performance.now() - t0;
    assert.equal(over.success, false);
    assert.match(over.message ?? "", new RegExp(`^invalid message: a message of ${MAX_MESSAGE_BYTES + 1024} bytes, over the limit of ${MAX_MESSAGE_BYTES}: skipped$`));

    const t1 = performance.now();
    a.raw.input.write(frame(pad(60 * 1024 * 1024, 2)));
    const under = await a.raw.response(2, 60_000);
    const tUnder = performance.now() - t1;
    // Read and parsed: the request's own check refuses an expression of 60 MB.
    assert.equal(under.success, false);
    assert.match(under.message ?? "", /"expression" is \d+ characters long/);
    a.raw.input.write(initialize(3));
    assert.equal((await a.raw.response(3)).success, true);
    // The library's reader took 57.6 s for 80 MB (each chunk copied all buffered so far).
    assert.ok(tUnder < 15_000, `a 60 MiB message took ${Math.round(tUnder)} ms`);
    process.stderr.write(`# 64 MiB + 1 KiB skipped and answered in ${Math.round(tOver)} ms; 60 MiB read and answered in ${Math.round(tUnder)} ms\n`);
  } finally {
    await stop(a);
  }
});

test("the --listen server: a broken frame on one connection leaves it and the next connection answering", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-framing-"));
  const path = join(dir, "adapter.sock");
  const proc = spawn(process.execPath, [ADAPTER, `--listen=${path}`], { stdio: ["pipe", "pipe", "pipe"] });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no listening line")), 20_000);
      proc.stdout!.once("data", () => (clearTimeout(timer), resolve()));
    });
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const s = createConnection(path, () => resolve(s));
        s.once("error", reject);
      });
    const s1 = await open();
    const r1 = new Raw(s1, s1);
    s1.write(Buffer.from(`Content-Length: 5\r\n\r\nnull!${"x".repeat(10)}`));
    s1.write(frame("null"));
    s1.write(Buffer.from(`Content-Length: 300\r\n\r\n${request(2, "threads")}`));
    s1.write(initialize(3));
    assert.match((await r1.response(2)).message ?? "", /its Content-Length \(300\) is more than/);
    assert.equal((await r1.response(3)).success, true);
    const s2 = await open();
    const r2 = new Raw(s2, s2);
    s2.write(initialize(1));
    assert.equal((await r2.response(1)).success, true);
    s1.destroy();
    s2.destroy();
    assert.equal(proc.exitCode, null, "the server exited");
  } finally {
    proc.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** What a reader makes of `bytes` fed in pieces of `size` (0: all at once); bodies as text. */
function frames(bytes: Buffer, size: number, max?: number): (Frame | { text: string })[] {
  const out: (Frame | { text: string })[] = [];
  const reader = frameReader((f) => out.push("body" in f ? { text: f.body.toString() } : f), max);
  if (!size) reader.push(bytes);
  else for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
  return out;
}

test("the reader gives the same frames however the bytes are split, and finds the next header wherever a broken frame ends", () => {
  const good = request(1, "threads");
  for (const c of CASES) {
    const stream = Buffer.concat([c.bytes, frame(good)]);
    const whole = frames(stream, 0);
    assert.deepEqual(whole.at(-1), { text: good }, `${c.name}: the next message`);
    for (const size of [1, 2, 7, 64, 4096]) assert.deepEqual(frames(stream, size), whole, `${c.name} in pieces of ${size}`);
  }
  // A header straddling two chunks inside an over-long body, at every split point.
  const stream = Buffer.concat([Buffer.from(`Content-Length: 90\r\n\r\n{"seq":2,`), frame(good)]);
  for (let at = 1; at < stream.length; at++) {
    const out: Frame[] = [];
    const reader = frameReader((f) => out.push(f));
    reader.push(stream.subarray(0, at));
    reader.push(stream.subarray(at));
    assert.equal(out.length, 2, `split at ${at}`);
    assert.match((out[0] as { problem: string }).problem, /its Content-Length \(90\) is more than the 9 bytes/, `split at ${at}`);
    assert.equal((out[1] as { body: Buffer }).body.toString(), good, `split at ${at}`);
  }
  // Over the limit: nothing buffered, the seq and command read from its ends.
  const big = `{"command":"evaluate","arguments":{"expression":"${"1".repeat(10_000)}"},"type":"request","seq":7}`;
  assert.deepEqual(frames(frame(big), 1000, 5000), [{ problem: `a message of ${big.length} bytes, over the limit of 5000: skipped`, seq: 7, command: "evaluate" }]);
});

test("decode: a message, or what is wrong with it and the request it names", () => {
  assert.deepEqual(decode(Buffer.from(good())), { message: JSON.parse(good()) });
  assert.deepEqual(decode(Buffer.from('{"seq":1,"type":"request","command":"threads"')), { problem: "its body is not JSON", seq: 1, command: "threads" });
  assert.deepEqual(decode(Buffer.from(`{"type":"request","command":"x","s":"[[[[\\"]]]]","seq":2}`)), { message: { type: "request", command: "x", s: '[[[["]]]]', seq: 2 } });
  assert.deepEqual(decode(Buffer.from(`{"a":${deep(1000)}}`)), { problem: "a message nested more than 1000 deep" });
  function good(): string {
    return request(1, "threads");
  }
});

test("the stdio adapter still ends when its stdin closes", { timeout: 30_000 }, async () => {
  const a = startAdapter();
  try {
    a.raw.input.write(initialize(1));
    await a.raw.response(1);
    const exited = new Promise<number | null>((r) => a.proc.once("exit", r));
    a.raw.input.end();
    assert.equal(await exited, 0);
  } finally {
    await stop(a);
  }
});

test("a Content-Length too long that ends inside the next header, that header arriving in pieces: the next request is still read", { timeout: 60_000 }, async () => {
  // Found by the fuzz suite (framing, seed 2): the broken body took "Content-Length:" and the
  // rest of the header, arriving later, was skipped as junk with the request after it.
  for (const [extra, split] of [[15, 15], [3, 3], [18, 19], [19, 19], [1, 1]]) {
    const a = startAdapter();
    try {
      const broken = request(1, "threads");
      a.raw.input.write(Buffer.from(`Content-Length: ${broken.length + extra}\r\n\r\n${broken}`));
      const next = initialize(2);
      a.raw.input.write(next.subarray(0, split));
      await new Promise((r) => setTimeout(r, 100));
      a.raw.input.write(next.subarray(split));
      const init = await a.raw.response(2);
      assert.equal(init.success, true, `${extra} bytes too long, split at ${split}`);
      assert.match(a.stderr(), new RegExp(`its Content-Length \\(${broken.length + extra}\\) is more than the ${broken.length} bytes before the next header`));
    } finally {
      await stop(a);
    }
  }
});
