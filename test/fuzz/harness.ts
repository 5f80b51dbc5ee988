// One fuzz case's view of a real process (dist/adapter.js or dist/server.cjs) spoken to with raw
// framed bytes: requests with a deadline each, whether it crashed, its peak memory, and what it
// left behind. Every process a case starts carries a mark in its environment, so its descendants
// are found in /proc even after they were orphaned or started sessions of their own; its temp
// folder (TMPDIR) is its own, so any file left in it is the case's.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Raw, frame, type Message } from "../support/raw.js";
import { alive, stillAlive } from "../support/processes.js";

/** What went wrong in a family's cases, and how much was sent. */
export interface Tally {
  cases: number;
  /** Requests sent that must be answered. */
  sent: number;
  answered: number;
  crashes: number;
  hangs: number;
  /** Peak resident memory of the process under test, in MiB (the largest of the cases). */
  peakMiB: number;
  leftoverProcesses: number;
  leftoverFiles: number;
  /** Wall time of the cases, in seconds. */
  seconds: number;
  /** One line per problem: the case (seed and number, to repeat it) and what went wrong. */
  problems: string[];
}

export const emptyTally = (): Tally => ({ cases: 0, sent: 0, answered: 0, crashes: 0, hangs: 0, peakMiB: 0, leftoverProcesses: 0, leftoverFiles: 0, seconds: 0, problems: [] });

export function addTally(into: Tally, t: Tally): void {
  for (const k of ["cases", "sent", "answered", "crashes", "hangs", "leftoverProcesses", "leftoverFiles", "seconds"] as const) into[k] += t[k];
  into.peakMiB = Math.max(into.peakMiB, t.peakMiB);
  into.problems.push(...t.problems);
}

const MARK = "NDBG_FUZZ_CASE";
/** The longest error message an answer may carry (the adapter cuts what it quotes). */
const MAX_ANSWER = 4000;
let counter = 0;

/** The processes (ours to read) whose environment holds `mark`. */
function marked(mark: string): number[] {
  const needle = Buffer.from(`\0${MARK}=${mark}\0`);
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const env = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${name}/environ`)]);
      if (env.includes(needle) && alive(Number(name))) out.push(Number(name));
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

/** A process under test, started for one case (or a run of cases that share it). */
export class Target {
  readonly proc: ChildProcess;
  readonly raw: Raw;
  readonly tmp: string;
  readonly mark = `${process.pid}-${++counter}`;
  private stderrText = "";
  private exit?: { code: number | null; signal: string | null };
  private closing = false;
  private seq = 0;
  private peakKiB = 0;
  private readonly sampler: NodeJS.Timeout;
  private readonly gone: Promise<"exit">;

  constructor(
    readonly label: string,
    readonly tally: Tally,
    script: string,
    args: string[] = [],
  ) {
    this.tmp = mkdtempSync(join(tmpdir(), "ndbg-fuzz-"));
    this.proc = spawn(process.execPath, [script, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, TMPDIR: this.tmp, [MARK]: this.mark },
    });
    this.proc.stderr!.setEncoding("utf8").on("data", (d: string) => {
      if (this.stderrText.length < 64 * 1024) this.stderrText += d;
    });
    this.gone = new Promise((resolve) =>
      this.proc.on("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve("exit");
      }),
    );
    this.proc.stdin!.on("error", () => {}); // a dead process shows as its exit, not an EPIPE here
    this.raw = new Raw(this.proc.stdin!, this.proc.stdout!);
    // VmHWM is the peak itself; sampled so that it is read before the process is gone.
    this.sampler = setInterval(() => this.samplePeak(), 200);
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** From now on the process may end by itself (it was told to: disconnect, exit). */
  ending(): void {
    this.closing = true;
  }

  /** Whether the process ended without being asked to. */
  get crashed(): boolean {
    return this.exit !== undefined && !this.closing;
  }

  private samplePeak(): void {
    try {
      const kib = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${this.proc.pid}/status`, "latin1"))?.[1] ?? 0);
      this.peakKiB = Math.max(this.peakKiB, kib);
    } catch {
      // gone
    }
  }

  problem(what: string): void {
    this.tally.problems.push(`${this.label}: ${what}`);
  }

  /** Raw bytes, as they are. */
  write(bytes: Buffer | string): void {
    if (this.exit === undefined) this.proc.stdin!.write(bytes);
  }

  nextSeq(): number {
    return ++this.seq + 1_000_000;
  }

  /**
   * Sends a DAP request that must be answered within `ms` (its seq is fresh unless given); the
   * answer, or undefined after counting what went wrong (a crash, or a hang at the deadline).
   */
  async request(command: string, args?: unknown, ms = 10_000, bytes?: (body: string) => Buffer | Buffer[]): Promise<Message | undefined> {
    const seq = this.nextSeq();
    const body = JSON.stringify({ seq, type: "request", command, ...(args !== undefined ? { arguments: args } : {}) });
    return this.expect(`${command} request ${seq}`, ms, () => {
      const out = bytes ? bytes(body) : frame(body);
      for (const b of Array.isArray(out) ? out : [out]) this.write(b);
    }, (m) => m.type === "response" && m.request_seq === seq);
  }

  /** Sends something with `send` and waits for the answer `pred` picks, counted as one request. */
  async expect(what: string, ms: number, send: () => void, pred: (m: Message) => boolean): Promise<Message | undefined> {
    this.tally.sent++;
    if (this.exit !== undefined) {
      this.problem(`${what} not answered: the process had exited (${this.exitText()})`);
      return undefined;
    }
    send();
    const r = await Promise.race([this.raw.waitFor(pred, ms, what).catch(() => "hang" as const), this.gone]);
    if (r === "hang") {
      this.tally.hangs++;
      this.problem(`${what} not answered within ${ms} ms (hang)`);
      return undefined;
    }
    if (r === "exit") {
      this.problem(`${what} not answered: the process exited (${this.exitText()})`);
      return undefined;
    }
    this.tally.answered++;
    // An answer must be readable: an error says what is wrong, without a stack trace or an echo of megabytes.
    const why = r.message ?? r.error?.message ?? "";
    if (why.length > MAX_ANSWER) this.problem(`${what} answered with a message of ${why.length} characters`);
    if (/\n\s+at \S.*:\d+:\d+\)?$/m.test(why)) this.problem(`${what} answered with a stack trace: ${why.slice(0, 300)}`);
    if (r.type === "response" && r.success === false && !why.trim()) this.problem(`${what} refused without a message`);
    return r;
  }

  /** An event the process sends, within `ms`; undefined (not counted) when none came. */
  event(names: string[], ms: number, after = 0): Promise<Message | undefined> {
    return this.raw.waitFor((m) => m.type === "event" && names.includes(m.event ?? "") && this.raw.messages.indexOf(m) >= after, ms, names.join(" or ")).catch(() => undefined);
  }

  private exitText(): string {
    const e = this.exit;
    const tail = this.stderrText.trim().split("\n").slice(-3).join(" | ");
    return `${e?.signal ? `signal ${e.signal}` : `exit code ${e?.code}`}${tail ? `: ${tail.slice(0, 400)}` : ""}`;
  }

  /**
   * Ends the process as a client does (its input closed; SIGTERM, then SIGKILL, if it stays), then
   * counts a crash, its peak memory, and what it left: processes with its mark, files in its TMPDIR.
   */
  async close(): Promise<void> {
    this.samplePeak();
    if (this.exit !== undefined && (this.exit.signal !== null || (this.exit.code !== 0 && this.closing))) {
      this.tally.crashes++;
      this.problem(`the process died (${this.exitText()})`);
    } else if (this.crashed) {
      this.tally.crashes++;
      this.problem(`the process ended by itself (${this.exitText()})`);
    }
    this.closing = true;
    if (this.exit === undefined) {
      this.proc.stdin!.end();
      const t1 = setTimeout(() => this.proc.kill("SIGTERM"), 3000);
      const t2 = setTimeout(() => this.proc.kill("SIGKILL"), 8000);
      await this.gone;
      clearTimeout(t1);
      clearTimeout(t2);
    }
    clearInterval(this.sampler);
    this.tally.peakMiB = Math.max(this.tally.peakMiB, Math.round(this.peakKiB / 1024));
    const left = await stillAlive(marked(this.mark), 5000);
    if (left.length) {
      this.tally.leftoverProcesses += left.length;
      this.problem(`${left.length} process(es) left running: ${left.map((p) => `${p} ${cmdline(p)}`).join("; ").slice(0, 400)}`);
      for (const p of left) {
        try {
          process.kill(p, "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
    }
    const files = readdirSync(this.tmp);
    if (files.length) {
      this.tally.leftoverFiles += files.length;
      this.problem(`${files.length} file(s) left in its temp folder: ${files.join(", ").slice(0, 300)}`);
    }
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim().slice(0, 120);
  } catch {
    return "";
  }
}
