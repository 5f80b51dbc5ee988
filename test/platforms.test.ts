// Each platform's branch, tested here whatever the machine (adapter/system/platforms.ts): how a
// process tree ends, where the processes' parents are read, which Pythons are tried, and how a
// path is found below a folder. The Linux branches are also the ones every other test runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { llamaBinding, pathRules, processTableCommand, pythonCandidates, treeKillCommand } from "../adapter/system/platforms.js";
import { under } from "../adapter/system/paths.js";
import { descendants, killTree, parsePsTable } from "../adapter/system/processes.js";
import { stillAlive } from "./support/processes.js";

test("ending a process tree: taskkill /T /F on Windows, signals to the group and its descendants elsewhere", () => {
  assert.deepEqual(treeKillCommand(4242, "win32"), { command: "taskkill", args: ["/pid", "4242", "/T", "/F"] });
  assert.equal(treeKillCommand(4242, "linux"), undefined);
  assert.equal(treeKillCommand(4242, "darwin"), undefined);
});

test("the processes' parents: /proc on Linux, ps on macOS (its output read), nothing to read on Windows", () => {
  assert.equal(processTableCommand("linux"), undefined);
  assert.equal(processTableCommand("win32"), undefined);
  const ps = processTableCommand("darwin")!;
  assert.deepEqual(ps, { command: "ps", args: ["-A", "-o", "pid=", "-o", "ppid="] });
  // This machine's own ps, where it has one, gives what the macOS branch reads.
  const here = spawnSync(ps.command, ps.args, { encoding: "utf8" });
  assert.equal(here.status, 0, here.stderr);
  const table = parsePsTable(here.stdout);
  assert.equal(table.get(process.pid), process.ppid, "this process and its parent");
  assert.deepEqual([...parsePsTable("  12     1\n 345   12\nnot a row\n")], [[12, 1], [345, 12]]);
});

test("a tree killed here: the child and the grandchild it started go", async () => {
  const child = spawn("sh", ["-c", "sleep 60 & sleep 60"], { stdio: "ignore", detached: true });
  await new Promise((r) => setTimeout(r, 300));
  const below = descendants(child.pid!);
  assert.ok(below.length >= 1, "the shell's sleeps are found below it");
  killTree(child.pid);
  assert.deepEqual(await stillAlive([child.pid!, ...below]), [], "the shell and its sleeps are gone");
});

test("the Pythons tried: the py launcher then PATH's on Windows, Homebrew's on macOS and never the stub, PATH's then the system's on Linux", () => {
  assert.deepEqual(pythonCandidates("win32"), ["py", "python", "python3"]);
  assert.deepEqual(pythonCandidates("darwin"), ["python3", "/opt/homebrew/bin/python3", "/usr/local/bin/python3", "python"]);
  assert.ok(!pythonCandidates("darwin").includes("/usr/bin/python3"));
  assert.deepEqual(pythonCandidates("linux"), ["python3", "python", "/usr/bin/python3"]);
});

test("below a folder: by case where Linux's file systems are, without it on Windows and macOS, in each one's separators", () => {
  assert.deepEqual(pathRules("linux"), { caseless: false, sep: "/" });
  assert.equal(under("/home/u/proj/a.py", "/home/u/proj", "linux"), true);
  assert.equal(under("/home/u/Proj/a.py", "/home/u/proj", "linux"), false);
  assert.equal(under("/home/u/project2/a.py", "/home/u/proj", "linux"), false, "a sibling whose name starts alike is not below");
  assert.equal(under("/home/u/proj", "/home/u/proj", "linux"), false, "a folder is not below itself");
  assert.equal(under("/Users/u/Proj/a.py", "/users/u/proj", "darwin"), true);
  assert.equal(under("C:\\Users\\u\\Proj\\a.py", "c:\\users\\u\\proj", "win32"), true);
  assert.equal(under("C:\\Users\\u\\Proj\\a.py", "c:\\users\\u\\proj\\", "win32"), true);
  assert.equal(under("C:\\Users\\u\\Project2\\a.py", "C:\\Users\\u\\Proj", "win32"), false);
  assert.equal(under("C:/Users/u/Proj/a.py", "C:\\Users\\u\\Proj", "win32"), false, "callers normalize to the platform's separators first");
});

test("node-llama-cpp's build for each backend: the CPU is the Metal build with no layer offloaded on Apple silicon, the plain build elsewhere", () => {
  assert.deepEqual(llamaBinding("cpu", "darwin", "arm64"), { gpu: "metal", gpuLayers: 0 });
  assert.deepEqual(llamaBinding("cpu", "darwin", "x64"), { gpu: false });
  assert.deepEqual(llamaBinding("cpu", "linux", "x64"), { gpu: false });
  assert.deepEqual(llamaBinding("cpu", "linux", "arm64"), { gpu: false });
  assert.deepEqual(llamaBinding("cpu", "win32", "x64"), { gpu: false });
  assert.deepEqual(llamaBinding("metal", "darwin", "arm64"), { gpu: "metal" });
  for (const p of ["linux", "win32"] as const) for (const b of ["cuda", "vulkan"] as const) assert.deepEqual(llamaBinding(b, p, "x64"), { gpu: b });
});
