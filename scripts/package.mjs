#!/usr/bin/env node
// Builds the .vsix for VS Code's platform targets: the bundles in dist/, the trace grammar, the
// bundled model (models/*.gguf, with its calibration *.calibration.json, which sets the confidence
// shown) and, of node_modules, only what the bundles load at run time (node-llama-cpp with its
// dependencies and the target's own prebuilt binaries, web-tree-sitter, tree-sitter-python's
// wasm, Pyodide). Staged in out/vsix/ so nothing else leaks in; each package is then opened and
// checked: its own binaries and no other platform's, the model, Pyodide.
//
//   node scripts/package.mjs [--target linux-x64] [--out FILE.vsix]   one target (default: this machine's)
//   node scripts/package.mjs --all                                    every target, into dist/vsix/
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkPackage, forTarget, lock, LLAMA_BINARIES, platformOnly, PYODIDES, TARGETS } from "./vsix-contents.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const stage = join(root, "out", "vsix");

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

/** The npm cache folder for other platforms' packages (npm ci installs this machine's only). */
const tarballs = join(process.env.NDBG_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "ndbg"), "packages");

/**
 * A platform package this machine has not installed, from its tarball: fetched once per machine
 * with `npm pack`, checked against the lock's integrity, unpacked into `dest`.
 */
function unpackForeign(name, entry, dest) {
  mkdirSync(tarballs, { recursive: true });
  const file = join(tarballs, `${name.replace("@", "").replace("/", "-")}-${entry.version}.tgz`);
  const [algorithm, expected] = entry.integrity.split("-", 2);
  const digest = (f) => createHash(algorithm).update(readFileSync(f)).digest("base64");
  if (!existsSync(file) || digest(file) !== expected) {
    const got = execFileSync("npm", ["pack", `${name}@${entry.version}`, "--silent", "--pack-destination", tarballs], { encoding: "utf8" }).trim().split("\n").pop();
    if (join(tarballs, got) !== file) renameSync(join(tarballs, got), file);
    if (digest(file) !== expected) throw new Error(`${name}@${entry.version}: the tarball does not match package-lock.json's integrity`);
  }
  mkdirSync(dest, { recursive: true });
  run("tar", ["-xzf", file, "-C", dest, "--strip-components=1"]);
}

/**
 * Every package directory the runtime `names` need for `target` (dependencies, and optional ones
 * that fit the target), as paths relative to the root: those installed here, and the target's
 * own platform packages, which may not be (`foreign`, with their lock entries).
 */
function closure(names, target) {
  const installed = new Map();
  const foreign = new Map();
  const visit = (name, from, optional) => {
    const dir = findPackage(name, from);
    const at = dir ? dir.slice(root.length + 1) : `node_modules/${name}`;
    const entry = lock[at];
    if (platformOnly(entry) && !forTarget(name, entry, target)) return;
    if (!dir) {
      if (platformOnly(entry)) return void foreign.set(at, { name, entry });
      if (!optional) throw new Error(`${name} is not installed (needed from ${from})`);
      return;
    }
    if (installed.has(at)) return;
    installed.set(at, name);
    const p = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    for (const d of Object.keys(p.dependencies ?? {})) visit(d, dir, false);
    for (const d of Object.keys(p.optionalDependencies ?? {})) visit(d, dir, true);
  };
  for (const n of names) visit(n, root, false);
  return { installed, foreign };
}

function size(path) {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, f) => n + size(join(path, f)), 0);
}
const mb = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** Stages `target`'s files and packs them into `out` with vsce. */
function packageTarget(target, out) {
  const t0 = Date.now();
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  // The manifest as published; its dependencies are the packages the bundles load, so that
  // vsce's dependency listing (npm list) picks exactly the staged node_modules.
  const RUNTIME = ["node-llama-cpp", "web-tree-sitter", "tree-sitter-python", ...PYODIDES];
  const manifest = { ...pkg, dependencies: Object.fromEntries(RUNTIME.map((n) => [n, pkg.dependencies[n]])) };
  delete manifest.devDependencies;
  delete manifest.scripts;
  writeFileSync(join(stage, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  for (const f of ["README.md", "LICENSE", "CHANGELOG.md", "language-configuration.json", ".vscodeignore", "docs/screenshot.png"]) {
    if (existsSync(join(root, f))) cpSync(join(root, f), join(stage, f));
  }
  // Not the source maps, nor the packages built before this one (dist/vsix/).
  const vsixDir = join(root, "dist", "vsix");
  for (const d of ["dist", "syntaxes", "models"]) {
    if (existsSync(join(root, d))) cpSync(join(root, d), join(stage, d), { recursive: true, filter: (p) => !p.endsWith(".map") && p !== vsixDir });
  }
  // pyodide and its aliases: the sealed CPythons of predict mode (dist/sealed.mjs loads them from node_modules).
  const { installed, foreign } = closure(["node-llama-cpp", "web-tree-sitter", ...PYODIDES], target);
  for (const [at] of installed) cpSync(join(root, at), join(stage, at), { recursive: true, dereference: true });
  for (const [at, { name, entry }] of foreign) unpackForeign(name, entry, join(stage, at));
  // tree-sitter-python: only its wasm grammar is loaded.
  const tsp = findPackage("tree-sitter-python", root);
  if (tsp) {
    mkdirSync(join(stage, "node_modules/tree-sitter-python"), { recursive: true });
    for (const f of ["tree-sitter-python.wasm", "LICENSE"]) if (existsSync(join(tsp, f))) cpSync(join(tsp, f), join(stage, "node_modules/tree-sitter-python", f));
    const { name, version, license } = JSON.parse(readFileSync(join(tsp, "package.json"), "utf8"));
    writeFileSync(join(stage, "node_modules/tree-sitter-python/package.json"), JSON.stringify({ name, version, license }, null, 2) + "\n");
  }
  console.log(`package: ${target}: staged ${installed.size + foreign.size} packages (${foreign.size} of them another platform's, from their tarballs), ${mb(size(stage))} in all`);
  const vsce = join(root, "node_modules/@vscode/vsce/vsce");
  // The README's screenshot travels inside the package, where its relative link resolves: there is no repository URL to rewrite it to.
  run(process.execPath, [vsce, "package", "--target", target, "--skip-license", "--allow-missing-repository", "--no-rewrite-relative-links", "--out", out], { cwd: stage });
  console.log(`package: ${out} (${mb(statSync(out).size)}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

const mine = `${process.platform === "win32" ? "win32" : process.platform}-${process.arch}`;
const targets = process.argv.includes("--all") ? Object.keys(TARGETS) : [arg("--target") ?? mine];
for (const t of targets) if (!TARGETS[t]) throw new Error(`package: no target ${t} (${Object.keys(TARGETS).join(", ")})`);
if (!existsSync(join(root, "models"))) throw new Error("package: no models/ folder: a package carries the bundled model");
for (const g of readdirSync(join(root, "models")).filter((f) => f.endsWith(".gguf")))
  if (!existsSync(join(root, "models", g.replace(/\.gguf$/, ".calibration.json")))) console.warn(`package: models/${g} has no calibration beside it: its confidence will be the raw token probability (ndbg calibrate)`);
run(process.execPath, [join(root, "scripts/build.mjs")], { cwd: root });
let failed = false;
for (const target of targets) {
  const out = resolve(targets.length > 1 ? join(root, "dist", "vsix", `${pkg.name}-${pkg.version}-${target}.vsix`) : (arg("--out") ?? join(root, `${pkg.name}-${pkg.version}-${target}.vsix`)));
  mkdirSync(dirname(out), { recursive: true });
  packageTarget(target, out);
  const faults = await checkPackage(out, target);
  for (const f of faults) console.error(`package: ${target}: ${f}`);
  failed ||= faults.length > 0;
  console.log(`package: ${target}: ${faults.length ? `${faults.length} faults` : "checked"}: ${TARGETS[target].map((b) => LLAMA_BINARIES + b).join(", ")}, the model, Pyodide, the adapter's Python (${mb(statSync(out).size)})`);
}
rmSync(stage, { recursive: true, force: true });
if (failed) process.exit(1);
