// The shapes of the states a program can reach, the contract between the rules that find them
// (reach.ts), the grammar that holds the model's answers to them (grammar.ts) and what a statement
// computes (computed.ts): below all three, so that none imports another for its types.
import type { EventKind, ExitStatus } from "../format/trajectory.js";

/** What a frame of one function (or class body, module, comprehension, lambda) can hold. */
export interface FuncShape {
  func: string;
  kind: "module" | "def" | "class" | "nested";
  lines: number[];
  /** Lines a call event can stand on: where it is called (the first), and where a generator resumes. */
  callLines: number[];
  /** The line of the first line event after a call at the entry: the first statement; a class body's own header. */
  firstLine?: number;
  /** The lines that first line event can stand on: the rows of that statement (and of the next, after a module's docstring). */
  firstLines?: number[];
  /** Lines a return with a value can stand on. */
  returnLines: number[];
  /** Locals written in full start with these, in this order (the parameters, as CPython lists them). */
  required: string[];
  /** Any other locals it can have. */
  optional: string[];
  /** A local can disappear (`del`, an `except ... as` name): a line step may then write locals in full. */
  deletes: boolean;
  /** Its name, as a call on a line would spell it (the last part of the qualname). */
  name: string;
  /** Where each of its own names is bound (see `possible`); absent for comprehensions and lambdas. */
  bindLines?: Record<string, number[]>;
  /** Names whose value is known wherever they are bound: those only undecorated defs or plain classes bind (`madeValues`). */
  made: Map<string, string>;
  /** The locals of the comprehensions it runs inline (3.12+), each with the lines it can be there on: they come and go there. */
  inlined: Map<string, number[]>;
}

/** One kind of state that may come next. */
export interface NextFrame {
  event: EventKind;
  func: FuncShape;
  /** The depth: "any" where it cannot be known (after a jump), "deeper" for at least 1. */
  depth: number | "any" | "deeper";
  lines: number[];
  /** Locals as changes against the current state (`..`), or in full. */
  locals: "delta" | "full" | "either";
  /** A return or exception value: needed, forbidden, or either. */
  value: "yes" | "no" | "maybe";
  /** The names this frame can have beyond the required ones, where fewer than the function's (`possible`). */
  optional?: string[];
  /** Locals the new state must have (in a delta or in full): names the statement just run bound for the first time. */
  must?: string[];
  /**
   * A module's or class body's locals written in full, in the same frame or back in it from a
   * callee: its names so far come first, in their order (a namespace keeps the order names were
   * bound in, and loses none without `del`), each with its value when it cannot change, or how
   * the value must start (undefined: any).
   */
  keep?: { name: string; value?: string; starts?: string[] }[];
  /** The value a return must have: a module's is None. */
  valueIs?: string;
  /** Locals the statement just run set to a value computed from the current ones (adapter/rules/computed.ts): each has exactly it. */
  values?: Map<string, string>;
  /** What the statement just run wrote (a print of computed values): the state's output is exactly it. */
  stdout?: string;
  /**
   * The locals a delta may write, with how each value must start, when the statement just run
   * is known: only names it binds change freely; a list stays a list, a dict or set a dict or
   * set, a tuple a tuple (a call may mutate them); a number, string or None nobody rebinds
   * stays as it was.
   */
  changes?: Map<string, string[] | undefined>;
  /** A hole's value of a declared type (its annotation): the GBNF of its literals, for the return value and by local. */
  valueTyped?: string;
  typed?: Map<string, string>;
}

export interface Next {
  frames: NextFrame[];
  exits: ExitStatus[];
}
