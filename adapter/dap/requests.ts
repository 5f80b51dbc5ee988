// The arguments of DAP requests, checked before a handler reads them: an ill-typed or oversized
// argument gets an error response naming it (never an exception inside a handler, which would
// answer with a stack trace or, in an async handler, not at all), and a request this debugger
// does not support is refused rather than acknowledged as if it had done something.
import { MAX_EXPRESSION_LENGTH } from "../pyread/expressions.js";
import { quoted } from "../session/launch.js";

/** A problem with the value at `at`, or undefined. */
type Check = (v: unknown, at: string) => string | undefined;


const typed =
  (what: string, ok: (v: unknown) => boolean): Check =>
  (v, at) =>
    v === undefined ? `"${at}" is required` : ok(v) ? undefined : `"${at}" must be ${what}, not ${quoted(v)}`;

const INTEGER = typed("a whole number", Number.isInteger);
const STRING = typed("a string", (v) => typeof v === "string");
const BOOLEAN = typed("true or false", (v) => typeof v === "boolean");

const text =
  (max: number): Check =>
  (v, at) =>
    STRING(v, at) ?? ((v as string).length > max ? `"${at}" is ${(v as string).length} characters long (at most ${max})` : undefined);

const optional =
  (check: Check): Check =>
  (v, at) =>
    v === undefined ? undefined : check(v, at);

const object =
  (fields: Record<string, Check>): Check =>
  (v, at) => {
    if (v === undefined) return `${at ? `"${at}"` : "the arguments"} ${at ? "is" : "are"} required`;
    if (typeof v !== "object" || v === null || Array.isArray(v)) return `${at ? `"${at}"` : "the arguments"} must be an object, not ${quoted(v)}`;
    for (const [name, check] of Object.entries(fields)) {
      const problem = check((v as Record<string, unknown>)[name], at ? `${at}.${name}` : name);
      if (problem) return problem;
    }
    return undefined;
  };

const array =
  (item: Check, max: number): Check =>
  (v, at) => {
    if (!Array.isArray(v)) return typed("an array", () => false)(v, at);
    if (v.length > max) return `"${at}" has ${v.length} entries (at most ${max})`;
    for (let i = 0; i < v.length; i++) {
      const problem = item(v[i], `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  };

/** Breakpoints in one file: more is a client gone wrong. */
const MAX_BREAKPOINTS = 10_000;

const SOURCE = object({ path: optional(STRING), name: optional(STRING), sourceReference: optional(INTEGER) });

/** The arguments each handled request reads, as the DAP specification types them. */
const ARGUMENTS: Record<string, Check> = {
  initialize: object({ adapterID: optional(STRING), linesStartAt1: optional(BOOLEAN), columnsStartAt1: optional(BOOLEAN), pathFormat: optional(STRING) }),
  restart: optional(object({ arguments: optional(object({})) })),
  setBreakpoints: object({
    source: SOURCE,
    breakpoints: optional(
      array(object({ line: INTEGER, column: optional(INTEGER), condition: optional(STRING), hitCondition: optional(STRING), logMessage: optional(STRING) }), MAX_BREAKPOINTS),
    ),
    lines: optional(array(INTEGER, MAX_BREAKPOINTS)),
    sourceModified: optional(BOOLEAN),
  }),
  setExceptionBreakpoints: object({ filters: array(STRING, 16) }),
  stackTrace: object({ threadId: optional(INTEGER), startFrame: optional(INTEGER), levels: optional(INTEGER) }),
  scopes: object({ frameId: INTEGER }),
  variables: object({ variablesReference: INTEGER, filter: optional(STRING), start: optional(INTEGER), count: optional(INTEGER) }),
  evaluate: object({ expression: text(MAX_EXPRESSION_LENGTH), frameId: optional(INTEGER), context: optional(STRING) }),
  setVariable: object({ variablesReference: INTEGER, name: text(MAX_EXPRESSION_LENGTH), value: text(MAX_EXPRESSION_LENGTH) }),
  source: object({ sourceReference: optional(INTEGER), source: optional(SOURCE) }),
  cancel: optional(object({ requestId: optional(INTEGER), progressId: optional(STRING) })),
  dataBreakpointInfo: object({ variablesReference: optional(INTEGER), name: text(MAX_EXPRESSION_LENGTH), frameId: optional(INTEGER) }),
  setDataBreakpoints: object({ breakpoints: array(object({ dataId: text(4 * MAX_EXPRESSION_LENGTH), accessType: optional(STRING), condition: optional(STRING), hitCondition: optional(STRING) }), MAX_BREAKPOINTS) }),
};

/** Requests the library would acknowledge with success although nothing happens: refused, with why. */
const UNSUPPORTED: Record<string, string> = {
  attach: "attach is not supported: start a session with launch (the program is predicted, recorded or replayed, never attached to)",
  goto: "goto is not supported: a predicted program cannot jump to another line",
  setExpression: "setExpression is not supported: set a variable of the current frame instead",
  restartFrame: "restartFrame is not supported: step back instead",
  gotoTargets: "gotoTargets is not supported",
  stepInTargets: "stepInTargets is not supported",
  completions: "completions are not supported",
  loadedSources: "loadedSources is not supported",
  setFunctionBreakpoints: "function breakpoints are not supported: set a breakpoint on the function's first line",
  setInstructionBreakpoints: "instruction breakpoints are not supported",
  breakpointLocations: "breakpointLocations is not supported",
  readMemory: "memory is not supported: a Python program's values are shown as reprs",
  writeMemory: "memory is not supported: a Python program's values are shown as reprs",
  disassemble: "disassembly is not supported",
  terminateThreads: "terminateThreads is not supported: the program has one thread",
};

/** Why a request cannot be handled as sent (its command, then what is wrong), or undefined. */
export function requestProblem(command: string, args: unknown): string | undefined {
  if (Object.hasOwn(UNSUPPORTED, command)) return UNSUPPORTED[command];
  const check = Object.hasOwn(ARGUMENTS, command) ? ARGUMENTS[command] : undefined;
  const problem = check?.(args, "");
  return problem && `${command}: ${problem}`;
}
