// A minimal DAP client for timing: every message is stamped with performance.now() as it
// arrives, so a request's round trip (sent -> response) and the stop it leads to (sent -> the
// next stopped or terminated event) are measured on the same clock for any adapter. It holds the
// adapter's pid, for its peak memory.
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { DebugProtocol } from "@vscode/debugprotocol";

export class DapTimeout extends Error {}

export interface Stamped<T> {
  msg: T;
  at: number;
}

export class TimedDap {
  readonly child: ChildProcess;
  readonly spawnedAt = performance.now();
  private buf = Buffer.alloc(0);
  private seq = 1;
  private readonly pending = new Map<number, (r: Stamped<DebugProtocol.Response>) => void>();
  /** Every event so far, in arrival order. */
  readonly events: Stamped<DebugProtocol.Event>[] = [];
  private wake: (() => void)[] = [];
  private exited?: string;
  stderr = "";

  constructor(readonly label: string, cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
    this.child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"], detached: process.platform !== "win32" });
    this.child.stdout!.on("data", (d: Buffer) => this.receive(d));
    this.child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      if (this.stderr.length < 16_384) this.stderr += d;
    });
    this.child.stdin!.on("error", () => undefined);
    const gone = (why: string): void => {
      if (this.exited) return;
      this.exited = `${label} exited (${why})${this.stderr.trim() ? `: ${this.stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`;
      this.notify();
    };
    this.child.on("error", (e) => gone(e.message));
    this.child.on("exit", (code, signal) => gone(signal ? `signal ${signal}` : `code ${code}`));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Sends a request; resolves with the response and when it came, or rejects on timeout, failure or exit. */
  async request<R extends DebugProtocol.Response = DebugProtocol.Response>(command: string, args?: unknown, timeoutMs = 30_000): Promise<Stamped<R> & { sent: number }> {
    const r = await this.send(command, args, timeoutMs);
    if (!r.msg.success) throw new Error(`${this.label}: "${command}" failed: ${r.msg.message ?? "no message"}`);
    return r as Stamped<R> & { sent: number };
  }

  /** Like request, but a failed response resolves too. */
  send(command: string, args: unknown, timeoutMs: number): Promise<Stamped<DebugProtocol.Response> & { sent: number }> {
    if (this.exited) return Promise.reject(new Error(this.exited));
    const seq = this.seq++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(seq);
        off();
        reject(new DapTimeout(`${this.label} did not answer "${command}" within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      const offExit = (): void => {
        if (!this.exited) return;
        clearTimeout(timer);
        this.pending.delete(seq);
        off();
        reject(new Error(this.exited));
      };
      this.wake.push(offExit);
      const off = (): void => {
        this.wake = this.wake.filter((w) => w !== offExit);
      };
      const sent = performance.now();
      this.pending.set(seq, (r) => {
        clearTimeout(timer);
        off();
        resolve({ ...r, sent });
      });
      this.write({ seq, type: "request", command, arguments: args });
    });
  }

  /** The first event named one of `names` that arrived at or after index `from` of `events`. */
  async event(names: readonly string[], from: number, timeoutMs: number): Promise<Stamped<DebugProtocol.Event> & { index: number }> {
    const deadline = performance.now() + timeoutMs;
    for (let i = from; ; ) {
      for (; i < this.events.length; i++) if (names.includes(this.events[i].msg.event)) return { ...this.events[i], index: i };
      if (this.exited) throw new Error(`${this.exited} while waiting for ${names.join(" or ")}`);
      const left = deadline - performance.now();
      if (left <= 0) throw new DapTimeout(`${this.label} sent no ${names.join(" or ")} event within ${Math.round(timeoutMs / 1000)} s`);
      await new Promise<void>((res) => {
        const t = setTimeout(done, left);
        function done(): void {
          clearTimeout(t);
          res();
        }
        this.wake.push(done);
      });
    }
  }

  /** Asks the adapter to end the session, then kills it and what it started. */
  async close(): Promise<void> {
    if (!this.exited) await this.send("disconnect", { terminateDebuggee: true }, 3_000).catch(() => undefined);
    const pid = this.child.pid;
    if (pid && this.child.exitCode === null && this.child.signalCode === null) {
      try {
        if (process.platform !== "win32") process.kill(-pid, "SIGKILL");
        else this.child.kill("SIGKILL");
      } catch {
        this.child.kill("SIGKILL");
      }
    }
  }

  private notify(): void {
    const w = this.wake;
    this.wake = [];
    for (const f of w) f();
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
      if (end < 0) break;
      const m = /Content-Length:\s*(\d+)/i.exec(this.buf.subarray(0, end).toString("ascii"));
      if (!m) {
        this.buf = this.buf.subarray(end + 4);
        continue;
      }
      const n = Number(m[1]);
      if (this.buf.length < end + 4 + n) break;
      const text = this.buf.subarray(end + 4, end + 4 + n).toString("utf8");
      this.buf = this.buf.subarray(end + 4 + n);
      let msg: DebugProtocol.ProtocolMessage;
      try {
        msg = JSON.parse(text);
      } catch {
        continue;
      }
      if (msg.type === "response") {
        const r = msg as DebugProtocol.Response;
        this.pending.get(r.request_seq)?.({ msg: r, at });
        this.pending.delete(r.request_seq);
      } else if (msg.type === "event") {
        this.events.push({ msg: msg as DebugProtocol.Event, at });
      } else if (msg.type === "request") {
        // Reverse requests (runInTerminal) are not used: the bench asks for an internal console.
        const req = msg as DebugProtocol.Request;
        this.write({ seq: this.seq++, type: "response", request_seq: req.seq, command: req.command, success: false, message: "not supported" });
      }
    }
    this.notify();
  }
}

/** Peak and current resident memory of a process, in bytes, from /proc (undefined where there is none). */
export function memoryOf(pid: number | undefined): { peak: number; current: number } | undefined {
  if (!pid) return undefined;
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(s)?.[1] ?? NaN) * 1024;
    const peak = kb("VmHWM");
    const current = kb("VmRSS");
    return Number.isFinite(peak) ? { peak, current } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time used so far by the processes' threads, in ms (Linux: /proc/PID/task/TID/schedstat,
 * nanoseconds on the CPU); undefined where it cannot be read. Unlike wall time it does not
 * count waiting for a core, so it shows growth that a loaded machine hides.
 */
export function cpuMsOf(pids: readonly number[]): number | undefined {
  let ns = 0;
  let read = false;
  for (const pid of pids) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone
    }
    for (const t of tasks) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]);
        read = true;
      } catch {
        // a thread that ended meanwhile
      }
    }
  }
  return read ? ns / 1e6 : undefined;
}

/** Processes whose parent is `pid` (Linux), e.g. the program debugpy's adapter started. */
export function childrenOf(pid: number | undefined): number[] {
  if (!pid) return [];
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const stat = readFileSync(`/proc/${n}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(n));
    } catch {
      // gone
    }
  }
  return out;
}
