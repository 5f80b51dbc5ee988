// One adapter process for many debug sessions: the editor connects to it once per session over a
// named pipe or Unix socket, so the llama.cpp binding and the loaded models stay warm between
// sessions (a new session's first stop then costs milliseconds, not a model load), and the model
// can be loaded and warmed up (a short decode) before the first session starts.
import { createServer, type Socket } from "node:net";
import { rmSync } from "node:fs";
import { NeuralPythonSession } from "./session.js";
import { startSession } from "./framing.js";
import { isUri, resolveModel } from "../model/resolve.js";
import { sealedExecutor } from "../real/sealed.js";
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

/** Serves sessions on `path` until the parent goes (stdin closes); says `listening PATH` on stdout when ready. */
export function serve(path: string, opts: ServeOptions = {}): void {
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
  if (process.platform !== "win32") {
    // A socket file left by a process that died would refuse the listen; ours goes when we do.
    rmSync(path, { force: true });
    process.on("exit", () => rmSync(path, { force: true }));
  }
  // The socket is created private to the user (0600), whatever the umask: anyone who can connect
  // can start sessions. The bind happens within listen(), so the umask is ours only that long.
  const umask = process.platform !== "win32" ? process.umask(0o177) : undefined;
  try {
    server.listen(path, () => {
      process.stdout.write(`listening ${path}\n`);
      if (opts.preload !== undefined) void preload(opts.preload, opts.gpu ?? "auto", opts.warm !== false);
      // Predict mode's sealed CPython loads in the background too (seconds): a session's first stop needs none of that time.
      const t0 = performance.now();
      sealedExecutor()
        .warm()
        .then(
          (info) => process.stderr.write(`neural-python adapter: sealed CPython ${info.python} (Pyodide ${info.pyodide}) ready in ${Math.round(performance.now() - t0)} ms\n`),
          (e: Error) => process.stderr.write(`neural-python adapter: the sealed run is not available: ${e.message}\n`),
        );
    });
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
