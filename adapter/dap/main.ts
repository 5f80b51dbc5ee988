// The debug adapter as a program: speaks DAP on stdio, so VS Code and any other DAP client can
// start it with `node dist/adapter.js`. With `--listen=PIPE` it serves one session per
// connection on a named pipe or Unix socket and stays up between them (the extension keeps one
// warm); `--listen=PORT` (or `--listen=127.0.0.1:PORT`) does the same on a TCP port of the
// loopback, for clients that reach an adapter by TCP (nvim-dap's "server" adapters); `--preload=MODEL` (empty: the bundled model) and `--gpu=G` load a model at once and
// warm it up with a short decode (`--warm=false`: load only).
import { NeuralPythonSession } from "./session.js";
import { startSession } from "./framing.js";
import { closeThen, serve } from "./serve.js";
import { GPU_SETTINGS, type GpuSetting } from "../model/backend.js";

// stdout is the DAP stream: whatever a library prints (llama.cpp's load messages) goes to stderr.
for (const level of ["log", "info", "debug", "warn"] as const) console[level] = console.error;

// A stray rejection must not take the session down: every request is answered by its handler.
process.on("unhandledRejection", (e) => {
  process.stderr.write(`neural-python adapter: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
});

const arg = (name: string): string | undefined => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? undefined : a.slice(name.length + 3);
};
const listen = arg("listen");
if (listen) {
  const gpu = arg("gpu");
  const preload = arg("preload");
  serve(listen, {
    ...(preload !== undefined ? { preload } : {}),
    warm: arg("warm") !== "false",
    ...(gpu !== undefined && (GPU_SETTINGS as readonly string[]).includes(gpu) ? { gpu: gpu as GpuSetting } : {}),
  });
} else {
  const session = new NeuralPythonSession();
  // Asked to go: the session's processes and temp files (compare mode's debugpy) go first.
  process.on("SIGTERM", () => closeThen([session], () => session.shutdown()));
  startSession(session, process.stdin, process.stdout);
}
