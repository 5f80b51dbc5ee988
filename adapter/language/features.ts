// Language features for trace files, from an analysis (analyze.ts): diagnostics, an outline of
// frames nested by call depth, hover with the locals that changed, and go-to-source.
import { DiagnosticSeverity, MarkupKind, SymbolKind } from "vscode-languageserver";
import type { Diagnostic, DocumentSymbol, Hover, Location, Range } from "vscode-languageserver";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { serializeAction } from "../format/trajectory.js";
import type { Frame } from "../format/trajectory.js";
import { sourceLineOffset, stepBefore } from "./analyze.js";
import type { StepInfo, TraceAnalysis, TrajectoryInfo } from "./analyze.js";

const range = (doc: TextDocument, start: number, end: number): Range => ({ start: doc.positionAt(start), end: doc.positionAt(end) });

/** A range that ends before the newline closing a step, so outline entries stay on their lines. */
function trimmed(doc: TextDocument, start: number, end: number): Range {
  const text = doc.getText();
  while (end > start && text[end - 1] === "\n") end--;
  return range(doc, start, end);
}

export function diagnostics(doc: TextDocument, a: TraceAnalysis): Diagnostic[] {
  return a.errors.map((e) => ({ range: range(doc, e.start, e.end), severity: DiagnosticSeverity.Error, source: "ndbg", message: e.message }));
}

const short = (s: string, n = 60): string => (s.length > n ? s.slice(0, n - 1) + "…" : s);

function frameName(f: Frame): string {
  switch (f.event) {
    case "call":
      return `${f.func}(${Object.entries(f.locals).map(([k, v]) => `${k}=${short(v, 20)}`).join(", ")})`;
    case "return":
      return `return ${short(f.value ?? "(unwound)")}`;
    case "exception":
      return `exception ${short(f.value ?? "")}`;
    default:
      return `line ${f.line}`;
  }
}

function stepSymbol(doc: TextDocument, s: StepInfo): DocumentSymbol {
  const r = trimmed(doc, s.start, s.end);
  const sel = s.lineNumber ? range(doc, s.lineNumber.start, s.lineNumber.end) : r;
  const action = s.action ? serializeAction(s.action).replace(/^<\|(\w+)\|>/, "$1 ").trim() : "start";
  if (s.exit) return { name: `exit ${s.exit.status}${s.exit.value ? " " + short(s.exit.value) : ""}`, detail: action, kind: SymbolKind.Event, range: r, selectionRange: r };
  const f = s.frame!;
  const kind = f.event === "call" ? SymbolKind.Function : f.event === "exception" ? SymbolKind.Event : f.event === "return" ? SymbolKind.Constant : SymbolKind.Number;
  const where = `${f.func}:${f.line}${f.file ? " " + f.file : ""}`;
  const changed = Object.entries(f.locals).filter(([k, v]) => !s.prev || !Object.hasOwn(s.prev.locals, k) || s.prev.locals[k] !== v).map(([k, v]) => `${k}=${short(v, 20)}`);
  const detail = [where, action, f.event === "line" ? changed.join(", ") : ""].filter(Boolean).join(" · ");
  return { name: frameName(f), detail, kind, range: r, selectionRange: sel };
}

function extend(sym: DocumentSymbol, r: Range): void {
  const after = r.end.line > sym.range.end.line || (r.end.line === sym.range.end.line && r.end.character > sym.range.end.character);
  if (after) sym.range = { start: sym.range.start, end: r.end };
}

/**
 * Most outline entries for one document: a trace of a million frames would make an outline of
 * hundreds of megabytes that no editor can show. The frames past it are one summary entry.
 */
export const OUTLINE_LIMIT = 10_000;

/**
 * The frames of one trajectory as a tree: a call opens an entry holding the frames of that call
 * (same depth) and the calls it makes (one deeper); its return closes it. At most `room` entries;
 * the steps after those are summarized in one.
 */
function frameTree(doc: TextDocument, t: TrajectoryInfo, room: number): DocumentSymbol[] {
  const roots: DocumentSymbol[] = [];
  const open: { depth: number; sym: DocumentSymbol }[] = [];
  const add = (sym: DocumentSymbol): void => {
    const parent = open[open.length - 1]?.sym;
    (parent ? (parent.children ??= []) : roots).push(sym);
    for (const o of open) extend(o.sym, sym.range);
  };
  for (const [i, s] of t.steps.entries()) {
    if (i >= room) {
      const r = trimmed(doc, s.start, t.steps[t.steps.length - 1].end);
      roots.push({ name: `${t.steps.length - i} more steps`, detail: `the outline shows the first ${OUTLINE_LIMIT} steps of a file`, kind: SymbolKind.Array, range: r, selectionRange: r });
      break;
    }
    const sym = stepSymbol(doc, s);
    if (!s.frame) {
      open.length = 0;
      add(sym);
      continue;
    }
    const d = s.frame.depth;
    while (open.length && open[open.length - 1].depth > d) open.pop();
    if (s.frame.event === "call") {
      if (open.length && open[open.length - 1].depth === d) open.pop();
      add(sym);
      open.push({ depth: d, sym });
    } else {
      add(sym);
      if (s.frame.event === "return" && open.length && open[open.length - 1].depth === d) open.pop();
    }
  }
  return roots;
}

export function documentSymbols(doc: TextDocument, a: TraceAnalysis): DocumentSymbol[] {
  let room = OUTLINE_LIMIT;
  return a.trajectories.map((t, i) => {
    const meta = t.meta ?? {};
    const title = [meta.program, meta.call, meta.mode].filter((x) => typeof x === "string" && x).join(" ");
    const r = trimmed(doc, t.start, t.end);
    const source: DocumentSymbol = { name: "source", kind: SymbolKind.File, range: trimmed(doc, t.sourceStart, t.sourceEnd), selectionRange: trimmed(doc, t.sourceStart, t.sourceEnd) };
    return {
      name: title || `trajectory ${i + 1}`,
      detail: `${t.steps.length} steps`,
      kind: SymbolKind.Namespace,
      range: r,
      selectionRange: range(doc, t.start, t.headerEnd - 1),
      children: [source, ...frameTree(doc, t, Math.max(room, 0))],
    };
    room -= t.steps.length;
  });
}

function findStep(a: TraceAnalysis, offset: number): { t: TrajectoryInfo; s: StepInfo } | undefined {
  for (const t of a.trajectories) {
    if (offset < t.start || offset >= t.end) continue;
    const s = t.steps[stepBefore(t.steps, offset)];
    return s && offset >= s.start && offset < s.end ? { t, s } : undefined;
  }
  return undefined;
}

const code = (s: string): string => "`` " + s.replace(/\n/g, "\\n") + " ``";

/** Markdown: where the frame is, then the locals that are new, changed or gone since the frame before. */
export function describeChanges(s: StepInfo): string {
  if (s.exit) {
    const lines = [`**exit: ${s.exit.status}**`];
    if (s.exit.value !== undefined) lines.push(`value: ${code(s.exit.value)}`);
    if (s.exit.stdout) lines.push(`output: ${code(s.exit.stdout)}`);
    return lines.join("\n\n");
  }
  const f = s.frame!;
  const prev = s.prev?.locals ?? {};
  const lines = [`**${f.event}** · line ${f.line} · \`${f.func}\`${f.file ? ` (${f.file})` : ""} · depth ${f.depth}`];
  const rows: string[] = [];
  for (const [k, v] of Object.entries(f.locals)) {
    if (!Object.hasOwn(prev, k)) rows.push(`| \`${k}\` | new | ${code(v)} |`);
    else if (prev[k] !== v) rows.push(`| \`${k}\` | ${code(prev[k])} | ${code(v)} |`);
  }
  for (const k of Object.keys(prev)) if (!Object.hasOwn(f.locals, k)) rows.push(`| \`${k}\` | ${code(prev[k])} | gone |`);
  if (rows.length) lines.push(["| local | before | now |", "|---|---|---|", ...rows].join("\n"));
  else lines.push("no locals changed");
  if (f.value !== undefined) lines.push(`${f.event === "exception" ? "exception" : "returns"}: ${code(f.value)}`);
  if (f.stdout) lines.push(`output: ${code(f.stdout)}`);
  return lines.join("\n\n");
}

export function hover(doc: TextDocument, a: TraceAnalysis, offset: number): Hover | null {
  const hit = findStep(a, offset);
  if (!hit) return null;
  return { contents: { kind: MarkupKind.Markdown, value: describeChanges(hit.s) }, range: trimmed(doc, hit.s.start, hit.s.end) };
}

/**
 * Go to source: a frame (or a breakpoint action's line) goes to that line of the trajectory's
 * source section; a frame in another file goes to that file, relative to the trace's folder.
 */
export function definition(doc: TextDocument, a: TraceAnalysis, offset: number): Location | null {
  const hit = findStep(a, offset);
  if (!hit) return null;
  const { t, s } = hit;
  const onAction = s.actionLine !== undefined && offset <= s.actionLine.end;
  const line = onAction ? s.action?.line : s.frame?.line;
  if (line === undefined) return null;
  if (s.frame?.file !== undefined && !onAction) {
    const uri = new URL(s.frame.file, doc.uri).toString();
    return { uri, range: { start: { line: line - 1, character: 0 }, end: { line: line - 1, character: 0 } } };
  }
  const at = sourceLineOffset(doc.getText(), t, line);
  if (at === undefined) return null;
  const text = doc.getText();
  const nl = text.indexOf("\n", at);
  return { uri: doc.uri, range: range(doc, at, nl < 0 ? text.length : nl) };
}
