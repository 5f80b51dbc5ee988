// What each VS Code target's .vsix carries of the platforms' own packages, and the check of a
// built .vsix against it (scripts/package.mjs runs it on each package it builds; CI builds them all).
//
//   node scripts/vsix-contents.mjs FILE.vsix TARGET     prints the faults found; exit 1 where any
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import yauzl from "yauzl";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
/** The Pyodide packages: one per sealed CPython carried (adapter/real/sealed.ts's SEALED_PYTHONS), "pyodide" and its aliases. */
export const PYODIDES = Object.entries(pkg.dependencies)
  .filter(([name, spec]) => name === "pyodide" || String(spec).startsWith("npm:pyodide@"))
  .map(([name]) => name);
export const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")).packages;

/**
 * VS Code's targets and node-llama-cpp's prebuilt binary packages each carries: the CPU build
 * (on Apple silicon the Metal build, which is also its CPU: node-llama-cpp ships no other there),
 * and CUDA and Vulkan where node-llama-cpp ships them. CUDA's "-ext" packages are left out: a
 * second, 374 MB build of ggml's CUDA library that node-llama-cpp loads only where the first fails
 * to; there the probe passes over CUDA and the session takes Vulkan or the CPU (docs/BACKENDS.md).
 */
export const TARGETS = {
  "linux-x64": ["linux-x64", "linux-x64-cuda", "linux-x64-vulkan"],
  "linux-arm64": ["linux-arm64"],
  "darwin-arm64": ["mac-arm64-metal"],
  "darwin-x64": ["mac-x64"],
  "win32-x64": ["win-x64", "win-x64-cuda", "win-x64-vulkan"],
};
export const LLAMA_BINARIES = "@node-llama-cpp/";
/** The adapter's Python files (adapter/python/), which the build copies into dist/python/. */
export const PYTHON_FILES = readdirSync(join(root, "adapter", "python")).filter((f) => f.endsWith(".py")).sort();

/**
 * Whether a platform's own package (one whose manifest names an os or cpu: node-llama-cpp's
 * binaries, a native helper's builds) belongs in the target's package. Read from the lock, which
 * has every platform's entry (npm ci installs only this machine's).
 */
export function forTarget(name, entry, target) {
  if (name.startsWith(LLAMA_BINARIES)) return TARGETS[target].includes(name.slice(LLAMA_BINARIES.length));
  const [os, cpu] = target.split("-");
  const fits = (list, value) => !list || list.includes(value);
  // Linux's VS Code runs on glibc (its own builds need it): a musl build is another platform.
  return fits(entry.os, os) && fits(entry.cpu, cpu) && (os !== "linux" || fits(entry.libc, "glibc"));
}
export const platformOnly = (entry) => Boolean(entry?.os || entry?.cpu);

/** The names of the files in a .vsix (a zip). */
function entries(file) {
  return new Promise((done, fail) =>
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err) return fail(err);
      const names = [];
      zip.on("entry", (e) => (names.push(e.fileName), zip.readEntry()));
      zip.on("end", () => done(names));
      zip.on("error", fail);
      zip.readEntry();
    }),
  );
}

/**
 * What a target's package must hold, read from the package itself: its own node-llama-cpp binaries
 * (each with its addon) and no other platform's binaries, node-llama-cpp at the locked version,
 * the bundled model and its calibration, Pyodide's CPython, every Python file of adapter/python/
 * (the tracer and the files it loads, the guard, the sealed runner: dist/python/). Returns the
 * faults found.
 */
export async function checkPackage(file, target) {
  const names = new Set(await entries(file));
  const faults = [];
  const has = (path, what) => names.has(`extension/${path}`) || faults.push(`no ${what} (${path})`);
  const binaries = new Set([...names].map((n) => n.match(/^extension\/node_modules\/@node-llama-cpp\/([^/]+)\//)?.[1]).filter(Boolean));
  for (const b of TARGETS[target]) if (!binaries.has(b)) faults.push(`no @node-llama-cpp/${b}`);
  for (const b of binaries) {
    if (!TARGETS[target].includes(b)) faults.push(`another platform's binaries: @node-llama-cpp/${b}`);
    else if (![...names].some((n) => n.startsWith(`extension/node_modules/@node-llama-cpp/${b}/bins/`) && n.endsWith("/llama-addon.node"))) faults.push(`@node-llama-cpp/${b} has no llama-addon.node`);
  }
  for (const n of names) {
    const m = n.match(/^extension\/(node_modules\/(?:@[^/]+\/)?[^/]+)\/package\.json$/);
    if (m && !m[1].startsWith(`node_modules/${LLAMA_BINARIES}`) && platformOnly(lock[m[1]]) && !forTarget(m[1].slice("node_modules/".length), lock[m[1]], target)) faults.push(`another platform's package: ${m[1]}`);
  }
  const nlc = lock["node_modules/node-llama-cpp"].version;
  if (pkg.dependencies["node-llama-cpp"] !== nlc) faults.push(`node-llama-cpp is not pinned (package.json asks ${pkg.dependencies["node-llama-cpp"]}, the lock has ${nlc})`);
  has("node_modules/node-llama-cpp/package.json", "node-llama-cpp");
  for (const g of readdirSync(join(root, "models")).filter((f) => f.endsWith(".gguf"))) {
    has(`models/${g}`, "bundled model");
    has(`models/${g.replace(/\.gguf$/, ".calibration.json")}`, "model calibration");
  }
  for (const p of PYODIDES) for (const f of ["pyodide.asm.wasm", "pyodide.asm.js", "python_stdlib.zip", "pyodide.mjs"]) has(`node_modules/${p}/${f}`, "Pyodide");
  for (const f of PYTHON_FILES) has(`dist/python/${f}`, "Python file of the adapter");
  has("dist/adapter.js", "adapter");
  has("dist/sealed.mjs", "sealed worker");
  return faults;
}


if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [file, target] = process.argv.slice(2);
  if (!file || !TARGETS[target]) {
    console.error(`usage: node scripts/vsix-contents.mjs FILE.vsix TARGET (${Object.keys(TARGETS).join(", ")})`);
    process.exit(2);
  }
  const faults = await checkPackage(file, target).catch((e) => [`not a package: ${e.message}`]);
  for (const f of faults) console.log(f);
  process.exit(faults.length ? 1 : 0);
}
