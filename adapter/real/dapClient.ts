// A client of a debug adapter that runs as a child process and speaks DAP over its stdio
// (Content-Length framing). Used by compare mode (debugpy's adapter, adapter/real/debugpy.ts) and by
// the bench (both adapters, adapter/tools/bench/dap.ts). Every request has a timeout, every message is
// stamped with performance.now() as it arrives (the bench times round trips on that clock),
// reverse requests are refused (these clients ask for an internal console), and the adapter's
// process group is killed with the client.
import { spawn, type ChildProcess } from "node:child_process";
import type { DebugProtocol } from "@vscode/debugprotocol";

export class DapError extends Error {}

/** A request that was not answered, or an event that did not come, in time. */
export class DapTimeout extends DapError {}

export interface Stamped<T> {
  msg: T;
  /** performance.now() when it arrived. */
  at: number;
}

/** A response (successful or not), when it came and when its request was sent. */
export type Answer = Stamped<DebugProtocol.Response> & { sent: number };

export type EventListener = (e: DebugProtocol.Event, at: number) => void;

export interface DapClientOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * The error that pending and later requests meet once the adapter is gone. `why`: "code N",
   * "signal S", or the message of the process's 'error' event (`failed`: it could not be
   * started, or not be signalled); `stderr`: the last lines it wrote there.
   * Default: "LABEL exited (why): last | lines".
   */
  exitError?: (why: string, failed: boolean, stderr: string[]) => Error;
  /**
   * Gives the child a fourth stdio pipe (fd 3) that only this process holds open: it ends when
   * this process does, even killed, which a guard in the child waits for (python/guard.py).
   */
  lifeline?: boolean;
}

export class DapClient {
  readonly child: ChildProcess;
  readonly spawnedAt = performance.now();
  /** What the adapter wrote to stderr (the first 16 KiB). */
  stderr = "";
  private buf = Buffer.alloc(0);
  private seq = 1;
  private readonly pending = new Map<number, { resolve: (r: Answer) => void; reject: (e: Error) => void; timer: NodeJS.Timeout; sent: number }>();
  private readonly listeners = new Set<EventListener>();
  private gone?: Error;

  constructor(readonly label: string, cmd: string, args: string[], opts: DapClientOptions = {}) {
    const exitError = opts.exitError ?? ((why, _failed, stderr) => new DapError(`${label} exited (${why})${stderr.length ? `: ${stderr.join(" | ")}` : ""}`));
    this.child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: opts.lifeline ? ["pipe", "pipe", "pipe", "pipe"] : ["pipe", "pipe", "pipe"], detached: process.platform !== "win32" });
    this.child.stdio[3]?.on("error", () => undefined);
    this.child.stdout!.on("data", (d: Buffer) => this.receive(d));
    this.child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      if (this.stderr.length < 16_384) this.stderr += d;
    });
    this.child.stdin!.on("error", () => undefined); // a dead adapter is reported by 'exit'
    const tail = (): string[] => (this.stderr.trim() ? this.stderr.trim().split("\n").slice(-3) : []);
    this.child.on("error", (e) => this.end(exitError(e.message, true, tail())));
    this.child.on("exit", (code, signal) => this.end(exitError(signal ? `signal ${signal}` : `code ${code}`, false, tail())));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the adapter is gone. */
  get closed(): boolean {
    return this.gone !== undefined;
  }

  /** Why the adapter is gone (undefined while it runs). */
  get exitReason(): Error | undefined {
    return this.gone;
  }

  /** Sends a request; resolves with its response, failed or not; rejects when it times out or the adapter is gone. */
  send(command: string, args: unknown, timeoutMs: number): Promise<Answer> {
    if (this.gone) return Promise.reject(this.gone);
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        reject(new DapTimeout(`${this.label} did not answer "${command}" within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      this.pending.set(seq, { resolve, reject, timer, sent: performance.now() });
      this.write({ seq, type: "request", command, arguments: args });
    });
  }

  /** Subscribes to events; returns the unsubscriber. */
  onEvent(fn: EventListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Kills the adapter and everything it started. */
  kill(): void {
    const pid = this.child.pid;
    if (!pid || this.child.exitCode !== null || this.child.signalCode !== null) return;
    try {
      if (process.platform !== "win32") process.kill(-pid, "SIGKILL");
      else this.child.kill("SIGKILL");
    } catch {
      this.child.kill("SIGKILL");
    }
  }

  /** Called once, when the adapter is gone (after the pending requests were rejected). */
  protected ended(_reason: Error): void {}

  /** Hands an event to the listeners. */
  protected emit(e: DebugProtocol.Event, at: number): void {
    for (const l of [...this.listeners]) l(e, at);
  }

  private end(reason: Error): void {
    if (this.gone) return;
    this.gone = reason;
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(reason);
    }
    this.pending.clear();
    this.ended(reason);
  }

  private write(msg: object): void {
    const body = Buffer.from(JSON.stringify(msg), "utf8");
    this.child.stdin!.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body]));
  }

  private receive(d: Buffer): void {
    const at = performance.now();
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      const m = /Content-Length:\s*(\d+)/i.exec(this.buf.subarray(0, end).toString("ascii"));
      if (!m) {
        this.buf = this.buf.subarray(end + 4); // not a header we understand: skip it
        continue;
      }
      const n = Number(m[1]);
      if (this.buf.length < end + 4 + n) return;
      const text = this.buf.subarray(end + 4, end + 4 + n).toString("utf8");
      this.buf = this.buf.subarray(end + 4 + n);
      let msg: DebugProtocol.ProtocolMessage;
      try {
        msg = JSON.parse(text);
      } catch {
        continue;
      }
      this.dispatch(msg, at);
    }
  }

  private dispatch(msg: DebugProtocol.ProtocolMessage, at: number): void {
    if (msg.type === "response") {
      const r = msg as DebugProtocol.Response;
      const p = this.pending.get(r.request_seq);
      if (!p) return;
      clearTimeout(p.timer);
      this.pending.delete(r.request_seq);
      p.resolve({ msg: r, at, sent: p.sent });
    } else if (msg.type === "event") {
      this.emit(msg as DebugProtocol.Event, at);
    } else if (msg.type === "request") {
      // Reverse requests (runInTerminal, startDebugging) are not needed with an internal console.
      const req = msg as DebugProtocol.Request;
      this.write({ seq: this.seq++, type: "response", request_seq: req.seq, command: req.command, success: false, message: "not supported" });
    }
  }
}
