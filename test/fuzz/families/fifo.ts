// A named pipe (FIFO): a path that blocks whoever opens it to read until a writer comes.
import { execFileSync } from "node:child_process";

export function mkfifoSync(path: string): void {
  execFileSync("mkfifo", [path]);
}
