// Bundles the extension host (CommonJS, for VS Code), the debug adapter, the CLI, the inference
// host and the trace language server. node-llama-cpp (native, ESM) and web-tree-sitter's wasm stay outside the bundles.
import { build } from "esbuild";
import { cpSync, mkdirSync, existsSync, chmodSync } from "node:fs";

const external = ["vscode", "node-llama-cpp", "web-tree-sitter"];
const common = { bundle: true, platform: "node", target: "node20", sourcemap: true, external, logLevel: "warning" };
// CommonJS dependencies bundled into ESM still call require() for Node's built-ins.
const esmBanner = { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' };

const entries = [
  { entryPoints: ["src/extension.ts"], outfile: "dist/extension.cjs", format: "cjs" },
  { entryPoints: ["adapter/dap/main.ts"], outfile: "dist/adapter.js", format: "esm", banner: esmBanner },
  { entryPoints: ["adapter/cli/main.ts"], outfile: "dist/ndbg.js", format: "esm", banner: { js: "#!/usr/bin/env node\n" + esmBanner.js } },
  // The inference host, a child process of the adapter and the CLI (adapter/model/remote.ts finds it beside them).
  { entryPoints: ["adapter/model/host.ts"], outfile: "dist/host.js", format: "esm", banner: esmBanner },
  { entryPoints: ["adapter/language/server.ts"], outfile: "dist/server.cjs", format: "cjs" },
  // The sealed executor's child process (adapter/real/sealed.ts starts it; Pyodide stays outside).
  { entryPoints: ["adapter/real/sealedWorker.ts"], outfile: "dist/sealed.mjs", format: "esm" },
].filter((e) => existsSync(e.entryPoints[0]));

await Promise.all(entries.map((e) => build({ ...common, ...e })));
mkdirSync("dist/python", { recursive: true });
cpSync("adapter/python", "dist/python", { recursive: true, filter: (p) => !p.includes("__pycache__") });
if (existsSync("dist/ndbg.js")) chmodSync("dist/ndbg.js", 0o755);
// The tolerant Python parser's grammar, found beside the bundles (adapter/pyread/parser.ts).
cpSync("node_modules/tree-sitter-python/tree-sitter-python.wasm", "dist/tree-sitter-python.wasm");
