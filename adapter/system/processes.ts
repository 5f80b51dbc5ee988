// The processes a session starts (the tracer running the program, debugpy and the program it
// launches) end with it. Each is spawned leading its own process group; ending one kills that
// group and every descendant found under it in /proc (macOS: `ps`), which also reaches children
// that left the group (a program's `start_new_session=True` helpers, debugpy's launcher and
// debuggee). Windows has no groups: `taskkill /T` ends the tree (system/platforms.ts). What is
// still running when the adapter exits goes with it.
import { spawnSync, type ChildProcess } from "node:child_process";
import { processTableCommand, treeKillCommand } from "./platforms.js";
import { readdirSync, readFileSync } from "node:fs";

/** `ps -o pid= -o ppid=`'s lines as each process's parent. */
export function parsePsTable(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of text.split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(line);
    if (m) out.set(Number(m[1]), Number(m[2]));
  }
  return out;
}

/** Each live process's parent, from /proc, or `ps` where there is no /proc (macOS); empty where neither answers. */
function parents(): Map<number, number> {
  const ps = processTableCommand();
  if (ps) {
    const r = spawnSync(ps.command, ps.args, { encoding: "utf8", timeout: 10_000 });
    return r.status === 0 ? parsePsTable(r.stdout) : new Map();
  }
  const out = new Map<number, number>();
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      out.set(Number(name), ppid);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Every process below `pid`, children before their children. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const [p, pp] of parents()) {
    const list = children.get(pp);
    if (list) list.push(p);
    else children.set(pp, [p]);
  }
  const out: number[] = [];
  for (let i = -1; i < out.length; i++) for (const c of children.get(i < 0 ? pid : out[i]) ?? []) out.push(c);
  return out;
}

const signal = (pid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(pid, sig);
  } catch {
    // gone, or not ours
  }
};

/**
 * Kills `pid`, its process group and all its descendants with their groups. They are stopped
 * first, so that none starts another process between the walk and the kill.
 */
export function killTree(pid: number | undefined): void {
  if (!pid) return;
  const command = treeKillCommand(pid);
  if (command) {
    // Windows: no process groups, no SIGSTOP; taskkill walks the tree itself.
    spawnSync(command.command, command.args, { stdio: "ignore", windowsHide: true, timeout: 10_000 });
    return;
  }
  const seen = new Set([pid]);
  signal(pid, "SIGSTOP");
  for (let round = 0; round < 3; round++) {
    const found = descendants(pid).filter((p) => !seen.has(p));
    if (round > 0 && !found.length) break;
    for (const p of found) seen.add(p);
    for (const p of found) signal(p, "SIGSTOP");
  }
  if (process.platform !== "win32") for (const p of seen) signal(-p, "SIGKILL");
  for (const p of seen) signal(p, "SIGKILL");
}

const owned = new Set<ChildProcess>();

/** Ends `child`'s tree when the adapter exits; a child that exits first takes its group with it. */
export function own(child: ChildProcess): ChildProcess {
  if (!owned.size) process.on("exit", endOwned);
  owned.add(child);
  child.once("exit", () => {
    owned.delete(child);
    // What it started in its own group and left behind (its descendants were handed to init).
    if (child.pid && process.platform !== "win32") signal(-child.pid, "SIGKILL");
    if (!owned.size) process.off("exit", endOwned);
  });
  return child;
}

function endOwned(): void {
  for (const c of owned) killTree(c.pid);
}
