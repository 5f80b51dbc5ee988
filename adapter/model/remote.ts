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
import { reasonLine, setAside } from "./probe.js";
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
      /** Its number among this adapter's generations, across restarts of the host (its log mark, tests' faults). */
      n: number;
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
  constructor(
    readonly why: string,
    next = "the next step starts it again and loads the model anew",
  ) {
    super(`the inference process ended: ${why}; ${next}`);
    this.name = "HostEndedError";
  }
}

/**
 * Crashes of the host in a row on a GPU backend (no generation on it answered in between) after
 * which the model moves to the next backend, and the backend is set aside for good (probe.ts's
 * setAside). Twice in a row, not twice in a session: a backend that fails every decode is caught
 * by its first two steps, while a rare crash between good steps (memory, a driver reset) never
 * costs the user a GPU that works.
 */
export const GPU_CRASHES = 2;
/**
 * Crashes in a row on the CPU after which the host is not started again for the sessions open:
 * nothing is left to fall back to, and each restart reloads the model only to die. One more try
 * than on a GPU, as giving up here leaves the session without a model.
 */
export const CPU_CRASHES = 3;

/** The host ended CPU_CRASHES times in a row on the CPU: steps are refused until a new session starts. */
export class HostStoppedError extends Error {
  constructor(crashes: number, last: string) {
    super(
      `the model is not run again in this session: its inference process ended ${crashes} times in a row on the CPU, the last time ${last}. ` +
        "The history, stepping back, variables, watches and saving the trace still work; a new debugging session tries the model again",
    );
    this.name = "HostStoppedError";
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

/** The model and backend a request works for: a crash while it is in flight counts against that backend. */
interface Serving {
  backend: Backend;
  path: string;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  onProgress?: (n: number) => void;
  serving?: Serving;
}

/**
 * What the adapter does after a crash, for each backend that was at work: a phrase for the
 * HostEndedError of that backend's requests (the default's when absent).
 */
type OnEnd = (p: HostProcess, serving: Map<Backend, string>) => Map<Backend, string>;

/** One running child: its requests in flight and the models it has loaded. */
class HostProcess {
  readonly pending = new Map<number, Pending>();
  readonly models = new Map<string, Promise<HostModel>>();
  private output = "";
  /** Why it ended; set once it has. */
  ended?: string;
  /** Stopped on purpose (idle, the end of a run): its end is no backend's crash. */
  private stopped = false;

  constructor(readonly child: ChildProcess, onEnd: OnEnd) {
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

  private end(why: string, onEnd: OnEnd): void {
    if (this.ended) return;
    this.ended = why;
    const pending = [...this.pending.values()];
    this.pending.clear();
    this.idleRef();
    const serving = new Map(this.stopped ? [] : pending.flatMap((p) => (p.serving ? [[p.serving.backend, p.serving.path] as const] : [])));
    const next = onEnd(this, serving);
    for (const p of pending) p.reject(new HostEndedError(why, p.serving && next.get(p.serving.backend)));
  }

  send(req: HostRequest, onProgress?: (n: number) => void, serving?: Serving): Promise<unknown> {
    if (this.ended) return Promise.reject(new HostEndedError(this.ended));
    return new Promise((resolve, reject) => {
      this.pending.set(req.id, { resolve, reject, ...(onProgress ? { onProgress } : {}), ...(serving ? { serving } : {}) });
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
    this.stopped = true;
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
  /** Per backend, the crashes in a row while it was at work (reset by a generation it answered), and the last one's reason. */
  private readonly crashes = new Map<Backend, { count: number; why: string }>();
  /** Generations asked for so far, by every session and host. */
  private generations = 0;

  constructor(private readonly log?: (message: string) => void) {}

  /** Counts a crash against each backend at work in it; says what comes next for those that reached their limit. */
  private crashed(p: HostProcess, serving: Map<Backend, string>): Map<Backend, string> {
    const next = new Map<Backend, string>();
    for (const [backend, path] of serving) {
      const count = (this.crashes.get(backend)?.count ?? 0) + 1;
      const why = p.ended!;
      this.crashes.set(backend, { count, why });
      if (backend === "cpu") {
        if (count >= CPU_CRASHES) next.set(backend, `it ended ${count} times in a row on the CPU, so it is not started again in this session`);
      } else if (count >= GPU_CRASHES) {
        this.log?.(`${backend} is set aside: the inference process ended ${count} times in a row on it`);
        void setAside(backend, path, `the inference process ended ${times(count)} in a row on it, the last time ${why}`);
        next.set(backend, `it ended ${times(count)} in a row on ${backend}, so the next step moves the model to the next backend`);
      }
    }
    return next;
  }

  /** A GPU backend that crashed the host GPU_CRASHES times in a row: its models move on (Placement.fallBack). */
  abandoned(backend: Backend): boolean {
    return backend !== "cpu" && (this.crashes.get(backend)?.count ?? 0) >= GPU_CRASHES;
  }

  /** Refuses work on the CPU once the host has crashed there CPU_CRASHES times in a row. */
  private check(backend: Backend): void {
    const c = this.crashes.get(backend);
    if (backend === "cpu" && c && c.count >= CPU_CRASHES) throw new HostStoppedError(c.count, c.why);
  }

  /** A new session tries the CPU again after the host was given up on there (the user asked anew: backend.ts's loadModel). */
  retry(): void {
    this.crashes.delete("cpu");
  }

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
    const proc = new HostProcess(child, (p, serving) => {
      if (this.proc === p) {
        this.proc = undefined;
        this.open = 0;
        this.lastEnd = p.ended;
      }
      return this.crashed(p, serving);
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

  private request<T>(proc: HostProcess, req: HostCall): Promise<T> {
    const serving = "backend" in req ? { backend: req.backend, path: req.path } : undefined;
    return proc.send({ ...req, id: this.nextId++ } as HostRequest, undefined, serving) as Promise<T>;
  }

  /** Loads a model in the running process (once per process); a failure is the host's error, HostEndedError or HostStoppedError. */
  async load(path: string, backend: Backend): Promise<HostModel> {
    this.check(backend);
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
    this.check(backend);
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

  /** A generation for the model at `serving`; one answered clears its backend's crashes. */
  generate(proc: HostProcess, serving: Serving, req: Omit<Extract<HostCall, { op: "generate" }>, "op" | "n">, signal?: AbortSignal, onProgress?: (n: number) => void): Promise<GenerateReply> {
    if (signal?.aborted) return Promise.reject(new AbortError());
    const id = this.nextId++;
    const cancel = (): void => proc.post({ id: this.nextId++, op: "cancel", target: id });
    signal?.addEventListener("abort", cancel, { once: true });
    const p = proc.send({ id, op: "generate", n: ++this.generations, ...req }, onProgress, serving) as Promise<GenerateReply>;
    return p
      .then((r) => {
        this.crashes.delete(serving.backend);
        return r;
      })
      .finally(() => signal?.removeEventListener("abort", cancel));
  }

  /**
   * Warm-up: loads the model and decodes a few tokens (on a GPU, the first decode compiles its
   * pipelines; on the CPU it pages the weights in), so that the first session's first step does not pay for it.
   */
  async warm(path: string, backend: Backend, tokens = 8): Promise<number> {
    this.check(backend);
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
    this.crashes.clear();
    this.generations = 0;
  }
}

const times = (n: number): string => (n === 2 ? "twice" : `${n} times`);

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
 * Where a model runs, shared by the sessions that use it (backend.ts's LoadedModel): its file,
 * and the backend, which changes when the host sets that backend aside.
 */
export interface Placement {
  readonly path: string;
  readonly backend: Backend;
  /** Chooses the next backend in the fallback order and loads the model there; `backend` is then the new one. */
  fallBack(): Promise<void>;
}

/** A sequence open in a live host, and the backend its model runs on there. */
interface At {
  proc: HostProcess;
  seq: number;
  backend: Backend;
}

/**
 * One session's context sequence, in the inference host: the API of ModelSequence (sequence.ts),
 * which runs it there. After the host ended it is opened again in the next one, at the next call,
 * on the model's next backend when the host set its own aside (`onMove` is then told which it left).
 */
export class RemoteSequence {
  private at?: At;
  private opening?: Promise<At>;
  private disposed = false;
  /** Draft tokens accepted and rejected so far (speculative decoding), as of the last generation. */
  predictions: Predictions = { validated: 0, refuted: 0, used: 0 };

  private constructor(
    private readonly host: InferenceHost,
    private readonly place: Placement,
    private readonly opts: { contextSize: number; threads: number; speculative: boolean },
    private readonly onMove: ((from: Backend) => void) | undefined,
    readonly contextSize: number,
    /** CPU threads its context evaluates with. */
    readonly threads: number,
  ) {}

  static async open(host: InferenceHost, place: Placement, opts: { contextSize: number; threads: number; speculative?: boolean }, onMove?: (from: Backend) => void): Promise<RemoteSequence> {
    const o = { ...opts, speculative: opts.speculative === true };
    const at = await openAt(host, place, o);
    const s = new RemoteSequence(host, place, o, onMove, at.contextSize, at.threads);
    s.at = at;
    return s;
  }

  /** The sequence in a live host: opened again (empty) when the host it was in has ended. */
  private live(): Promise<At> {
    if (this.at && !this.at.proc.ended) return Promise.resolve(this.at);
    const from = this.at?.backend;
    this.opening ??= openAt(this.host, this.place, this.opts)
      .then((at) => {
        this.at = at;
        if (from && from !== at.backend) this.onMove?.(from);
        return at;
      })
      .finally(() => (this.opening = undefined));
    return this.opening;
  }

  async generate(prompt: readonly Token[], opts: Omit<GenerateOptions, "grammar"> & { grammar?: { grammar: string } }): Promise<GenerateResult> {
    if (this.disposed) throw new Error("the sequence was disposed");
    opts.signal?.throwIfAborted();
    const { proc, seq, backend } = await this.live();
    const r = await this.host.generate(
      proc,
      { backend, path: this.place.path },
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

/** Opens a sequence for `place` in the live host, first moving the model on where the host set its backend aside. */
async function openAt(host: InferenceHost, place: Placement, opts: { contextSize: number; threads: number; speculative: boolean }): Promise<At & OpenedSequence> {
  if (host.abandoned(place.backend)) await place.fallBack();
  const backend = place.backend;
  return { ...(await host.openSequence(place.path, backend, opts)), backend };
}
