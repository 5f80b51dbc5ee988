// Nothing lingers: the warm adapter's socket is private to the user whatever the umask and goes
// with the process (its stdin closed, or SIGTERM); compare mode's temp folder goes with the
// session, also when the adapter is told to stop mid-session; and the folders and sockets of a
// process that died without cleaning up are removed by the next one. Each adapter runs with a
// temp folder of its own (TMPDIR), so what is left is what it left.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DebugClient } from "@vscode/debugadapter-testsupport";
import { removeStale } from "../adapter/system/stale.js";
import { ADAPTER, ROOT, buildDist } from "./support/dist.js";
import { firstOf } from "./support/dap.js";

let dir = "";
before(() => {
  buildDist();
  dir = mkdtempSync(join(tmpdir(), "ndbg-cleanup-"));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A pid no process has now: one that just exited. */
function deadPid(): number {
  const p = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(p.stdout);
}

test("removeStale removes the user's entries of dead processes only", () => {
  const tmp = mkdtempSync(join(dir, "stale-"));
  const dead = deadPid();
  const names = {
    deadDir: `ndbg-compare-${dead}-abc123`,
    deadSocket: `ndbg-${dead}-0123abcd.sock`,
    mine: `ndbg-compare-${process.pid}-abc123`,
    parent: `ndbg-compare-${process.ppid}-abc123`,
    other: `ndbg-compare-abc123`,
  };
  for (const n of [names.deadDir, names.mine, names.parent, names.other]) mkdirSync(join(tmp, n));
  writeFileSync(join(tmp, names.deadDir, "ndbg_driver.py"), "");
  writeFileSync(join(tmp, names.deadSocket), "");
  assert.deepEqual(removeStale(/^ndbg-compare-(\d+)-\w{6}$/, tmp), [join(tmp, names.deadDir)]);
  assert.deepEqual(removeStale(/^ndbg-(\d+)-[0-9a-f]{8}\.sock$/, tmp), [join(tmp, names.deadSocket)]);
  assert.deepEqual(readdirSync(tmp).sort(), [names.mine, names.other, names.parent].sort());
  assert.deepEqual(removeStale(/^x-(\d+)$/, join(tmp, "absent")), []);
});

test("the warm adapter's socket is 0600 under umask 000 and goes when its stdin closes or on SIGTERM", { timeout: 60_000 }, async () => {
  for (const how of ["stdin", "SIGTERM"] as const) {
    const path = join(dir, `adapter-${how}.sock`);
    const proc = spawn("/bin/sh", ["-c", `umask 000; exec "${process.execPath}" "${ADAPTER}" --listen="${path}"`], { stdio: ["pipe", "pipe", "pipe"] });
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no listening line")), 20_000);
        proc.stdout!.once("data", () => (clearTimeout(timer), resolve()));
      });
      assert.ok(statSync(path).isSocket());
      assert.equal(statSync(path).mode & 0o777, 0o600, `mode ${(statSync(path).mode & 0o777).toString(8)}`);
      const exited = new Promise((r) => proc.once("exit", r));
      if (how === "stdin") proc.stdin!.end();
      else proc.kill("SIGTERM");
      await exited;
      assert.equal(existsSync(path), false, `${how}: the socket is still there`);
    } finally {
      proc.kill();
    }
  }
});

test("compare mode's temp folder goes with the session: after disconnect, and when the adapter gets SIGTERM mid-session", { timeout: 120_000 }, async () => {
  const CALLS = join(ROOT, "test", "fixtures", "compare", "calls.py");
  for (const how of ["disconnect", "SIGTERM"] as const) {
    const tmp = mkdtempSync(join(dir, `tmp-${how}-`));
    const dc = new DebugClient(process.execPath, ADAPTER, "neural-python", { env: { ...process.env, TMPDIR: tmp } });
    dc.defaultTimeout = 60_000;
    await dc.start();
    const adapter = (dc as unknown as { _adapterProcess: ChildProcess })._adapterProcess;
    try {
      const stopped = firstOf(dc, ["stopped"]);
      await Promise.all([
        dc.waitForEvent("initialized").then(() => dc.configurationDoneRequest()),
        dc.launch({ program: CALLS, call: "chain(1)", mode: "compare", predictor: "record", trusted: true, stopOnEntry: true }),
      ]);
      await stopped;
      const during = readdirSync(tmp).filter((n) => n.startsWith("ndbg-compare-"));
      assert.equal(during.length, 1, `one compare folder during the session: ${during}`);
      const exited = new Promise((r) => adapter.once("exit", r));
      if (how === "disconnect") await dc.disconnectRequest({ terminateDebuggee: true });
      else adapter.kill("SIGTERM");
      await exited;
      assert.deepEqual(readdirSync(tmp).filter((n) => n.startsWith("ndbg-compare-")), [], `${how}: left behind`);
    } finally {
      // stop() waits for an exit that has happened already.
      if (adapter.exitCode === null && adapter.signalCode === null) await dc.stop();
    }
  }
});

/** A DebugClient on a socket the test opened (its own start() only knows TCP ports). */
class SocketClient extends DebugClient {
  attach(socket: Socket): void {
    this.connect(socket, socket);
  }
}

test("the warm adapter ends its sessions' processes and temp folders when its parent goes", { timeout: 120_000 }, async () => {
  const tmp = mkdtempSync(join(dir, "tmp-warm-"));
  const path = join(tmp, "adapter.sock");
  const proc = spawn(process.execPath, [ADAPTER, `--listen=${path}`], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, TMPDIR: tmp } });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no listening line")), 20_000);
      proc.stdout!.once("data", () => (clearTimeout(timer), resolve()));
    });
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = createConnection(path, () => resolve(s));
      s.once("error", reject);
    });
    const dc = new SocketClient(process.execPath, ADAPTER, "neural-python");
    dc.defaultTimeout = 60_000;
    dc.attach(socket);
    const stopped = firstOf(dc, ["stopped"]);
    await Promise.all([
      dc.waitForEvent("initialized").then(() => dc.configurationDoneRequest()),
      dc.launch({ program: join(ROOT, "test", "fixtures", "compare", "calls.py"), call: "chain(1)", mode: "compare", predictor: "record", trusted: true, stopOnEntry: true }),
    ]);
    await stopped;
    assert.equal(readdirSync(tmp).filter((n) => n.startsWith("ndbg-compare-")).length, 1);
    const exited = new Promise((r) => proc.once("exit", r));
    proc.stdin!.end();
    await exited;
    socket.destroy();
    assert.deepEqual(readdirSync(tmp), [], "left behind");
  } finally {
    proc.kill();
  }
});
