// The trace-file language server (dist/server.cjs) over LSP on stdio: damaged and huge traces
// opened and edited with ranges in and out of the document, requests at any position, and broken
// framing (bad Content-Lengths, bodies that are no JSON-RPC). Every request must be answered.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { frame } from "../../support/raw.js";
import { ROOT } from "../../support/dist.js";
import type { Gen } from "../gen.js";
import { Target, type Tally } from "../harness.js";
import { TRACE } from "../dap.js";

const SERVER = join(ROOT, "dist", "server.cjs");
const GOOD = readFileSync(TRACE, "utf8");
const URI = "file:///fuzz/trace.ndbg";

let ids = 0;
/** A JSON-RPC request that must be answered within `ms` (a result or an error). */
function call(t: Target, method: string, params: unknown, ms = 15_000, bytes?: (body: string) => Buffer) {
  const id = ++ids;
  const body = JSON.stringify({ jsonrpc: "2.0", id, method, params });
  return t.expect(`${method} request ${id}`, ms, () => t.write(bytes ? bytes(body) : frame(body)), (m) => m.id === id && (m.result !== undefined || m.error !== undefined));
}
const notify = (t: Target, method: string, params: unknown): void => t.write(frame(JSON.stringify({ jsonrpc: "2.0", method, params })));

export async function language(g: Gen, label: string, tally: Tally): Promise<void> {
  const t = new Target(label, tally, SERVER, ["--stdio"]);
  await call(t, "initialize", { processId: null, rootUri: null, capabilities: {} });
  notify(t, "initialized", {});
  const text = g.chance(0.3) ? GOOD.repeat(g.int(1, 400)) : g.damage(GOOD, g.int(0, 6));
  let version = 1;
  notify(t, "textDocument/didOpen", { textDocument: { uri: URI, languageId: "ndbg-trace", version, text } });
  const pos = () => ({ line: g.pick([0, 1, 5, 20, -1, 2 ** 31, g.int(0, 200)]), character: g.pick([0, 3, -5, 2 ** 31, g.int(0, 80)]) });
  for (let i = g.int(3, 12); i > 0; i--) {
    const what = g.int(0, 5);
    if (what === 0) notify(t, "textDocument/didChange", { textDocument: { uri: URI, version: ++version }, contentChanges: [{ range: { start: pos(), end: pos() }, text: g.damage(GOOD.slice(0, g.int(0, 400)), 1) }] });
    else if (what === 1) {
      // Broken framing, then a request that must be answered.
      const junk = JSON.stringify({ jsonrpc: "2.0", id: 0, method: "textDocument/hover" });
      t.write(
        g.pick([
          Buffer.from(`Content-Length: ${g.pick(["-5", "abc", "", "99999999999999999999", String(junk.length + g.int(-junk.length, 300))])}\r\n\r\n${junk}`),
          frame(g.damage(junk)),
          frame(g.pick(["null", "[]", "{}", "42", '{"jsonrpc":"2.0","id":{},"method":5}'])),
          Buffer.from("no header at all\r\n\r\n"),
        ]),
      );
      await call(t, "textDocument/documentSymbol", { textDocument: { uri: URI } });
    } else {
      const method = g.pick(["textDocument/hover", "textDocument/definition", "textDocument/documentSymbol", "textDocument/noSuch"]);
      const params = g.chance(0.8) ? { textDocument: { uri: g.chance(0.9) ? URI : "file:///other.ndbg" }, position: pos() } : g.value();
      await call(t, method, params);
    }
  }
  await call(t, "shutdown", null);
  t.ending();
  notify(t, "exit", null);
  await t.close();
}
