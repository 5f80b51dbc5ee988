// The trajectory format, version 2: the one serializer and the one parser of program states
// and the debugger actions between them. Specified in docs/TRAJECTORY.md and tested against the
// golden files in test/golden/. Training data is written by this serializer too (`ndbg data`).

// The constants (version, header, special tokens) live in format.json, which training/ reads too.
import FORMAT from "./format.json" with { type: "json" };

/** The version this writes. */
export const FORMAT_VERSION: number = FORMAT.version;
/** The versions this reads: version 1 is version 2 without the Python version in the header. */
export const READ_VERSIONS: readonly number[] = FORMAT.readVersions;

/** A Python minor version as the header writes it ("3.11"). */
export const PYTHON_VERSION_RE = new RegExp(FORMAT.pythonVersion);
/** The minor version of a MAJOR.MINOR Python version ("3.12" -> 12). */
export const pythonMinor = (version: string): number => Number(version.split(".")[1]);

export type EventKind = keyof typeof FORMAT.events;

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
  /** What a debugger opens of the locals' objects, where the program really ran (never serialized). */
  objects?: Objects;
  /** The identity of each object of `objects` (by path), the same wherever the run shows that object: a data breakpoint follows it (never serialized). */
  ids?: Record<string, string>;
  /** At a return, where the program really ran: its caller as it stands then, on the calling line (a debugger shows the return there; never serialized). */
  caller?: Frame;
  /** Where the program really ran and a callee returned just before this event: its name and value (a debugger shows it here; never serialized). */
  returned?: { func: string; value: string };
}

/**
 * The children of objects whose repr is no literal (instances, namedtuples, subclasses of builtin
 * containers), by the expression that names each (`cart`, `cart.items[0]`): [name, repr, path]
 * each, the name an attribute, "[i]" or "[key repr]". The tracer writes them (tracer.py, --objects).
 */
export type Objects = Record<string, [name: string, repr: string, path: string][]>;

/** Whether an object's path in Objects is reached from the local `name` (`name`, `name.x`, `name[0]`). */
export const reachedFrom = (path: string, name: string): boolean => path === name || path.startsWith(`${name}.`) || path.startsWith(`${name}[`);

export type ExitStatus = keyof typeof FORMAT.exits;

/** The end of the program: normally, by an uncaught exception (value), or cut off by a limit. */
export interface Exit {
  status: ExitStatus;
  value?: string;
  stdout?: string;
  /** As Frame's: shown, never serialized. */
  stderr?: string;
}

export type ActionKind = keyof typeof FORMAT.actions;
export const ACTION_KINDS = Object.keys(FORMAT.actions) as readonly ActionKind[];
export const FORWARD_ACTIONS = ACTION_KINDS.filter((k) => FORMAT.actions[k] === "forward");
export const INVERSE_ACTIONS = ACTION_KINDS.filter((k) => FORMAT.actions[k] === "inverse");

export interface Action {
  kind: ActionKind;
  /** The target line of breakpoint / inv_breakpoint. */
  line?: number;
}

/** A real run, every event of it: what record mode replays and training examples are sampled from. */
export interface Recording {
  source: string;
  /** The minor version of the Python that ran it, when known: headers carry it, so runs of several versions can be mixed. */
  python?: string;
  frames: readonly Frame[];
  exit: Exit;
}

/** A state reached by an action: a frame, or the program's exit. The first step has no action. */
export interface Step {
  action?: Action;
  frame?: Frame;
  exit?: Exit;
}

export interface Trajectory {
  /** Its format version: the one it was read in, and the one it is written in (new ones: FORMAT_VERSION). */
  version: number;
  /**
   * The minor version of the Python that ran it ("3.11"), absent when unknown (version 1 files).
   * Traces depend on it: 3.12 runs list, dict and set comprehensions inline, 3.11 in frames of their own.
   */
  python?: string;
  meta?: Record<string, unknown>;
  /** The program text, "\n" line ends, ending with "\n". */
  source: string;
  steps: Step[];
}

export const TOKENS: Readonly<typeof FORMAT.separators> = FORMAT.separators;
/** The token that ends every predicted state: the model's end of generation. */
export const STOP_TOKEN: string = FORMAT.separators[FORMAT.stop as keyof typeof FORMAT.separators];

export const EVENT_TOKENS: Readonly<Record<EventKind, string>> = FORMAT.events;

export const EXIT_TOKENS: Readonly<Record<ExitStatus, string>> = FORMAT.exits;

export const actionToken = (kind: ActionKind): string => `<|${kind}|>`;

/** Every special token, in the vocabulary's order (token ids of trained models depend on it). */
export const SPECIAL_TOKENS: readonly string[] = FORMAT.specialTokens;

export const HEADER = `#ndbg ${FORMAT_VERSION}`;
/** A header line: "#ndbg VERSION [pythonMAJOR.MINOR] [JSON]" (a trajectory only where "<|src_sep|>" follows). */
const HEADER_RE = new RegExp(FORMAT.header, "m");
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

/** What a header line holds besides the format version. */
export interface HeaderFields {
  python?: string;
  meta?: Record<string, unknown>;
}

/**
 * The header line in format `format`: version 1 (files and prompts of models trained on it, which
 * must stay as they were) has no Python version.
 */
export function serializeHeader(h: HeaderFields = {}, format = FORMAT_VERSION): string {
  checkHeader(format, h.python);
  const python = h.python !== undefined ? ` python${h.python}` : "";
  return `#ndbg ${format}${python}` + (h.meta && Object.keys(h.meta).length ? " " + JSON.stringify(h.meta) : "") + "\n";
}

/** A header's format version and Python version, read or to be written: one this knows, and one that version can say. */
function checkHeader(version: number, python: string | undefined): void {
  if (!READ_VERSIONS.includes(version)) throw new TrajectoryError(`trajectory format version ${version} is not supported (this reads and writes ${READ_VERSIONS.join(" and ")})`);
  if (python === undefined) return;
  if (version < 2) throw new TrajectoryError(`a version ${version} header has no Python version (it came in version 2)`);
  if (!PYTHON_VERSION_RE.test(python)) throw new TrajectoryError(`bad Python version "${python}" in the header: expected MAJOR.MINOR such as python3.11`);
}

/** A trajectory's text up to its first step: the header, then the program (a model prompt without metadata starts so). */
export function serializeHead(source: string, h: HeaderFields = {}, format = FORMAT_VERSION): string {
  return serializeHeader(h, format) + TOKENS.src + "\n" + escapeText(normalizeSource(source));
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
  let s = serializeHead(t.source, t, t.version);
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

/** A header line where a trajectory starts: its offset and length. */
export interface HeaderMatch {
  index: number;
  length: number;
}

/**
 * The header lines of a file that start trajectories. A header-like line inside a source is
 * escaped by no rule, so only headers directly before <|src_sep|> count.
 */
export function findHeaders(text: string): HeaderMatch[] {
  return [...text.matchAll(new RegExp(HEADER_RE, "gm"))]
    .filter((m) => text.startsWith(TOKENS.src + "\n", m.index! + m[0].length))
    .map((m) => ({ index: m.index!, length: m[0].length }));
}

/** Reads a header line found by findHeaders: its version, Python version and metadata, checked. */
export function parseHeader(line: string): HeaderFields & { version: number } {
  const m = HEADER_RE.exec(line.endsWith("\n") ? line : line + "\n");
  if (!m) throw new TrajectoryError(`a trajectory starts with "${HEADER}" then "${TOKENS.src}"`);
  const version = Number(m[1]);
  checkHeader(version, m[2]);
  const h: HeaderFields & { version: number } = { version };
  if (m[2] !== undefined) h.python = m[2];
  if (m[3]) {
    try {
      h.meta = JSON.parse(m[3].slice(1));
    } catch {
      throw new TrajectoryError("the header's metadata is not valid JSON");
    }
  }
  return h;
}

/** Parses a file of one or more trajectories. */
export function parseMany(text: string): Trajectory[] {
  const out: Trajectory[] = [];
  const real = findHeaders(text);
  if (!real.length || real[0].index !== 0) throw new TrajectoryError(`a trajectory starts with "${HEADER}" then "${TOKENS.src}"`);
  for (let k = 0; k < real.length; k++) {
    const m = real[k];
    const end = k + 1 < real.length ? real[k + 1].index : text.length;
    const { version, python, meta } = parseHeader(text.slice(m.index, m.index + m.length));
    const srcStart = m.index + m.length + TOKENS.src.length + 1;
    const rest = text.slice(srcStart, end);
    const firstToken = rest.search(SPECIAL_RE);
    const source = unescapeText(firstToken < 0 ? rest : rest.slice(0, firstToken));
    const body = firstToken < 0 ? "" : rest.slice(firstToken);
    const t: Trajectory = { version, source, steps: parseSteps(body, undefined, srcStart + (firstToken < 0 ? rest.length : firstToken)) };
    if (python !== undefined) t.python = python;
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

/**
 * The same program state, whatever output was written on the way to it (which depends on the
 * path taken): position, locals and value. A state edited away from its run's is not the same.
 */
export function sameState(a: Frame, b: Frame): boolean {
  return a.event === b.event && a.line === b.line && a.depth === b.depth && a.func === b.func && a.file === b.file && a.value === b.value && sameLocals(a.locals, b.locals);
}

/** Exact match of two states, as scored: the same state (sameState) and the same output. */
export function sameFrame(a: Frame, b: Frame): boolean {
  return sameState(a, b) && (a.stdout ?? "") === (b.stdout ?? "");
}

export function sameExit(a: Exit, b: Exit): boolean {
  return a.status === b.status && a.value === b.value && (a.stdout ?? "") === (b.stdout ?? "");
}

/**
 * The one rule of where a breakpoint can hit: a line event in the program's own file (before the
 * line runs). Calls, returns, exceptions and other files' lines never stop on a breakpoint.
 */
export function breakpointCanHit(f: Pick<Frame, "event" | "file">): boolean {
  return f.event === "line" && f.file === undefined;
}

/** Where a breakpoint stands: a line of the program's own file, or of another user file (`file`, as frames name it). */
export interface BreakpointPlace {
  line: number;
  file?: string;
}

/** Whether a state stands on a breakpoint: a line event on its line, in its file (any user file). */
export function breakpointHits(f: Pick<Frame, "event" | "line" | "file">, b: BreakpointPlace): boolean {
  return f.event === "line" && f.line === b.line && f.file === b.file;
}

/**
 * Where a Step Over (`depth`: the first later event no deeper) or Step Out (`returnAt`: the first
 * that leaves that depth, or returns at it) lands; as a Continue's bound, the rest of a Step Over
 * or Step Out that stops at the breakpoints in the calls it passes, as debugpy's does.
 */
export interface Bound {
  depth?: number;
  returnAt?: number;
}

/** Whether a state is where a move bounded so lands (a bound with neither: nowhere). */
export function reachesBound(f: Pick<Frame, "event" | "depth">, b: Bound): boolean {
  if (b.depth !== undefined) return f.depth <= b.depth;
  if (b.returnAt !== undefined) return f.depth < b.returnAt || (f.depth === b.returnAt && f.event === "return");
  return false;
}
