// Trace files (.ndbg) in the editor: language id, highlighting from the TextMate grammar, and the
// language server's outline, hover, go-to-source and diagnostics, all through VS Code's own APIs.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { hasDriver, probe, screenshot, suite, test, until } from "../harness.js";
import { EXTENSION_ID } from "./extension.js";

const ws = (): vscode.Uri => vscode.workspace.workspaceFolders![0].uri;
const file = (name: string): vscode.Uri => vscode.Uri.joinPath(ws(), name);

async function symbolsOf(uri: vscode.Uri): Promise<vscode.DocumentSymbol[]> {
  // The language server starts with the first trace: poll until it answers with an outline.
  return until("document symbols", async () => {
    const s = await vscode.commands.executeCommand<vscode.DocumentSymbol[] | undefined>("vscode.executeDocumentSymbolProvider", uri);
    return s && s.length ? s : undefined;
  }, 30_000);
}

const lineOf = (doc: vscode.TextDocument, needle: string): number => {
  const at = doc.getText().indexOf(needle);
  assert.ok(at >= 0, `"${needle}" in ${doc.uri.path}`);
  return doc.positionAt(at).line;
};

suite("trace files", () => {
  test("a .ndbg file opens as a Neural Python trace", async () => {
    const doc = await vscode.workspace.openTextDocument(file("demo.ndbg"));
    await vscode.window.showTextDocument(doc);
    assert.equal(doc.languageId, "ndbg-trace");
  });

  test("the outline nests frames by call depth", async () => {
    const symbols = await symbolsOf(file("demo.ndbg"));
    assert.equal(symbols.length, 1, "one trajectory");
    assert.match(symbols[0].name, /demo\.py total\(\[3, 1, 2\]\)/);
    const children = symbols[0].children;
    assert.equal(children[0].name, "source");
    const total = children.find((c) => c.name.startsWith("total("));
    assert.ok(total, "a call entry for total");
    const inner = total.children.find((c) => c.name.startsWith("running_max("));
    assert.ok(inner, "running_max nested inside total");
    assert.ok(inner.children.some((c) => c.name === "return [3, 3, 3]"), "running_max's return inside its call");
    assert.ok(children.some((c) => c.name === "exit normal"));
    await vscode.commands.executeCommand("outline.focus");
    await vscode.commands.executeCommand("outline.expand").then(undefined, () => undefined);
    await screenshot("trace-outline");
  });

  test("highlighting: the grammar gives tokens their scopes", async () => {
    const contributes = vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON?.contributes as { grammars?: { scopeName?: string }[] } | undefined;
    assert.ok(contributes?.grammars?.some((g) => g.scopeName === "source.ndbg"), "package.json contributes the source.ndbg grammar");
    const doc = await vscode.workspace.openTextDocument(file("demo.ndbg"));
    const editor = await vscode.window.showTextDocument(doc);
    if (!hasDriver) {
      // Desktop VS Code (test-electron) has a command that returns the scopes of every token.
      const tokens = await vscode.commands.executeCommand<{ c: string; t: string }[]>("_workbench.captureSyntaxTokens", doc.uri);
      const scopeOf = (text: string): string => tokens.find((x) => x.c === text)?.t ?? "";
      assert.match(scopeOf("#ndbg"), /keyword\.other\.header\.ndbg/);
      assert.match(scopeOf("<|step_into|>"), /keyword\.control\.action\.step_into\.ndbg/);
      assert.match(scopeOf("def"), /storage\.type\.function\.python/);
      return;
    }
    // VS Code's own token inspector names the scopes at the cursor.
    const scopesAt = async (needle: string, delta = 1): Promise<string> => {
      const pos = doc.positionAt(doc.getText().indexOf(needle) + delta);
      editor.selection = new vscode.Selection(pos, pos);
      editor.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenter);
      await vscode.commands.executeCommand("editor.action.inspectTMScopes");
      const widget = await until("the token inspector", async () => {
        const w = await probe(".token-inspect-widget");
        return w.length && w[0].text.includes("textmate scopes") ? w[0].text : undefined;
      }, 10_000);
      await vscode.commands.executeCommand("editor.action.inspectTMScopes"); // toggles it off
      return widget;
    };
    assert.match(await scopesAt("#ndbg"), /keyword\.other\.header\.ndbg/);
    assert.match(await scopesAt("<|step_into|>"), /keyword\.control\.action\.step_into\.ndbg/);
    assert.match(await scopesAt("<|call_sep|>11"), /keyword\.other\.event\.call\.ndbg/);
    assert.match(await scopesAt("running_max<|arg_sep|>values", 2), /entity\.name\.function\.ndbg/);
    // The source section is Python, highlighted by VS Code's Python grammar.
    const py = await scopesAt("def running_max");
    assert.match(py, /meta\.embedded\.block\.python/);
    assert.match(py, /storage\.type\.function\.python/);
    // And the colours differ: the theme paints actions unlike plain text.
    const spans = await probe(".monaco-editor .view-lines .view-line span span");
    const colorOf = (text: string): string | undefined => spans.find((s) => s.text === text)?.color;
    assert.ok(colorOf("<|step_into|>"), "an action token is rendered on its own");
    assert.notEqual(colorOf("<|step_into|>"), colorOf(" "), "actions are coloured");
    const pos = doc.positionAt(doc.getText().indexOf("<|step_into|>") + 2);
    editor.selection = new vscode.Selection(pos, pos);
    await vscode.commands.executeCommand("editor.action.inspectTMScopes");
    await screenshot("trace-highlighting");
    await vscode.commands.executeCommand("editor.action.inspectTMScopes");
  });

  test("hover on a frame shows the locals that changed", async () => {
    const doc = await vscode.workspace.openTextDocument(file("demo.ndbg"));
    const line = lineOf(doc, "<|line_sep|>7 1 running_max<|arg_sep|>..<|arg_sep|>best=3");
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>("vscode.executeHoverProvider", doc.uri, new vscode.Position(line, 30));
    const text = hovers.flatMap((h) => h.contents.map((c) => (typeof c === "string" ? c : c.value))).join("\n");
    assert.match(text, /best/);
    assert.match(text, /None/);
    assert.match(text, /`` 3 ``/);
    const editor = await vscode.window.showTextDocument(doc);
    editor.selection = new vscode.Selection(line, 30, line, 30);
    editor.revealRange(new vscode.Range(line, 0, line, 0), vscode.TextEditorRevealType.InCenter);
    await vscode.commands.executeCommand("editor.action.showHover");
    await screenshot("trace-hover");
  });

  test("go to source: a frame's line number leads to the source section", async () => {
    const doc = await vscode.workspace.openTextDocument(file("demo.ndbg"));
    const line = lineOf(doc, "<|line_sep|>7 1 running_max");
    const defs = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>("vscode.executeDefinitionProvider", doc.uri, new vscode.Position(line, 26));
    assert.equal(defs.length, 1);
    const d = defs[0];
    const range = "targetRange" in d ? d.targetRange : d.range;
    assert.equal(doc.lineAt(range.start.line).text, "        out.append(best)");
  });

  test("malformed frames get one diagnostic each", async () => {
    const doc = await vscode.workspace.openTextDocument(file("bad.ndbg"));
    await vscode.window.showTextDocument(doc);
    const diags = await until("diagnostics", () => {
      const d = vscode.languages.getDiagnostics(doc.uri);
      return d.length >= 5 ? d : undefined;
    }, 30_000);
    const messages = diags.map((d) => d.message).join("\n");
    assert.match(messages, /bad frame header "twelve 0 total"/);
    assert.match(messages, /unknown token <\|bogus\|>/);
    assert.match(messages, /breakpoint needs a line number/);
    assert.ok(diags.every((d) => d.severity === vscode.DiagnosticSeverity.Error));
    await vscode.commands.executeCommand("workbench.actions.view.problems");
    await screenshot("trace-diagnostics");
    await vscode.commands.executeCommand("workbench.action.closePanel");
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  });
});
