// The trace-file language server (dist/server.cjs), spoken to over LSP on stdio as an editor
// would: diagnostics for malformed frames, the outline by call depth, hover and go-to-source.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { FORMAT_VERSION, serialize, type Step } from "../adapter/format/trajectory.js";
import { OUTLINE_LIMIT } from "../adapter/language/features.js";
import type { Diagnostic, DocumentSymbol, Hover, Location, ProtocolConnection, PublishDiagnosticsParams } from "vscode-languageserver-protocol";

const require = createRequire(import.meta.url);
const lsp = require("vscode-languageserver-protocol/node") as typeof import("vscode-languageserver-protocol/node");
const server = fileURLToPath(new URL("../dist/server.cjs", import.meta.url));
const fixture = (rel: string): { uri: string; text: string } => {
  const url = new URL(rel, import.meta.url);
  return { uri: url.toString(), text: readFileSync(url, "utf8") };
};

const TIMEOUT = 10_000;
const msg = (d: Diagnostic): string => (typeof d.message === "string" ? d.message : d.message.value);
function within<T>(p: Promise<T>, what: string, ms = TIMEOUT): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, rej) => (timer = setTimeout(() => rej(new Error(`timed out waiting for ${what}`)), ms))),
  ]);
}

describe("trace language server over LSP", () => {
  let proc: ChildProcess;
  let conn: ProtocolConnection;
  let stderr = "";
  const diagnostics = new Map<string, PublishDiagnosticsParams>();
  const waiters: { uri: string; version: number; resolve: (p: PublishDiagnosticsParams) => void }[] = [];
  let version = 0;

  /** Opens (or replaces) a document and resolves with the diagnostics published for that version. */
  async function open(uri: string, text: string): Promise<Diagnostic[]> {
    const v = ++version;
    const published = new Promise<PublishDiagnosticsParams>((resolve) => waiters.push({ uri, version: v, resolve }));
    if (diagnostics.has(uri)) {
      await conn.sendNotification(lsp.DidChangeTextDocumentNotification.type, { textDocument: { uri, version: v }, contentChanges: [{ text }] });
    } else {
      await conn.sendNotification(lsp.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: "ndbg-trace", version: v, text } });
    }
    return (await within(published, `diagnostics for ${uri}`)).diagnostics;
  }

  const symbols = (uri: string): Promise<DocumentSymbol[]> =>
    within(conn.sendRequest(lsp.DocumentSymbolRequest.type, { textDocument: { uri } }) as Promise<DocumentSymbol[]>, "symbols");
  const hoverAt = (uri: string, line: number, character: number): Promise<Hover | null> =>
    within(conn.sendRequest(lsp.HoverRequest.type, { textDocument: { uri }, position: { line, character } }), "hover");
  const definitionAt = async (uri: string, line: number, character: number): Promise<Location | null> => {
    const r = await within(conn.sendRequest(lsp.DefinitionRequest.type, { textDocument: { uri }, position: { line, character } }), "definition");
    return Array.isArray(r) ? ((r[0] as Location) ?? null) : (r as Location | null);
  };
  const lineOf = (text: string, needle: string): number => {
    const at = text.indexOf(needle);
    assert.ok(at >= 0, `"${needle}" in the text`);
    return text.slice(0, at).split("\n").length - 1;
  };

  before(async () => {
    assert.ok(existsSync(server), `${server} exists (run: node scripts/build.mjs)`);
    proc = spawn(process.execPath, [server, "--stdio"], { stdio: ["pipe", "pipe", "pipe"] });
    proc.stderr!.on("data", (d) => (stderr += d));
    conn = lsp.createProtocolConnection(new lsp.StreamMessageReader(proc.stdout!), new lsp.StreamMessageWriter(proc.stdin!));
    conn.onNotification(lsp.PublishDiagnosticsNotification.type, (p) => {
      diagnostics.set(p.uri, p);
      for (const w of waiters.filter((x) => x.uri === p.uri && (p.version === undefined || p.version >= x.version))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(p);
      }
    });
    conn.listen();
    const init = await within(conn.sendRequest(lsp.InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {}, workspaceFolders: null }), "initialize");
    assert.ok(init.capabilities.documentSymbolProvider);
    assert.ok(init.capabilities.hoverProvider);
    assert.ok(init.capabilities.definitionProvider);
    await conn.sendNotification(lsp.InitializedNotification.type, {});
  });

  after(async () => {
    if (conn) {
      await within(conn.sendRequest(lsp.ShutdownRequest.type), "shutdown").catch(() => undefined);
      await conn.sendNotification(lsp.ExitNotification.type).catch(() => undefined);
      conn.dispose();
    }
    if (proc && proc.exitCode === null) {
      const exited = new Promise((r) => proc.once("exit", r));
      await within(exited, "server exit", 5000).catch(() => proc.kill());
    }
  });

  test("well-formed traces have no diagnostics", async () => {
    for (const rel of ["fixtures/traces/demo.ndbg", "fixtures/traces/compare.ndbg", "golden/features.ndbg", "golden/minimal.ndbg"]) {
      const { uri, text } = fixture(rel);
      assert.deepEqual(await open(uri, text), [], rel);
    }
  });

  test("every malformed frame gets its own diagnostic, on its line", async () => {
    const { uri, text } = fixture("fixtures/traces/bad.ndbg");
    const diags = await open(uri, text);
    const got = diags.map((d) => [d.range.start.line, msg(d)]);
    assert.deepEqual(got, [
      [lineOf(text, "twelve 0 total"), 'bad frame header "twelve 0 total": expected "LINE DEPTH FUNC [FILE]"'],
      [lineOf(text, "<|bogus|>"), "unknown token <|bogus|>"],
      [lineOf(text, "13 0 total<|arg_sep|>.."), "locals written as a delta where the format requires them in full"],
      [lineOf(text, "<|arg_sep|>maxima\n"), 'bad local "maxima": expected NAME=REPR'],
      [lineOf(text, "<|breakpoint|>\n"), "breakpoint needs a line number"],
    ]);
    // Ranges point at the offending token, not at the whole file.
    const bogus = diags[1];
    const l = text.split("\n")[bogus.range.start.line];
    assert.equal(l.slice(bogus.range.start.character, bogus.range.start.character + 9), "<|bogus|>");
    assert.ok(diags.every((d) => d.severity === 1 && d.source === "ndbg"));
    // The frames between the errors are still read: the outline holds them.
    const outline = await symbols(uri);
    assert.ok(JSON.stringify(outline).includes("line 3") && JSON.stringify(outline).includes("exit normal"));
  });

  test("diagnostics follow edits", async () => {
    const { uri, text } = fixture("fixtures/traces/bad.ndbg");
    const fixed = text.replace("twelve 0 total", "12 0 total").replace("<|bogus|>", "");
    const diags = await open(uri, fixed);
    assert.equal(diags.length, 3);
    assert.ok(!diags.some((d) => /twelve|bogus/.test(msg(d))));
  });

  test("header errors: unknown version, bad metadata, no header", async () => {
    const { text } = fixture("golden/minimal.ndbg");
    const uri = "file:///tmp/header-errors.ndbg";
    let diags = await open(uri, text.replace("#ndbg 1", "#ndbg 3"));
    assert.equal(diags.length, 1);
    assert.equal(diags[0].range.start.line, 0);
    assert.match(msg(diags[0]), /version 3 is not supported/);
    diags = await open(uri, text.replace("#ndbg 1", '#ndbg 1 {"program": oops}'));
    assert.match(msg(diags[0]), /metadata is not valid JSON/);
    diags = await open(uri, text.replace("#ndbg 1", "#ndbg 2 python3.x"));
    assert.match(msg(diags[0]), /bad Python version "3.x"/);
    assert.deepEqual(await open(uri, text.replace("#ndbg 1", "#ndbg 2 python3.12")), []);
    diags = await open(uri, "x = 1\n");
    assert.equal(diags.length, 1);
    assert.match(msg(diags[0]), /#ndbg 2/);
  });

  test("the outline nests frames by call depth", async () => {
    const { uri, text } = fixture("fixtures/traces/demo.ndbg");
    await open(uri, text);
    const [traj, ...rest] = await symbols(uri);
    assert.equal(rest.length, 0);
    assert.equal(traj.name, "demo.py total([3, 1, 2]) record");
    const names = traj.children!.map((c) => c.name);
    assert.deepEqual(names, ["source", "total(values=[3, 1, 2])", "exit normal"]);
    const total = traj.children![1];
    assert.deepEqual(total.children!.map((c) => c.name), ["line 12", "running_max(values=[3, 1, 2])", "line 13", "line 14", "return 9"]);
    const inner = total.children![1];
    assert.equal(inner.children!.length, 15);
    assert.equal(inner.children!.at(-1)!.name, "return [3, 3, 3]");
    // Selecting an entry selects the frame's line number.
    const sel = inner.selectionRange;
    assert.equal(text.split("\n")[sel.start.line].slice(sel.start.character, sel.end.character), "1");
  });

  test("several trajectories in one file: one outline entry each", async () => {
    const { uri, text } = fixture("fixtures/traces/compare.ndbg");
    await open(uri, text);
    const s = await symbols(uri);
    assert.deepEqual(s.map((x) => x.name), ["demo.py total([3, 1, 2]) predict", "demo.py total([3, 1, 2]) record"]);
    assert.ok(s[1].range.start.line > s[0].range.end.line);
  });

  test("hover on a frame shows the locals that changed", async () => {
    const { uri, text } = fixture("fixtures/traces/demo.ndbg");
    await open(uri, text);
    const h = await hoverAt(uri, lineOf(text, "<|line_sep|>7 1 running_max<|arg_sep|>..<|arg_sep|>best=3"), 5);
    assert.ok(h && typeof h.contents === "object" && "value" in h.contents);
    const md = h.contents.value;
    assert.match(md, /\*\*line\*\* · line 7 · `running_max` · depth 1/);
    assert.match(md, /\| `best` \| `` None `` \| `` 3 `` \|/);
    assert.doesNotMatch(md, /`values`/, "unchanged locals are left out");
    // A return's hover shows its value; the first frame's locals are all new.
    const r = await hoverAt(uri, lineOf(text, "<|return_sep|>14 0 total"), 3);
    assert.match((r!.contents as { value: string }).value, /returns: `` 9 ``/);
    const first = await hoverAt(uri, lineOf(text, "<|call_sep|>11 0 total"), 3);
    assert.match((first!.contents as { value: string }).value, /\| `values` \| new \| `` \[3, 1, 2\] `` \|/);
    // Nothing to say about the source section.
    assert.equal(await hoverAt(uri, 3, 2), null);
  });

  test("go to source: a frame's line and a breakpoint's line lead into the source section", async () => {
    const { uri, text } = fixture("fixtures/traces/demo.ndbg");
    await open(uri, text);
    const lines = text.split("\n");
    const def = await definitionAt(uri, lineOf(text, "<|line_sep|>7 1 running_max"), 26);
    assert.ok(def);
    assert.equal(def.uri, uri);
    assert.equal(lines[def.range.start.line], "        out.append(best)");
    const g = fixture("golden/features.ndbg");
    await open(g.uri, g.text);
    const bp = await definitionAt(g.uri, lineOf(g.text, "<|breakpoint|>3"), 16);
    assert.equal(g.text.split("\n")[bp!.range.start.line], "    return x * 2");
    // A frame in another file leads to that file, relative to the trace.
    const other = await definitionAt(g.uri, lineOf(g.text, "lib/other module.py"), 20);
    assert.equal(other!.uri, new URL("lib/other%20module.py", g.uri).toString());
    assert.equal(other!.range.start.line, 2);
    // A line beyond the source has nowhere to go.
    const bad = "file:///tmp/beyond.ndbg";
    const t = fixture("golden/minimal.ndbg").text.replace("<|line_sep|>1 0 <module>", "<|line_sep|>99 0 <module>");
    await open(bad, t);
    assert.equal(await definitionAt(bad, lineOf(t, "99 0"), 14), null);
  });

  test("a trace of 100,000 frames: diagnostics, a summarized outline and a hover within seconds", async () => {
    const steps: Step[] = [{ frame: { event: "call", line: 1, depth: 0, func: "f", locals: { n: "0" } } }];
    for (let i = 1; i < 100_000; i++) steps.push({ action: { kind: "step_into" }, frame: { event: "line", line: 2 + (i % 2), depth: 0, func: "f", locals: { n: String(i) } } });
    const text = serialize({ version: FORMAT_VERSION, source: "def f(n):\n    n += 1\n    n -= 1\n", steps });
    const uri = "file:///tmp/huge.ndbg";
    const t0 = performance.now();
    assert.deepEqual(await open(uri, text), []);
    const outline = await symbols(uri);
    const frames = outline[0].children!;
    // The source, the call (holding the first frames) and the summary of the rest.
    const count = (xs: DocumentSymbol[]): number => xs.reduce((n, x) => n + 1 + count(x.children ?? []), 0);
    assert.ok(count(frames) <= OUTLINE_LIMIT + 2, `${count(frames)} outline entries`);
    assert.equal(frames.at(-1)!.name, `${100_000 - OUTLINE_LIMIT} more steps`);
    const h = await hoverAt(uri, lineOf(text, "<|line_sep|>3 0 f<|arg_sep|>..<|arg_sep|>n=99999"), 3);
    assert.match(JSON.stringify(h), /99998.*99999/);
    const ms = performance.now() - t0;
    assert.ok(ms < 8000, `${Math.round(ms)} ms`);
  });

  test("hover: locals named toString and __proto__ are locals like any other", async () => {
    const text = `#ndbg ${FORMAT_VERSION}\n<|src_sep|>\ndef f():\n    pass\n<|frame_sep|><|call_sep|>1 0 f<|arg_sep|>__proto__=1\n<|action_sep|><|step_into|>\n<|frame_sep|><|line_sep|>2 0 f<|arg_sep|>__proto__=2<|arg_sep|>toString=3\n`;
    const uri = "file:///tmp/proto.ndbg";
    assert.deepEqual(await open(uri, text), []);
    const h = JSON.stringify(await hoverAt(uri, lineOf(text, "2 0 f"), 3));
    assert.match(h, /`__proto__` \| `` 1 `` \| `` 2 ``/);
    assert.match(h, /`toString` \| new \| `` 3 ``/);
  });

  test("any prefix of a trace is answered without a crash", async () => {
    const { text } = fixture("golden/features.ndbg");
    const uri = "file:///tmp/prefix.ndbg";
    for (let n = 0; n <= text.length; n += 37) {
      await open(uri, text.slice(0, n));
      assert.ok(Array.isArray(await symbols(uri)));
    }
    assert.equal(proc.exitCode, null, `the server is still running (stderr: ${stderr})`);
    assert.equal(pathToFileURL(server).protocol, "file:");
  });
});
