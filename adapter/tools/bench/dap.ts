// The bench's DAP client (adapter/real/dapClient.ts) keeps every event, stamped with performance.now()
// as it arrives, so a request's round trip (sent -> response) and the stop it leads to (sent ->
// the next stopped or terminated event) are measured on the same clock for any adapter. The
// probes below read the adapter's (and its children's) memory and CPU time.
import { readdirSync, readFileSync } from "node:fs";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { DapClient, DapTimeout, type DapClientOptions, type Stamped } from "../../real/dapClient.js";

export class TimedDap extends DapClient {
  /** Every event so far, in arrival order. */
  readonly events: Stamped<DebugProtocol.Event>[] = [];
  private wake: (() => void)[] = [];

  constructor(label: string, cmd: string, args: string[], opts: DapClientOptions = {}) {
    super(label, cmd, args, opts);
    this.onEvent((msg, at) => {
      this.events.push({ msg, at });
      this.notify();
    });
  }

  /** Sends a request; resolves with the response and when it came, or rejects on timeout, failure or exit. */
  async request<R extends DebugProtocol.Response = DebugProtocol.Response>(command: string, args?: unknown, timeoutMs = 30_000): Promise<Stamped<R> & { sent: number }> {
    const r = await this.send(command, args, timeoutMs);
    if (!r.msg.success) throw new Error(`${this.label}: "${command}" failed: ${r.msg.message ?? "no message"}`);
    return r as Stamped<R> & { sent: number };
  }

  /** The first event named one of `names` that arrived at or after index `from` of `events`. */
  async event(names: readonly string[], from: number, timeoutMs: number): Promise<Stamped<DebugProtocol.Event> & { index: number }> {
    const deadline = performance.now() + timeoutMs;
    for (let i = from; ; ) {
      for (; i < this.events.length; i++) if (names.includes(this.events[i].msg.event)) return { ...this.events[i], index: i };
      if (this.exitReason) throw new Error(`${this.exitReason.message} while waiting for ${names.join(" or ")}`);
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
    if (!this.closed) await this.send("disconnect", { terminateDebuggee: true }, 3_000).catch(() => undefined);
    this.kill();
  }

  protected override ended(): void {
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = [];
    for (const f of w) f();
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
