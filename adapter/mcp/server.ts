// The Model Context Protocol server (`ndbg mcp`): the tools of tools.ts over stdio (stdio.ts), with
// the official SDK's low-level server, so that every argument is checked by this project's own
// reading (checks.ts) and every failure is a tool error with a message, never a crash. The client
// owns the server: when it goes (stdin ends, or it is told to stop), every session ends, with its processes.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { cutText } from "../format/values.js";
import { stopInferenceHost } from "../model/remote.js";
import { ToolInputError } from "./checks.js";
import { SessionTable, type ServerOptions } from "./sessions.js";
import { TOOLS } from "./tools.js";
import { LineTransport } from "./stdio.js";

/** Characters of an error message: a message never carries a whole expression or value back. */
const MAX_MESSAGE = 2_000;
/** How long the sessions get to end their processes when the client goes. */
const CLOSE_TIMEOUT_MS = 3_000;

const INSTRUCTIONS =
  "A debugger for Python programs that need not run on this machine: start_session opens a file (predict mode, the default, runs it sealed in WebAssembly " +
  "and a local model predicts only what cannot run; compute: false, the model predicts every state), " +
  "then step_into / step_over / step_out / step_back, set_breakpoints and continue move through it, get_stack, get_variables and evaluate read the state, " +
  "predict_output jumps to a call's return, predict_input finds the arguments that give an output. end_session when done. " +
  "A move answers its stop: reason (entry, step, breakpoint, exception, exit, back, edited), frame {func, line, code, event, value: the return value or exception}, " +
  "locals [{name, value: a Python repr, type}], returned (what a function just returned), output, notes. Every value, frame and answer says where it comes from: " +
  "predicted: false is the real program's (or decided by it from known values); predicted: true is the model's guess, with confidence (0 to 1), " +
  "lowConfidence, and mark, as the editor writes it (\"predicted (84%)\", \"from a predicted value (84%)\"). Trust a predicted value only as far as its confidence.";

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

const failure = (message: string): CallToolResult => ({ isError: true, content: [{ type: "text", text: cutText(message, MAX_MESSAGE) }] });

/** Runs one tools/call: an answer, or a tool error that says what is wrong. */
async function callTool(sessions: SessionTable, name: string, args: unknown, signal: AbortSignal, log: (m: string) => void): Promise<CallToolResult> {
  const tool = BY_NAME.get(name);
  if (!tool) return failure(`there is no tool ${JSON.stringify(cutText(name, 60))} (tools: ${TOOLS.map((t) => t.name).join(", ")})`);
  try {
    const a = await tool.run(args, sessions, signal);
    return { content: [{ type: "text", text: a.text }], structuredContent: a.structured };
  } catch (e) {
    if (e instanceof ToolInputError) return failure(e.message);
    // Not a refusal the tools foresaw: said, never thrown past the protocol.
    log(`ndbg mcp: ${name}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return failure(`internal error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export interface McpServerOptions extends ServerOptions {
  version: string;
}

/**
 * Serves on stdin and stdout until the client goes; resolves then, once every session has ended
 * (or CLOSE_TIMEOUT_MS has passed).
 */
export async function serveMcp(opts: McpServerOptions): Promise<void> {
  const log = (m: string): void => void process.stderr.write(m.endsWith("\n") ? m : m + "\n");
  const sessions = new SessionTable(opts);
  const server = new Server({ name: "ndbg", title: "Neural Python Debugger", version: opts.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema, annotations: t.annotations })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) => callTool(sessions, req.params.name, req.params.arguments, extra.signal, log));
  // What the protocol could not take (a malformed notification, an answer to nothing): said on stderr, and the reading goes on.
  server.onerror = (e) => log(`ndbg mcp: ${cutText(e.message.replace(/\s+/g, " "), 300)}`);

  const transport = new LineTransport();
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  let closing = false;
  const close = (why: string): void => {
    if (closing) return;
    closing = true;
    if (why) log(`ndbg mcp: ${why}; ending ${sessions.size} session(s)`);
    const timer = setTimeout(done, CLOSE_TIMEOUT_MS);
    void sessions
      .close()
      .catch(() => undefined)
      .then(() => server.close().catch(() => undefined))
      .finally(() => {
        // The model's process goes with the last session; not left for its idle timer.
        stopInferenceHost();
        clearTimeout(timer);
        done();
      });
  };
  // The transport closes when the client goes (our stdin ends).
  server.onclose = () => close("");
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => close(`${sig}`));
  await server.connect(transport);
  await finished;
}
