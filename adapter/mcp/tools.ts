// The tools an agent calls: each one's name, what it does (the description an agent reads to choose
// it), its arguments as a JSON schema, the shape of its answer, and how its arguments become a call
// on the sessions. The schemas tell a client what to send; ToolArgs checks what it did send.
import { ToolArgs, ToolInputError, oneOf, readBreakpoint, readLine, shown } from "./checks.js";
import { LAUNCH_ARGS, MCP_MODES, type MoveKind, type SessionTable } from "./sessions.js";
import { stopText, markSuffix, type StopView } from "./views.js";
import type { Hole } from "../engine/predictor.js";
import { GPU_SETTINGS } from "../model/backend.js";
import { LAYOUTS } from "../pyread/layout.js";
import { DIALECTS } from "../session/launch.js";

/** A tool's answer: structured content, and a short text of it. */
export interface Answer {
  structured: Record<string, unknown>;
  text: string;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown> & { type: "object" };
  outputSchema: Record<string, unknown> & { type: "object" };
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  run(args: unknown, sessions: SessionTable, signal?: AbortSignal): Promise<Answer>;
}

// ---- schemas ----

const SESSION = { type: "string", description: 'The session\'s id, as start_session gave it ("s1").' };
// Answers' schemas are lean: every client puts the tool list in its model's context, and the
// move tools share one answer. What the fields mean is said once, in the server's instructions
// (server.ts) and in docs/MCP.md.
const MARKS = { predicted: { type: "boolean" }, derived: { type: "boolean" }, confidence: { type: "number" }, lowConfidence: { type: "boolean" }, mark: { type: "string" } };
/** What the objects reached from a value hold (where the program ran): by the expression naming each, its attributes or items. */
const OBJECTS = { type: "object", additionalProperties: { type: "array", items: { type: "object", properties: { name: { type: "string" }, value: { type: "string" } }, required: ["name", "value"] } } };
const VARIABLE = { type: "object", properties: { name: { type: "string" }, value: { type: "string" }, type: { type: "string" }, objects: OBJECTS, ...MARKS }, required: ["name", "value", "predicted"] };
const FRAME = {
  type: "object",
  properties: { index: { type: "integer" }, func: { type: "string" }, line: { type: "integer" }, event: { type: "string" }, depth: { type: "integer" }, file: { type: "string" }, code: { type: "string" }, value: { type: "string" }, ...MARKS },
  required: ["index", "func", "line", "event", "depth", "predicted"],
};
const STOP = {
  type: "object",
  properties: {
    sessionId: { type: "string" },
    mode: { type: "string" },
    reason: { type: "string", enum: ["entry", "step", "breakpoint", "exception", "hole", "exit", "back", "edited", "pause"] },
    hole: { type: "object" },
    position: { type: "object" },
    frame: { type: "object" },
    locals: { type: "array" },
    localsLeftOut: { type: "integer" },
    returned: { type: "object" },
    exit: { type: "object" },
    output: { type: "array" },
    logs: { type: "array" },
    notes: { type: "array" },
  },
  required: ["sessionId", "mode", "reason", "position"],
} as const;
const BREAKPOINT = {
  anyOf: [
    { type: "integer", minimum: 1, description: "A line number." },
    {
      type: "object",
      properties: {
        line: { type: "integer", minimum: 1 },
        condition: { type: "string", description: "Stop only where this Python expression over the locals is true." },
        hitCondition: { type: "string", description: 'Which hits stop: "3", ">= 2", "% 2".' },
        logMessage: { type: "string", description: "A log point: write this message ({expressions} evaluated) and go on, without stopping." },
      },
      required: ["line"],
      additionalProperties: false,
    },
  ],
};
const BREAKPOINT_ANSWER = {
  type: "object",
  properties: {
    sessionId: { type: "string" },
    breakpoints: { type: "array", items: { type: "object", properties: { line: { type: "integer" }, verified: { type: "boolean" }, message: { type: "string" } }, required: ["line", "verified"] } },
    cleared: { type: "array", items: { type: "integer" } },
    active: { type: "array", items: { type: "object", properties: { line: { type: "integer" } }, required: ["line"] } },
  },
  required: ["sessionId", "active"],
};

/** An argument object: names outside the schema are refused (ToolArgs refuses them too). */
const object = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> & { type: "object" } => ({ type: "object", properties, required, additionalProperties: false });
/** An answer's shape: the fields an agent may rely on; later versions may add more. */
const shape = (properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> & { type: "object" } => ({ type: "object", properties, required });

const stopAnswer = (v: StopView): Answer => ({ structured: v as unknown as Record<string, unknown>, text: stopText(v) });

/** The longest a move may run before it pauses, in seconds (a day). */
const MAX_PAUSE_AFTER_S = 86_400;
const PAUSE_AFTER = {
  type: "integer",
  minimum: 1,
  description: 'Seconds before a long move pauses where it is (reason "pause"); default: timeout - 2.',
};

/**
 * A tool that moves the session: its argument is the session; `continue` also takes when it pauses
 * (every move pauses at the default: Session.move; the others' schemas leave it out, as every
 * tool's schema is in the client's context at every turn).
 */
function moveTool(name: string, kind: MoveKind, title: string, description: string): Tool {
  const pauses = kind === "continue";
  return {
    name,
    title,
    description,
    inputSchema: object({ sessionId: SESSION, ...(pauses ? { pauseAfter: PAUSE_AFTER } : {}) }, ["sessionId"]),
    outputSchema: STOP as unknown as Tool["outputSchema"],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async run(raw, sessions, signal) {
      const args = new ToolArgs(raw, name, pauses ? ["sessionId", "pauseAfter"] : ["sessionId"]);
      const id = args.sessionId();
      return stopAnswer(await sessions.get(id).move(kind, signal, args.integer("pauseAfter", 1, MAX_PAUSE_AFTER_S)));
    },
  };
}

// ---- the tools ----

const START: Tool = {
  name: "start_session",
  title: "Start a debugging session",
  description:
    "Starts debugging a Python file and stops at its first state. mode \"predict\" (default) never runs the program on this machine: it runs sealed " +
    "(CPython in WebAssembly, in a locked-down process), its states are exact, and a local model predicts only what no run can know (unwritten functions, " +
    "missing modules, input()), each such value marked; compute: false lets the model predict every state (the model alone). \"record\" runs it for real under a tracer and replays it, " +
    "forwards and backwards; \"hybrid\" runs it and lets the model fill only what cannot run (unwritten functions, missing modules); \"replay\" opens a saved .ndbg trace. " +
    "record and hybrid need a server started with --allow-run. call: an entry call such as f([1, 2]) for a file that only defines functions. " +
    "Answers the session's id (the other tools take it) and where it stopped, with each value marked as predicted (with the model's confidence) or real.",
  inputSchema: object(
    {
      program: { type: "string", description: "The Python file (replay mode: a .ndbg trace), absolute or relative to cwd." },
      mode: { type: "string", enum: [...MCP_MODES], default: "predict" },
      call: { type: "string", description: "Entry call, e.g. \"f([1, 2])\"; without it the file runs as a script." },
      compute: { type: "boolean", default: true, description: "Predict mode: the program runs sealed and the model fills only its holes; false: the model predicts every state." },
      pythonVersion: { type: "string", pattern: "^3\\.[0-9]+$", description: "Predict mode: whose states to predict (\"3.11\", \"3.12\")." },
      breakpoints: { type: "array", items: BREAKPOINT, description: "Breakpoints to set before the first stop." },
      exceptions: {
        type: "array",
        items: { type: "string", enum: ["raised", "uncaught", "holes"] },
        description: 'Stop at raised exceptions, an uncaught one, or a hole the model answered (an unwritten function, a missing module\'s call, input()); default ["uncaught", "holes"], [] for none.',
      },
      stopOnEntry: { type: "boolean", default: true, description: "false: run to the first breakpoint (or the end) at once." },
      predict: { type: "array", items: { type: "string" }, description: "Hybrid mode: functions to predict rather than run." },
      cwd: { type: "string", description: "What a relative program path resolves against (default: the server's folder)." },
      model: { type: "string", description: "GGUF model path or URI (default: the bundled model)." },
      python: { type: "string", description: "Python interpreter for record and hybrid mode." },
      maxSteps: { type: "integer", minimum: 1 },
      timeout: { type: "number", description: "Seconds a real run may take (record, hybrid)." },
      maxOutput: { type: "integer", minimum: 1 },
      maxRepr: { type: "integer", minimum: 1 },
      lowConfidence: { type: "number", minimum: 0, maximum: 1, description: "Predicted states below this confidence (the calibrated probability that the state is exact) are marked low (default 0.5)." },
      gpu: { type: "string", enum: [...GPU_SETTINGS] },
      threads: { type: "integer", minimum: 0 },
      layout: { type: "string", enum: [...LAYOUTS] },
      dialect: { type: "string", enum: [...DIALECTS] },
    },
    ["program"],
  ),
  outputSchema: { ...STOP, properties: { ...STOP.properties, model: { type: "object" } } } as unknown as Tool["outputSchema"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  async run(raw, sessions, signal) {
    const a = new ToolArgs(raw, "start_session", [...LAUNCH_ARGS, "breakpoints", "exceptions"]);
    const launch: Record<string, unknown> = {};
    for (const k of LAUNCH_ARGS) if (a.has(k)) launch[k] = a.raw(k);
    // Strings longer than a path or a call are refused before anything reads them.
    for (const k of ["program", "cwd", "call", "model", "python"]) a.string(k);
    const breakpoints = a.list("breakpoints", 1000, readBreakpoint);
    const exceptions = a.list("exceptions", 3, (v, at) => {
      if (typeof v !== "string") throw new ToolInputError(`${at} must be "raised", "uncaught" or "holes", not ${shown(v)}`);
      return oneOf(v, at, ["raised", "uncaught", "holes"] as const)!;
    });
    const v = await sessions.start(launch, {
      ...(breakpoints ? { breakpoints } : {}),
      ...(exceptions ? { exceptions: { raised: exceptions.includes("raised"), uncaught: exceptions.includes("uncaught"), holes: exceptions.includes("holes") } } : {}),
    }, signal);
    const model = v.model ? `\n  model ${v.model.name} on ${v.model.device}, Python ${v.model.python} states` : "";
    return { structured: v as unknown as Record<string, unknown>, text: `started ${v.sessionId} (${v.mode} mode)${model}\n${stopText(v)}` };
  },
};

const SET_BREAKPOINTS: Tool = {
  name: "set_breakpoints",
  title: "Set breakpoints",
  description:
    "Sets breakpoints on lines of the program, each a line number or {line, condition?, hitCondition?, logMessage?}. They join those set before (a new one on a line replaces the old) unless replace is true. " +
    "Each is answered verified or not (a line with no code never stops); continue runs to the next one.",
  inputSchema: object({ sessionId: SESSION, breakpoints: { type: "array", items: BREAKPOINT }, replace: { type: "boolean", default: false } }, ["sessionId", "breakpoints"]),
  outputSchema: BREAKPOINT_ANSWER as Tool["outputSchema"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions, signal) {
    const a = new ToolArgs(raw, "set_breakpoints", ["sessionId", "breakpoints", "replace"]);
    const id = a.sessionId();
    const bps = a.list("breakpoints", 1000, readBreakpoint);
    if (!bps) throw new ToolInputError('set_breakpoints needs "breakpoints": a list of lines or {line, condition?} objects');
    const r = await sessions.get(id).setBreakpoints(bps, a.boolean("replace") ?? false, signal);
    const lines = r.breakpoints.map((b) => `line ${b.line}: ${b.verified ? "set" : "not set"}${b.message ? ` (${b.message})` : ""}`);
    return { structured: r as unknown as Record<string, unknown>, text: `${id} breakpoints: ${lines.join("; ") || "none given"}; active on ${r.active.map((b) => b.line).join(", ") || "no line"}` };
  },
};

const CLEAR_BREAKPOINTS: Tool = {
  name: "clear_breakpoints",
  title: "Clear breakpoints",
  description: "Clears the breakpoints on the given lines, or every breakpoint when no lines are given.",
  inputSchema: object({ sessionId: SESSION, lines: { type: "array", items: { type: "integer", minimum: 1 } } }, ["sessionId"]),
  outputSchema: BREAKPOINT_ANSWER as Tool["outputSchema"],
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions, signal) {
    const a = new ToolArgs(raw, "clear_breakpoints", ["sessionId", "lines"]);
    const id = a.sessionId();
    const lines = a.list("lines", 1000, readLine);
    const r = await sessions.get(id).clearBreakpoints(lines, signal);
    return { structured: r as unknown as Record<string, unknown>, text: `${id}: cleared ${r.cleared.length ? `line ${r.cleared.join(", ")}` : "nothing"}; active on ${r.active.map((b) => b.line).join(", ") || "no line"}` };
  },
};

const STACK: Tool = {
  name: "get_stack",
  title: "Call stack",
  description: "The call stack where the session stands, innermost frame first (index 0), each frame with its function, line, code and marks.",
  inputSchema: object({ sessionId: SESSION }, ["sessionId"]),
  outputSchema: shape({ sessionId: { type: "string" }, frames: { type: "array", items: FRAME } }, ["sessionId", "frames"]),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions, signal) {
    const id = new ToolArgs(raw, "get_stack", ["sessionId"]).sessionId();
    const r = await sessions.get(id).stack(signal);
    const text = r.frames.map((f) => `#${f.index} ${f.func} line ${f.line}${markSuffix(f)}${f.code ? `: ${f.code}` : ""}`).join("\n");
    return { structured: r as unknown as Record<string, unknown>, text: `${id} stack:\n${text}` };
  },
};

const VARIABLES: Tool = {
  name: "get_variables",
  title: "A frame's variables",
  description:
    "The variables of a frame (0, the default, is the current one; get_stack lists the others), or with globals: true the program's module names. " +
    "Each value is its Python repr, marked predicted (with the model's confidence) where the model gave it. The current frame also shows \"(return)\", \"(exception)\" and \"(return) f\" (what a callee just returned).",
  inputSchema: object({ sessionId: SESSION, frame: { type: "integer", minimum: 0, default: 0 }, globals: { type: "boolean", default: false } }, ["sessionId"]),
  outputSchema: shape({ sessionId: { type: "string" }, frame: { type: "integer" }, scope: { type: "string" }, variables: { type: "array", items: VARIABLE } }, ["sessionId", "frame", "scope", "variables"]),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions, signal) {
    const a = new ToolArgs(raw, "get_variables", ["sessionId", "frame", "globals"]);
    const id = a.sessionId();
    const r = await sessions.get(id).variables(a.integer("frame", 0, 10_000) ?? 0, a.boolean("globals") ?? false, signal);
    const text = r.variables.map((v) => `  ${v.name} = ${v.value}${markSuffix(v)}`).join("\n");
    return { structured: r as unknown as Record<string, unknown>, text: `${id} ${r.scope} of frame ${r.frame}:\n${text || "  (none)"}` };
  },
};

const EVALUATE: Tool = {
  name: "evaluate",
  title: "Evaluate an expression",
  description:
    "Evaluates a Python expression at a frame. In predict mode's sealed run, at the current frame, it runs there as in a debugger's console: the program runs again sealed up to this state, " +
    "then the expression, so it may call the program's own functions and methods; an error it raises is the answer. Elsewhere it runs nothing: arithmetic, comparisons, indexing, " +
    "builtins such as len and sorted, methods of built-in values that change nothing (text.split(), d.items()). A value computed from predicted values is marked predicted.",
  inputSchema: object({ sessionId: SESSION, expression: { type: "string" }, frame: { type: "integer", minimum: 0, default: 0 } }, ["sessionId", "expression"]),
  outputSchema: shape({ sessionId: { type: "string" }, expression: { type: "string" }, value: { type: "string" }, type: { type: "string" }, objects: OBJECTS, ...MARKS }, ["sessionId", "expression", "value", "predicted"]),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions, signal) {
    const a = new ToolArgs(raw, "evaluate", ["sessionId", "expression", "frame"]);
    const id = a.sessionId();
    const expression = a.string("expression", { required: true, nonEmpty: true });
    const r = await sessions.get(id).evaluate(expression, a.integer("frame", 0, 10_000) ?? 0, signal);
    return { structured: r as unknown as Record<string, unknown>, text: `${r.expression} = ${r.value}${markSuffix(r)}` };
  },
};

const SET_VARIABLE: Tool = {
  name: "set_variable",
  title: "Set a variable",
  description:
    "Sets a local of the current frame (or \"(return)\" at a return) to a Python value or an expression over the locals, computed, never run. " +
    "What follows is no longer known: the next step is predicted from the changed state (predict mode; hybrid mode fills a hole with it and runs again). Record and replay mode refuse.",
  inputSchema: object({ sessionId: SESSION, name: { type: "string" }, value: { type: "string", description: "A Python value or expression, e.g. \"[1, 2]\" or \"n + 1\"." } }, ["sessionId", "name", "value"]),
  outputSchema: { ...STOP, properties: { ...STOP.properties, set: VARIABLE } } as unknown as Tool["outputSchema"],
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(raw, sessions, signal) {
    const a = new ToolArgs(raw, "set_variable", ["sessionId", "name", "value"]);
    const id = a.sessionId();
    const name = a.string("name", { required: true, nonEmpty: true });
    const value = a.string("value", { required: true, nonEmpty: true });
    const r = await sessions.get(id).setVariable(name, value, signal);
    return { structured: r as unknown as Record<string, unknown>, text: `${id}: ${r.set.name} = ${r.set.value}\n${stopText(r)}` };
  },
};

const PREDICT_INPUT: Tool = {
  name: "predict_input",
  title: "Predict the input that gives an output",
  description:
    "The inverse call: which arguments make a function return the given output. From a return of the function with that value, the debugger steps back to its call " +
    "(the inverse action inv_step_return) and answers the call's arguments. function defaults to the entry call's, else the one the session stands in. " +
    "The session does not move. In record and replay mode the real run answers, from a return with that value it made.",
  inputSchema: object(
    {
      sessionId: SESSION,
      output: { type: "string", description: "The return value, as a Python literal: \"[3, 3, 3]\", \"'abc'\"." },
      function: { type: "string", description: "The function's name (a method: Class.method)." },
      line: { type: "integer", minimum: 1, description: "The line it returns from (default: its last return statement)." },
    },
    ["sessionId", "output"],
  ),
  outputSchema: shape(
    { sessionId: { type: "string" }, function: { type: "string" }, output: { type: "string" }, call: { type: "string" }, arguments: { type: "array", items: VARIABLE }, line: { type: "integer" }, ...MARKS },
    ["sessionId", "function", "output", "call", "arguments", "predicted"],
  ),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions, signal) {
    const a = new ToolArgs(raw, "predict_input", ["sessionId", "output", "function", "line"]);
    const id = a.sessionId();
    const output = a.string("output", { required: true, nonEmpty: true });
    const func = a.string("function", { nonEmpty: true });
    const r = await sessions.get(id).predictInput(output, func?.trim(), a.integer("line", 1, 1_000_000), signal);
    return { structured: r as unknown as Record<string, unknown>, text: `${r.call} returns ${r.output}${markSuffix(r)}` };
  },
};

const HOLES: Tool = {
  name: "list_holes",
  title: "The holes the run met",
  description:
    "The holes the run met so far (code that cannot run: unwritten functions, missing modules' calls, input()), in order: arguments, value, and by whom (model, docstring, you). " +
    "A session stops at the model's (exceptions \"holes\"): set_variable on the stop's hole.variable answers it, kept for later sessions; continue takes the suggestion.",
  inputSchema: object({ sessionId: SESSION }, ["sessionId"]),
  outputSchema: shape(
    {
      sessionId: { type: "string" },
      holes: {
        type: "array",
        items: {
          type: "object",
          properties: { name: { type: "string" }, line: { type: "integer" }, arguments: { type: "object" }, repr: { type: "string" }, by: { type: "string" } },
          required: ["name", "line", "arguments", "by"],
        },
      },
    },
    ["sessionId", "holes"],
  ),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions) {
    const id = new ToolArgs(raw, "list_holes", ["sessionId"]).sessionId();
    const r = sessions.get(id).holes();
    const how = (h: Hole): string =>
      h.repr === undefined ? `not filled (${h.error ?? "no value"})` : `${h.repr} (${h.by === "model" ? `the model's${h.confidence !== undefined ? `, ${Math.round(h.confidence * 100)}%` : ""}` : h.by === "docstring" ? `its docstring's, line ${h.docstring}` : "yours"})`;
    const lines = r.holes.map((h, i) => `${i}. ${h.name}(${Object.entries(h.arguments).map(([k, v]) => `${k}=${v}`).join(", ")}) at line ${h.line}: ${how(h)}`);
    return { structured: r as unknown as Record<string, unknown>, text: lines.join("\n") || `${id}: no holes met` };
  },
};

const END: Tool = {
  name: "end_session",
  title: "End a session",
  description: "Ends a debugging session and frees what it holds (the model's context, a recording). Every session ends anyway when the client disconnects.",
  inputSchema: object({ sessionId: SESSION }, ["sessionId"]),
  outputSchema: shape({ sessionId: { type: "string" }, program: { type: "string" }, mode: { type: "string" } }, ["sessionId"]),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  async run(raw, sessions) {
    const id = new ToolArgs(raw, "end_session", ["sessionId"]).sessionId();
    const r = await sessions.end(id);
    return { structured: r as unknown as Record<string, unknown>, text: `ended ${id}` };
  },
};

const LIST: Tool = {
  name: "list_sessions",
  title: "Open sessions",
  description: "The sessions open on this server: id, program, mode and where each stands.",
  inputSchema: object({}),
  outputSchema: shape({ sessions: { type: "array", items: { type: "object", properties: { sessionId: { type: "string" } }, required: ["sessionId"] } } }, ["sessions"]),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async run(raw, sessions) {
    new ToolArgs(raw, "list_sessions", []);
    const list = sessions.list();
    const text = list.map((s) => `${s.sessionId}: ${s.program} (${s.mode})${s.line !== undefined ? ` at line ${s.line} in ${s.func}` : ` exited ${s.exited}`}`).join("\n");
    return { structured: { sessions: list }, text: text || "no session is open" };
  },
};

export const TOOLS: readonly Tool[] = [
  START,
  moveTool("step_into", "step_into", "Step into", "Runs to the next line, entering a function that the current line calls (its body's first line, as debugpy stops)."),
  moveTool("step_over", "step_over", "Step over", "Runs to the next line of the current function, over the calls it makes (or to its return)."),
  moveTool("step_out", "step_out", "Step out", "Runs until the current function returns and stops at its return: the frame's \"value\" is what it returned (a step over from there goes on to the caller's next line)."),
  moveTool("step_back", "step_back", "Step back", "Goes back one statement: the line that ran just before in this function, or the line that called it (with the model alone: one state back along what is known, and at its start the model predicts the state before)."),
  moveTool("continue", "continue", "Continue", "Runs to the next breakpoint whose condition and hit condition hold, else to the program's end."),
  moveTool("reverse_continue", "reverse_continue", "Reverse continue", "Goes back to the latest earlier breakpoint hit (with the model alone: among the states known), else to the first state."),
  moveTool(
    "predict_output",
    "step_return",
    "Predict a call's output",
    "Jumps from where the session stands (best: inside a function, after step_into) to that function's return in one step (step_return): the answer's frame.value is the value it returns. The session moves there.",
  ),
  SET_BREAKPOINTS,
  CLEAR_BREAKPOINTS,
  STACK,
  VARIABLES,
  EVALUATE,
  SET_VARIABLE,
  PREDICT_INPUT,
  HOLES,
  END,
  LIST,
];
