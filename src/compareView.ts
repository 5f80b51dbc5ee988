// The compare panel's contents as HTML, from the adapter's `ndbg/compare` snapshot: pure
// functions, no `vscode`, so they are checked directly (test/compareView.test.ts). The page shell
// (pageHtml) is set once; each change of the snapshot or of the selected step sends the parts
// (renderParts) to its script, which swaps them in without losing keyboard focus.
import type { CompareSnapshot, PairCheck, PairView, Ratio, StateView } from "../adapter/protocol.js";

/** Where the panel stands with its session. */
export type PanelStatus = "live" | "ended" | "none" | "not-compare" | "waiting" | "error";

export interface PanelModel {
  status: PanelStatus;
  sessionName?: string;
  /** The session's launch mode (for "not-compare"). */
  mode?: string;
  /** The reason for "error"; a passing note otherwise (e.g. a refused resync). */
  message?: string;
  /** The last snapshot received (kept when the session ends). */
  snapshot?: CompareSnapshot;
  /** The selected step: an index into snapshot.history. */
  selected?: number;
}

/** What the page script swaps in. */
export interface RenderedParts {
  banner: string;
  summary: string;
  states: string;
  rows: string;
  /** Index of the selected row (also its data-step), null when there are none. */
  selected: number | null;
  count: number;
  /** Resync is offered (the session is live and the current step differs from the real one). */
  canResync: boolean;
  /** Why not, or what it does (the button's tooltip). */
  resyncTitle: string;
  /** The Resync button is shown at all (a live compare session). */
  showResync: boolean;
}

/** What the page reports back after each render (read from its DOM, for the end-to-end test). */
export interface RenderReport {
  seq: number;
  banner: string | null;
  heading: string | null;
  selected: number | null;
  rows: number;
  predictedLine: string | null;
  realLine: string | null;
  states: string | null;
  lines: string | null;
  locals: string | null;
  mode: string | null;
  divergence: string | null;
  /** data-name (locals) or data-k (state, line, func, value) of the rows marked as differing. */
  mismatches: string[];
  resync: boolean;
  focused: boolean;
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

export const percent = (r: Ratio): string => (r.total ? `${r.agree}/${r.total} (${Math.round((100 * r.agree) / r.total)}%)` : "–");

/** ✓, ≠ or – with words for screen readers and tooltips (never colour alone). */
function mark(v: boolean | null | undefined, what: string): string {
  if (v === true) return `<span class="ok" role="img" title="${what}: agree" aria-label="${what} agree">✓</span>`;
  if (v === false) return `<span class="bad" role="img" title="${what}: differ" aria-label="${what} differ">≠</span>`;
  return `<span class="na" role="img" title="${what}: not compared" aria-label="${what} not compared">–</span>`;
}

const badge = (text: string, cls: string): string => `<span class="badge ${cls}">${escapeHtml(text)}</span>`;

function notes(p: PairView, first: number | null): string {
  const out: string[] = [];
  if (p.index === first) out.push(badge("first divergence", "diverged"));
  if (p.resynced) out.push(badge("resynced", "resynced"));
  if (p.edited) out.push(badge("edited", "edited"));
  if (!p.check) out.push(badge("no real state", "muted"));
  return out.join(" ");
}

/** One line on what differs in a pair, e.g. `line 7 ≠ real 8; x = 3 ≠ real 4`. */
export function differenceText(p: PairView): string {
  const c = p.check;
  if (!c) return `no real state${p.real.note ? ` (${p.real.note})` : ""}`;
  if (c.exact) return "same state";
  const parts: string[] = [];
  if (!c.event || !c.place || p.predicted.kind !== p.real.kind) parts.push(`${p.predicted.label} ≠ real ${p.real.label}`);
  else if (c.line === false) parts.push(`line ${p.predicted.line} ≠ real ${p.real.line}`);
  if (c.value === false) parts.push(`value ${p.predicted.value ?? "(none)"} ≠ real ${p.real.value ?? "(none)"}`);
  for (const k of c.differing.slice(0, 4)) parts.push(`${k} = ${p.predicted.locals?.[k] ?? "(none)"} ≠ real ${p.real.locals?.[k] ?? "(none)"}`);
  if (c.differing.length > 4) parts.push(`${c.differing.length - 4} more`);
  return parts.join("; ");
}

function verdict(p: PairView): string {
  if (!p.check) return badge("– no real state", "muted");
  if (p.check.exact) return badge("✓ same state", "same");
  const c = p.check;
  const what = [...(!c.event || p.predicted.kind !== p.real.kind ? ["state"] : []), ...(c.line === false ? ["line"] : []), ...(c.place === false && c.event ? ["function"] : []), ...(c.value === false ? ["value"] : []), ...c.differing];
  return badge(`≠ differs: ${what.join(", ")}`, "differs");
}

interface StateRow {
  key: string;
  name?: string;
  label: string;
  predicted: string | null;
  real: string | null;
  /** true: differs, false: agrees, null: not compared. */
  agree: boolean | null;
}

const where = (v: StateView): string | null => (v.kind === "frame" ? `${v.func ?? "?"}${v.depth !== undefined ? ` (depth ${v.depth})` : ""}${v.file ? ` in ${v.file}` : ""}` : null);
const unobserved = (v: StateView, part: "line" | "locals" | "value"): boolean => !!v.unobserved?.includes(part);

function stateRows(p: PairView): StateRow[] {
  const c: PairCheck | null = p.check;
  const pr = p.predicted;
  const re = p.real;
  const cut = re.origin === "cut";
  const rows: StateRow[] = [];
  const realText = (s: string | null | undefined, part?: "line" | "locals" | "value"): string | null => (cut ? null : part && unobserved(re, part) ? "(not observed)" : s ?? null);
  rows.push({ key: "state", label: "state", predicted: pr.label, real: cut ? `no real state${re.note ? `: ${re.note}` : ""}` : re.label, agree: c ? c.event && pr.kind === re.kind : null });
  if (pr.kind === "frame" || re.kind === "frame") {
    rows.push({ key: "line", label: "line", predicted: pr.line !== undefined ? String(pr.line) : null, real: realText(re.line !== undefined ? String(re.line) : null, "line"), agree: c ? c.line : null });
    rows.push({ key: "func", label: "function", predicted: where(pr), real: realText(where(re)), agree: c ? (pr.kind === re.kind ? c.place : false) : null });
  }
  if (pr.value !== undefined || re.value !== undefined) {
    const label = pr.kind === "exit" || re.kind === "exit" ? "value" : pr.event === "exception" || re.event === "exception" ? "(exception)" : "(return)";
    rows.push({ key: "value", label, predicted: pr.value ?? null, real: realText(re.value ?? null, "value"), agree: c ? c.value : null });
  }
  if (re.kind === "frame" && unobserved(re, "locals")) {
    for (const [name, repr] of Object.entries(pr.locals ?? {})) rows.push({ key: "local", name, label: name, predicted: repr, real: "(not observed)", agree: null });
    return rows;
  }
  const pl = pr.locals ?? {};
  const rl = cut ? {} : re.locals ?? {};
  // The predicted state's order; names only the real state has last.
  const names = [...Object.keys(pl), ...Object.keys(rl).filter((k) => !(k in pl))];
  for (const name of names) {
    const agree = c && c.locals !== null ? !c.differing.includes(name) : null;
    rows.push({ key: "local", name, label: name, predicted: name in pl ? pl[name] : null, real: cut ? null : name in rl ? rl[name] : null, agree });
  }
  return rows;
}

function valueCell(v: string | null, cls: string, code: boolean): string {
  if (v === null) return `<td class="${cls} none">(none)</td>`;
  return code && v !== "(not observed)" ? `<td class="${cls}"><code>${escapeHtml(v)}</code></td>` : `<td class="${cls}">${escapeHtml(v)}</td>`;
}

function statesHtml(p: PairView, isCurrent: boolean, first: number | null): string {
  const rows = stateRows(p)
    .map((r) => {
      const m = r.agree === false ? `<td class="m bad" aria-label="differs" title="differs">≠</td>` : r.agree === true ? `<td class="m eq" aria-label="same" title="same">=</td>` : `<td class="m na" aria-label="not compared" title="not compared"></td>`;
      const attrs = `data-k="${r.key}"${r.name !== undefined ? ` data-name="${escapeHtml(r.name)}"` : ""}${r.agree === false ? ` class="mismatch"` : ""}`;
      const head = r.key === "local" ? `<th scope="row"><code>${escapeHtml(r.label)}</code></th>` : `<th scope="row" class="meta">${escapeHtml(r.label)}</th>`;
      const code = r.key === "local" || r.key === "value";
      return `<tr ${attrs}>${head}${valueCell(r.predicted, "p", code)}${m}${valueCell(r.real, "r", code)}</tr>`;
    })
    .join("");
  const extra: string[] = [];
  if (p.resynced) extra.push("Resynced: the session shows the real state here, and the next step is predicted from it.");
  if (p.edited) extra.push("The predicted state was edited in the Variables view.");
  if (p.real.origin === "rebuilt") extra.push("The real state is rebuilt from debugpy's stops around it (debugpy does not stop here).");
  if (p.real.unobserved?.length && p.real.origin !== "cut") extra.push(`Not observed by debugpy: ${p.real.unobserved.join(", ")} (left out of the comparison).`);
  const heading = `Step ${p.index} · ${escapeHtml(p.action)}${isCurrent ? " (current)" : ""}`;
  return (
    `<div class="states-head"><h2 id="states-title">${heading}</h2>${verdict(p)} ${notes(p, first)}</div>` +
    `<table class="pair" aria-labelledby="states-title"><thead><tr><th scope="col" class="name">name</th><th scope="col">Predicted</th><th scope="col" class="m"><span class="sr">agreement</span></th><th scope="col">Real (debugpy)</th></tr></thead><tbody>${rows}</tbody></table>` +
    extra.map((e) => `<p class="note">${escapeHtml(e)}</p>`).join("")
  );
}

function summaryHtml(s: CompareSnapshot, selectable: (i: number) => boolean): string {
  const a = s.agreement;
  const figure = (label: string, k: string, r: Ratio): string => `<div class="figure"><dt>${label}</dt><dd data-k="${k}">${percent(r)}</dd></div>`;
  const mode = a.mode === "resync" ? "resync: each step judged from the real state (per-step accuracy)" : `free-running: the prediction goes on from its own states (horizon ${a.horizon} step${a.horizon === 1 ? "" : "s"})`;
  const first = s.firstDivergence === null ? undefined : s.history.find((p) => p.index === s.firstDivergence);
  const divergence = first
    ? `First divergence: ${selectable(first.index) ? `<button type="button" class="link" data-select="${first.index}">step ${first.index} · ${escapeHtml(first.action)}</button>` : `step ${first.index}`} <span class="diff">${escapeHtml(differenceText(first))}</span>`
    : `No divergence${a.compared ? `: all ${a.compared} compared step${a.compared === 1 ? "" : "s"} agree` : " yet"}.`;
  const real = `Real side: debugpy, ${escapeHtml(s.real.python)}${s.real.ended ? ` · the real program has ended${s.real.note ? `: ${escapeHtml(s.real.note)}` : ""}` : ""}`;
  return (
    `<dl class="figures">${figure("States exact", "states", a.states)}${figure("Lines", "lines", a.lines)}${figure("Locals", "locals", a.locals)}${figure("Variables", "names", a.names)}</dl>` +
    `<p class="mode" data-k="mode">${escapeHtml(mode)} · over ${a.steps} step${a.steps === 1 ? "" : "s"}, ${a.compared} compared · per step: debugpy ${a.realMs} ms, prediction ${a.predictedMs} ms</p>` +
    `<p class="divergence${first ? " diverged" : ""}" data-k="divergence">${divergence}</p>` +
    `<p class="real">${real}</p>`
  );
}

function rowHtml(p: PairView, selected: boolean, first: number | null): string {
  const c = p.check;
  const locals = c && c.locals !== null ? `${mark(c.locals, "locals")} ${c.names.agree}/${c.names.total}` : mark(null, "locals");
  const said = c ? (c.exact ? "same state" : `differs: ${differenceText(p)}`) : "no real state";
  const label = `Step ${p.index}, ${p.action}, ${p.predicted.label}, ${said}${p.index === first ? ", first divergence" : ""}${p.resynced ? ", resynced" : ""}${p.edited ? ", edited" : ""}`;
  return (
    `<div class="row${c && !c.exact ? " differs" : ""}${p.index === first ? " first" : ""}" role="option" id="step-${p.index}" data-step="${p.index}" aria-selected="${selected}" aria-label="${escapeHtml(label)}">` +
    `<span class="c-step">${p.index}</span><span class="c-action">${escapeHtml(p.action)}</span><span class="c-label" title="${escapeHtml(p.predicted.label)}">${escapeHtml(p.predicted.label)}</span>` +
    `<span class="c-mark">${mark(c ? c.exact : null, "state")}</span><span class="c-mark">${mark(c ? c.line : null, "line")}</span><span class="c-locals">${locals}</span>` +
    `<span class="c-notes">${notes(p, first)}</span></div>`
  );
}

function bannerText(m: PanelModel): string {
  const name = m.sessionName ? `"${m.sessionName}"` : "The session";
  const snap = m.snapshot;
  switch (m.status) {
    case "none":
      return "No Neural Python debug session is active. Start one with \"mode\": \"compare\" to see the predicted and real states side by side.";
    case "not-compare":
      return `${name} is in ${m.mode ?? "predict"} mode, not compare mode: there is nothing to compare. Launch it with "mode": "compare" to run debugpy beside the prediction.`;
    case "waiting":
      return `${name}: waiting for its first stop…`;
    case "error":
      return `${name}: the comparison could not be read: ${m.message ?? "unknown error"}`;
    case "ended":
      return `${name} has ended. This is its last comparison${snap ? ` (${snap.history.length} state${snap.history.length === 1 ? "" : "s"})` : ""}.`;
    case "live":
      return `${name} · stopped at step ${snap?.current?.index ?? 0}${snap?.real.ended ? " · the real program has ended" : ""}`;
  }
}

/** The panel's parts for a model: banner, agreement, the selected step's two states, the history rows. */
export function renderParts(m: PanelModel): RenderedParts {
  const s = m.snapshot;
  const count = s?.history.length ?? 0;
  const sel = count ? Math.min(Math.max(m.selected ?? count - 1, 0), count - 1) : null;
  const first = s?.firstDivergence ?? null;
  const cur = s?.current ?? null;
  let resyncTitle = "Replace the current predicted state with the real one; the next step is predicted from it";
  let canResync = false;
  if (m.status !== "live" || !cur) resyncTitle = "Resync needs a live compare session";
  else if (cur.predicted.kind === "exit") resyncTitle = "The program has ended: there is nothing to resync";
  else if (cur.real.kind !== "frame") resyncTitle = "There is no real state to resync to";
  else if (cur.resynced) resyncTitle = "Already resynced: the current state is the real one";
  else if (cur.check?.exact) resyncTitle = "The current predicted state equals the real one";
  else canResync = true;
  const banner = escapeHtml(bannerText(m)) + (m.message && m.status !== "error" ? ` <span class="notice">${escapeHtml(m.message)}</span>` : "");
  if (!s || sel === null) return { banner, summary: "", states: "", rows: "", selected: null, count: 0, canResync: false, resyncTitle, showResync: false };
  const byIndex = (i: number): boolean => s.history.some((p) => p.index === i);
  return {
    banner,
    summary: summaryHtml(s, byIndex),
    states: statesHtml(s.history[sel], sel === count - 1, first),
    rows: s.history.map((p, i) => rowHtml(p, i === sel, first)).join(""),
    selected: s.history[sel].index,
    count,
    canResync,
    resyncTitle,
    showResync: m.status === "live",
  };
}

// ---------------------------------------------------------------------------------------------
// The page shell: theme colours only through VS Code's CSS variables, no external resources.

const STYLE = `
:root { color-scheme: light dark; }
html, body { height: 100%; }
body { box-sizing: border-box; display: flex; flex-direction: column; margin: 0; padding: 0 16px 12px; color: var(--vscode-foreground); background: var(--vscode-editor-background); font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); line-height: 1.4; }
code { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); background: none; padding: 0; }
h1 { font-size: 1.15em; font-weight: 600; margin: 0; }
h2 { font-size: 1em; font-weight: 600; margin: 0; }
.bar { flex: none; display: flex; gap: 12px; align-items: center; padding: 10px 0 8px; background: var(--vscode-editor-background); border-bottom: 1px solid var(--vscode-panel-border, var(--vscode-widget-border)); }
#banner { flex: 1; margin: 0; color: var(--vscode-descriptionForeground); }
.notice { color: var(--vscode-editorWarning-foreground); }
button { font: inherit; color: var(--vscode-button-foreground); background: var(--vscode-button-background); border: 1px solid var(--vscode-button-border, transparent); border-radius: 2px; padding: 3px 12px; cursor: pointer; }
button:hover:not(:disabled) { background: var(--vscode-button-hoverBackground); }
button:disabled { opacity: 0.5; cursor: default; }
button:focus-visible, .link:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: 2px; }
button.link { color: var(--vscode-textLink-foreground); background: none; border: none; padding: 0; text-decoration: underline; }
button.link:hover { color: var(--vscode-textLink-activeForeground); background: none; }
main { flex: 1 1 auto; min-height: 0; display: flex; flex-direction: column; }
section { margin-top: 12px; }
#summary { flex: none; }
#states { flex: 0 1 auto; min-height: 7em; overflow: auto; }
.history { flex: 1 1 auto; min-height: 10em; display: flex; flex-direction: column; }
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(6.5em, 1fr)); gap: 6px; margin: 0; }
.figure { padding: 4px 10px; border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border)); border-radius: 3px; background: var(--vscode-editorWidget-background); }
.figure dt { font-size: 0.85em; color: var(--vscode-descriptionForeground); }
.figure dd { margin: 0; font-size: 1.15em; font-variant-numeric: tabular-nums; }
.mode, .real, .note { color: var(--vscode-descriptionForeground); margin: 8px 0 0; }
.divergence { margin: 8px 0 0; }
.divergence.diverged { border-left: 3px solid var(--vscode-testing-iconFailed); padding-left: 8px; }
.diff { font-family: var(--vscode-editor-font-family); }
.states-head { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 6px; }
.badge { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 0.85em; border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border)); white-space: nowrap; }
.badge.same { color: var(--vscode-testing-iconPassed); border-color: var(--vscode-testing-iconPassed); }
.badge.differs, .badge.diverged { color: var(--vscode-testing-iconFailed); border-color: var(--vscode-testing-iconFailed); white-space: normal; }
.badge.resynced, .badge.edited { color: var(--vscode-badge-foreground); background: var(--vscode-badge-background); border-color: transparent; }
.badge.muted { color: var(--vscode-descriptionForeground); }
table.pair { width: 100%; border-collapse: collapse; table-layout: fixed; }
table.pair th, table.pair td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--vscode-widget-border, var(--vscode-panel-border)); vertical-align: top; overflow-wrap: anywhere; }
table.pair thead th { position: sticky; top: 0; font-weight: 600; color: var(--vscode-descriptionForeground); background: var(--vscode-editorWidget-background); }
table.pair th.name { width: 22%; }
table.pair th.m, table.pair td.m { width: 2em; text-align: center; padding: 3px 0; }
table.pair tbody th { font-weight: normal; }
table.pair th.meta { color: var(--vscode-descriptionForeground); }
table.pair tr.mismatch { background: var(--vscode-diffEditor-removedTextBackground, transparent); }
table.pair tr.mismatch td.r code { font-weight: 600; }
td.none { color: var(--vscode-descriptionForeground); font-style: italic; }
.bad { color: var(--vscode-testing-iconFailed); font-weight: 700; }
.ok { color: var(--vscode-testing-iconPassed); }
.eq, .na { color: var(--vscode-descriptionForeground); }
.history-head, .row { display: grid; grid-template-columns: 2.2em 6.2em minmax(6em, 1fr) 2.8em 2.4em 4.2em minmax(6.5em, 0.7fr); gap: 6px; padding: 2px 8px 2px 5px; align-items: center; }
.history-head { font-weight: 600; color: var(--vscode-descriptionForeground); background: var(--vscode-editorWidget-background); border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border)); border-bottom: none; margin-top: 6px; }
#history { position: relative; flex: 1 1 auto; min-height: 4em; overflow: auto; border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border)); outline: none; }
#history:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: -1px; }
.row { cursor: pointer; border-left: 3px solid transparent; }
.row > span { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.row > span.c-notes { white-space: normal; }
.row .badge { font-size: 0.8em; }
.row:hover { background: var(--vscode-list-hoverBackground); }
.row.first { border-left-color: var(--vscode-testing-iconFailed); }
.row[aria-selected="true"] { background: var(--vscode-list-inactiveSelectionBackground); color: var(--vscode-list-inactiveSelectionForeground, inherit); }
#history:focus .row[aria-selected="true"] { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); outline: 1px solid var(--vscode-list-focusOutline, var(--vscode-focusBorder)); outline-offset: -1px; }
.c-step, .c-mark { text-align: right; font-variant-numeric: tabular-nums; }
.c-mark { text-align: center; }
.c-locals { font-variant-numeric: tabular-nums; }
.keys { color: var(--vscode-descriptionForeground); font-size: 0.85em; margin: 6px 0 0; }
kbd { font-family: var(--vscode-editor-font-family); border: 1px solid var(--vscode-widget-border, var(--vscode-panel-border)); border-radius: 3px; padding: 0 3px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
[hidden] { display: none !important; }
`;

// Runs in the webview. The history is a listbox: the list keeps the focus (aria-activedescendant)
// while its rows are replaced; Up/Down/Home/End/PageUp/PageDown move the selection, Enter or a
// click selects, and the host answers each selection with the step's two states.
const SCRIPT = `
const vscode = acquireVsCodeApi();
const $ = (id) => document.getElementById(id);
const list = $("history");
const resync = $("resync");
let selected = null;
let count = 0;
const rows = () => Array.from(list.querySelectorAll(".row"));
// Scrolls the list, not the page, to show a row.
function reveal(row) {
  if (row.offsetTop < list.scrollTop) list.scrollTop = row.offsetTop;
  else if (row.offsetTop + row.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = row.offsetTop + row.offsetHeight - list.clientHeight;
}
function position() { const r = rows(); const i = r.findIndex((x) => x.getAttribute("aria-selected") === "true"); return i < 0 ? r.length - 1 : i; }
function choose(i) {
  const r = rows();
  if (!r.length) return;
  i = Math.max(0, Math.min(r.length - 1, i));
  for (const x of r) x.setAttribute("aria-selected", String(x === r[i]));
  list.setAttribute("aria-activedescendant", r[i].id);
  reveal(r[i]);
  vscode.postMessage({ type: "select", step: Number(r[i].dataset.step) });
}
list.addEventListener("keydown", (e) => {
  const i = position();
  const page = Math.max(1, Math.floor(list.clientHeight / ((rows()[0] && rows()[0].offsetHeight) || 20)) - 1);
  switch (e.key) {
    case "ArrowDown": choose(i + 1); break;
    case "ArrowUp": choose(i - 1); break;
    case "Home": choose(0); break;
    case "End": choose(count - 1); break;
    case "PageDown": choose(i + page); break;
    case "PageUp": choose(i - page); break;
    case "Enter": case " ": choose(i); break;
    default: return;
  }
  e.preventDefault();
});
list.addEventListener("click", (e) => {
  const row = e.target.closest(".row");
  if (row) { list.focus(); choose(rows().indexOf(row)); }
});
document.addEventListener("click", (e) => {
  const b = e.target.closest("[data-select]");
  if (!b) return;
  const r = rows().findIndex((x) => x.dataset.step === b.dataset.select);
  if (r >= 0) { list.focus(); choose(r); }
});
resync.addEventListener("click", () => vscode.postMessage({ type: "resync" }));
const text = (sel) => { const el = document.querySelector(sel); return el ? el.textContent.trim() : null; };
function report(seq) {
  const sel = list.querySelector('.row[aria-selected="true"]');
  return {
    seq, banner: text("#banner"), heading: text("#states h2"), selected: sel ? Number(sel.dataset.step) : null, rows: rows().length,
    predictedLine: text('#states tr[data-k="line"] td.p'), realLine: text('#states tr[data-k="line"] td.r'),
    states: text('[data-k="states"]'), lines: text('[data-k="lines"]'), locals: text('[data-k="locals"]'), mode: text('[data-k="mode"]'), divergence: text('[data-k="divergence"]'),
    mismatches: Array.from(document.querySelectorAll("#states tr.mismatch")).map((tr) => tr.dataset.name ?? tr.dataset.k),
    resync: !resync.hidden && !resync.disabled, focused: document.activeElement === list,
  };
}
window.addEventListener("message", (e) => {
  const m = e.data;
  if (m.type === "update") {
    const p = m.parts;
    $("banner").innerHTML = p.banner;
    $("summary").innerHTML = p.summary;
    $("states").innerHTML = p.states;
    list.innerHTML = p.rows;
    count = p.count;
    selected = p.selected;
    $("content").hidden = !count;
    resync.hidden = !p.showResync;
    resync.disabled = !p.canResync;
    resync.title = p.resyncTitle;
    const row = selected === null ? null : document.getElementById("step-" + selected);
    if (row) { list.setAttribute("aria-activedescendant", row.id); reveal(row); }
    else list.removeAttribute("aria-activedescendant");
    vscode.postMessage({ type: "rendered", report: report(m.seq) });
  } else if (m.type === "key") {
    // The same handler as a key pressed in the list (the end-to-end test drives it this way).
    list.focus();
    list.dispatchEvent(new KeyboardEvent("keydown", { key: m.key, bubbles: true, cancelable: true }));
  } else if (m.type === "click") {
    const el = document.querySelector(m.selector);
    if (el) el.click();
  }
});
vscode.postMessage({ type: "ready" });
`;

/** The whole page; `nonce` admits its one style and one script (CSP), nothing else loads. */
export function pageHtml(nonce: string): string {
  const csp = `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>Neural Python: Comparison</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<header class="bar"><h1>Predicted vs real</h1><p id="banner" role="status" aria-live="polite">Loading…</p><button id="resync" type="button" hidden>Resync</button></header>
<main id="content" hidden>
<section id="summary" aria-label="Agreement so far"></section>
<section id="states" aria-label="The selected step: predicted and real state"></section>
<section class="history" aria-labelledby="history-title">
<h2 id="history-title">History</h2>
<p class="keys"><kbd>↑</kbd> <kbd>↓</kbd> <kbd>Home</kbd> <kbd>End</kbd> select a step · ✓ agree, ≠ differ, – not compared</p>
<div class="history-head" aria-hidden="true"><span class="c-step">#</span><span>Action</span><span>Predicted</span><span class="c-mark">Exact</span><span class="c-mark">Line</span><span>Locals</span><span>Notes</span></div>
<div id="history" role="listbox" tabindex="0" aria-labelledby="history-title"></div>
</section>
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>`;
}
