// One adapter process for many debug sessions: the editor connects to it once per session over a
// named pipe or Unix socket, so the llama.cpp binding and the loaded models stay warm between
// sessions (a new session's first stop then costs milliseconds, not a model load), and the model
// can be loaded and warmed up (a short decode) before the first session starts.
import { createServer, type Socket } from "node:net";
import { rmSync } from "node:fs";
import { NeuralPythonSession } from "./session.js";
import { startSession } from "./framing.js";
import { isUri, resolveModel } from "../model/resolve.js";
import { sealedChild } from "../real/sealed.js";
import { loadModel, type GpuSetting } from "../model/backend.js";
import { inferenceHost } from "../model/remote.js";

export interface ServeOptions {
  /** A model to load at once (a path, or "" for the bundled one); URIs are left for the session to fetch. */
  preload?: string;
  gpu?: GpuSetting;
  /** After the preload, decode a few tokens (default true): a GPU compiles its pipelines, the CPU pages the weights in. */
  warm?: boolean;
}

/** How long sessions get to end their processes and remove their files when the adapter is told to go. */
const CLOSE_TIMEOUT_MS = 2_000;

/** Closes the sessions (their programs, debugpy, temp folders), then calls `exit`: at the latest after CLOSE_TIMEOUT_MS. */
export function closeThen(sessions: Iterable<NeuralPythonSession>, exit: () => void): void {
  void Promise.allSettled([...sessions].map((s) => s.close())).then(exit);
  setTimeout(exit, CLOSE_TIMEOUT_MS).unref();
}

/**
 * A TCP address on this machine's loopback where `--listen` names one: a port ("4711"), or a
 * loopback host and a port ("127.0.0.1:4711", "localhost:4711", "[::1]:4711"); port 0 takes a free
 * one. Undefined for a pipe or socket path. Throws for any other host, or a port past 65535: a
 * session runs programs (record mode) for whoever connects, so the network never reaches one.
 */
export function tcpAddress(listen: string): { host: string; port: number } | undefined {
  const m = /^(?:(.+):)?(\d+)$/.exec(listen);
  if (!m || (m[1] !== undefined && /[\\/]/.test(m[1]))) return undefined;
  const host = m[1] ?? "127.0.0.1";
  if (!["127.0.0.1", "localhost", "[::1]"].includes(host)) throw new Error(`--listen=${listen}: the adapter listens on this machine's loopback only (127.0.0.1, localhost or [::1])`);
  if (Number(m[2]) > 65535) throw new Error(`--listen=${listen}: ${m[2]} is not a TCP port`);
  return { host: host === "[::1]" ? "::1" : host, port: Number(m[2]) };
}

/**
 * Serves sessions on `path` (a named pipe or Unix socket, or a TCP port on the loopback: see
 * tcpAddress) until the parent goes (stdin closes); says `listening PATH` (or `listening HOST:PORT`)
 * on stdout when ready.
 */
export function serve(path: string, opts: ServeOptions = {}): void {
  let tcp: ReturnType<typeof tcpAddress>;
  try {
    tcp = tcpAddress(path);
  } catch (e) {
    process.stderr.write(`neural-python adapter: ${(e as Error).message}\n`);
    process.exit(2);
  }
  const sessions = new Set<NeuralPythonSession>();
  const server = createServer((socket: Socket) => {
    const session = new NeuralPythonSession();
    sessions.add(session);
    session.setRunAsServer(true);
    startSession(session, socket, socket);
    // A client that goes without a disconnect request still frees its session's context.
    socket.on("close", () => {
      sessions.delete(session);
      void session.close();
    });
    socket.on("error", (e) => process.stderr.write(`neural-python adapter: connection: ${e.message}\n`));
  });
  server.on("error", (e) => {
    process.stderr.write(`neural-python adapter: cannot listen on ${path}: ${e.message}\n`);
    process.exit(1);
  });
  if (process.platform !== "win32" && !tcp) {
    // A socket file left by a process that died would refuse the listen; ours goes when we do.
    rmSync(path, { force: true });
    process.on("exit", () => rmSync(path, { force: true }));
  }
  // The socket is created private to the user (0600), whatever the umask: anyone who can connect
  // can start sessions. The bind happens within listen(), so the umask is ours only that long.
  const umask = process.platform !== "win32" && !tcp ? process.umask(0o177) : undefined;
  try {
    const listening = (): void => {
      const where = tcp ? `${tcp.host.includes(":") ? `[${tcp.host}]` : tcp.host}:${(server.address() as { port: number }).port}` : path;
      process.stdout.write(`listening ${where}\n`);
      if (opts.preload !== undefined) void preload(opts.preload, opts.gpu ?? "auto", opts.warm !== false);
      // Predict mode's sealed CPython loads in the background too (seconds): a session's first stop needs none of that time.
      const t0 = performance.now();
      sealedChild()
        .warm()
        .then(
          (info) => process.stderr.write(`neural-python adapter: sealed CPython ${info.python} (Pyodide ${info.pyodide}) ready in ${Math.round(performance.now() - t0)} ms\n`),
          (e: Error) => process.stderr.write(`neural-python adapter: the sealed run is not available: ${e.message}\n`),
        );
    };
    if (tcp) server.listen(tcp.port, tcp.host, listening);
    else server.listen(path, listening);
  } finally {
    if (umask !== undefined) process.umask(umask);
  }
  // The process that started us owns us: when its end of our stdin closes, we go too, with our sessions.
  const quit = (): void => closeThen(sessions, () => process.exit(0));
  process.stdin.on("end", quit);
  process.stdin.on("error", quit);
  process.on("SIGTERM", quit);
  process.stdin.resume();
}

/**
 * Loads the model in the background, then warms it up. A session that arrives meanwhile shares
 * the same load (loadModel and the inference host keep one per model) and never waits for the
 * warm-up, which decodes on a small context of its own. The weights stay loaded while sessions
 * come; with none for a while, the inference host goes and frees them (remote.ts, HOST_IDLE_MS).
 */
async function preload(spec: string, gpu: GpuSetting, warm: boolean): Promise<void> {
  if (isUri(spec)) return;
  const t0 = performance.now();
  try {
    const lm = await loadModel(await resolveModel(spec), { gpu });
    process.stderr.write(`neural-python adapter: preloaded ${lm.path} on ${lm.device} in ${Math.round(performance.now() - t0)} ms\n`);
    if (!warm) return;
    const ms = await inferenceHost().warm(lm.path, lm.backend);
    process.stderr.write(`neural-python adapter: warmed up ${lm.device} in ${Math.round(ms)} ms\n`);
  } catch (e) {
    // The session that uses it will say what is wrong, in its console.
    process.stderr.write(`neural-python adapter: could not preload ${spec || "the bundled model"}: ${(e as Error).message}\n`);
  }
}
