// Malformed tool calls to `ndbg mcp`: every tool with arguments ill-typed, missing, unknown or
// hostile (huge strings, deep nesting, prototype names, paths that are no regular file), before a
// session and while one is open (replayed, recorded with --allow-run, or predicted by the bundled
// model); tools/call requests whose params are themselves wrong; lines that are no JSON-RPC at all.
// Every request must be answered (a result, a tool error or a protocol error, each with a short
// message), the server must stay up, and when the client goes nothing may be left running.
import { join } from "node:path";
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { SCRIPT, TRACE } from "../dap.js";
import { ROOT } from "../../support/dist.js";
import { McpTarget } from "../mcp.js";
import { mkfifoSync } from "./fifo.js";

const CALLS = join(ROOT, "test", "fixtures", "dap", "calls.py");
const DEMO = join(ROOT, "examples", "demo.py");

/** Each tool with arguments a client could validly send (`S` stands for the open session's id): the fuzzer damages them. */
const VALID: Record<string, Record<string, unknown>> = {
  start_session: { program: TRACE },
  step_into: { sessionId: "S" },
  step_over: { sessionId: "S" },
  step_out: { sessionId: "S" },
  step_back: { sessionId: "S" },
  continue: { sessionId: "S" },
  reverse_continue: { sessionId: "S" },
  predict_output: { sessionId: "S" },
  set_breakpoints: { sessionId: "S", breakpoints: [5, { line: 9, condition: "v > 1", hitCondition: ">= 2", logMessage: "v={v}" }], replace: false },
  clear_breakpoints: { sessionId: "S", lines: [9] },
  get_stack: { sessionId: "S" },
  get_variables: { sessionId: "S", frame: 0, globals: false },
  evaluate: { sessionId: "S", expression: "len(values)", frame: 0 },
  set_variable: { sessionId: "S", name: "values", value: "[1]" },
  predict_input: { sessionId: "S", output: "9", function: "total" },
  end_session: { sessionId: "S" },
  list_sessions: {},
  no_such_tool: {},
};
const TOOLS = Object.keys(VALID);

/** Expressions and values that would be costly to compute for real, or would run code. */
const HEAVY = ["['a'*10**6]*10**6", "[[[0]*1000]*1000]*1000", "9**9**9", "'x'*10**12", "[0]*10**9", "(lambda: 1)()", "__import__('os').system('true')", "open('/etc/passwd').read()"];

/** Lines a client should never write: each is dropped (it has no id to answer), and the server reads on. */
const JUNK = ["", "{", "null", "[]", "42", '{"jsonrpc":"2.0"}', '{"jsonrpc":"1.0","id":1,"method":"ping"}', '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}', "\u0000\u0001", "x".repeat(100_000)];

/** A JSON text no longer than the transport reads in one line (10 MB; a longer line ends the connection, as the SDK's transport decides). */
const bounded = (v: unknown): unknown => (JSON.stringify(v ?? null).length > 4_000_000 ? "too long" : v);

export async function mcp(g: Gen, label: string, tally: Tally, work: string): Promise<void> {
  const allowRun = g.chance(0.5);
  const flags = [...(allowRun ? ["--allow-run"] : []), ...(g.chance(0.3) ? ["--max-sessions", "2"] : []), "--step-timeout", "20", "--start-timeout", "40"];
  const s = new McpTarget(label, tally, flags);
  await s.initialize();
  const fifo = join(work, "named.fifo");
  mkfifoSync(fifo);
  const paths = [TRACE, SCRIPT, CALLS, fifo, "/dev/stdin", "/dev/zero", "/proc/self/mem", "/", "/nonexistent.py", "", "relative.py"];

  /** A tool's arguments: valid ones for session `id`, or damaged. */
  const args = (tool: string, id: string): unknown => {
    const valid = JSON.parse(JSON.stringify(VALID[tool]).replace(/"S"/g, JSON.stringify(id))) as Record<string, unknown>;
    if (g.chance(0.3)) return valid;
    if (tool === "start_session" && g.chance(0.5)) {
      // A launch that may start: hostile paths and modes, and a model that is no model, so that no load is long.
      const a: Record<string, unknown> = { program: g.pick(paths), mode: g.pick(["predict", "record", "hybrid", "replay", "compare", "bogus", undefined]), model: g.pick(["/nonexistent.gguf", fifo, "/dev/zero", SCRIPT]) };
      for (const k of ["call", "compute", "pythonVersion", "stopOnEntry", "maxSteps", "timeout", "lowConfidence", "breakpoints", "exceptions", "trusted", "python", "cwd", "threads"])
        if (g.chance(0.2)) a[k] = g.pick([g.value(1), -1, 0, 1e300, fifo, "/dev/stdin", "3.12", "f(", true]);
      return a;
    }
    if ((tool === "evaluate" || tool === "set_variable" || tool === "predict_input") && g.chance(0.4))
      return { ...valid, [tool === "evaluate" ? "expression" : tool === "set_variable" ? "value" : "output"]: g.pick(HEAVY) };
    return g.mutate(valid);
  };

  // Before any session: any tool, any arguments.
  for (let i = g.int(1, 6); i > 0; i--) {
    const tool = g.pick(TOOLS.filter((t) => t !== "start_session"));
    await s.call(tool, bounded(args(tool, `s${g.int(1, 4)}`)));
  }
  // tools/call requests that are themselves wrong: answered by the protocol's own errors.
  for (let i = g.int(0, 3); i > 0; i--) await s.request("tools/call", bounded(g.pick([g.value(), { name: g.value(1) }, { name: "get_stack", arguments: g.value(1) }, null, []])));

  // A session: replayed (nothing runs), recorded (with --allow-run), or predicted by the bundled model (now and then: it loads a model).
  const launch = g.pick<Record<string, unknown>>([
    { program: TRACE },
    allowRun ? { program: CALLS, call: "main(3)", mode: "record", breakpoints: [9] } : { program: TRACE, breakpoints: [7] },
    g.chance(0.3) ? { program: DEMO, call: "total([3, 1, 2])", compute: false } : { program: TRACE },
  ]);
  const started = await s.call("start_session", launch, 60_000);
  const id = (started?.result?.structuredContent?.sessionId as string | undefined) ?? "s1";
  if (started?.result && started.result.isError) s.t.problem(`a valid start was refused: ${started.result.content?.[0]?.text?.slice(0, 200)}`);

  for (let i = g.int(5, 20); i > 0; i--) {
    if (g.chance(0.1)) {
      // Junk, then a ping: the server still reads and answers.
      for (let k = g.int(1, 4); k > 0; k--) s.line(g.pick(JUNK));
      await s.request("ping", undefined);
      continue;
    }
    const tool = g.pick(TOOLS);
    await s.call(tool, bounded(args(tool, g.chance(0.85) ? id : g.pick(["s0", "s99", "S1", "", "__proto__"]))), 60_000);
  }
  await s.request("tools/list", {});
  await s.close();
}
