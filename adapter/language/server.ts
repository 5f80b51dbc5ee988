// The language server for trace files (.ndbg, language id "ndbg-trace"): diagnostics for
// malformed frames, an outline of frames by call depth, hover with the locals that changed, and
// go-to-source from a frame to its line in the source section. Speaks LSP over stdio or node IPC
// (`--stdio` / `--node-ipc`, as vscode-languageclient starts it); knows nothing of VS Code.
import { createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind } from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { analyze, reanalyze } from "./analyze.js";
import type { TraceAnalysis } from "./analyze.js";
import { definition, diagnostics, documentSymbols, hover } from "./features.js";

const connection = createConnection(ProposedFeatures.all);
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
