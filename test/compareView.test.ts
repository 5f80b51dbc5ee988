// The compare panel's HTML builder (src/compareView.ts), a pure function of the adapter's
// ndbg/compare snapshot: the ≠ marks sit exactly on the values that differ, reprs are escaped,
// the first divergence is marked and selectable, and the page loads nothing from outside.
import { test } from "node:test";
import assert from "node:assert/strict";
import type { CompareSnapshot, PairCheck, PairView, StateView } from "../adapter/protocol.js";
import { escapeHtml, pageHtml, renderParts, type PanelModel } from "../src/compareView.js";

const frame = (line: number, locals: Record<string, string>, extra: Partial<StateView> = {}): StateView => ({
  kind: "frame", event: "line", line, func: "f", depth: 1, locals, label: `line ${line} in f`, ...extra,
});
const exact = (n: number): PairCheck => ({ exact: true, event: true, place: true, line: true, locals: true, value: null, differing: [], names: { agree: n, total: n } });

/** Step 0 and 1 agree; step 2 differs in `b` (and has a repr with < and &) and in its line; step 3 only in `s`. */
function snapshot(): CompareSnapshot {
  const history: PairView[] = [
    { index: 0, action: "start", predicted: frame(1, { a: "1" }), real: frame(1, { a: "1" }, { origin: "stop" }), check: exact(1), resynced: false, edited: false, realMs: 0, predictedMs: 0 },
    { index: 1, action: "step_over", predicted: frame(2, { a: "1", b: "[]" }), real: frame(2, { a: "1", b: "[]" }, { origin: "stop" }), check: exact(2), resynced: false, edited: false, realMs: 5, predictedMs: 7 },
    {
      index: 2, action: "step_over",
      predicted: frame(3, { a: "1", b: "'<x & y>'" }, { label: "line 3 in f" }),
      real: frame(4, { a: "1", b: "'<x & z>'" }, { origin: "stop", label: "line 4 in f" }),
      check: { exact: false, event: true, place: true, line: false, locals: false, value: null, differing: ["b"], names: { agree: 1, total: 2 } },
      resynced: true, edited: false, realMs: 5, predictedMs: 7,
    },
    {
      index: 3, action: "step_over",
      predicted: frame(5, { a: "1", b: "'<x & z>'", s: "2" }),
      real: frame(5, { a: "1", b: "'<x & z>'", s: "3" }, { origin: "stop" }),
      check: { exact: false, event: true, place: true, line: true, locals: false, value: null, differing: ["s"], names: { agree: 2, total: 3 } },
      resynced: false, edited: true, realMs: 5, predictedMs: 7,
    },
  ];
  return {
    mode: "free",
    current: history[3],
    history,
    firstDivergence: 2,
    agreement: {
      mode: "free", steps: 3, compared: 3, states: { agree: 1, total: 3 }, lines: { agree: 2, total: 3 }, locals: { agree: 1, total: 3 },
      names: { agree: 5, total: 7 }, firstDivergence: 2, horizon: 1, realMs: 5, predictedMs: 7,
    },
    real: { python: "/usr/bin/python3", ended: false },
  };
}

const live = (selected?: number): PanelModel => ({ status: "live", sessionName: "compare demo", snapshot: snapshot(), ...(selected !== undefined ? { selected } : {}) });

/** The rows of the two-state table that carry the ≠ mark, by local name or row kind. */
function marked(states: string): string[] {
  return [...states.matchAll(/<tr data-k="(\w+)"(?: data-name="([^"]*)")?( class="mismatch")?>(.*?)<\/tr>/g)]
    .filter((m) => m[3])
    .map((m) => {
      assert.match(m[4], /≠/, "a mismatching row shows the ≠ mark");
      return m[2] ?? m[1];
    });
}

test("≠ marks sit exactly on the differing locals and the differing line", () => {
  const at2 = renderParts(live(2));
  assert.deepEqual(marked(at2.states), ["line", "b"]);
  assert.equal((at2.states.match(/<td class="m bad"[^>]*>≠<\/td>/g) ?? []).length, 2, "one mark per differing row");
  assert.match(at2.states, /≠ differs: line, b</, "the verdict says what differs");
  assert.match(at2.states, /Step 2 · step_over/);
  assert.match(at2.states, /resynced/);
  const at3 = renderParts(live());
  assert.equal(at3.selected, 3, "without a selection the current (last) step is shown");
  assert.deepEqual(marked(at3.states), ["s"]);
  assert.match(at3.states, /Step 3 · step_over \(current\)/);
  assert.match(at3.states, /edited/);
  const at1 = renderParts(live(1));
  assert.deepEqual(marked(at1.states), [], "an exact step has no marks");
  assert.doesNotMatch(at1.states, /≠/);
  assert.match(at1.states, /✓ same state/);
});

test("reprs and names are escaped", () => {
  const p = renderParts(live(2));
  assert.ok(p.states.includes("<code>&#39;&lt;x &amp; y&gt;&#39;</code>"), "the predicted repr, escaped");
  assert.ok(p.states.includes("<code>&#39;&lt;x &amp; z&gt;&#39;</code>"), "the real repr, escaped");
  assert.ok(!p.states.includes("<x &") && !p.summary.includes("<x &"), "no raw repr anywhere");
  const s = snapshot();
  s.history[1].predicted.locals = { "<b>": "1" };
  s.history[1].action = "<script>";
  const q = renderParts({ status: "live", snapshot: s, selected: 1 });
  assert.ok(!q.states.includes("<b>") && !q.rows.includes("<script>"));
  assert.ok(q.states.includes('data-name="&lt;b&gt;"'));
  assert.equal(escapeHtml(`<a href="x">&'`), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
});

test("the first divergence is marked in the history and selectable from the summary", () => {
  const p = renderParts(live());
  const rows = [...p.rows.matchAll(/<div class="row([^"]*)" role="option" id="step-(\d+)" data-step="\d+" aria-selected="(true|false)"/g)];
  assert.equal(rows.length, 4);
  assert.deepEqual(rows.map((r) => r[1].includes("first")), [false, false, true, false]);
  assert.deepEqual(rows.map((r) => r[3]), ["false", "false", "false", "true"]);
  assert.equal((p.rows.match(/first divergence/g) ?? []).length, 2, "the badge and the row's aria-label, on step 2 only");
  assert.match(p.summary, /First divergence: <button type="button" class="link" data-select="2">step 2 · step_over<\/button>/);
  assert.match(p.summary, /line 3 ≠ real 4; b = &#39;&lt;x &amp; y&gt;&#39; ≠ real/);
  assert.match(p.summary, /data-k="states">1\/3 \(33%\)/);
  assert.match(p.summary, /free-running/);
});

test("agreement without divergence, resync offered only for a live differing current step", () => {
  const s = snapshot();
  s.history = s.history.slice(0, 2);
  s.current = s.history[1];
  s.firstDivergence = null;
  s.agreement = { ...s.agreement, steps: 1, compared: 1, states: { agree: 1, total: 1 }, lines: { agree: 1, total: 1 }, locals: { agree: 1, total: 1 }, firstDivergence: null, horizon: 1 };
  const p = renderParts({ status: "live", snapshot: s });
  assert.match(p.summary, /No divergence: all 1 compared step agree/);
  assert.match(p.summary, /data-k="states">1\/1 \(100%\)/);
  assert.equal(p.canResync, false);
  assert.equal(p.showResync, true);
  assert.equal(renderParts(live()).canResync, true, "step 3 differs and is not resynced");
  assert.equal(renderParts({ ...live(), status: "ended" }).canResync, false);
  assert.equal(renderParts({ ...live(), status: "ended" }).showResync, false);
});

test("plain words without a compare session; the last snapshot kept when it ended", () => {
  assert.match(renderParts({ status: "none" }).banner, /No Neural Python debug session is active/);
  const nc = renderParts({ status: "not-compare", sessionName: "p", mode: "predict" });
  assert.match(nc.banner, /predict mode, not compare mode/);
  assert.equal(nc.count, 0);
  assert.equal(nc.rows, "");
  const ended = renderParts({ ...live(1), status: "ended" });
  assert.match(ended.banner, /has ended\. This is its last comparison \(4 states\)/);
  assert.equal(ended.count, 4);
  assert.equal(ended.selected, 1);
});

test("no real state, an unobserved line, an exit beside a frame", () => {
  const s = snapshot();
  s.history[1].real = { kind: "exit", status: "limit", label: "no real state", origin: "cut", note: "no stop within 1 s" };
  s.history[1].check = null;
  let p = renderParts({ status: "live", snapshot: s, selected: 1 });
  assert.deepEqual(marked(p.states), []);
  assert.match(p.states, /no real state: no stop within 1 s/);
  assert.match(p.rows, /no real state/);
  s.history[1].real = frame(9, { a: "1", b: "[]" }, { origin: "rebuilt", unobserved: ["line"] });
  s.history[1].check = { ...exact(2), line: null };
  p = renderParts({ status: "live", snapshot: s, selected: 1 });
  assert.deepEqual(marked(p.states), []);
  assert.match(p.states, /<tr data-k="line"><th scope="row" class="meta">line<\/th><td class="p">2<\/td><td class="m na"[^>]*><\/td><td class="r">\(not observed\)<\/td>/);
  s.history[1].real = { kind: "exit", status: "normal", label: "exit (normal)", origin: "end" };
  s.history[1].check = { exact: false, event: false, place: false, line: false, locals: false, value: null, differing: ["a", "b"], names: { agree: 0, total: 2 } };
  p = renderParts({ status: "live", snapshot: s, selected: 1 });
  assert.deepEqual(marked(p.states), ["state", "line", "func", "a", "b"]);
});

test("the page: a nonce CSP, nothing external, theme colours only", () => {
  const html = pageHtml("abc123");
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'nonce-abc123'; script-src 'nonce-abc123';">/);
  assert.equal((html.match(/nonce="abc123"/g) ?? []).length, 2);
  assert.doesNotMatch(html, /https?:|src=/);
  const css = /<style[^>]*>([\s\S]*?)<\/style>/.exec(html)![1];
  assert.doesNotMatch(css.replace(/white-space/g, ""), /#[0-9a-f]{3,8}\b|rgba?\(|hsla?\(|\b(white|black|red|green|blue|gray|grey)\b/i, "colours only through --vscode-* variables");
  assert.match(css, /var\(--vscode-focusBorder\)/);
  assert.match(html, /<div id="history" role="listbox" tabindex="0"/);
  assert.match(html, /<button id="resync" type="button"/);
});
