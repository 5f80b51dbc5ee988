// The adapter's side of the inference host (host.ts): one child process per adapter process,
// shared by its sessions, holds the weights and every session's context and runs every decode.
// A GPU binary that aborts after its probe passed (a CUDA error, a GGML_ASSERT), the OOM killer
// or a SIGKILL then ends that child, not the adapter: the steps it was running fail with the
// child's own last words, each session stays stopped where it was with its history, and the
// next step starts a fresh child (its context is evaluated anew from the prompt).
//
// The cut is generation: tokenizing, prompts, grammars (as GBNF text) and reading answers stay in
// the adapter, on a vocabulary-only copy of the model (backend.ts), so the dialects and the
// predictor contract do not change and a step sends one message and gets one back.
import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Token } from "node-llama-cpp";
import type { Backend } from "./probe.js";
import { reasonLine } from "./probe.js";
import { AbortError, type GenerateOptions, type GenerateResult } from "./sequence.js";

/** What the host knows of a model it loaded. */
export interface HostModel {
  /** Bytes of weights (what decides the threads a session uses). */
  size: number;
  device: string;
  gpuNames: string[];
  loadMs: number;
}

/** What the adapter asks of the host. */
export type HostCall =
  | { op: "load"; path: string; backend: Backend }
  | { op: "open"; path: string; backend: Backend; contextSize: number; threads: number; speculative: boolean }
  | {
      op: "generate";
      seq: number;
      prompt: Token[];
      /** GBNF text; the host builds (and keeps) the grammar. */
      grammar?: string;
      maxTokens: number;
      stopTokens: Token[];
      stopText?: string;
      progress: boolean;
    }
  | { op: "cancel"; target: number }
  | { op: "close"; seq: number }
  | { op: "warm"; path: string; backend: Backend; tokens: number };
/** Each request has an id its answer carries (cancel refers to a generate's). */
export type HostRequest = { id: number } & HostCall;

export type Predictions = { validated: number; refuted: number; used: number };

/** Messages from the host: an answer (value or error), or a generate's progress. */
export type HostReply =
  | { id: number; value: unknown }
  | { id: number; error: { name: string; message: string } }
  | { id: number; progress: number };

export interface OpenedSequence {
  seq: number;
  contextSize: number;
  threads: number;
}
export type GenerateReply = GenerateResult & { predictions: Predictions };

/** The inference process ended while a request needed it: the reason, then what the next step does. */
export class HostEndedError extends Error {
  constructor(readonly why: string) {
    super(`the inference process ended: ${why}; the next step starts it again and loads the model anew`);
    this.name = "HostEndedError";
  }
}

/** The output a dead host leaves for its reason: only the tail matters, and llama.cpp can be talkative. */
const TAIL_CHARS = 16_384;
/** With no session open for this long, the host goes and frees the weights ($NDBG_HOST_IDLE seconds). */
export const HOST_IDLE_MS = 15 * 60_000;

function idleMs(): number {
  const env = Number(process.env.NDBG_HOST_IDLE);
  return Number.isFinite(env) && env > 0 ? env * 1000 : HOST_IDLE_MS;
}

/** host.js beside the bundle (dist/); from the sources, host.ts under the TypeScript loader. */
function hostEntry(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const bundled = join(dirname(here), "host.js");
  if (here.endsWith(".js") && existsSync(bundled)) return { file: bundled, execArgv: [] };
  return { file: join(dirname(here), "host.ts"), execArgv: ["--import", import.meta.resolve("tsx")] };
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  onProgress?: (n: number) => void;
}

/** One running child: its requests in flight and the models it has loaded. */
class HostProcess {
  readonly pending = new Map<number, Pending>();
  readonly models = new Map<string, Promise<HostModel>>();
  private output = "";
  /** Why it ended; set once it has. */
  ended?: string;

  constructor(readonly child: ChildProcess, onEnd: (p: HostProcess) => void) {
    const keep = (d: string): void => void (this.output = (this.output + d).slice(-TAIL_CHARS));
    child.stdout?.setEncoding("utf8").on("data", keep);
    child.stderr?.setEncoding("utf8").on("data", keep);
    child.on("message", (m: HostReply) => this.answer(m));
    this.idleRef();
    child.on("error", (e) => this.end(`it could not run (${e.message})`, onEnd));
    // "close", not "exit": the last of its output (an abort's reason) is read by then.
    child.on("close", (code, signal) => {
      const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
      const line = reasonLine(this.output);
      this.end(line ? `${how} (${line})` : how, onEnd);
    });
  }

  private answer(m: HostReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    if ("progress" in m) return p.onProgress?.(m.progress);
    this.pending.delete(m.id);
    this.idleRef();
    if ("error" in m) {
      const e = m.error.name === "AbortError" ? new AbortError(m.error.message) : new Error(m.error.message);
      e.name = m.error.name;
      p.reject(e);
    } else p.resolve(m.value);
  }

  private end(why: string, onEnd: (p: HostProcess) => void): void {
    if (this.ended) return;
    this.ended = why;
    const e = new HostEndedError(why);
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
    this.idleRef();
    onEnd(this);
  }

  send(req: HostRequest, onProgress?: (n: number) => void): Promise<unknown> {
    if (this.ended) return Promise.reject(new HostEndedError(this.ended));
    return new Promise((resolve, reject) => {
      this.pending.set(req.id, { resolve, reject, ...(onProgress ? { onProgress } : {}) });
      this.idleRef();
      this.child.send(req, (e) => {
        if (e && this.pending.delete(req.id)) reject(new HostEndedError(this.ended ?? `it could not be reached (${e.message})`));
      });
    });
  }

  /** Cancels a request without waiting for it. */
  post(req: HostRequest): void {
    if (!this.ended) this.child.send(req, () => undefined);
  }

  /**
   * The child keeps the adapter's event loop alive only while an answer is awaited (a CLI run
   * ends when its work does); then its process and pipes too, so that its end and last words are heard.
   */
  private idleRef(): void {
    const hold = this.pending.size > 0;
    for (const h of [this.child, this.child.channel, this.child.stdout, this.child.stderr] as ({ ref?(): void; unref?(): void } | null | undefined)[])
      if (hold) h?.ref?.();
      else h?.unref?.();
  }

  stop(): void {
    if (this.ended) return;
    this.child.kill("SIGKILL");
  }
}

/** The adapter's inference host: started on first use and again after it ended. */
export class InferenceHost {
  private proc?: HostProcess;
  private nextId = 1;
  /** Sequences open in the current process; with none for HOST_IDLE_MS, it is stopped. */
  private open = 0;
  private idleTimer?: NodeJS.Timeout;
  /** Why the last process ended, for the note when the next one starts. */
  private lastEnd?: string;

  constructor(private readonly log?: (message: string) => void) {}

  /** The running process, started when there is none. */
  private process(): HostProcess {
    if (this.proc && !this.proc.ended) return this.proc;
    if (this.lastEnd) this.log?.(`starting the inference process again (it ${this.lastEnd})`);
    const { file, execArgv } = hostEntry();
    const child = fork(file, [], {
      execArgv,
      // stdout is the adapter's DAP stream: the host's output (llama.cpp's log) is read here, kept for a crash's reason.
      stdio: ["ignore", "pipe", "pipe", "ipc"],
      // llama.cpp writes its log itself, flushed at once: an abort's reason reaches us before the process is gone.
      env: { ...process.env, NDBG_HOST: "1" },
    });
    const proc = new HostProcess(child, (p) => {
      if (this.proc === p) {
        this.proc = undefined;
        this.open = 0;
        this.lastEnd = p.ended;
      }
    });
    this.proc = proc;
    return proc;
  }

  /** Starts the process if none runs (it imports node-llama-cpp while the caller checks the file and picks a backend). */
  start(): void {
    this.process();
    this.idle();
  }

  /** The pid of the running process (bench memory), if any. */
  get pid(): number | undefined {
    return this.proc && !this.proc.ended ? this.proc.child.pid : undefined;
  }

  private request<T>(proc: HostProcess, req: HostCall, onProgress?: (n: number) => void): Promise<T> {
    return proc.send({ ...req, id: this.nextId++ } as HostRequest, onProgress) as Promise<T>;
  }

  /** Loads a model in the running process (once per process); a failure is the host's error, or HostEndedError. */
  load(path: string, backend: Backend): Promise<HostModel> {
    return this.loadIn(this.process(), path, backend);
  }

  private loadIn(proc: HostProcess, path: string, backend: Backend): Promise<HostModel> {
    const key = `${backend}|${path}`;
    let p = proc.models.get(key);
    if (!p) {
      p = this.request<HostModel>(proc, { op: "load", path, backend });
      proc.models.set(key, p);
      p.catch(() => proc.models.delete(key));
    }
    return p;
  }

  /** A context sequence in the running process, its model loaded first. */
  async openSequence(path: string, backend: Backend, opts: { contextSize: number; threads: number; speculative: boolean }): Promise<{ proc: HostProcess } & OpenedSequence> {
    const proc = this.process();
    await this.loadIn(proc, path, backend);
    const o = await this.request<OpenedSequence>(proc, { op: "open", path, backend, ...opts });
    this.open++;
    this.idle();
    return { proc, ...o };
  }

  async closeSequence(proc: HostProcess, seq: number): Promise<void> {
    if (proc !== this.proc || proc.ended) return;
    await this.request(proc, { op: "close", seq }).catch(() => undefined);
    this.open = Math.max(0, this.open - 1);
    this.idle();
  }

  generate(proc: HostProcess, req: Omit<Extract<HostCall, { op: "generate" }>, "op">, signal?: AbortSignal, onProgress?: (n: number) => void): Promise<GenerateReply> {
    if (signal?.aborted) return Promise.reject(new AbortError());
    const id = this.nextId++;
    const cancel = (): void => proc.post({ id: this.nextId++, op: "cancel", target: id });
    signal?.addEventListener("abort", cancel, { once: true });
    const p = proc.send({ id, op: "generate", ...req }, onProgress) as Promise<GenerateReply>;
    return p.finally(() => signal?.removeEventListener("abort", cancel));
  }

  /**
   * Warm-up: loads the model and decodes a few tokens (on a GPU, the first decode compiles its
   * pipelines; on the CPU it pages the weights in), so that the first session's first step does not pay for it.
   */
  async warm(path: string, backend: Backend, tokens = 8): Promise<number> {
    const proc = this.process();
    await this.loadIn(proc, path, backend);
    const ms = await this.request<number>(proc, { op: "warm", path, backend, tokens });
    this.idle();
    return ms;
  }

  /** Stops the process when no session has a sequence open in it for a while (a warm-up alone holds it that long). */
  private idle(): void {
    clearTimeout(this.idleTimer);
    if (this.open > 0 || !this.proc) return;
    const proc = this.proc;
    this.idleTimer = setTimeout(() => {
      if (this.proc === proc && this.open === 0 && !proc.pending.size) {
        this.log?.("no session has used the inference process for a while: it is stopped, and the model is loaded again when one does");
        this.proc = undefined;
        proc.stop();
      }
    }, idleMs());
    this.idleTimer.unref();
  }

  /** Ends the process (end of a CLI run, tests). */
  stop(): void {
    clearTimeout(this.idleTimer);
    this.proc?.stop();
    this.proc = undefined;
    this.open = 0;
    this.lastEnd = undefined;
  }
}

let shared: InferenceHost | undefined;
let logSink: ((m: string) => void) | undefined;

/** This process's inference host. */
export function inferenceHost(log?: (m: string) => void): InferenceHost {
  if (log) logSink = log;
  shared ??= new InferenceHost((m) => logSink?.(m));
  return shared;
}

/** Stops this process's inference host, if it runs. */
export function stopInferenceHost(): void {
  shared?.stop();
}

/**
 * One session's context sequence, in the inference host: the API of ModelSequence (sequence.ts),
 * which runs it there. After the host ended it is opened again in the next one, at the next call.
 */
export class RemoteSequence {
  private at?: { proc: HostProcess; seq: number };
  private opening?: Promise<{ proc: HostProcess; seq: number }>;
  private disposed = false;
  /** Draft tokens accepted and rejected so far (speculative decoding), as of the last generation. */
  predictions: Predictions = { validated: 0, refuted: 0, used: 0 };

  private constructor(
    private readonly host: InferenceHost,
    private readonly path: string,
    private readonly backend: Backend,
    private readonly opts: { contextSize: number; threads: number; speculative: boolean },
    readonly contextSize: number,
    /** CPU threads its context evaluates with. */
    readonly threads: number,
  ) {}

  static async open(host: InferenceHost, path: string, backend: Backend, opts: { contextSize: number; threads: number; speculative?: boolean }): Promise<RemoteSequence> {
    const o = { ...opts, speculative: opts.speculative === true };
    const at = await host.openSequence(path, backend, o);
    const s = new RemoteSequence(host, path, backend, o, at.contextSize, at.threads);
    s.at = { proc: at.proc, seq: at.seq };
    return s;
  }

  /** The sequence in a live host: opened again (empty) when the host it was in has ended. */
  private live(): Promise<{ proc: HostProcess; seq: number }> {
    if (this.at && !this.at.proc.ended) return Promise.resolve(this.at);
    this.opening ??= this.host
      .openSequence(this.path, this.backend, this.opts)
      .then((o) => (this.at = { proc: o.proc, seq: o.seq }))
      .finally(() => (this.opening = undefined));
    return this.opening;
  }

  async generate(prompt: readonly Token[], opts: Omit<GenerateOptions, "grammar"> & { grammar?: { grammar: string } }): Promise<GenerateResult> {
    if (this.disposed) throw new Error("the sequence was disposed");
    opts.signal?.throwIfAborted();
    const { proc, seq } = await this.live();
    const r = await this.host.generate(
      proc,
      {
        seq,
        prompt: [...prompt],
        ...(opts.grammar ? { grammar: opts.grammar.grammar } : {}),
        maxTokens: opts.maxTokens,
        stopTokens: [...(opts.stopTokens ?? [])],
        ...(opts.stopText ? { stopText: opts.stopText } : {}),
        progress: opts.onToken !== undefined,
      },
      opts.signal,
      opts.onToken,
    );
    const { predictions, ...result } = r;
    this.predictions = predictions;
    return result;
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const at = this.at ?? (await this.opening?.catch(() => undefined));
    if (at) await this.host.closeSequence(at.proc, at.seq);
  }
}
