// `ndbg mcp` over the real protocol: the built CLI (`node dist/ndbg.js mcp`) driven by the MCP SDK's
// own Client over stdio, as an agent's client drives it. A recorded session is checked answer by
// answer against the real run (the tracer's frames walked with the debugger semantics); a session
// predicted by the bundled model is checked for its marks and structure (not the model's values);
// then the server's rules: modes that run code only with --allow-run, several sessions at once,
// every bad call a tool error, every wait bounded, every process gone when the client goes.
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type TraceResult } from "../adapter/real/run.js";
import { runTrace } from "../adapter/real/hostRun.js";
import { transition } from "../adapter/real/semantics.js";
import { breakpointCanHit, type Action, type Frame } from "../adapter/format/trajectory.js";
import { NDBG, ROOT, buildDist } from "./support/dist.js";
import { backIndex, realStack, stepIndex, stepOutIndex } from "./support/dap.js";
import { alive, stillAlive } from "./support/processes.js";

before(buildDist);

const FIX = join(ROOT, "test", "fixtures", "dap");
const CALLS = join(FIX, "calls.py");
const FOREVER = join(FIX, "forever.py");
const DEMO = join(ROOT, "examples", "demo.py");
const TRACE = join(ROOT, "test", "fixtures", "traces", "demo.ndbg");
const PRICES = join(ROOT, "test", "fixtures", "mcp", "prices.py");
const SHOP = join(ROOT, "examples", "shop.py");

const TOOLS = [
  "start_session", "step_into", "step_over", "step_out", "step_back", "continue", "reverse_continue", "predict_output",
  "set_breakpoints", "clear_breakpoints", "get_stack", "get_variables", "evaluate", "set_variable", "predict_input", "list_holes", "end_session", "list_sessions",
];

// ---- a client ----

interface Server {
  client: Client;
  pid: number;
  stderr: () => string;
}

/** `ndbg mcp FLAGS...`, connected with the SDK's client over stdio. */
async function serve(...flags: string[]): Promise<Server> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [NDBG, "mcp", ...flags], stderr: "pipe", cwd: ROOT });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => void (err = (err + d.toString()).slice(-20_000)));
  const client = new Client({ name: "ndbg-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, pid: transport.pid!, stderr: () => err };
}

interface Answer {
  isError: boolean;
  text: string;
  /** The structured content (any: each test reads the fields it checks). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  s: any;
}

/** One tool call; the SDK client itself checks structured content against the tool's output schema. */
async function call(c: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const r = await c.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
  const text = (r.content as { type: string; text?: string }[]).map((x) => x.text ?? "").join("\n");
  return { isError: r.isError === true, text, s: r.structuredContent };
}

/** A call that must succeed: its structured content. */
async function ok(c: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const a = await call(c, name, args);
  assert.equal(a.isError, false, `${name} ${JSON.stringify(args)} failed: ${a.text}`);
  assert.ok(a.text.trim(), `${name} answers a text too`);
  return a;
}

/** A call that must be refused with a tool error whose message matches `why`. */
async function refused(c: Client, name: string, args: unknown, why: RegExp): Promise<string> {
  const r = await c.callTool({ name, arguments: args as Record<string, unknown> });
  const text = (r.content as { text?: string }[]).map((x) => x.text ?? "").join("\n");
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args).slice(0, 200)} should be refused, got: ${text.slice(0, 300)}`);
  assert.match(text, why);
  assert.ok(text.length < 2500 && !/\n\s+at \S.*:\d+:\d+\)?$/m.test(text), `a short message without a stack: ${text.slice(0, 300)}`);
  return text;
}

/** The processes below `pid` (its children, theirs, ...), read from /proc. */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const [k, v] of parent) if (v === p) out.push(k), walk(k);
  };
  walk(pid);
  return out;
}

// ---- the real run ----

/**
 * Where a move lands in the real run with breakpoints `bps` set: the debugger semantics, but a
 * step over stops on the way at a breakpoint inside the call it steps over (as debugpy's does).
 */
function landing(frames: readonly Frame[], i: number, action: Action, bps: number[]): number {
  const j = transition(frames, i, action, bps?.map((line) => ({ line })));
  if (action.kind !== "step_over") return j;
  for (let k = i + 1; k < j; k++) if (breakpointCanHit(frames[k]) && bps.includes(frames[k].line)) return k;
  return j;
}

/** What a recorded stop must show: the real state at trace index i. */
function sameAsReal(stop: Answer["s"], frames: readonly Frame[], i: number, what: string): void {
  const f = frames[i];
  assert.ok(f, `${what}: the real run has a state ${i}`);
  assert.deepEqual(
    { func: stop.frame?.func, line: stop.frame?.line, event: stop.frame?.event, depth: stop.frame?.depth },
    { func: f.func, line: f.line, event: f.event, depth: f.depth },
    `${what}: where it stopped`,
  );
  assert.deepEqual(Object.fromEntries(stop.locals.map((v: { name: string; value: string }) => [v.name, v.value])), f.locals, `${what}: the locals`);
  assert.ok(stop.locals.every((v: { predicted: boolean }) => v.predicted === false) && stop.frame.predicted === false, `${what}: real values carry no mark`);
}

test("a recorded session through every tool answers what the real run did", { timeout: 120_000 }, async () => {
  const run: TraceResult = await runTrace(CALLS, { call: "main(3)" });
  const frames = run.frames;
  const at = (i: number, action: Action, bps: number[] = []): number => landing(frames, i, action, bps);
  const { client: c, pid } = await serve("--allow-run");
  try {
    const listed = await c.listTools();
    assert.deepEqual(listed.tools.map((t) => t.name).sort(), [...TOOLS].sort());
    for (const t of listed.tools) assert.ok(t.description && t.inputSchema.type === "object" && t.outputSchema?.type === "object", `${t.name} is described, with both schemas`);
    // A client puts the whole list in its model's context, at every turn.
    const size = JSON.stringify(listed).length;
    assert.ok(size < 25_000, `the tool list is ${size} characters`);

    // Start, with a breakpoint on the loop's line in total (line 9) and a bad one on a blank line.
    const start = await ok(c, "start_session", { program: CALLS, call: "main(3)", mode: "record", breakpoints: [9, 4] });
    const id = start.s.sessionId;
    assert.match(id, /^s\d+$/);
    assert.equal(start.s.reason, "entry");
    sameAsReal(start.s, frames, 0, "entry");
    assert.ok(start.s.notes.some((n: string) => /line 4: no code on this line/.test(n)), "the refused breakpoint is said");

    const bp = await ok(c, "set_breakpoints", { sessionId: id, breakpoints: [{ line: 2 }, { line: 5, condition: "x > 0" }] });
    assert.deepEqual(bp.s.breakpoints.map((b: { line: number; verified: boolean }) => [b.line, b.verified]), [[2, true], [5, false]]);
    assert.deepEqual(bp.s.active.map((b: { line: number }) => b.line), [2, 9]);
    // A log message whose {part} is not an expression is refused; a condition that is not one is set, and says so (as in the adapter).
    const odd = await ok(c, "set_breakpoints", { sessionId: id, breakpoints: [{ line: 2, logMessage: "{x +}" }, { line: 9, condition: "n ==" }] });
    assert.deepEqual(odd.s.breakpoints.map((b: { verified: boolean; message?: string }) => [b.verified, b.message]), [
      [false, "log message: {x +}: invalid syntax"],
      [true, "condition: invalid syntax; it stops there every time"],
    ]);
    assert.deepEqual(odd.s.active, [{ line: 2 }, { line: 9, condition: "n ==" }]);
    const plainAgain = await ok(c, "set_breakpoints", { sessionId: id, breakpoints: [{ line: 2 }, { line: 9 }] });
    assert.deepEqual(plainAgain.s.active, [{ line: 2 }, { line: 9 }]);

    // continue stops at the first breakpoint the real run reaches.
    let i = at(0, { kind: "continue" }, [2, 9]);
    const hit = await ok(c, "continue", { sessionId: id });
    assert.equal(hit.s.reason, "breakpoint");
    sameAsReal(hit.s, frames, i, "continue");

    // The stack and a caller's variables are the real ones at that point.
    const stack = await ok(c, "get_stack", { sessionId: id });
    const real = realStack(frames, i);
    assert.deepEqual(stack.s.frames.map((f: { func: string; line: number }) => [f.func, f.line]), real.map((f) => [f.func, f.line]));
    const caller = await ok(c, "get_variables", { sessionId: id, frame: 1 });
    assert.deepEqual(Object.fromEntries(caller.s.variables.map((v: { name: string; value: string }) => [v.name, v.value])), real[1].locals);
    assert.equal(caller.s.scope, "Locals");

    // Step over the line that calls square: the breakpoint inside it stops the step there.
    assert.equal(frames[i].line, 9, "the first hit is the loop's line, which calls square");
    i = at(i, { kind: "step_over" }, [2, 9]);
    const over = await ok(c, "step_over", { sessionId: id });
    sameAsReal(over.s, frames, i, "step_over into a breakpoint");
    assert.deepEqual([over.s.reason, over.s.frame.func, over.s.frame.line], ["breakpoint", "square", 2]);

    // Steps: each lands where the debugger semantics say.
    for (const kind of ["step_into"] as const) {
      i = stepIndex(frames, i, kind, [2, 9]);
      sameAsReal((await ok(c, kind, { sessionId: id })).s, frames, i, kind);
    }

    // Evaluate over the current frame and a caller's, computed from the real values.
    const local = frames[i].locals;
    const name = Object.keys(local)[0];
    const ev = await ok(c, "evaluate", { sessionId: id, expression: `${name} == ${name}` });
    assert.equal(ev.s.value, "True");
    assert.equal(ev.s.predicted, false);
    const up = realStack(frames, i)[1];
    if (up && "acc" in up.locals) assert.equal((await ok(c, "evaluate", { sessionId: id, expression: "acc", frame: 1 })).s.value, up.locals.acc);

    // Step out: to the callee's return, with the value it returned (a debugger shows it in the caller).
    const out = stepOutIndex(frames, i, [2, 9]);
    const so = await ok(c, "step_out", { sessionId: id });
    sameAsReal(so.s, frames, out, "step_out");
    assert.deepEqual([so.s.frame.event, so.s.frame.func, so.s.frame.value], ["return", "square", frames[out].value], "step out stops at what the callee returned");
    i = out;

    // Step back goes one statement back: the line that called square.
    const back = await ok(c, "step_back", { sessionId: id });
    assert.equal(back.s.reason, "back");
    sameAsReal(back.s, frames, backIndex(frames, out), "step_back");
    assert.equal(back.s.frame.line, 9);

    // Predict a call's output: from square's next call, one step_return to its return.
    await ok(c, "clear_breakpoints", { sessionId: id, lines: [2] });
    await ok(c, "step_over", { sessionId: id });
    // (a step into stops on the body's first line, past square's call event)
    let state = await ok(c, "step_into", { sessionId: id });
    while (state.s.frame?.func !== "square") state = await ok(c, "step_into", { sessionId: id });
    const callIndex = frames.findIndex((f, k) => f.event === "call" && f.func === "square" && f.locals.x === state.s.locals[0].value && k > 0);
    assert.equal(frames[callIndex + 1].line, state.s.frame.line, "stopped on the line after square's call event");
    const po = await ok(c, "predict_output", { sessionId: id });
    const retIndex = at(callIndex, { kind: "step_return" });
    sameAsReal(po.s, frames, retIndex, "predict_output");
    assert.equal(po.s.frame.value, frames[retIndex].value);

    // Predict an input from an output: the real call that returned it.
    const pi = await ok(c, "predict_input", { sessionId: id, function: "square", output: frames[retIndex].value! });
    assert.equal(pi.s.call, `square(${frames[callIndex].locals.x})`);
    assert.deepEqual(Object.fromEntries(pi.s.arguments.map((v: { name: string; value: string }) => [v.name, v.value])), frames[callIndex].locals);
    assert.equal(pi.s.predicted, false);
    await refused(c, "predict_input", { sessionId: id, function: "square", output: "12345" }, /never returned 12345 from square/);

    // A recording is not edited.
    await refused(c, "set_variable", { sessionId: id, name: "x", value: "5" }, /record mode/);

    // Clear every breakpoint and run to the end: the real exit and output.
    assert.deepEqual((await ok(c, "clear_breakpoints", { sessionId: id })).s.active, []);
    const end = await ok(c, "continue", { sessionId: id });
    assert.equal(end.s.reason, "exit");
    assert.deepEqual({ status: end.s.exit.status, predicted: end.s.exit.predicted }, { status: run.exit.status, predicted: false });
    const printed = frames.map((f) => f.stdout ?? "").join("") + (run.exit.stdout ?? "");
    assert.ok(printed.includes("acc: 5"));
    assert.ok(end.s.output.some((o: { text: string; predicted: boolean }) => o.text.includes("acc: 5") && !o.predicted), "the program's real output, unmarked");
    await refused(c, "step_over", { sessionId: id }, /the program has ended/);

    assert.equal((await ok(c, "list_sessions", {})).s.sessions.length, 1);
    await ok(c, "end_session", { sessionId: id });
    assert.deepEqual((await ok(c, "list_sessions", {})).s.sessions, []);
    await refused(c, "get_stack", { sessionId: id }, /there is no session "s1"/);
  } finally {
    await c.close();
  }
  assert.deepEqual(await stillAlive([pid], 5000), [], "the server goes when its client does");
});

test("a session predicted by the bundled model: every value marked, with the model's confidence", { timeout: 180_000 }, async () => {
  const { client: c, pid } = await serve();
  try {
    const start = await ok(c, "start_session", { program: DEMO, call: "total([3, 1, 2])", compute: false });
    const id = start.s.sessionId;
    assert.equal(start.s.mode, "predict");
    assert.equal(start.s.model?.name, "ndbg-base-28m");
    // The entry call's frame is bound from the call: real, no mark.
    assert.deepEqual([start.s.frame.func, start.s.frame.event, start.s.frame.predicted], ["total", "call", false]);
    assert.deepEqual(start.s.locals, [{ name: "values", value: "[3, 1, 2]", type: "list", predicted: false }]);

    const source = readFileSync(DEMO, "utf8").split("\n");
    const marked = (m: { predicted: boolean; confidence?: number; lowConfidence?: boolean; mark?: string }, what: string): void => {
      assert.equal(m.predicted, true, `${what} is predicted`);
      assert.ok(typeof m.confidence === "number" && m.confidence > 0 && m.confidence <= 1, `${what}: a confidence (${m.confidence})`);
      assert.equal(m.lowConfidence, m.confidence! < 0.5, `${what}: low below the threshold`);
      const pct = Math.round(m.confidence! * 100);
      assert.equal(m.mark, `predicted (${pct}%)${m.lowConfidence ? " ⚠ low confidence" : ""}`, `${what}: the adapter's own mark`);
    };
    let last: Answer | undefined;
    for (const kind of ["step_into", "step_into"] as const) {
      const s = await ok(c, kind, { sessionId: id });
      if (s.s.reason === "exit") break;
      last = s;
      const f = s.s.frame;
      assert.ok(["total", "running_max"].includes(f.func), `a function of the program: ${f.func}`);
      assert.ok(f.line >= 1 && f.line <= source.length && f.code === source[f.line - 1].trim(), "a line of the program, with its code");
      marked(f, `${kind}'s state`);
      for (const v of s.s.locals) {
        marked(v, `${kind}'s ${v.name}`);
        assert.equal(v.confidence, f.confidence, "a value is as sure as its state");
      }
      assert.match(s.text, /\[predicted \(\d+%\)/, "the text says it too");
    }
    assert.ok(last, "the model predicted at least one state");

    const vars = await ok(c, "get_variables", { sessionId: id });
    assert.match(vars.s.scope, /^Predicted locals \(\d+%( ⚠ low confidence)?\)$/);
    const name = vars.s.variables.find((v: { name: string }) => !v.name.startsWith("("))?.name;
    if (name) {
      const ev = await ok(c, "evaluate", { sessionId: id, expression: name });
      marked(ev.s, "an evaluated expression over predicted values");
      // Set it: the state is the user's now, and the model predicts on from it.
      const set = await ok(c, "set_variable", { sessionId: id, name, value: "[7, 8]" });
      assert.equal(set.s.reason, "edited");
      assert.equal(set.s.set.value, "[7, 8]");
      assert.equal(set.s.locals.find((v: { name: string }) => v.name === name).value, "[7, 8]");
      const after = await ok(c, "step_over", { sessionId: id });
      assert.ok(after.s.reason === "exit" || after.s.frame.predicted, "the next state is predicted from the edited one");
    }

    // The inverse call: which list gives 9; and a call's output in one jump.
    const pi = await ok(c, "predict_input", { sessionId: id, output: "9" });
    assert.equal(pi.s.function, "total");
    assert.match(pi.s.call, /^total\(.*\)$/);
    marked(pi.s, "the predicted input");
    assert.deepEqual(pi.s.arguments.map((v: { name: string }) => v.name), ["values"]);

    const s2 = (await ok(c, "start_session", { program: DEMO, call: "total([1, 2])", compute: false })).s.sessionId;
    assert.notEqual(s2, id, "a second session at once, with its own id");
    const po = await call(c, "predict_output", { sessionId: s2 });
    if (po.isError) {
      // The model's answer may be no state at all: said, and the session stays where it was.
      assert.match(po.text, /^could not go on: .*; session s\d+ stays at line 1 in total$/);
    } else {
      // (its value, or none where the model says an exception unwound the call, is the model's to say)
      assert.deepEqual([po.s.frame.event, po.s.frame.func], ["return", "total"], "one jump to the call's return");
      marked(po.s.frame, "the predicted return");
    }
    // The first session is where it was.
    assert.equal((await ok(c, "list_sessions", {})).s.sessions.length, 2);
    await ok(c, "end_session", { sessionId: id });
    await ok(c, "end_session", { sessionId: s2 });
  } finally {
    await c.close();
  }
  assert.deepEqual(await stillAlive([pid], 5000), [], "the server goes when its client does");
});

test("predict mode's sealed run: real states, the model's values in its holes marked one by one", { timeout: 180_000 }, async () => {
  const { client: c, pid } = await serve();
  // (a copy: a value set for a hole is kept in the program's project, .vscode/ beside it)
  const dir = mkdtempSync(join(tmpdir(), "ndbg-mcp-prices-"));
  const prices = join(dir, "prices.py");
  copyFileSync(PRICES, prices);
  try {
    // Line 11 follows `price = unit_price(item)`: unit_price is a hole, its value the model's.
    const start = await ok(c, "start_session", { program: prices, call: "total(['pen', 'ink'])", breakpoints: [11] });
    const id = start.s.sessionId;
    assert.equal(start.s.mode, "predict");
    // The hole stops the session first (the "holes" exception stop is on by default), with the model's suggestion.
    const hole = await ok(c, "continue", { sessionId: id });
    assert.deepEqual([hole.s.reason, hole.s.hole.name, hole.s.hole.variable, hole.s.hole.by, hole.s.hole.arguments], ["hole", "unit_price", "(return)", "model", { item: "'pen'" }]);
    assert.equal(hole.s.frame.value, hole.s.hole.repr, "the stop's return value is the suggestion");
    assert.match(hole.text, /hole unit_price\(\): the model suggests .*; continue takes it, set_variable \(return\) answers it/);
    const hit = await ok(c, "continue", { sessionId: id });
    assert.deepEqual([hit.s.reason, hit.s.frame.line, hit.s.frame.predicted], ["breakpoint", 11, false], "the state itself is the sealed run's");
    const byName = Object.fromEntries(hit.s.locals.map((v: { name: string }) => [v.name, v]));
    assert.deepEqual(
      ["items", "cost", "item"].map((n) => [byName[n].value, byName[n].predicted]),
      [["['pen', 'ink']", false], ["0", false], ["'pen'", false]],
      "what the program computed is real",
    );
    const price = byName.price;
    assert.equal(price.predicted, true, "the hole's value is the model's");
    assert.ok(price.confidence > 0 && price.confidence <= 1);
    assert.equal(price.mark, `predicted (${Math.round(price.confidence * 100)}%)${price.lowConfidence ? " ⚠ low confidence" : ""}`);
    // Setting it fills the hole: the value is the user's now, and reads as real.
    const set = await ok(c, "set_variable", { sessionId: id, name: "price", value: "7" });
    assert.deepEqual([set.s.set.value, set.s.set.predicted], ["7", false]);
    assert.equal((await ok(c, "evaluate", { sessionId: id, expression: "price * 2" })).s.value, "14");
    // Any other local is set as debugpy sets it: `cost = 5` runs in the program's frame (sealed), and the run goes on from it.
    const cost = await ok(c, "set_variable", { sessionId: id, name: "cost", value: "2 + 3" });
    assert.deepEqual([cost.s.set.value, cost.s.set.predicted], ["5", false]);
    assert.equal((await ok(c, "evaluate", { sessionId: id, expression: "cost + price" })).s.value, "12");
    // The next move runs the program again with the answer: the holes met, the first one the user's now, kept in the project.
    await ok(c, "step_over", { sessionId: id });
    const holes = await ok(c, "list_holes", { sessionId: id });
    assert.deepEqual(holes.s.holes.slice(0, 1).map((h: { name: string; by: string; repr: string }) => [h.name, h.by, h.repr]), [["unit_price", "user", "7"]]);
    assert.match(holes.text, /^0\. unit_price\(item='pen'\) at line \d+: 7 \(yours\)/);
    assert.match(readFileSync(join(dir, ".vscode", "neural-python-holes.json"), "utf8"), /"value": "7"/);
  } finally {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(await stillAlive([pid], 5000), [], "the server goes when its client does");
});

test("predict mode's sealed run: objects come with what they hold, and evaluate calls the program's methods", { timeout: 180_000 }, async () => {
  const { client: c } = await serve();
  try {
    const due = readFileSync(SHOP, "utf8").split("\n").findIndex((l) => l.startsWith("due = ")) + 1;
    const start = await ok(c, "start_session", { program: SHOP, breakpoints: [due] });
    const id = start.s.sessionId;
    const hit = await ok(c, "continue", { sessionId: id });
    assert.equal(hit.s.frame.line, due);
    const { variables } = (await ok(c, "get_variables", { sessionId: id })).s;
    const cart = variables.find((v: { name: string }) => v.name === "cart");
    assert.deepEqual(cart.objects, {
      cart: [
        { name: "owner", value: "'ana'" },
        { name: "items", value: "[('pen', 2, 3), ('pad', 4, 1)]" },
      ],
    });
    // Run in the program's frame, sealed: its own method on its live object.
    assert.equal((await ok(c, "evaluate", { sessionId: id, expression: "cart.total()" })).s.value, "10");
    await refused(c, "evaluate", { sessionId: id, expression: "cart.missing()" }, /AttributeError: 'Cart' object has no attribute 'missing'/);
  } finally {
    await c.close();
  }
});

test("a move of a run that never ends pauses where the program is after pauseAfter seconds, as a debugger's Pause does: the state is exact and the session goes on", { timeout: 180_000 }, async () => {
  const { client: c } = await serve();
  const dir = mkdtempSync(join(tmpdir(), "ndbg-mcp-pause-"));
  try {
    const program = join(dir, "spin.py");
    writeFileSync(program, "def spin():\n    n = 0\n    while True:\n        n += 1\n\n\nspin()\n");
    const id = (await ok(c, "start_session", { program })).s.sessionId;
    await refused(c, "continue", { sessionId: id, pauseAfter: 0 }, /"pauseAfter" must be a whole number from 1/);
    const first = await ok(c, "continue", { sessionId: id, pauseAfter: 1 });
    assert.equal(first.s.reason, "pause", first.text);
    assert.equal(first.s.frame.func, "spin");
    assert.ok([3, 4].includes(first.s.frame.line), first.text);
    const n = (stop: Answer["s"]): number => Number(stop.locals.find((v: { name: string }) => v.name === "n").value);
    // Far past the first 10,000 events the session recorded at its start: the run went on to where it was paused.
    assert.ok(n(first.s) > 10_000, first.text);
    // Exact there: two steps over (the loop's test and its body) come back to the same line with one more.
    await ok(c, "step_over", { sessionId: id });
    const body = await ok(c, "step_over", { sessionId: id });
    assert.deepEqual([body.s.frame.line, n(body.s)], [first.s.frame.line, n(first.s) + 1], body.text);
    const again = await ok(c, "continue", { sessionId: id, pauseAfter: 1 });
    assert.equal(again.s.reason, "pause");
    assert.ok(n(again.s) > n(body.s), again.text);
  } finally {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the server's rules: no run without --allow-run, checked arguments, a bound on sessions", { timeout: 60_000 }, async () => {
  const { client: c, pid } = await serve("--max-sessions", "2");
  try {
    await refused(c, "start_session", { program: CALLS, call: "main(3)", mode: "record" }, /--allow-run/);
    await refused(c, "start_session", { program: CALLS, mode: "hybrid" }, /--allow-run/);
    await refused(c, "start_session", { program: CALLS, trusted: true }, /no argument "trusted"/);
    await refused(c, "start_session", { program: CALLS, mode: "compare" }, /"mode" must be one of/);
    await refused(c, "start_session", { program: "/nonexistent.py" }, /program not found/);
    await refused(c, "start_session", { program: CALLS, call: "main(3" }, /"call" must be a single expression/);
    await refused(c, "start_session", { program: 5 }, /"program" must be a string/);
    await refused(c, "start_session", {}, /"program" is required/);
    await refused(c, "start_session", { program: TRACE, breakpoints: "7" }, /"breakpoints" must be a list/);
    await refused(c, "start_session", { program: TRACE, pythonVersion: "3.12" }, /"pythonVersion" says which Python's states predict mode predicts/);
    await refused(c, "start_session", { program: CALLS, pythonVersion: "three" }, /pythonVersion/);
    await refused(c, "start_session", { program: TRACE, exceptions: ["all"] }, /"raised" or "uncaught"|must be one of raised, uncaught/);
    await refused(c, "step_over", {}, /needs "sessionId"/);
    await refused(c, "step_over", { sessionId: "s9" }, /there is no session "s9"/);
    await refused(c, "nope", {}, /there is no tool "nope"/);

    // Replay never runs anything: allowed here. Two at once, the third refused.
    const a = (await ok(c, "start_session", { program: TRACE })).s;
    const b = (await ok(c, "start_session", { program: TRACE })).s;
    assert.equal(a.mode, "replay");
    await refused(c, "start_session", { program: TRACE }, /2 sessions are open/);
    const moved = await ok(c, "step_into", { sessionId: a.sessionId });
    assert.equal(moved.s.position.index, 1);
    assert.equal((await ok(c, "get_stack", { sessionId: b.sessionId })).s.frames[0].line, b.frame.line, "the other session did not move");
    await refused(c, "evaluate", { sessionId: a.sessionId, expression: "'x' * 10**12" }, /cannot evaluate/);
    await refused(c, "get_variables", { sessionId: a.sessionId, frame: 99 }, /there is no frame 99/);
    await refused(c, "set_breakpoints", { sessionId: a.sessionId, breakpoints: [{ line: 0 }] }, /"line" must be a whole number/);
    await ok(c, "end_session", { sessionId: a.sessionId });
    assert.equal((await ok(c, "start_session", { program: TRACE })).s.mode, "replay", "an ended session frees its place");
  } finally {
    await c.close();
  }
  assert.deepEqual(await stillAlive([pid], 5000), [], "the server goes when its client does");
});

test("every wait is bounded, and the client's going ends every session and its processes", { timeout: 180_000 }, async () => {
  // A start that cannot finish in time is answered at the deadline, and its tracer is killed.
  const slow = await serve("--allow-run", "--start-timeout", "2");
  try {
    const t0 = Date.now();
    await refused(slow.client, "start_session", { program: FOREVER, call: "spin()", mode: "record", timeout: 60, maxSteps: 1_000_000_000 }, /took longer than 2 s and was stopped/);
    assert.ok(Date.now() - t0 < 15_000, `answered at the deadline (${Date.now() - t0} ms)`);
    assert.deepEqual(await stillAlive(descendants(slow.pid), 5000), [], "the recording's process is gone");
  } finally {
    await slow.client.close();
  }

  // A predict session holds processes of its own: the sealed run's, and the model's inference
  // process for its hole. They go with the client.
  const s = await serve();
  await ok(s.client, "start_session", { program: PRICES, call: "total(['pen'])" });
  await ok(s.client, "step_into", { sessionId: "s1" });
  const children = descendants(s.pid);
  assert.ok(children.length >= 2 && children.every(alive), `the session runs processes of its own (the sealed run, the inference host): ${children.length}`);
  await s.client.close();
  assert.deepEqual(await stillAlive([s.pid, ...children], 8000), [], "the server and everything it started are gone");
});
