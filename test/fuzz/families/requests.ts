// Ill-typed and hostile arguments for every request the adapter handles (and some it does not),
// before launch and while a replayed session is stopped. Every one must be answered, the
// adapter must stay up, and expressions that would build gigabytes must be refused.
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { TRACE, SCRIPT, adapter, end, launch } from "../dap.js";

/** Each request with arguments a client could validly send: the fuzzer damages them. */
const VALID: Record<string, Record<string, unknown>> = {
  initialize: { adapterID: "neural-python", linesStartAt1: true },
  setBreakpoints: { source: { path: SCRIPT }, breakpoints: [{ line: 5, condition: "k == 2", hitCondition: "2", logMessage: "k={k}" }] },
  setExceptionBreakpoints: { filters: ["raised"] },
  configurationDone: {},
  threads: {},
  stackTrace: { threadId: 1, startFrame: 0, levels: 20 },
  scopes: { frameId: 1 },
  variables: { variablesReference: 1, start: 0, count: 10 },
  evaluate: { expression: "values", frameId: 1, context: "watch" },
  setVariable: { variablesReference: 1, name: "values", value: "[1]" },
  source: { source: { path: SCRIPT }, sourceReference: 0 },
  next: { threadId: 1 },
  stepIn: { threadId: 1 },
  stepOut: { threadId: 1 },
  stepBack: { threadId: 1 },
  reverseContinue: { threadId: 1 },
  continue: { threadId: 1 },
  pause: { threadId: 1 },
  cancel: { requestId: 1 },
  exceptionInfo: { threadId: 1 },
  restart: { arguments: { program: TRACE, mode: "record" } },
  "ndbg/compare": {},
  "ndbg/resync": {},
  "ndbg/saveTrace": {},
  "ndbg/stats": {},
  attach: {},
  goto: { threadId: 1, targetId: 1 },
  setExpression: { expression: "x", value: "1" },
  completions: { text: "va", column: 3 },
  setFunctionBreakpoints: { breakpoints: [{ name: "f" }] },
  readMemory: { memoryReference: "0", count: 10 },
  noSuchCommand: {},
};
const COMMANDS = Object.keys(VALID);

/** Expressions that would be costly to compute for real. */
const HEAVY = ["['a'*10**6]*10**6", "[[[0]*1000]*1000]*1000", "9**9**9", "'x'*10**12", "[0]*10**9", "{i: i for i in range(10**9)}", "(lambda: 1)()", "__import__('os').system('true')"];

export async function requests(g: Gen, label: string, tally: Tally): Promise<void> {
  const t = await adapter(label, tally);
  // Before launch: any request at all.
  for (let i = g.int(0, 6); i > 0; i--) {
    const c = g.pick(COMMANDS.filter((c) => c !== "restart"));
    await t.request(c, g.mutate(VALID[c]), 10_000);
  }
  const launched = await launch(t, { program: TRACE, mode: "replay", stopOnEntry: true }, 20_000);
  if (launched?.success !== true) t.problem(`replaying the fixture trace failed: ${launched?.message}`);
  for (let i = g.int(5, 25); i > 0; i--) {
    const c = g.pick(COMMANDS);
    let args = g.chance(0.3) ? VALID[c] : g.mutate(VALID[c]);
    if ((c === "evaluate" || c === "setVariable") && g.chance(0.4)) args = { ...VALID[c], [c === "evaluate" ? "expression" : "value"]: g.pick(HEAVY) };
    await t.request(c, args, 15_000);
  }
  await end(t);
}
