#!/usr/bin/env node
// Builds the .vsix for one platform (default: this machine's): the bundles in dist/, the trace
// grammar, the bundled model (models/*.gguf, with its calibration *.calibration.json, which sets the
// confidence shown) and, of node_modules, only what the bundles load at
// run time (node-llama-cpp with its dependencies and the ONE prebuilt binary package for the
// target, web-tree-sitter, tree-sitter-python's wasm, Pyodide). Staged in out/vsix/ so nothing else leaks in.
//
//   node scripts/package.mjs [--target linux-x64] [--out FILE.vsix]
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const target = arg("--target") ?? `${process.platform === "win32" ? "win32" : process.platform}-${process.arch}`;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const out = resolve(arg("--out") ?? join(root, `${pkg.name}-${pkg.version}-${target}.vsix`));
const stage = join(root, "out", "vsix");
const t0 = Date.now();

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status ?? r.signal})`);
}

/** The directory of an installed package as Node would find it from `from`. */
function findPackage(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === dirname(dir)) return undefined;
  }
}

// node-llama-cpp's prebuilt binaries are optional dependencies, one package per platform and
// GPU flavour: keep the target's plain one (CPU; Metal on macOS) and no other.
const binaryPackage = `@node-llama-cpp/${target.replace(/^win32/, "win")}`;
const isOtherBinary = (name) => name.startsWith("@node-llama-cpp/") && name !== binaryPackage;

/** Every package directory that `names` need at run time (dependencies and present optional ones). */
function closure(names) {
  const seen = new Map();
  const visit = (name, from, optional) => {
    if (isOtherBinary(name)) return;
    const dir = findPackage(name, from);
    if (!dir) {
      if (!optional) throw new Error(`${name} is not installed (needed from ${from})`);
      return;
    }
    if (seen.has(dir)) return;
    seen.set(dir, name);
    const p = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    for (const d of Object.keys(p.dependencies ?? {})) visit(d, dir, false);
    for (const d of Object.keys(p.optionalDependencies ?? {})) visit(d, dir, true);
  };
  for (const n of names) visit(n, root, false);
  return seen;
}

function size(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, f) => n + size(join(path, f)), 0);
}
const mb = (n) => `${(n / 1024 / 1024).toFixed(1)} MB`;

run(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root });
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });

// The manifest as published; its dependencies are the packages the bundles load, so that
// vsce's dependency listing (npm list) picks exactly the staged node_modules.
const RUNTIME = ["node-llama-cpp", "web-tree-sitter", "tree-sitter-python", "pyodide"];
const manifest = { ...pkg, dependencies: Object.fromEntries(RUNTIME.map((n) => [n, pkg.dependencies[n]])) };
delete manifest.devDependencies;
delete manifest.scripts;
writeFileSync(join(stage, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
for (const f of ["README.md", "LICENSE", "CHANGELOG.md", "language-configuration.json", ".vscodeignore", "docs/screenshot.png"]) {
  if (existsSync(join(root, f))) cpSync(join(root, f), join(stage, f));
}
for (const d of ["dist", "syntaxes", "models"]) {
  if (existsSync(join(root, d))) cpSync(join(root, d), join(stage, d), { recursive: true, filter: (p) => !p.endsWith(".map") });
}
if (!existsSync(join(root, "models"))) console.warn("package: no models/ folder: the .vsix has no bundled model");
else
  for (const g of readdirSync(join(root, "models")).filter((f) => f.endsWith(".gguf")))
    if (!existsSync(join(root, "models", g.replace(/\.gguf$/, ".calibration.json")))) console.warn(`package: models/${g} has no calibration beside it: its confidence will be the raw token probability (ndbg calibrate)`);

// pyodide: the sealed CPython of predict mode (dist/sealed.mjs loads it from node_modules).
const modules = closure(["node-llama-cpp", "web-tree-sitter", "pyodide"]);
if (![...modules.values()].includes(binaryPackage)) console.warn(`package: ${binaryPackage} is not installed: node-llama-cpp will have no prebuilt binary for ${target}`);
for (const [dir] of modules) cpSync(dir, join(stage, dir.slice(root.length + 1)), { recursive: true, dereference: true });
// tree-sitter-python: only its wasm grammar is loaded.
const tsp = findPackage("tree-sitter-python", root);
if (tsp) {
  mkdirSync(join(stage, "node_modules/tree-sitter-python"), { recursive: true });
  for (const f of ["tree-sitter-python.wasm", "LICENSE"]) if (existsSync(join(tsp, f))) cpSync(join(tsp, f), join(stage, "node_modules/tree-sitter-python", f));
  const { name, version, license } = JSON.parse(readFileSync(join(tsp, "package.json"), "utf8"));
  writeFileSync(join(stage, "node_modules/tree-sitter-python/package.json"), JSON.stringify({ name, version, license }, null, 2) + "\n");
}
console.log(`package: staged ${modules.size} packages from node_modules (${mb(size(join(stage, "node_modules")))}), ${mb(size(stage))} in all`);

const vsce = join(root, "node_modules/@vscode/vsce/vsce");
// The README's screenshot travels inside the package, where its relative link resolves: there is no repository URL to rewrite it to.
run(process.execPath, [vsce, "package", "--target", target, "--skip-license", "--allow-missing-repository", "--no-rewrite-relative-links", "--out", out], { cwd: stage });
console.log(`package: ${out} (${mb(statSync(out).size)}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
