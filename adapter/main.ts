// The debug adapter as a program: speaks DAP on stdio (or on a port with --server=PORT), so
// VS Code and any other DAP client can start it with `node dist/adapter.js`.
import { DebugSession } from "@vscode/debugadapter";
import { NeuralPythonSession } from "./session.js";

// stdout is the DAP stream: whatever a library prints (llama.cpp's load messages) goes to stderr.
for (const level of ["log", "info", "debug", "warn"] as const) console[level] = console.error;

// A stray rejection must not take the session down: every request is answered by its handler.
process.on("unhandledRejection", (e) => {
  process.stderr.write(`neural-python adapter: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
});

DebugSession.run(NeuralPythonSession);
