// ndbg mcp: the debugger as a Model Context Protocol server on stdio, for coding agents
// (adapter/mcp/server.ts; docs/MCP.md says how a client starts it). It runs until the client
// goes. Modes that run the program on this machine (record, hybrid) need --allow-run.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { InputError, flags, guarded, integer, seconds } from "../args.js";
import { command } from "../flags.js";

const SPEC = command("mcp", "", ["allow-run", "max-sessions", "start-timeout", "step-timeout", "cwd", "verbose"]);
export const { usage, help } = SPEC;
/** Its flags (flags.ts), for the check that its help lists each one it parses. */
export const specs = [SPEC];

/** The package's version, read beside the bundle (dist/../package.json); unknown when run from the sources. */
function version(): string {
  try {
    const v = (JSON.parse(readFileSync(join(import.meta.dirname, "..", "package.json"), "utf8")) as { version?: unknown }).version;
    return typeof v === "string" ? v : "0.0.0";
  } catch {
    return "0.0.0";
  }
}

export function run(argv: string[]): Promise<number> {
  return guarded("mcp", usage, async () => {
    const { values } = flags(argv, SPEC);
    const maxSessions = integer("--max-sessions", values["max-sessions"], 1) ?? 8;
    if (maxSessions > 64) throw new InputError(`--max-sessions is at most 64, not ${maxSessions}`, 2);
    const startTimeout = values["start-timeout"] === undefined ? 300 : seconds("--start-timeout", values["start-timeout"]);
    const stepTimeout = values["step-timeout"] === undefined ? 120 : seconds("--step-timeout", values["step-timeout"]);
    // stdout is the protocol's stream: whatever a library prints (llama.cpp's load messages) goes to stderr.
    for (const level of ["log", "info", "debug", "warn"] as const) console[level] = console.error;
    // A stray rejection must not take the server and its sessions down: every call is answered by its handler.
    process.on("unhandledRejection", (e) => process.stderr.write(`ndbg mcp: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`));
    const { serveMcp } = await import("../../mcp/server.js");
    await serveMcp({
      version: version(),
      allowRun: values["allow-run"] === true,
      maxSessions,
      startTimeoutMs: startTimeout * 1000,
      stepTimeoutMs: stepTimeout * 1000,
      cwd: values.cwd ?? process.cwd(),
      ...(values.verbose ? { log: (m: string) => void process.stderr.write(m.endsWith("\n") ? m : m + "\n") } : {}),
    });
    return 0;
  });
}
