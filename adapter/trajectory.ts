// The trajectory format, version 1: the one serializer and the one parser of program states
// and the debugger actions between them. Specified in docs/TRAJECTORY.md and tested against the
// golden files in test/golden/. Training data is written by this serializer too (`ndbg data`).

export const FORMAT_VERSION = 1;

export type EventKind = "call" | "line" | "return" | "exception";

/** One program state: where execution stands and what the locals hold (values as reprs). */
export interface Frame {
  event: EventKind;
  line: number;
  /** Traced frames below this one on the stack: the first traced frame has depth 0. */
  depth: number;
  func: string;
  /** Absent for the main program; a path for other user files. */
  file?: string;
  /** Always the full locals in memory, whatever was written. */
  locals: Record<string, string>;
  /** Return value (return) or exception (exception) as a repr. A return without a value unwound by exception. */
  value?: string;
  /** Standard output written since the previous state. */
  stdout?: string;
  /** Standard error written since the previous state (record mode shows it; never serialized). */
  stderr?: string;
}

export type ExitStatus = "normal" | "error" | "limit";

/** The end of the program: normally, by an uncaught exception (value), or cut off by a limit. */
export interface Exit {
  status: ExitStatus;
  value?: string;
  stdout?: string;
  /** As Frame's: shown, never serialized. */
  stderr?: string;
}

export const FORWARD_ACTIONS = ["step_into", "step_over", "step_return", "breakpoint", "continue"] as const;
export const INVERSE_ACTIONS = ["inv_step_into", "inv_step_over", "inv_step_return", "inv_breakpoint"] as const;
export const ACTION_KINDS = [...FORWARD_ACTIONS, ...INVERSE_ACTIONS] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

export interface Action {
  kind: ActionKind;
  /** The target line of breakpoint / inv_breakpoint. */
  line?: number;
}

/** A state reached by an action: a frame, or the program's exit. The first step has no action. */
export interface Step {
  action?: Action;
  frame?: Frame;
  exit?: Exit;
}

export interface Trajectory {
  version: number;
  meta?: Record<string, unknown>;
  /** The program text, "\n" line ends, ending with "\n". */
  source: string;
  steps: Step[];
}

export const TOKENS = {
  src: "<|src_sep|>",
  frame: "<|frame_sep|>",
  action: "<|action_sep|>",
  arg: "<|arg_sep|>",
  value: "<|value_sep|>",
  out: "<|out_sep|>",
} as const;

export const EVENT_TOKENS: Record<EventKind, string> = {
  call: "<|call_sep|>",
  line: "<|line_sep|>",
  return: "<|return_sep|>",
  exception: "<|exception_sep|>",
};

export const EXIT_TOKENS: Record<ExitStatus, string> = {
  normal: "<|exit_normal|>",
  error: "<|exit_error|>",
  limit: "<|exit_never|>",
};

export const actionToken = (kind: ActionKind): string => `<|${kind}|>`;

/** Every special token, in a fixed order (token ids of trained models depend on it). */
export const SPECIAL_TOKENS: readonly string[] = [
  ...Object.values(TOKENS),
  ...Object.values(EVENT_TOKENS),
  ...ACTION_KINDS.map(actionToken),
  ...Object.values(EXIT_TOKENS),
];

export const HEADER = `#ndbg ${FORMAT_VERSION}`;
/** Marks a frame whose locals are written as changes against the previous frame. */
export const DELTA_MARK = "..";

export class TrajectoryError extends Error {}

// Free text (source, reprs, output) must never read as a special token: "<|" gains one
// backslash after its "<" ("<|" -> "<\|", "<\|" -> "<\\|"), a bijection undone on parse.
export const escapeText = (s: string): string => s.replace(/<(\\*)\|/g, "<$1\\|");
export const unescapeText = (s: string): string => s.replace(/<(\\*)\\\|/g, "<$1|");

const takesLine = (kind: ActionKind): boolean => kind === "breakpoint" || kind === "inv_breakpoint";

/**
 * Whether `frame` is written as changes against `prev`: a line step inside the same function
 * call that removed no local. Everything else (calls, returns, exceptions, jumps) is written
 * in full, as in the paper.
 */
export function isDelta(prev: Frame | undefined, action: Action | undefined, frame: Frame): boolean {
  if (!prev || !action || (action.kind !== "step_into" && action.kind !== "step_over")) return false;
  if (frame.event !== "line" || (prev.event !== "call" && prev.event !== "line")) return false;
  if (prev.depth !== frame.depth || prev.func !== frame.func || prev.file !== frame.file) return false;
  return Object.keys(prev.locals).every((k) => Object.hasOwn(frame.locals, k));
}

export function serializeAction(action: Action): string {
  if (!takesLine(action.kind)) return actionToken(action.kind);
  if (!Number.isInteger(action.line) || action.line! < 1) throw new TrajectoryError(`${action.kind} needs a line number`);
  return actionToken(action.kind) + String(action.line);
}

/** The text of one frame, without a trailing newline; `prev` and `action` decide delta locals. */
export function serializeFrame(frame: Frame, prev?: Frame, action?: Action): string {
  let s = TOKENS.frame + EVENT_TOKENS[frame.event] + `${frame.line} ${frame.depth} ${frame.func}`;
  if (frame.file !== undefined) s += " " + frame.file;
  if (frame.stdout) s += TOKENS.out + escapeText(frame.stdout);
  if (prev && isDelta(prev, action, frame)) {
    s += TOKENS.arg + DELTA_MARK;
    for (const [k, v] of Object.entries(frame.locals)) if (prev.locals[k] !== v) s += TOKENS.arg + `${k}=${escapeText(v)}`;
  } else {
    for (const [k, v] of Object.entries(frame.locals)) s += TOKENS.arg + `${k}=${escapeText(v)}`;
  }
  if (frame.value !== undefined) s += TOKENS.value + escapeText(frame.value);
  return s;
}

export function serializeExit(exit: Exit): string {
  let s = EXIT_TOKENS[exit.status];
  if (exit.stdout) s += TOKENS.out + escapeText(exit.stdout);
  if (exit.value !== undefined) s += TOKENS.value + escapeText(exit.value);
  return s;
}

export function serializeHeader(meta?: Record<string, unknown>): string {
  return HEADER + (meta && Object.keys(meta).length ? " " + JSON.stringify(meta) : "") + "\n";
}

export function normalizeSource(source: string): string {
  const s = source.replace(/\r\n?/g, "\n");
  return s.endsWith("\n") || s === "" ? s : s + "\n";
}

/** The text of one step ("<|action_sep|>ACTION\n" then the frame or exit, newline-terminated). */
export function serializeStep(step: Step, prev?: Frame): string {
  const head = step.action ? TOKENS.action + serializeAction(step.action) + "\n" : "";
  if (step.frame) return head + serializeFrame(step.frame, prev, step.action) + "\n";
  if (step.exit) return head + serializeExit(step.exit) + "\n";
  throw new TrajectoryError("a step needs a frame or an exit");
}

export function serialize(t: Trajectory): string {
  let s = serializeHeader(t.meta) + TOKENS.src + "\n" + escapeText(normalizeSource(t.source));
  let prev: Frame | undefined;
  for (const step of t.steps) {
    s += serializeStep(step, prev);
    prev = step.frame ?? prev;
  }
  return s;
}

/** Several trajectories in one file (e.g. predicted and real, from a compare session). */
export const serializeMany = (ts: Trajectory[]): string => ts.map(serialize).join("");

// ---- parsing ----

const SPECIAL_RE = /<\|[a-z_]+\|>/g;
const TOKEN_KIND = new Map<string, string>();
for (const [k, v] of Object.entries(TOKENS)) TOKEN_KIND.set(v, k);
for (const [k, v] of Object.entries(EVENT_TOKENS)) TOKEN_KIND.set(v, "event:" + k);
for (const [k, v] of Object.entries(EXIT_TOKENS)) TOKEN_KIND.set(v, "exit:" + k);
for (const k of ACTION_KINDS) TOKEN_KIND.set(actionToken(k), "act:" + k);

interface Piece {
  token: string;
  kind: string;
  text: string;
  offset: number;
}

/** Splits text into special tokens, each with the free text that follows it. */
function pieces(text: string, base: number): { lead: string; list: Piece[] } {
  const list: Piece[] = [];
  let lead = "";
  let last = 0;
  let cur: Piece | undefined;
  for (const m of text.matchAll(SPECIAL_RE)) {
    const kind = TOKEN_KIND.get(m[0]);
    if (!kind) throw new TrajectoryError(`unknown token ${m[0]} at offset ${base + m.index!}`);
    if (cur) cur.text = text.slice(last, m.index);
    else lead = text.slice(0, m.index);
    cur = { token: m[0], kind, text: "", offset: base + m.index! };
    list.push(cur);
    last = m.index! + m[0].length;
  }
  if (cur) cur.text = text.slice(last);
  else lead = text;
  return { lead, list };
}

const chompNewline = (s: string): string => (s.endsWith("\n") ? s.slice(0, -1) : s);

function fail(p: Piece | undefined, msg: string): never {
  throw new TrajectoryError(p ? `${msg} (offset ${p.offset})` : msg);
}

/** Parses a frame from its pieces (starting after <|frame_sep|>). */
function parseFramePieces(ps: Piece[], prev: Frame | undefined, action: Action | undefined): Frame {
  const ev = ps[0];
  if (!ev || !ev.kind.startsWith("event:")) fail(ev, "a frame must start with an event token");
  const last = ps.length - 1;
  const field = (i: number): string => (i === last ? chompNewline(ps[i].text) : ps[i].text);
  const m = /^(\d+) (\d+) (\S+)(?: (.+))?$/s.exec(field(0));
  if (!m) fail(ev, `bad frame header "${field(0)}": expected "LINE DEPTH FUNC [FILE]"`);
  const frame: Frame = { event: ev.kind.slice(6) as EventKind, line: Number(m[1]), depth: Number(m[2]), func: m[3], locals: {} };
  if (m[4] !== undefined) frame.file = m[4];
  let delta = false;
  for (let i = 1; i <= last; i++) {
    const p = ps[i];
    const text = field(i);
    if (p.kind === "out") frame.stdout = unescapeText(text);
    else if (p.kind === "value") frame.value = unescapeText(text);
    else if (p.kind === "arg") {
      if (text === DELTA_MARK) {
        if (i !== 1 + (frame.stdout !== undefined ? 1 : 0) || !prev) fail(p, "a delta mark must open the locals of a frame that has a predecessor");
        delta = true;
        frame.locals = { ...prev.locals };
        continue;
      }
      const eq = text.indexOf("=");
      if (eq <= 0) fail(p, `bad local "${text}": expected NAME=REPR`);
      setLocal(frame.locals, text.slice(0, eq), unescapeText(text.slice(eq + 1)));
    } else fail(p, `unexpected ${p.token} inside a frame`);
  }
  if (delta && !isDelta(prev, action, frame)) fail(ev, "locals written as a delta where the format requires them in full");
  return frame;
}

function parseExitPieces(ps: Piece[]): Exit {
  const exit: Exit = { status: ps[0].kind.slice(5) as ExitStatus };
  const last = ps.length - 1;
  if (chompNewline(ps[0].text) !== "") fail(ps[0], "unexpected text after an exit token");
  for (let i = 1; i <= last; i++) {
    const text = i === last ? chompNewline(ps[i].text) : ps[i].text;
    if (ps[i].kind === "out") exit.stdout = unescapeText(text);
    else if (ps[i].kind === "value") exit.value = unescapeText(text);
    else fail(ps[i], `unexpected ${ps[i].token} inside an exit`);
  }
  return exit;
}

function parseAction(p: Piece): Action {
  const kind = p.kind.slice(4) as ActionKind;
  const arg = chompNewline(p.text);
  if (takesLine(kind)) {
    if (!/^\d+$/.test(arg)) fail(p, `${kind} needs a line number`);
    return { kind, line: Number(arg) };
  }
  if (arg !== "") fail(p, `unexpected text after ${p.token}`);
  return { kind };
}

/** Parses the steps of a trajectory body (what follows the source); `prev` seeds delta locals. */
export function parseSteps(body: string, prev?: Frame, base = 0): Step[] {
  const { lead, list } = pieces(body, base);
  if (lead.trim() !== "") throw new TrajectoryError(`unexpected text "${lead.slice(0, 40)}" before the first token`);
  const steps: Step[] = [];
  let i = 0;
  while (i < list.length) {
    let action: Action | undefined;
    if (list[i].kind === "action") {
      if (list[i].text !== "") fail(list[i], "unexpected text after <|action_sep|>");
      const a = list[i + 1];
      if (!a || !a.kind.startsWith("act:")) fail(a ?? list[i], "<|action_sep|> must be followed by an action token");
      action = parseAction(a);
      i += 2;
    } else if (steps.length > 0) fail(list[i], "steps after the first must start with <|action_sep|>");
    const p = list[i];
    if (!p) fail(list[i - 1], "an action must be followed by a frame or an exit");
    let j = i + 1;
    while (j < list.length && list[j].kind !== "action" && list[j].kind !== "frame" && !list[j].kind.startsWith("exit:")) j++;
    if (p.kind === "frame") {
      if (p.text !== "") fail(p, "unexpected text after <|frame_sep|>");
      const frame = parseFramePieces(list.slice(i + 1, j), prev, action);
      steps.push(action ? { action, frame } : { frame });
      prev = frame;
    } else if (p.kind.startsWith("exit:")) {
      const exit = parseExitPieces(list.slice(i, j));
      steps.push(action ? { action, exit } : { exit });
    } else fail(p, `expected a frame or an exit, found ${p.token}`);
    i = j;
  }
  return steps;
}

/** Parses a file of one or more trajectories. */
export function parseMany(text: string): Trajectory[] {
  const out: Trajectory[] = [];
  const headerRe = /^#ndbg (\d+)( \{[^\n]*\})?\n/gm;
  // A header-like line inside a source is escaped by no rule, so only headers directly before <|src_sep|> count.
  const real = [...text.matchAll(headerRe)].filter((m) => text.startsWith(TOKENS.src + "\n", m.index! + m[0].length));
  if (!real.length || real[0].index !== 0) throw new TrajectoryError(`a trajectory starts with "${HEADER}" then "${TOKENS.src}"`);
  for (let k = 0; k < real.length; k++) {
    const m = real[k];
    const end = k + 1 < real.length ? real[k + 1].index! : text.length;
    const version = Number(m[1]);
    if (version !== FORMAT_VERSION) throw new TrajectoryError(`trajectory format version ${version} is not supported (this reads ${FORMAT_VERSION})`);
    let meta: Record<string, unknown> | undefined;
    if (m[2]) {
      try {
        meta = JSON.parse(m[2].slice(1));
      } catch {
        throw new TrajectoryError("the header's metadata is not valid JSON");
      }
    }
    const srcStart = m.index! + m[0].length + TOKENS.src.length + 1;
    const rest = text.slice(srcStart, end);
    const firstToken = rest.search(SPECIAL_RE);
    const source = unescapeText(firstToken < 0 ? rest : rest.slice(0, firstToken));
    const body = firstToken < 0 ? "" : rest.slice(firstToken);
    const t: Trajectory = { version, source, steps: parseSteps(body, undefined, srcStart + (firstToken < 0 ? rest.length : firstToken)) };
    if (meta) t.meta = meta;
    out.push(t);
  }
  return out;
}

export function parse(text: string): Trajectory {
  const ts = parseMany(text);
  if (ts.length !== 1) throw new TrajectoryError(`expected one trajectory, found ${ts.length}`);
  return ts[0];
}

// ---- comparing states ----

export function sameLocals(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/**
 * Sets a local as an own property whatever its name: an assignment to a local named `__proto__`
 * would set the object's prototype instead (and the local would be lost); `toString` and
 * `constructor` are read with Object.hasOwn, never `in`, for the same reason.
 */
export function setLocal(locals: Record<string, string>, name: string, value: string): void {
  Object.defineProperty(locals, name, { value, enumerable: true, writable: true, configurable: true });
}

/** Exact match of two states, as scored: position, locals, value and output. */
export function sameFrame(a: Frame, b: Frame): boolean {
  return (
    a.event === b.event && a.line === b.line && a.depth === b.depth && a.func === b.func && a.file === b.file &&
    a.value === b.value && (a.stdout ?? "") === (b.stdout ?? "") && sameLocals(a.locals, b.locals)
  );
}

export function sameExit(a: Exit, b: Exit): boolean {
  return a.status === b.status && a.value === b.value && (a.stdout ?? "") === (b.stdout ?? "");
}
