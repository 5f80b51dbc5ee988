// The import rules of docs/ARCHITECTURE.md, checked on the code: the layer table is read from the
// document itself (so the document and the code cannot drift apart without this failing), every
// import of every .ts file under adapter/ and src/ is read from TypeScript's own syntax tree
// (static, dynamic and type imports, re-exports), and the rules the document states besides the
// table are written out here, so that no edit of the table loosens them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { ROOT } from "./support/dist.js";

// ---- the document's table ----

interface Layer {
  name: string;
  /** Paths relative to ROOT; one ending in "/*" is every file under that folder. */
  files: string[];
  /** Layers this one may import. */
  layers: string[];
  /** Single files this one may import (outside any layer it may import). */
  single: string[];
}

const DOC = join(ROOT, "docs", "ARCHITECTURE.md");

/** The rows of the table under "## Layers": layer | files | what | may import. */
function readLayers(text: string): Layer[] {
  const section = text.split(/^## /m).find((s) => s.startsWith("Layers\n"));
  assert.ok(section, `${DOC} has no "## Layers" section`);
  const rows = section.split("\n").filter((l) => l.startsWith("|")).slice(2); // past the header and its rule
  assert.ok(rows.length > 0, "the layer table is empty");
  const ticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  return rows.map((row) => {
    const cells = row.split("|").slice(1, -1).map((c) => c.trim());
    assert.equal(cells.length, 4, `a layer row has 4 cells: ${row}`);
    const [name, files, , may] = cells;
    const layers = may === "nothing" ? [] : may.replace(/`[^`]+`/g, "").split(",").map((s) => s.trim()).filter(Boolean);
    return { name, files: ticked(files), layers, single: ticked(may) };
  });
}

const LAYERS = readLayers(readFileSync(DOC, "utf8"));
const byName = new Map(LAYERS.map((l) => [l.name, l]));
const holds = (pattern: string, file: string): boolean => (pattern.endsWith("/*") ? file.startsWith(pattern.slice(0, -1)) : file === pattern);
const layersOf = (file: string): Layer[] => LAYERS.filter((l) => l.files.some((p) => holds(p, file)));
const layerOf = (file: string): Layer => layersOf(file)[0];
const inLayer = (name: string) => {
  const l = byName.get(name);
  assert.ok(l, `the table has a layer named "${name}"`);
  return (file: string): boolean => layerOf(file) === l;
};

// ---- the code's imports ----

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return tsFiles(path);
    return e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [path] : [];
  });
}

interface Imports {
  /** Files of this project, relative to ROOT. */
  files: string[];
  /** Those imported for more than types: what the code loads when it runs (and a bundle carries). */
  valueFiles: string[];
  /** Packages, by name (`node-llama-cpp`, `@vscode/debugadapter`); Node's own modules left out. */
  packages: string[];
}

const FILES = [...tsFiles("adapter"), ...tsFiles("src")];

/** A relative specifier as the file it names: `./x.js` is `x.ts`, as TypeScript's NodeNext resolution reads it. */
function resolveSpecifier(from: string, spec: string): string {
  const base = relative(ROOT, join(ROOT, dirname(from), spec)).split("\\").join("/");
  for (const c of [base.replace(/\.js$/, ".ts"), `${base}.ts`, `${base}/index.ts`]) if (c.endsWith(".ts") && existsSync(join(ROOT, c))) return c;
  assert.fail(`${from} imports "${spec}", which is no .ts file of this project`);
}

/** Every module specifier in a file (import and export declarations, import(), import types, require), and whether it is for types alone. */
function specifiers(file: string): { spec: string; typeOnly: boolean }[] {
  const sf = ts.createSourceFile(file, readFileSync(join(ROOT, file), "utf8"), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: { spec: string; typeOnly: boolean }[] = [];
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      let typeOnly: boolean;
      if (ts.isImportDeclaration(n)) {
        const c = n.importClause;
        const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings : undefined;
        typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)));
      } else typeOnly = n.isTypeOnly;
      out.push({ spec: n.moduleSpecifier.text, typeOnly });
    } else if (ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(n.expression) && n.expression.text === "require")) && n.arguments[0] && ts.isStringLiteral(n.arguments[0])) {
      out.push({ spec: n.arguments[0].text, typeOnly: false });
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      out.push({ spec: n.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function readImports(file: string): Imports {
  const files = new Set<string>();
  const valueFiles = new Set<string>();
  const packages = new Set<string>();
  for (const { spec, typeOnly } of specifiers(file)) {
    if (spec.startsWith(".") && spec.endsWith(".json")) {
      // Data a module reads (format.json): it must sit in the module's own folder, so it belongs to its layer.
      const data = relative(ROOT, join(ROOT, dirname(file), spec)).split("\\").join("/");
      assert.ok(existsSync(join(ROOT, data)) && dirname(data) === dirname(file), `${file} imports data from outside its folder: ${spec}`);
    } else if (spec.startsWith(".")) {
      const dep = resolveSpecifier(file, spec);
      files.add(dep);
      if (!typeOnly) valueFiles.add(dep);
    } else if (!spec.startsWith("node:")) packages.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]);
  }
  return { files: [...files], valueFiles: [...valueFiles], packages: [...packages] };
}

const IMPORTS = new Map(FILES.map((f) => [f, readImports(f)]));

/**
 * Everything `file` imports, directly or through other files, each with the chain that leads to
 * it; with `running`, only what it loads when it runs (type imports are erased).
 */
function reach(file: string, running = false): Map<string, string[]> {
  const chains = new Map<string, string[]>([[file, [file]]]);
  const queue = [file];
  for (let f = queue.shift(); f !== undefined; f = queue.shift()) {
    const imports = IMPORTS.get(f);
    if (!imports) continue;
    for (const dep of [...(running ? imports.valueFiles : imports.files), ...imports.packages]) {
      if (chains.has(dep)) continue;
      chains.set(dep, [...chains.get(f)!, dep]);
      if (IMPORTS.has(dep)) queue.push(dep);
    }
  }
  chains.delete(file);
  return chains;
}

/** Failures of "files in `group` never reach what `forbidden` says", one line each with its chain. */
function reaching(group: (f: string) => boolean, forbidden: (dep: string) => boolean, running = false): string[] {
  const bad: string[] = [];
  for (const f of FILES.filter(group)) for (const [dep, chain] of reach(f, running)) if (forbidden(dep)) bad.push(chain.join(" -> "));
  return bad;
}

// ---- the table ----

test("the layer table names known layers, and every .ts file under adapter/ and src/ is in exactly one layer", () => {
  for (const l of LAYERS) for (const n of l.layers) assert.ok(byName.has(n), `layer "${l.name}" may import "${n}", which is no layer of the table`);
  for (const l of LAYERS) for (const f of l.single) assert.ok(FILES.includes(f), `layer "${l.name}" may import ${f}, which does not exist`);
  const strays = FILES.filter((f) => layersOf(f).length !== 1).map((f) => `${f} (in ${layersOf(f).map((l) => l.name).join(", ") || "no layer"})`);
  assert.deepEqual(strays, [], "each file in exactly one layer of docs/ARCHITECTURE.md");
});

test("every import stays in its layer or goes to one the table says it may import", () => {
  const bad: string[] = [];
  for (const f of FILES) {
    const from = layerOf(f);
    for (const dep of IMPORTS.get(f)!.files) {
      const to = layerOf(dep);
      if (to === from || from.layers.includes(to.name) || from.single.includes(dep)) continue;
      bad.push(`${f} (${from.name}) imports ${dep} (${to.name})`);
    }
  }
  assert.deepEqual(bad, [], "imports the layer table does not allow");
});

// ---- the rules besides the table ----

const DAP = inLayer("DAP");
const isPredictor = inLayer("predictors");
const isModel = inLayer("model");

test("the engine imports no DAP module, no predictor and nothing of model/, not even through another module", () => {
  const engine = (f: string): boolean => f === "adapter/engine/engine.ts";
  assert.ok(FILES.some(engine), "adapter/engine/engine.ts exists");
  const bad = reaching(engine, (d) => DAP(d) || isPredictor(d) || isModel(d) || d === "@vscode/debugadapter" || d === "@vscode/debugprotocol");
  assert.deepEqual(bad, []);
});

test("predictors import no DAP module and no @vscode/debugadapter, not even through another module, and the engine only through predictor.ts", () => {
  assert.ok(FILES.some(isPredictor), "there are predictors");
  assert.deepEqual(reaching(isPredictor, (d) => DAP(d) || d === "@vscode/debugadapter"), []);
  const engine = FILES.filter(isPredictor).filter((f) => IMPORTS.get(f)!.files.includes("adapter/engine/engine.ts"));
  assert.deepEqual(engine, [], "predictors that import engine.ts");
});

/** What only the model needs: the rules that hold it to reachable states, its prompt dialects, its calibration. */
const MODEL_ONLY = (f: string): boolean =>
  f.startsWith("adapter/rules/") || ["adapter/model/dialect.ts", "adapter/model/native.ts", "adapter/model/instruct.ts", "adapter/model/calibration.ts"].includes(f);

test("the model's own room: what only the model needs is imported by the model's files, the model-alone predictor and the tools that evaluate it, and never loaded by a mode that runs the program", () => {
  const room = (f: string): boolean => isModel(f) || f.startsWith("adapter/rules/") || f === "adapter/predictors/model.ts";
  const tools = (f: string): boolean => f.startsWith("adapter/tools/") || f.startsWith("adapter/cli/");
  assert.ok(FILES.some(MODEL_ONLY), "the model's rules and dialects exist");
  const direct = FILES.filter((f) => !room(f) && !tools(f)).flatMap((f) => IMPORTS.get(f)!.files.filter(MODEL_ONLY).map((d) => `${f} imports ${d}`));
  assert.deepEqual(direct, [], "files outside the model's room that import what only the model needs");
  // Record, replay, the long run and the engine run the program or walk its states: they load none of it.
  const runs = (f: string): boolean => ["adapter/predictors/recorded.ts", "adapter/predictors/longRun.ts", "adapter/engine/engine.ts"].includes(f) || f.startsWith("adapter/real/");
  assert.ok(FILES.filter(runs).length >= 4, "the files that run the program exist");
  assert.deepEqual(reaching(runs, MODEL_ONLY, true), [], "a mode that runs the program loading what only the model needs");
});

test("DAP and MCP never import each other, and the session core imports neither, not even through another module: each protocol maps the one session", () => {
  const isMcp = inLayer("MCP");
  const isSession = inLayer("session");
  assert.ok(FILES.some(isSession) && FILES.some(isMcp) && FILES.some(DAP), "the three layers have files");
  assert.deepEqual(reaching(DAP, isMcp), [], "the DAP layer reaching MCP");
  assert.deepEqual(reaching(isMcp, DAP), [], "the MCP layer reaching DAP");
  // (compare mode's real side speaks DAP as a client, to debugpy: @vscode/debugprotocol's types, not the adapter's protocol)
  assert.deepEqual(reaching(isSession, (d) => DAP(d) || isMcp(d) || d === "@vscode/debugadapter"), [], "the session core reaching a protocol");
});

test("src/ imports from adapter/ only the files ARCHITECTURE.md names, and the extension loads nothing else of the adapter", () => {
  const allowed = byName.get("extension host")?.single ?? [];
  const extension = (f: string): boolean => f.startsWith("src/");
  const direct = FILES.filter(extension).flatMap((f) => IMPORTS.get(f)!.files.filter((d) => d.startsWith("adapter/") && !allowed.includes(d)).map((d) => `${f} imports ${d}`));
  assert.deepEqual(direct, [], "imports of the adapter that the extension host's row does not name");
  // What the extension loads when it runs (and its bundle carries): type imports are erased.
  assert.deepEqual(reaching(extension, (d) => d.startsWith("adapter/") && !allowed.includes(d), true), [], "adapter code the extension loads");
});

test("vscode only in the extension host, @vscode/debugadapter only in the DAP layer, node-llama-cpp only in model/", () => {
  const owners: [string, (f: string) => boolean][] = [["vscode", inLayer("extension host")], ["@vscode/debugadapter", DAP], ["node-llama-cpp", isModel]];
  const bad: string[] = [];
  for (const f of FILES) for (const [pkg, owns] of owners) if (IMPORTS.get(f)!.packages.includes(pkg) && !owns(f)) bad.push(`${f} imports ${pkg}`);
  assert.deepEqual(bad, []);
});

test("no import cycles, type imports included: each contract lives below what uses it", () => {
  const cycles = FILES.flatMap((f) => IMPORTS.get(f)!.files.filter((dep) => reach(dep).has(f)).map((dep) => `${f} -> ${reach(dep).get(f)!.join(" -> ")}`));
  assert.deepEqual(cycles, []);
});

test("the DAP session asks nothing of a predictor's class: what it needs is in the contract", () => {
  const text = readFileSync(join(ROOT, "adapter", "dap", "session.ts"), "utf8");
  assert.deepEqual(text.match(/instanceof\s+\w*Predictor\b/g) ?? [], []);
});
