// adapter/python/guard.py CMD, which compare mode runs debugpy's adapter under: whatever CMD's
// tree starts ends with the guard, also a process whose parent died first and left it an orphan in
// a session of its own. That is how debugpy's tree comes apart when its client is killed: debugpy
// ends the launcher while the program's helpers run on. A guard that only knew the pids it was
// told, and walked /proc from them at the end, lost such orphans (CI: a `sleep` started with
// start_new_session=True outlived a SIGKILL to the adapter).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { guardScript } from "../adapter/real/debugpy.js";
import { descendants, killTree } from "../adapter/system/processes.js";
import { alive, stillAlive } from "./support/processes.js";

// A middle process starts a helper in a session of its own and exits at once: the helper's
// parent is gone before anything ends it. Then CMD prints the helper's pid and exits with 3, or spins.
const program = (spin: boolean): string =>
  "import subprocess, sys\n" +
  "mid = subprocess.Popen([sys.executable, '-c', \"import subprocess; p = subprocess.Popen(['sleep', '300'], start_new_session=True); print(p.pid, flush=True)\"], stdout=subprocess.PIPE)\n" +
  "helper = int(mid.stdout.readline())\n" +
  "mid.wait()\n" +
  "print(helper, flush=True)\n" +
  (spin ? "while True:\n    pass\n" : "sys.exit(3)\n");

/** Starts the guard over `program(spin)`; resolves with the orphaned helper's pid and the guard's exit. */
async function guarded(spin: boolean) {
  const child = spawn("python3", ["-B", guardScript(), "python3", "-c", program(spin)], { stdio: ["ignore", "pipe", "inherit", "pipe"] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once("exit", (code, signal) => res({ code, signal })));
  const line = await new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout! }).once("line", res);
    child.once("exit", () => rej(new Error("the guard exited before its command printed")));
  });
  return { helper: Number(line), exited, child };
}

test("a guard whose command exits ends the orphan its tree left behind, and exits with the command's code", { timeout: 60_000 }, async () => {
  const { helper, exited } = await guarded(false);
  try {
    assert.deepEqual(await exited, { code: 3, signal: null });
    assert.deepEqual(await stillAlive([helper]), [], "the orphaned helper is gone");
  } finally {
    killTree(helper); // one the guard missed outlives no test
  }
});

test("a guard whose lifeline ends (its driver is gone) ends its command and the orphan", { timeout: 60_000 }, async () => {
  const { helper, exited, child } = await guarded(true);
  // The command and the orphan, adopted by the guard.
  const below = descendants(child.pid!);
  try {
    assert.ok(below.length === 2 && below.includes(helper) && below.every(alive), `the command and the orphaned helper run below the guard: ${below}`);
    child.stdio[3]!.destroy(); // as a killed driver's end of the pipe closes
    await exited;
    assert.deepEqual(await stillAlive(below), [], "the command and the orphaned helper are gone");
  } finally {
    // A guard that failed leaves nothing spinning behind the test.
    for (const pid of [child.pid!, helper, ...below]) killTree(pid);
  }
});
