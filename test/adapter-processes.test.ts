// Nothing the session started runs on after it, over the real protocol. A record launch of a
// program that loops forever (`while True: pass`) and starts two children, one in its own
// session (start_new_session=True, out of the program's process group): after a disconnect with
// terminateDebuggee, after SIGTERM to the adapter and after SIGKILL to it (then the tracer notices
// its driver is gone), every one of those processes must be gone, read from /proc. Compare mode
// likewise for debugpy's adapter, its launcher and the program running under it.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DebugClient } from "@vscode/debugadapter-testsupport";
import { descendants } from "../adapter/system/processes.js";
import { buildDist } from "./support/dist.js";
import { THREAD, launchToFirstStop, openSession } from "./support/dap.js";
import { alive, stillAlive } from "./support/processes.js";

let dir = "";
before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-processes-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A program that writes its pid and its children's to `pids` (one line per run), then spins forever. */
function spinner(name: string, pids: string, asCall: boolean): string {
  const file = join(dir, name);
  const start =
    `import os, subprocess\n` +
    `a = subprocess.Popen(["sleep", "300"], start_new_session=True)\n` +
    `b = subprocess.Popen(["sleep", "300"])\n` +
    `with open(${JSON.stringify(pids)}, "a") as f:\n` +
    `    f.write("%d %d %d\\n" % (os.getpid(), a.pid, b.pid))\n`;
  writeFileSync(file, asCall ? `def spin():\n    while True:\n        pass\n\n${start}` : `${start}while True:\n    pass\n`);
  return file;
}

/** The pids the program's runs wrote (three a run), once `runs` runs have written them. */
async function pidsIn(file: string, runs: number): Promise<number[]> {
  const read = (): string[] => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((l) => /^\d+ \d+ \d+$/.test(l)) : []);
  const until = Date.now() + 20_000;
  while (read().length < runs && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const pids = read().join(" ").split(" ").map(Number);
  assert.equal(pids.length, 3 * runs, "the program started");
  return pids;
}

const adapterPid = (dc: DebugClient): number => (dc as unknown as { _adapterProcess: { pid: number } })._adapterProcess.pid;

for (const end of ["disconnect", "SIGTERM", "SIGKILL"] as const) {
  test(`record mode: the looping program and its children are gone after ${end === "disconnect" ? "a disconnect" : `${end} to the adapter`}`, { timeout: 60_000 }, async () => {
    const pids = join(dir, `record-${end}.txt`);
    const program = spinner(`record_${end}.py`, pids, false);
    const s = await openSession(20_000);
    try {
      await s.dc.initializeRequest();
      // The recording runs for as long as the limits let it: ended only by the session's end.
      const launched = s.dc.launch({ mode: "record", trusted: true, program, maxSteps: 100_000_000, timeout: 600 }).catch((e: Error) => e);
      const started = await pidsIn(pids, 1);
      assert.deepEqual(started.filter(alive), started, "running before the end");
      const adapter = adapterPid(s.dc);
      if (end === "disconnect") {
        await s.dc.disconnectRequest({ terminateDebuggee: true });
        assert.ok((await launched) instanceof Error, "the launch fails: the session ended");
      } else process.kill(adapter, end);
      assert.deepEqual(await stillAlive(started), [], `still running after ${end}`);
      if (end !== "disconnect") assert.deepEqual(await stillAlive([adapter]), []);
    } finally {
      // The session has ended (disconnected, or its adapter killed): nothing is left to answer a
      // disconnect, and a request to an adapter that has exited would wait for ever.
      (s.dc as unknown as { stopAdapter(): void }).stopAdapter();
    }
  });
}

for (const end of ["disconnect", "SIGKILL"] as const) {
  test(`compare mode: debugpy, its launcher and the looping program are gone after ${end === "disconnect" ? "a disconnect" : "SIGKILL to the adapter"}`, { timeout: 90_000 }, async () => {
    const pids = join(dir, `compare-${end}.txt`);
    const program = spinner(`compare_${end}.py`, pids, true);
    const s = await openSession(30_000);
    try {
      const { first } = await launchToFirstStop(s.dc, { mode: "compare", predictor: "record", trusted: true, program, call: "spin()", stopOnEntry: true, timeout: 60 }, program);
      assert.equal(first.event, "stopped");
      // Line 1: the recording's run (its children are gone with it); line 2: the program under debugpy.
      const [, , , real, a, b] = await pidsIn(pids, 2);
      const adapter = adapterPid(s.dc);
      const tree = [real, a, b, ...descendants(adapter)];
      assert.ok(tree.length > 4, "debugpy's adapter and launcher run");
      void s.dc.continueRequest(THREAD).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(alive(real), "the program spins under debugpy");
      if (end === "disconnect") await s.dc.disconnectRequest({ terminateDebuggee: true });
      else process.kill(adapter, "SIGKILL");
      // After a SIGKILL, debugpy notices its client is gone and ends what it runs: seconds on cores shared with other tests.
      assert.deepEqual(await stillAlive(tree, 20_000), [], `still running after ${end}`);
    } finally {
      // The session has ended (disconnected, or its adapter killed): nothing is left to answer a
      // disconnect, and a request to an adapter that has exited would wait for ever.
      (s.dc as unknown as { stopAdapter(): void }).stopAdapter();
    }
  });
}
