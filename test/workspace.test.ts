// The parent's half of the sandbox's file system (adapter/real/workspace.ts), asked directly as
// the child asks it: whatever path a request names, only the project's offered files and the
// libraries' come back, on real folders of this machine.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LIBRARIES_AT, SandboxFiles, projectRoot } from "../adapter/real/workspace.js";

let dir = "";
let project = "";
let files: SandboxFiles;

before(() => {
  dir = mkdtempSync(join(tmpdir(), "ndbg-workspace-"));
  project = join(dir, "project");
  mkdirSync(join(project, "pkg", "sub"), { recursive: true });
  writeFileSync(join(project, "main.py"), "import pkg\n");
  writeFileSync(join(project, "pkg", "__init__.py"), "");
  writeFileSync(join(project, "pkg", "sub", "__init__.py"), "");
  writeFileSync(join(project, "data.csv"), "a,b\n1,2\n");
  for (const hidden of [".git", "node_modules", "__pycache__", ".venv", "myenv"]) mkdirSync(join(project, hidden));
  writeFileSync(join(project, ".git", "config"), "secret");
  writeFileSync(join(project, "myenv", "pyvenv.cfg"), "home = /usr/bin\n");
  writeFileSync(join(dir, "secret.txt"), "secret");
  symlinkSync(join(dir, "secret.txt"), join(project, "out.txt"));
  symlinkSync(join(project, "data.csv"), join(project, "in.csv"));
  mkdirSync(join(dir, "site", "lib1"), { recursive: true });
  writeFileSync(join(dir, "site", "lib1", "__init__.py"), "X = 1\n");
  files = new SandboxFiles([
    { path: project, kind: "project" },
    { path: join(dir, "site"), kind: "library" },
  ]);
});

after(() => rmSync(dir, { recursive: true, force: true }));

test("the project is listed without version control, environments, caches or links out of it", () => {
  const listed = files.answer({ fs: "list", path: project });
  assert.ok("entries" in listed);
  assert.deepEqual(listed.entries.map(([name, kind]) => `${name}:${kind}`), ["data.csv:f", "in.csv:f", "main.py:f", "pkg:d"]);
  assert.equal(files.mounts[0], project);
  assert.deepEqual(files.libraries, [`${LIBRARIES_AT}/0`]);
});

test("a file of the project and of a library is read; nothing else is, however the path is written", () => {
  const data = files.answer({ fs: "read", path: join(project, "data.csv") });
  assert.ok("data" in data && Buffer.from(data.data, "base64").toString() === "a,b\n1,2\n");
  const lib = files.answer({ fs: "read", path: `${LIBRARIES_AT}/0/lib1/__init__.py` });
  assert.ok("data" in lib && Buffer.from(lib.data, "base64").toString() === "X = 1\n");
  // A symlink inside the project to a file inside it is read as that file.
  assert.ok("data" in files.answer({ fs: "read", path: join(project, "in.csv") }));
  for (const p of [
    join(dir, "secret.txt"),
    `${project}/../secret.txt`,
    `${project}/./data.csv`,
    `${project}//data.csv`,
    join(project, "out.txt"),
    join(project, ".git", "config"),
    join(project, "myenv", "pyvenv.cfg"),
    "/etc/passwd",
    "/proc/self/environ",
    "~/.bashrc",
    "data.csv",
    `${project}/data.csv\0`,
    join(dir, "site", "lib1", "__init__.py"), // a library is seen at /site-packages/N only
    `${LIBRARIES_AT}/0/../../etc/passwd`,
    `${LIBRARIES_AT}/1/x.py`,
  ])
    assert.deepEqual(files.answer({ fs: "read", path: p }), { errno: "ENOENT" }, p);
});

test("the project's folder: the launch's cwd, else the program's folder up to its package's root", () => {
  assert.equal(projectRoot(join(project, "pkg", "sub", "__init__.py")), project);
  assert.equal(projectRoot(join(project, "main.py")), project);
  assert.equal(projectRoot(join(project, "pkg", "sub", "__init__.py"), dir), dir);
});
