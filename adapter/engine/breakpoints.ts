// What a breakpoint does when the program reaches it, beyond stopping: hit conditions ("3",
// ">= 2", "% 2": which hits stop, as debugpy reads them) and log points ("x is {x}": a message
// with expressions in braces, written instead of stopping); and the exception filters a client
// can turn on. Expressions are evaluated by the engine's evaluator (CPython, sealed) over the state's values.
import { cutText, type ValueResult } from "../format/values.js";

/** A breakpoint as the client set it and the session keeps it (the engine's spec, with the client's id). */
export interface ClientBreakpoint {
  id: number;
  line: number;
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
}

/** An exception filter as the initialize response declares it (DAP's ExceptionBreakpointsFilter; the engine speaks no DAP). */
export interface ExceptionFilter {
  filter: string;
  label: string;
  description?: string;
  default?: boolean;
}

/** The exception filters the adapter offers (the first two as debugpy names them), and holes: where the model fills in what the program cannot compute. */
export const EXCEPTION_FILTERS: ExceptionFilter[] = [
  {
    filter: "raised",
    label: "Raised Exceptions",
    description: "Stop where any exception is raised, caught or not (continue then goes event by event: slower when the states are predicted)",
    default: false,
  },
  {
    filter: "uncaught",
    label: "Uncaught Exceptions",
    description: "Stop where an exception that ends the program was raised, before it ends",
    default: true,
  },
  {
    filter: "holes",
    label: "Holes (code that cannot run)",
    description:
      "Stop where the model fills in a value the program cannot compute (a function not written yet, a module that is not installed, input()): (return) shows its suggestion; set it to answer (kept for later launches), or Continue to take it",
    default: true,
  },
];

/** Which exceptions stop a continue, from the filters a client turned on; an unknown filter is an Error. */
export function readExceptionFilters(filters: readonly string[]): { raised: boolean; uncaught: boolean; holes: boolean } {
  const known = EXCEPTION_FILTERS.map((f) => f.filter);
  for (const f of filters) if (!known.includes(f)) throw new Error(`unknown exception filter "${cutText(f, 60)}" (known: ${known.join(", ")})`);
  return { raised: filters.includes("raised"), uncaught: filters.includes("uncaught"), holes: filters.includes("holes") };
}

/** How setting a breakpoint is answered: refused (it never stops), or set with a note (a condition that cannot be read). */
export interface BreakpointCheck {
  refused?: string;
  note?: string;
}

/**
 * Reads a client's breakpoint as it is set: a hit count that cannot be read, a log message with an
 * unclosed brace or a {part} that is not one Python expression, is refused; a condition that is
 * not one still stops, every time (as one that cannot be evaluated does), and says so.
 * `expressionProblem` says why a text is not one Python expression (adapter/pyread/expressions.ts:
 * the engine reads no Python). The adapter and the MCP server both set breakpoints through this.
 */
export async function checkBreakpoint(
  b: { condition?: string; hitCondition?: string; logMessage?: string },
  expressionProblem: (src: string) => Promise<string | undefined>,
): Promise<BreakpointCheck> {
  try {
    if (b.hitCondition?.trim()) parseHitCondition(b.hitCondition);
    for (const part of b.logMessage ? parseLogMessage(b.logMessage) : []) {
      if (typeof part === "string") continue;
      const problem = await expressionProblem(part.expr.trim());
      if (problem) return { refused: `log message: {${cutText(part.expr, 60)}}: ${problem}` };
    }
  } catch (e) {
    return { refused: (e as Error).message };
  }
  const condition = b.condition?.trim();
  const problem = condition ? await expressionProblem(condition) : undefined;
  return problem ? { note: `condition: ${problem}; it stops there every time` } : {};
}

const HIT_OPERATORS = [">=", "<=", "==", ">", "<", "%"] as const;

/**
 * A hit condition as a test of the hit count (1 for the first hit): a number N stops at the
 * Nth hit, "OP N" where count OP N holds (>=, <=, ==, >, <), "% N" at every Nth hit.
 * Throws an Error that says what is wrong with it.
 */
export function parseHitCondition(text: string): (count: number) => boolean {
  const t = text.trim();
  const op = HIT_OPERATORS.find((o) => t.startsWith(o));
  const rest = op ? t.slice(op.length).trim() : t;
  if (!/^\d+$/.test(rest)) throw new Error(`hit count "${cutText(t, 60)}" is not a number, optionally after one of ${HIT_OPERATORS.join(" ")} (e.g. "3", ">= 2", "% 2")`);
  const n = Number(rest);
  switch (op ?? "==") {
    case ">=":
      return (c) => c >= n;
    case "<=":
      return (c) => c <= n;
    case ">":
      return (c) => c > n;
    case "<":
      return (c) => c < n;
    case "%":
      if (n === 0) throw new Error('hit count "% 0" divides by zero');
      return (c) => c % n === 0;
    default:
      return (c) => c === n;
  }
}

type Part = string | { expr: string };

/**
 * A log message's parts: text, and the expressions between braces ("{{" and "}}" are braces
 * themselves). Throws an Error for an unclosed brace; an expression that does not parse says so
 * where the message is written, as any expression that cannot be evaluated does.
 */
export function parseLogMessage(message: string): Part[] {
  const parts: Part[] = [];
  let text = "";
  for (let i = 0; i < message.length; i++) {
    const c = message[i];
    if ((c === "{" || c === "}") && message[i + 1] === c) {
      text += c;
      i++;
    } else if (c === "{") {
      // The expression runs to the brace that closes this one (a dict display nests braces).
      let depth = 1;
      let j = i + 1;
      for (; j < message.length && depth; j++) depth += message[j] === "{" ? 1 : message[j] === "}" ? -1 : 0;
      if (depth) throw new Error(`log message: "{" at ${i} is not closed`);
      const expr = message.slice(i + 1, j - 1);
      if (text) parts.push(text);
      text = "";
      parts.push({ expr });
      i = j - 1;
    } else text += c;
  }
  if (text) parts.push(text);
  return parts;
}

/** A log message written with `evaluate`: each {expression} as str() gives it, or why it could not be evaluated. */
export async function formatLogMessage(message: string, evaluate: (expressions: string[]) => Promise<ValueResult[]>): Promise<string> {
  const parts = parseLogMessage(message);
  const exprs = parts.flatMap((p) => (typeof p === "string" ? [] : [p.expr]));
  const values = await evaluate(exprs);
  let k = 0;
  return parts
    .map((p) => {
      if (typeof p === "string") return p;
      const r = values[k++];
      return "error" in r ? `<cannot evaluate ${cutText(p.expr, 60)}: ${r.error}>` : r.str;
    })
    .join("");
}
