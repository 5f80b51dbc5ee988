// tree-sitter's Python grammar, found and loaded once per process: from NDBG_PYTHON_GRAMMAR,
// beside the bundles (dist/), else in node_modules. Loading the wasm is asynchronous, so it is
// done once up front (initPython) and the synchronous reader (parsePythonSync) takes the parser
// already loaded.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Language, Parser } from "web-tree-sitter";
import { PySourceError } from "./source.js";

/** Where tree-sitter-python's wasm may be: beside the bundle (dist/), else in node_modules. */
export function grammarCandidates(): string[] {
  const out: string[] = [];
  const env = process.env.NDBG_PYTHON_GRAMMAR;
  if (env) out.push(env);
  let here: string | undefined;
  try {
    here = dirname(fileURLToPath(import.meta.url));
  } catch {
    here = typeof __dirname === "string" ? __dirname : undefined;
  }
  if (here) out.push(join(here, "tree-sitter-python.wasm"), join(here, "..", "..", "dist", "tree-sitter-python.wasm"));
  try {
    const req = createRequire(here ? join(here, "x.js") : join(process.cwd(), "x.js"));
    out.push(join(dirname(req.resolve("tree-sitter-python/package.json")), "tree-sitter-python.wasm"));
  } catch {
    // not installed beside us: the bundled copy must do
  }
  return out;
}

declare const __dirname: string | undefined;

let parserReady: Promise<Parser> | undefined;

async function loadParser(): Promise<Parser> {
  const wasm = grammarCandidates().find((p) => existsSync(p));
  if (!wasm) throw new PySourceError(`the Python grammar (tree-sitter-python.wasm) was not found; looked in: ${grammarCandidates().join(", ")}`);
  await Parser.init();
  const parser = new Parser();
  parser.setLanguage(await Language.load(wasm));
  return parser;
}

let parserLoaded: Parser | undefined;

/** tree-sitter's parser of Python, loaded once. */
export function getParser(): Promise<Parser> {
  parserReady ??= loadParser().then(
    (p) => (parserLoaded = p),
    (e) => {
      parserReady = undefined;
      throw e;
    },
  );
  return parserReady;
}

/** The parser, once getParser has loaded it (parsePythonSync needs it there already). */
export function loadedParser(): Parser | undefined {
  return parserLoaded;
}

/** Loads the parser (once); afterwards parsePythonSync can be used. */
export async function initPython(): Promise<void> {
  await getParser();
}
