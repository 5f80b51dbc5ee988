// Downloading a model from a URL, against local HTTP servers that misbehave: one that refuses
// connections, one that accepts and never answers, one that stops sending half-way. Each launch
// must fail within its connect or idle timeout with a message that says why, never wait for the
// downloader's minutes of retries (nor leave them running: this file's process must end when its
// tests do); the bytes that came are reported as progress.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveModel } from "../adapter/model/resolve.js";

let dir = "";
const servers: (Server | TcpServer)[] = [];

before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-download-"));
});

after(() => {
  for (const s of servers) {
    s.close();
    (s as Server).closeAllConnections?.();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function listen<S extends Server | TcpServer>(s: S): Promise<number> {
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return (s.address() as AddressInfo).port;
}

/** resolveModel with short timeouts; resolves with the error it fails with and how long it took. */
async function fetchFails(url: string, progress: number[] = []): Promise<{ message: string; ms: number }> {
  const t0 = performance.now();
  const err = await resolveModel(url, {
    cacheDir: dir,
    connectTimeoutMs: 1500,
    idleTimeoutMs: 1500,
    onProgress: (p) => progress.push(p.downloadedBytes),
  }).then(
    () => assert.fail("the download succeeded"),
    (e: Error) => e,
  );
  return { message: err.message, ms: performance.now() - t0 };
}

test("a host that refuses connections fails the launch within the connect timeout", async () => {
  const closed = createTcpServer();
  const port = await listen(closed);
  closed.close();
  const { message, ms } = await fetchFails(`http://127.0.0.1:${port}/m.gguf`);
  assert.match(message, /could not be fetched into .*: the host cannot be reached \(ECONNREFUSED\)/);
  assert.ok(ms < 10_000, `it took ${ms} ms`);
});

test("a host that accepts and never answers fails within the connect timeout, naming it", async () => {
  const port = await listen(createTcpServer(() => undefined));
  const { message, ms } = await fetchFails(`http://127.0.0.1:${port}/m.gguf`);
  assert.match(message, /no data after 1\.5 s \(the host refuses or does not answer\)/);
  assert.ok(ms < 10_000, `it took ${ms} ms`);
});

test("a download that stops sending fails within the idle timeout, after reporting its progress", async () => {
  const port = await listen(
    createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": "1000000" });
      res.write(Buffer.alloc(4096)); // then nothing more
    }),
  );
  const progress: number[] = [];
  const { message, ms } = await fetchFails(`http://127.0.0.1:${port}/m.gguf`, progress);
  assert.match(message, /no data for 1\.5 s after \d+ bytes/);
  assert.ok(progress.some((b) => b > 0), `progress: ${progress.join(", ")}`);
  assert.ok(ms < 10_000, `it took ${ms} ms`);
});

test("a cancelled launch stops waiting for its download at once", async () => {
  const port = await listen(createTcpServer(() => undefined));
  const ac = new AbortController();
  const t0 = performance.now();
  setTimeout(() => ac.abort(), 200);
  const err = await resolveModel(`http://127.0.0.1:${port}/m.gguf`, { cacheDir: dir, signal: ac.signal }).catch((e: Error) => e);
  assert.ok(err instanceof Error);
  assert.match(err.message, /cancelled/);
  assert.ok(performance.now() - t0 < 5_000);
});
