// Whether processes are still running, read from /proc: for tests that check that nothing a
// session or a run started outlives it.
import { readFileSync } from "node:fs";

/** Whether a process is there and not a zombie (a zombie runs nothing; its parent reaps it). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** The processes of `pids` still running after up to `ms` (empty as soon as all are gone). */
export async function stillAlive(pids: number[], ms = 5000): Promise<number[]> {
  const until = Date.now() + ms;
  let left = pids.filter(alive);
  while (left.length && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    left = left.filter(alive);
  }
  return left;
}
