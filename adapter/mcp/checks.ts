// Reading a tool call's arguments. A client may send anything (the JSON schemas the tools declare
// are advice, not a check the protocol makes), so every argument is read here: an unknown name,
// a wrong type or an out-of-range number is a ToolInputError whose message names the argument
// and says what it must be, never a crash and never a long echo of what was sent.
import { cutText } from "../format/values.js";

/** A tool call the server refuses as asked: the message goes back to the client as the tool's error. */
export class ToolInputError extends Error {}

/** Longest text argument (an expression, a value, a path): longer input is refused, not read. */
export const MAX_TEXT = 10_000;

/** A value as an error message quotes it: short, one line. */
export function shown(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(cutText(v, 60));
  if (v === null || typeof v !== "object") return String(v);
  return Array.isArray(v) ? "a list" : "an object";
}

/** The arguments of one tool call, read one by one; unknown names are refused at once. */
export class ToolArgs {
  private readonly o: Record<string, unknown>;

  constructor(raw: unknown, readonly tool: string, known: readonly string[]) {
    if (raw === undefined || raw === null) raw = {};
    if (typeof raw !== "object" || Array.isArray(raw)) throw new ToolInputError(`${tool}: the arguments must be an object, not ${shown(raw)}`);
    this.o = raw as Record<string, unknown>;
    const unknown = Object.keys(this.o).filter((k) => !known.includes(k));
    if (unknown.length)
      throw new ToolInputError(`${tool} has no argument ${shown(unknown[0])}${known.length ? ` (its arguments: ${known.join(", ")})` : " (it takes none)"}`);
  }

  /** The raw value, or undefined when absent (null counts as absent, as launch.json's null does). */
  raw(name: string): unknown {
    const v = Object.hasOwn(this.o, name) ? this.o[name] : undefined;
    return v === null ? undefined : v;
  }

  has(name: string): boolean {
    return this.raw(name) !== undefined;
  }

  string(name: string, opts: { required: true; nonEmpty?: boolean }): string;
  string(name: string, opts?: { required?: false; nonEmpty?: boolean }): string | undefined;
  string(name: string, opts: { required?: boolean; nonEmpty?: boolean } = {}): string | undefined {
    const v = this.raw(name);
    if (v === undefined) {
      if (opts.required) throw new ToolInputError(`${this.tool} needs "${name}"`);
      return undefined;
    }
    if (typeof v !== "string") throw new ToolInputError(`"${name}" must be a string, not ${shown(v)}`);
    if (v.length > MAX_TEXT) throw new ToolInputError(`"${name}" is ${v.length} characters long; at most ${MAX_TEXT} are read`);
    if (opts.nonEmpty && v.trim() === "") throw new ToolInputError(`"${name}" is empty`);
    return v;
  }

  boolean(name: string): boolean | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") throw new ToolInputError(`"${name}" must be true or false, not ${shown(v)}`);
    return v;
  }

  integer(name: string, min: number, max: number): number | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
      throw new ToolInputError(`"${name}" must be a whole number from ${min} to ${max}, not ${shown(v)}`);
    return v;
  }

  /** A list whose items `item` reads (with their index, for messages); at most `max` of them. */
  list<T>(name: string, max: number, item: (v: unknown, at: string) => T): T[] | undefined {
    const v = this.raw(name);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw new ToolInputError(`"${name}" must be a list, not ${shown(v)}`);
    if (v.length > max) throw new ToolInputError(`"${name}" has ${v.length} items; at most ${max} are taken`);
    return v.map((x, i) => item(x, `${name}[${i}]`));
  }

  /** The session id every tool but start_session and list_sessions takes. */
  sessionId(): string {
    const id = this.string("sessionId", { required: true });
    if (!/^s\d{1,9}$/.test(id)) throw new ToolInputError(`"sessionId" must be a session's id such as "s1" (start_session gives it), not ${shown(id)}`);
    return id;
  }
}

/** One breakpoint of a list: a line with an optional condition, hit condition or log message. */
export interface BreakpointArg {
  line: number;
  condition?: string;
  hitCondition?: string;
  logMessage?: string;
}

const BREAKPOINT_KEYS = ["line", "condition", "hitCondition", "logMessage"];

/** A breakpoint given as a line number or as an object {line, condition?, hitCondition?, logMessage?}. */
export function readBreakpoint(v: unknown, at: string): BreakpointArg {
  if (typeof v === "number") v = { line: v };
  const b = new ToolArgs(v, at, BREAKPOINT_KEYS);
  const line = b.integer("line", 1, 1_000_000);
  if (line === undefined) throw new ToolInputError(`${at} needs a "line"`);
  const out: BreakpointArg = { line };
  for (const k of ["condition", "hitCondition", "logMessage"] as const) {
    const s = b.string(k);
    if (s !== undefined && s.trim() !== "") out[k] = s;
  }
  return out;
}

/** A line number of a list. */
export function readLine(v: unknown, at: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1_000_000) throw new ToolInputError(`${at} must be a line number (a whole number from 1), not ${shown(v)}`);
  return v;
}

/** One of `choices`. */
export function oneOf<T extends string>(v: string | undefined, name: string, choices: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if (!(choices as readonly string[]).includes(v)) throw new ToolInputError(`"${name}" must be one of ${choices.join(", ")}, not ${shown(v)}`);
  return v as T;
}
