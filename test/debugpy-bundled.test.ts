// Compare mode finds debugpy where VS Code's Python Debugger extension keeps its own copy
// (`ms-python.debugpy-*/bundled/libs` in an editor's extensions folder, or the folder the
// extension names through NDBG_DEBUGPY_PATH), for a Python that has none: the search, in order,
// over real folders, and a real debugpy session run by such a Python with that copy. The copy
// is this machine's debugpy (Debian's python3-debugpy, with its pydevd), linked into a made-up
// extensions folder.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { Debugpy, bundledDebugpyDirs, findDebugpyPython } from "../adapter/real/debugpy.js";

const T = { timeout: 120_000 };
const SYSTEM_PYTHON = "/usr/bin/python3";

let dir = "";
/** Where this machine's debugpy package is (undefined without one: the session test says so). */
let debugpyPackage: string | undefined;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-bundled-debugpy-"));
  const r = spawnSync(SYSTEM_PYTHON, ["-c", "import debugpy, os, sys; sys.stdout.write(os.path.dirname(debugpy.__file__))"], { encoding: "utf8" });
  debugpyPackage = r.status === 0 ? r.stdout : undefined;
});

after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * An extension folder `<home>/<root>/extensions/<name>/bundled/libs` with a debugpy package in it:
 * links to `pkg` and, where that debugpy is Debian's (whose pydevd is a package of its own, not
 * vendored inside it as in the extension's copy), to pydevd's modules and its bytecode package beside it; or an empty one.
 */
function extension(home: string, root: string, name: string, pkg?: string): string {
  const libs = join(home, root, "extensions", name, "bundled", "libs");
  mkdirSync(libs, { recursive: true });
  if (pkg) {
    symlinkSync(pkg, join(libs, "debugpy"));
    const site = dirname(pkg);
    for (const f of readdirSync(site)) if (/^(_?pydev|bytecode$)/.test(f)) symlinkSync(join(site, f), join(libs, f));
  } else {
    mkdirSync(join(libs, "debugpy"));
    writeFileSync(join(libs, "debugpy", "__init__.py"), "");
  }
  return libs;
}

test("the bundled copies are found in each editor's extensions folder, newest first, after NDBG_DEBUGPY_PATH's", () => {
  const home = join(dir, "home-search");
  const old = extension(home, ".vscode", "ms-python.debugpy-2024.2.0-linux-x64");
  const newest = extension(home, ".vscode", "ms-python.debugpy-2025.10.0-linux-x64");
  const server = extension(home, ".vscode-server", "ms-python.debugpy-2025.4.1");
  const codeServer = extension(home, join(".local", "share", "code-server"), "ms-python.debugpy-2025.8.0-universal");
  // Not a copy: another extension, and a debugpy extension folder without the package.
  extension(home, ".vscode", "ms-python.python-2025.10.0-linux-x64");
  mkdirSync(join(home, ".vscode", "extensions", "ms-python.debugpy-2023.1.0", "bundled", "libs"), { recursive: true });
  const named = extension(join(dir, "elsewhere"), "x", "ms-python.debugpy-1.0.0");
  assert.deepEqual(bundledDebugpyDirs(home, { NDBG_DEBUGPY_PATH: [named, join(dir, "missing")].join(delimiter) }), [named, newest, old, server, codeServer]);
  assert.deepEqual(bundledDebugpyDirs(join(dir, "no-home"), {}), []);
});

test("a Python without debugpy runs the Python Debugger extension's copy: found, launched, stepped to the end", T, async (t) => {
  if (!debugpyPackage) return t.skip(`${SYSTEM_PYTHON} has no debugpy to stand for the extension's copy (apt-get install python3-debugpy)`);
  // A virtual environment sees none of the system's packages: no debugpy of its own.
  const venv = join(dir, "venv");
  assert.equal(spawnSync(SYSTEM_PYTHON, ["-m", "venv", "--without-pip", venv]).status, 0, "python3 -m venv");
  const bare = join(venv, "bin", "python");
  assert.notEqual(spawnSync(bare, ["-c", "import debugpy"]).status, 0, "the virtual environment has no debugpy");
  const home = join(dir, "home-session");
  const libs = extension(home, ".vscode", "ms-python.debugpy-2025.10.0-linux-x64", debugpyPackage);
  const program = join(dir, "script.py");
  writeFileSync(program, "a = 1\nb = a + 1\nprint(a, b)\n");
  const savedHome = process.env.HOME;
  process.env.HOME = home;
  let d: Debugpy | undefined;
  try {
    assert.deepEqual(bundledDebugpyDirs(), [libs]);
    const python = await findDebugpyPython(bare);
    assert.equal(dirname(python), join(venv, "bin"), "the virtual environment's Python itself");
    d = await Debugpy.launch({ python, program, cwd: dir, timeout: 30, maxRepr: 1000 });
    const lines: number[] = [];
    for (let n = 0; n < 20 && d.current.kind !== "exit"; n++) {
      // From the driver's entry line into the script, then line by line.
      const s = await d.command(lines.length ? "next" : "stepIn");
      if (s.kind === "stop" && !s.inDriver && s.frames[0]) lines.push(s.frames[0].line);
    }
    assert.equal(d.current.kind, "exit");
    assert.ok(lines.includes(2) && lines.includes(3), `stopped on the script's lines: ${lines.join(", ")}`);
  } finally {
    await d?.dispose();
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
  }
});
