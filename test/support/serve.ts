// The adapter as a warm server (`node dist/adapter.js --listen=SOCKET ...`), as the extension runs
// it, and DAP clients on its socket: one session per connection.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createConnection, type Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DebugClient } from "@vscode/debugadapter-testsupport";
import { ADAPTER } from "./dist.js";

export interface Server {
  proc: ChildProcess;
  /** The socket's path, or "127.0.0.1:PORT". */
  path: string;
  stderr: () => string;
}

/**
 * Starts the server with `args` (default: preload the bundled model on the CPU) and waits for its
 * `listening` line; on a Unix socket, or on `tcp` (a --listen value: "127.0.0.1:0") where given.
 */
export async function startServer(args: string[] = ["--preload=", "--gpu=cpu"], env: NodeJS.ProcessEnv = process.env, tcp?: string): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-serve-"));
  const socketPath = join(dir, "adapter.sock");
  const proc = spawn(process.execPath, [ADAPTER, `--listen=${tcp ?? socketPath}`, ...args], { stdio: ["pipe", "pipe", "pipe"], env });
  let err = "";
  proc.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
  proc.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no listening line: ${err}`)), 20_000);
    proc.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      if (out.includes("\n")) {
        clearTimeout(timer);
        resolve(out.trim());
      }
    });
  });
  if (tcp) assert.match(line, /^listening 127\.0\.0\.1:\d+$/);
  else assert.equal(line, `listening ${socketPath}`);
  return { proc, path: line.slice("listening ".length), stderr: () => err };
}

/** Ends the server as its parent does (closing its stdin) and resolves with its exit code. */
export async function stopServer(server: Server): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => server.proc.once("exit", (code) => resolve(code)));
  server.proc.stdin!.end();
  const timer = setTimeout(() => server.proc.kill(), 10_000);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** A DebugClient on a socket the test opened (its own start() only knows TCP ports). */
class SocketClient extends DebugClient {
  attach(socket: Socket): void {
    this.connect(socket, socket);
  }
}

export async function connect(server: Server, timeout = 30_000): Promise<{ dc: DebugClient; socket: Socket }> {
  const tcp = /^127\.0\.0\.1:(\d+)$/.exec(server.path);
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = tcp ? createConnection(Number(tcp[1]), "127.0.0.1", () => resolve(s)) : createConnection(server.path, () => resolve(s));
    s.once("error", reject);
  });
  const dc = new SocketClient(process.execPath, ADAPTER, "neural-python");
  dc.defaultTimeout = timeout;
  dc.attach(socket);
  return { dc, socket };
}
