// The sealed interpreter's snapshot (adapter/real/sealed.ts, sealedWorker.ts): the first worker
// of a machine makes it as Pyodide loads and the parent keeps it in the user's cache; the next
// adapter's worker loads from it, and runs the program to the same states; a damaged one kills
// the worker as Pyodide loads it, and is replaced: another worker starts and makes it anew. Each
// adapter is a process of its own here (one worker a process), with a cache folder of the test's.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, buildDist } from "./support/dist.js";
import { snapshotFile } from "../adapter/real/sealed.js";
import { SEALED_PYTHON_FILES } from "../adapter/real/sealedFiles.js";

const T = { timeout: 240_000 };
let cache = "";
let program = "";

before(() => {
  buildDist();
  cache = mkdtempSync(join(tmpdir(), "ndbg-snapshot-"));
  program = join(cache, "prog.py");
  writeFileSync(program, "import json\nitems = {'b': 2, 'a': 1}\nfor k in sorted(items):\n    print(k, json.dumps(items[k]))\nseen = {'x', 'y', 'z'}\n");
});
after(() => rmSync(cache, { recursive: true, force: true }));

/** A new adapter process: how its worker came up, and the program's states. */
function adapter(): { snapshot: string; states: string } {
  const script = `
    import { runSealed, sealedChild } from ${JSON.stringify(join(ROOT, "adapter/real/sealed.ts"))};
    const info = await sealedChild().warm();
    const r = await runSealed(${JSON.stringify(program)}, { objects: 10 });
    console.log(JSON.stringify({ snapshot: info.snapshot, states: JSON.stringify([r.frames, r.exit]) }));
    process.exit(0);`;
  const p = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8", env: { ...process.env, XDG_CACHE_HOME: cache }, timeout: 120_000 });
  assert.equal(p.status, 0, p.stderr);
  return JSON.parse(p.stdout.trim().split("\n").at(-1)!) as { snapshot: string; states: string };
}

const snapshots = (): string[] => readdirSync(join(cache, "ndbg", "sealed")).filter((f) => f.endsWith(".snapshot"));

test("the first worker makes the snapshot, the next loads from it and runs the program to the same states; a damaged one is dropped; another build's of the same Pyodide goes", T, () => {
  // Another build's snapshot of the same Pyodide (gone when this one is kept), and another Pyodide's (kept).
  const dir = join(cache, "ndbg", "sealed");
  mkdirSync(dir, { recursive: true });
  const version = (JSON.parse(readFileSync(join(ROOT, "node_modules", "pyodide", "package.json"), "utf8")) as { version: string }).version;
  const [stale, other] = [`pyodide-${version}-0123456789abcdef.snapshot`, "pyodide-0.1.0-0123456789abcdef.snapshot"];
  for (const f of [stale, other]) writeFileSync(join(dir, f), "an old snapshot");
  const made = adapter();
  assert.equal(made.snapshot, "made");
  assert.ok(!snapshots().includes(stale) && snapshots().includes(other), snapshots().join(", "));
  rmSync(join(dir, other));
  const [file] = snapshots();
  assert.match(file, /^pyodide-\d+\.\d+\.\d+-[0-9a-f]{16}\.snapshot$/);
  const loaded = adapter();
  assert.equal(loaded.snapshot, "loaded");
  assert.equal(loaded.states, made.states, "the same states, set orders and all");
  // A damaged snapshot: the worker dies loading it; it is removed, and the next worker makes it anew.
  writeFileSync(join(cache, "ndbg", "sealed", file), Buffer.alloc(4096, 7));
  const damaged = adapter();
  assert.equal(damaged.snapshot, "made");
  assert.equal(damaged.states, made.states);
  assert.deepEqual(snapshots(), [file]);
});

test("the snapshot is named for the runner's Python files it holds compiled: another tracer never loads an old one", () => {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-snapshot-name-"));
  try {
    const where = { pyodide: join(dir, "pyodide"), worker: join(dir, "sealed.mjs"), python: join(dir, "python") };
    mkdirSync(where.pyodide);
    mkdirSync(where.python);
    writeFileSync(join(where.pyodide, "package.json"), JSON.stringify({ version: "0.27.7" }));
    writeFileSync(where.worker, "// the worker");
    for (const name of SEALED_PYTHON_FILES) writeFileSync(join(where.python, name), `# ${name}\n`);
    const first = snapshotFile(where);
    assert.match(first ?? "", /pyodide-0\.27\.7-[0-9a-f]{16}\.snapshot$/);
    assert.equal(snapshotFile(where), first);
    writeFileSync(join(where.python, "console.py"), "# console.py, changed\n");
    assert.notEqual(snapshotFile(where), first);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
