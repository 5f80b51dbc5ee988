// Predict mode debugs a project, not a file: two projects of test/fixtures/projects (a package with
// subpackages, relative imports and a namespace package, a dataclass, a custom exception caught, a
// CSV or JSON file read at run time, a file written and read back). Over the real protocol, stepping
// into every event from entry to end, the sealed run gives record mode's states (record runs a
// CPython of the sealed run's minor version, 3.12: the same frames), its output is python3's, and
// it leaves nothing on disk; a breakpoint in a package file is verified and hit in both modes. The
// launch's Python's site-packages import sealed where pure Python; a compiled package is named.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { ROOT, buildDist } from "./support/dist.js";
import { THREAD, inspect, launchToFirstStop, openSession, shown, stopAfter } from "./support/dap.js";
import { realPython } from "./support/pythons.js";

const T = { timeout: 300_000 };
const PROJECTS = [
  { name: "inventory", main: "main.py", breakpoint: { file: "inventory/store.py", line: 14 } },
  { name: "gradebook", main: "cli.py", breakpoint: { file: "school/models/__init__.py", line: 15 } },
];
let dir = "";
let py312 = "";

before(async () => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-project-"));
  const p = await realPython("3.12");
  // Record mode is the truth only with the sealed run's minor version (3.12 runs comprehensions in no frame of their own).
  if (typeof p === "string") throw new Error(`record mode needs a Python 3.12 here to be the sealed run's truth: ${p}`);
  py312 = p.exe;
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** A fresh copy of a fixture project (record mode and python3 write into it: the fixture stays as it is). */
function copy(name: string, as: string): string {
  const to = join(dir, as);
  cpSync(join(ROOT, "test", "fixtures", "projects", name), to, { recursive: true });
  return to;
}

/** Every file under a folder, with its size and time: what is on disk. */
function disk(folder: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else out.push(`${relative(folder, p)} ${st.size} ${st.mtimeMs}`);
    }
  };
  walk(folder);
  return out;
}

interface Walk {
  stops: string[];
  output: string;
  console: string;
  breakpoints: DebugProtocol.Breakpoint[];
}

/** Launches, then steps into every event to the end (or, with a breakpoint, continues to it and returns its stop first). */
async function walk(launch: Record<string, unknown>, program: string, breakpoint?: { path: string; line: number }): Promise<Walk> {
  const s = await openSession(120_000);
  try {
    const out: string[] = [];
    const console: string[] = [];
    s.dc.on("output", (e: DebugProtocol.OutputEvent) => (e.body.category === "stdout" ? out : console).push(e.body.output));
    const first = await launchToFirstStop(s.dc, { program, stopOnEntry: !breakpoint, ...launch }, program, breakpoint ? [{ line: breakpoint.line }] : [], breakpoint?.path);
    let ev = first.first;
    const breakpoints = first.breakpoints;
    const stops: string[] = [];
    for (let n = 0; ev.event === "stopped" && n < 2000; n++) {
      const stop = await inspect(s.dc);
      stops.push(`${stop.frame.source?.path ? relative(launch.cwd as string, stop.frame.source.path) : "?"} ${shown(stop)}`);
      if (breakpoint) break;
      ev = await stopAfter(s.dc, (dc) => dc.stepInRequest(THREAD));
    }
    return { stops, output: out.join(""), console: console.join(""), breakpoints };
  } finally {
    await s.dc.stop();
  }
}

for (const project of PROJECTS) {
  test(`predict mode steps through the ${project.name} project (its package, its data file, its writes) as record mode does, and writes nothing to disk`, T, async () => {
    const truthDir = copy(project.name, `${project.name}-record`);
    const sealedDir = copy(project.name, `${project.name}-sealed`);
    const pythonDir = copy(project.name, `${project.name}-python`);
    const python = execFileSync("python3", [project.main], { cwd: pythonDir, encoding: "utf8" });
    const truth = await walk({ mode: "record", trusted: true, python: py312, cwd: truthDir }, join(truthDir, project.main));
    const before = disk(sealedDir);
    const sealed = await walk({ mode: "predict", trusted: false, cwd: sealedDir }, join(sealedDir, project.main));
    assert.deepEqual(disk(sealedDir), before, "the sealed run left its writes in memory only");
    assert.ok(truth.stops.length > 100, `${truth.stops.length} stops`);
    assert.deepEqual(sealed.stops, truth.stops);
    assert.equal(sealed.output, python);
    assert.equal(truth.output, python);
    // Every file of the package was stepped through.
    for (const file of readdirSync(join(sealedDir, project.name === "inventory" ? "inventory" : "school/models")).filter((f) => f.endsWith(".py")))
      assert.ok(sealed.stops.some((s) => s.includes(`/${file} `) || s.startsWith(`${file} `)), `${file} stepped through`);
    // What it wrote is said in the Debug Console, with its text, as the sandbox's and not the disk's.
    assert.match(sealed.console, /the program writes .* in the sandbox's memory only \(nothing on disk\)/);
    assert.match(sealed.console, project.name === "inventory" ? /out\/low\.txt \(4 bytes\):\n\s+ink/ : /report\.json \(34 bytes\):\n\s+\{"Ada": "A"/);
  });

  test(`a breakpoint in ${project.breakpoint.file} of ${project.name} is verified and hit, in predict and record modes`, T, async () => {
    const folder = copy(project.name, `${project.name}-bp`);
    const path = join(folder, project.breakpoint.file);
    for (const launch of [{ mode: "predict", trusted: false }, { mode: "record", trusted: true, python: py312 }]) {
      const run = await walk({ ...launch, cwd: folder }, join(folder, project.main), { path, line: project.breakpoint.line });
      assert.equal(run.breakpoints.length, 1);
      assert.equal(run.breakpoints[0].verified, true, `${launch.mode}: ${run.breakpoints[0].message ?? ""}`);
      assert.equal(run.stops.length, 1, launch.mode);
      assert.ok(run.stops[0].startsWith(`${project.breakpoint.file} `), `${launch.mode}: ${run.stops[0]}`);
      assert.match(run.stops[0], new RegExp(`:${project.breakpoint.line} `), launch.mode);
    }
  });
}

test("a breakpoint outside the project, or in a file the model would have to predict, is refused with the reason", T, async () => {
  const folder = copy("inventory", "inventory-refused");
  const outside = join(dir, "elsewhere.py");
  writeFileSync(outside, "x = 1\n");
  const s = await openSession(120_000);
  try {
    const program = join(folder, "main.py");
    await launchToFirstStop(s.dc, { program, mode: "predict", cwd: folder, stopOnEntry: true }, program);
    const [far] = (await s.dc.setBreakpointsRequest({ source: { path: outside }, breakpoints: [{ line: 1 }] })).body.breakpoints;
    assert.equal(far.verified, false);
    assert.match(far.message ?? "", /project's Python files only/);
  } finally {
    await s.dc.stop();
  }
});

test("the launch's Python's pure-Python packages import sealed; a compiled one is named at its import, not guessed", T, async () => {
  // A virtual environment of this machine's python3 with two packages put into its site-packages by hand.
  const venv = join(dir, "venv");
  execFileSync("python3", ["-m", "venv", "--without-pip", venv]);
  const site = execFileSync(join(venv, "bin", "python"), ["-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], { encoding: "utf8" }).trim();
  mkdirSync(join(site, "greeting"));
  writeFileSync(join(site, "greeting", "__init__.py"), "from .words import hello\n");
  writeFileSync(join(site, "greeting", "words.py"), "def hello(name):\n    return 'hello, ' + name.title()\n");
  mkdirSync(join(site, "fastmath"));
  writeFileSync(join(site, "fastmath", "__init__.py"), "from ._core import mean\n");
  writeFileSync(join(site, "fastmath", "_core.cpython-311-x86_64-linux-gnu.so"), Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  const project = join(dir, "uses-libs");
  mkdirSync(project);
  const program = join(project, "main.py");
  writeFileSync(program, "import greeting\n\nprint(greeting.hello('ada'))\ntry:\n    import fastmath\nexcept ImportError as e:\n    print('no fastmath')\n");
  const run = await walk({ mode: "predict", trusted: true, python: join(venv, "bin", "python"), cwd: project }, program);
  assert.equal(run.output, "hello, Ada\nno fastmath\n");
  assert.match(run.console, /fastmath is a compiled package \(.*_core\.cpython-311-x86_64-linux-gnu\.so is built for this machine, not for WebAssembly\): the sealed run cannot import it\. Debug in hybrid mode/);
  // The library's frames are not the user's: stepping in never entered greeting/words.py.
  assert.ok(!run.stops.some((s) => s.includes("words.py")), run.stops.join("\n"));
});

test("a program in a subfolder of its project (its cwd) reaches the project's package: the package's frames and breakpoints are there, in predict and record modes", T, async () => {
  const folder = copy("inventory", "inventory-scripts");
  mkdirSync(join(folder, "scripts"));
  const program = join(folder, "scripts", "run.py");
  writeFileSync(
    program,
    'import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))\nfrom inventory import Store\nfrom inventory.io.csvfile import read_items\n\nstore = Store(read_items("data/stock.csv"))\nprint(store.take("pen", 2))\n',
  );
  const store = join(folder, "inventory", "store.py");
  for (const launch of [{ mode: "predict", trusted: false }, { mode: "record", trusted: true, python: py312 }]) {
    const hit = await walk({ ...launch, cwd: folder }, program, { path: store, line: 14 });
    assert.equal(hit.breakpoints[0].verified, true, `${launch.mode}: ${hit.breakpoints[0].message ?? ""}`);
    assert.equal(hit.stops.length, 1, launch.mode);
    assert.match(hit.stops[0], /^inventory\/store\.py Store\.take:14 /, launch.mode);
    const all = await walk({ ...launch, cwd: folder }, program);
    assert.equal(all.output, "8\n", launch.mode);
    assert.ok(all.stops.some((s) => s.startsWith("inventory/io/csvfile.py read_items:")), launch.mode);
  }
});
