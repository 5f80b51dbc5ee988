// Temp files and folders that carry their creator's pid in their names, so that those of a process
// that died without cleaning up (killed, crashed) can be removed by a later one. Kept free of
// other modules: the extension uses it too.
import { lstatSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Whether a process with this pid exists (one of another user's counts). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the entries of `dir` whose names match `pattern` (the creator's pid its first group)
 * where that process is gone and the entry is the user's own; returns their paths. A pid taken
 * again by another process keeps its entries: they are left rather than removed from under it.
 */
export function removeStale(pattern: RegExp, dir = tmpdir()): string[] {
  const uid = process.getuid?.();
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const pid = Number(pattern.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue;
    const path = join(dir, name);
    try {
      if (uid !== undefined && lstatSync(path).uid !== uid) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // Gone already, or not ours to remove.
    }
  }
  return removed;
}
