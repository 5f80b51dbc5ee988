// The tracer ends what the program started even when it keeps starting more: a child that forks
// in a loop, each grandchild in a session of its own, may fork between the tracer's walk of /proc
// and its kill; that grandchild's orphan comes back to the tracer (its subreaper), which must end
// it too. Found by the fuzz suite (programs, seed 3: a double-forked daemon outlived its run).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runTrace } from "../adapter/real/hostRun.js";
import { stillAlive } from "./support/processes.js";

const dir = mkdtempSync(join(tmpdir(), "ndbg-forks-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Processes whose command line names `path` (forks of the tracer keep its command line). */
function naming(path: string): number[] {
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return readFileSync(`/proc/${n}/cmdline`, "latin1").includes(path);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test("a child forking daemons: none outlives the run", { timeout: 120_000 }, async () => {
  for (let i = 0; i < 30; i++) {
    const program = join(dir, `forker${i}.py`);
    writeFileSync(
      program,
      // The daemon's way: a child in a session of its own forks the daemon and exits; the
      // program ends at once, while that may still be under way.
      "import os, time\n" + "if os.fork() == 0:\n" + "    os.setsid()\n" + "    if os.fork() == 0:\n" + "        time.sleep(60)\n" + "    os._exit(0)\n" + "y = 1\n",
    );
    const r = await runTrace(program, { timeout: 5 });
    assert.equal(r.exit.status, "normal", r.exit.value);
    const left = await stillAlive(naming(program), 2000);
    for (const p of left) process.kill(p, "SIGKILL");
    assert.deepEqual(left, [], `run ${i}: processes left running`);
  }
});
