// The language server for trace files (.ndbg, language id "ndbg-trace"): diagnostics for
// malformed frames, an outline of frames by call depth, hover with the locals that changed, and
// go-to-source from a frame to its line in the source section. Speaks LSP over stdio or node IPC
// (`--stdio` / `--node-ipc`, as vscode-languageclient starts it); knows nothing of VS Code.
import { createConnection, ErrorCodes, ProposedFeatures, StreamMessageWriter, TextDocuments, TextDocumentSyncKind } from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { analyze, reanalyze } from "./analyze.js";
import type { TraceAnalysis } from "./analyze.js";
import { definition, diagnostics, documentSymbols, hover } from "./features.js";
import { TolerantReader } from "./reader.js";

/**
 * On stdio, the server reads the framing itself (reader.ts): a broken frame is logged, a request
 * whose id can be read is answered with an error, and the next message is read. Node IPC (what
 * the extension uses) carries whole messages and needs none of it.
 */
function stdioConnection() {
  const writer = new StreamMessageWriter(process.stdout);
  const reader = new TolerantReader(process.stdin, (why, id) => {
    process.stderr.write(`ndbg trace language server: invalid message${id !== undefined ? ` (request ${JSON.stringify(id)}, answered)` : ""}: ${why}\n`);
    if (id !== undefined) void writer.write({ jsonrpc: "2.0", id, error: { code: ErrorCodes.ParseError, message: `invalid message: ${why}` } } as never);
  });
  return createConnection(ProposedFeatures.all, reader, writer);
}

const connection = process.argv.includes("--stdio") ? stdioConnection() : createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);

// One analysis per document version: every request after an edit reads the same one. A new
// version is read again from its edit on (reanalyze), the rest taken from the previous analysis.
const cache = new Map<string, { version: number; text: string; analysis: TraceAnalysis }>();
function analysisOf(doc: TextDocument): TraceAnalysis {
  const hit = cache.get(doc.uri);
  if (hit && hit.version === doc.version) return hit.analysis;
  const text = doc.getText();
  const analysis = hit ? reanalyze(hit.text, hit.analysis, text) : analyze(text);
  cache.set(doc.uri, { version: doc.version, text, analysis });
  return analysis;
}

connection.onInitialize(() => ({
  capabilities: {
    textDocumentSync: TextDocumentSyncKind.Incremental,
    documentSymbolProvider: { label: "Frames" },
    hoverProvider: true,
    definitionProvider: true,
  },
  serverInfo: { name: "ndbg trace language server", version: "1" },
}));

documents.onDidChangeContent(({ document }) => {
  connection.sendDiagnostics({ uri: document.uri, version: document.version, diagnostics: diagnostics(document, analysisOf(document)) });
});
documents.onDidClose(({ document }) => {
  cache.delete(document.uri);
  connection.sendDiagnostics({ uri: document.uri, diagnostics: [] });
});

connection.onDocumentSymbol(({ textDocument }) => {
  const doc = documents.get(textDocument.uri);
  return doc ? documentSymbols(doc, analysisOf(doc)) : null;
});
connection.onHover(({ textDocument, position }) => {
  const doc = documents.get(textDocument.uri);
  return doc ? hover(doc, analysisOf(doc), doc.offsetAt(position)) : null;
});
connection.onDefinition(({ textDocument, position }) => {
  const doc = documents.get(textDocument.uri);
  return doc ? definition(doc, analysisOf(doc), doc.offsetAt(position)) : null;
});

documents.listen(connection);
connection.listen();
