// The real llama.cpp server for the tests: built from the llama.cpp source node-llama-cpp ships
// (scripts/llama-server.sh, cached per machine), started on 127.0.0.1 on a free port with a GGUF,
// and waited for until it answers. A machine that cannot build it fails the tests that need it,
// with the build's own words: a skipped server test would hide a backend that no longer works.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { ROOT } from "./dist.js";

/** The first build takes minutes (see the README); later runs find it cached. */
const BUILD_TIMEOUT_MS = 60 * 60_000;

let binary: string | undefined;

/** The llama-server binary, built on first use. */
export function llamaServerBinary(): string {
  if (binary) return binary;
  const r = spawnSync("bash", [join(ROOT, "scripts", "llama-server.sh")], { cwd: ROOT, encoding: "utf8", timeout: BUILD_TIMEOUT_MS });
  if (r.status !== 0) throw new Error(`scripts/llama-server.sh failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? "").slice(-2000)}`);
  binary = r.stdout.trim().split("\n").at(-1)!;
  return binary;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface RunningServer {
  /** The endpoint a session names: http://127.0.0.1:PORT/v1. */
  url: string;
  port: number;
  proc: ChildProcess;
  /** Its log so far (stdout and stderr). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts llama-server with `model`: `parallel` slots of `context` tokens each (the model's own
 * context by default, as a session in the inference host gets), on one thread per slot.
 */
export async function startServer(model: string, opts: { parallel?: number; context?: number; threads?: number; port?: number } = {}): Promise<RunningServer> {
  const bin = llamaServerBinary();
  const port = opts.port ?? (await freePort());
  const np = opts.parallel ?? 1;
  const ctx = opts.context ?? 2048;
  const args = ["-m", model, "--host", "127.0.0.1", "--port", String(port), "-c", String(ctx * np), "-np", String(np), "--no-kv-unified", "-t", String(opts.threads ?? 1), "--no-webui"];
  const proc = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (d: Buffer): void => void (out = (out + d.toString()).slice(-20_000));
  proc.stdout!.on("data", keep);
  proc.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}/v1`;
  const server: RunningServer = {
    url,
    port,
    proc,
    log: () => out,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    },
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`llama-server exited at start: ${out.slice(-1500)}`);
    const ok = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
    if (ok) return server;
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`llama-server did not answer /health within 60 s: ${out.slice(-1500)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
