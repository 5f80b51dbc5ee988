// The platform packages: node-llama-cpp pinned at a release whose binaries every VS Code target has,
// and the check each built .vsix passes (scripts/vsix-contents.mjs, run by scripts/package.mjs on
// every package, all five in CI), shown to refuse a package that lacks or mixes what it must carry.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./support/dist.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")).packages;
const model = readdirSync(join(ROOT, "models")).find((f) => f.endsWith(".gguf"))!;

test("node-llama-cpp is pinned, and the lock has each of its platforms' binaries at that release, from the registry", () => {
  const version = pkg.dependencies["node-llama-cpp"];
  assert.match(version, /^\d+\.\d+\.\d+$/, "an exact version");
  assert.equal(lock["node_modules/node-llama-cpp"].version, version);
  const binaries = Object.keys(lock["node_modules/node-llama-cpp"].optionalDependencies);
  for (const name of ["linux-x64", "linux-x64-cuda", "linux-x64-vulkan", "linux-arm64", "mac-arm64-metal", "mac-x64", "win-x64", "win-x64-cuda", "win-x64-vulkan"]) {
    const at = `@node-llama-cpp/${name}`;
    assert.ok(binaries.includes(at), `node-llama-cpp lists ${at}`);
    const entry = lock[`node_modules/${at}`];
    assert.equal(entry?.version, version, `${at} at ${version}`);
    assert.match(entry.integrity ?? "", /^sha512-/, `${at} was served (the lock has its digest)`);
  }
});

/** A .vsix (a zip) holding these files, each a few bytes, written by Python's zipfile. */
function vsix(dir: string, files: string[]): string {
  const out = join(dir, `p${Math.random().toString(36).slice(2)}.vsix`);
  const r = spawnSync("python3", ["-c", "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    for f in sys.argv[2:]: z.writestr(f, 'x')", out, ...files.map((f) => `extension/${f}`)], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return out;
}

function check(file: string, target: string): { status: number | null; faults: string[] } {
  const r = spawnSync(process.execPath, [join(ROOT, "scripts", "vsix-contents.mjs"), file, target], { encoding: "utf8" });
  return { status: r.status, faults: r.stdout.split("\n").filter(Boolean) };
}

const binary = (name: string, dir = name) => [`node_modules/@node-llama-cpp/${name}/package.json`, `node_modules/@node-llama-cpp/${name}/bins/${dir}/llama-addon.node`];
const common = [
  "node_modules/node-llama-cpp/package.json",
  `models/${model}`,
  `models/${model.replace(/\.gguf$/, ".calibration.json")}`,
  ...["pyodide", "pyodide-313"].flatMap((p) => ["pyodide.asm.wasm", "pyodide.asm.js", "python_stdlib.zip", "pyodide.mjs"].map((f) => `node_modules/${p}/${f}`)),
  ...readdirSync(join(ROOT, "adapter", "python")).filter((f) => f.endsWith(".py")).map((f) => `dist/python/${f}`),
  "dist/adapter.js",
  "dist/sealed.mjs",
];

test("a package's check: its own binaries pass; another platform's binaries or native helper, a binary without its addon, no model, no Pyodide, a Python file of the adapter missing are each refused", () => {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-vsix-"));
  try {
    const mac = [...common, ...binary("mac-arm64-metal"), "node_modules/@reflink/reflink-darwin-arm64/package.json"];
    assert.deepEqual(check(vsix(dir, mac), "darwin-arm64"), { status: 0, faults: [] });

    let r = check(vsix(dir, [...mac, ...binary("linux-x64")]), "darwin-arm64");
    assert.equal(r.status, 1);
    assert.deepEqual(r.faults, ["another platform's binaries: @node-llama-cpp/linux-x64"]);

    r = check(vsix(dir, [...mac, "node_modules/@reflink/reflink-linux-x64-gnu/package.json"]), "darwin-arm64");
    assert.deepEqual(r.faults, ["another platform's package: node_modules/@reflink/reflink-linux-x64-gnu"]);

    r = check(vsix(dir, [...common, "node_modules/@node-llama-cpp/mac-arm64-metal/package.json"]), "darwin-arm64");
    assert.deepEqual(r.faults, ["@node-llama-cpp/mac-arm64-metal has no llama-addon.node"]);

    // The same files for Linux: its CUDA and Vulkan builds are missing.
    r = check(vsix(dir, [...common, ...binary("linux-x64")]), "linux-x64");
    assert.deepEqual(r.faults, ["no @node-llama-cpp/linux-x64-cuda", "no @node-llama-cpp/linux-x64-vulkan"]);

    r = check(vsix(dir, mac.filter((f) => !f.startsWith("models/") && !f.startsWith("node_modules/pyodide/pyodide.asm.wasm"))), "darwin-arm64");
    assert.deepEqual(r.faults.sort(), [`no bundled model (models/${model})`, `no model calibration (models/${model.replace(/\.gguf$/, ".calibration.json")})`, "no Pyodide (node_modules/pyodide/pyodide.asm.wasm)"].sort());

    // Each sealed CPython carried is its own Pyodide.
    r = check(vsix(dir, mac.filter((f) => f !== "node_modules/pyodide-313/python_stdlib.zip")), "darwin-arm64");
    assert.deepEqual(r.faults, ["no Pyodide (node_modules/pyodide-313/python_stdlib.zip)"]);

    r = check(vsix(dir, mac.filter((f) => f !== "dist/python/console.py" && f !== "dist/python/guard.py")), "darwin-arm64");
    assert.deepEqual(r.faults, ["no Python file of the adapter (dist/python/console.py)", "no Python file of the adapter (dist/python/guard.py)"]);

    assert.equal(check(join(dir, "missing.vsix"), "darwin-arm64").status, 1, "a file that is not there is no package");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
