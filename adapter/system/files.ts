// Reads text files whose paths come from a user, a request or another file (a launch's program,
// a breakpoint's source, the program a trace's header names). Such a path can name a FIFO,
// /dev/stdin or /dev/zero: a plain read waits for a writer forever (holding one of Node's few
// file-I/O threads, or the whole event loop when synchronous) or grows without end. Here only
// regular files are read, asynchronously, up to a size limit; anything else is a clear error.
import { constants, type Stats } from "node:fs";
import { open } from "node:fs/promises";

export const MiB = 1024 * 1024;
/** A Python source file: far above any real program, far below what would strain the adapter. */
export const SOURCE_LIMIT = 16 * MiB;
/** A trace file: replay parses all of it (a few times its size in memory), so a few hundred MiB at most. */
export const TRACE_LIMIT = 256 * MiB;

export class FileReadError extends Error {}

function kind(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

/** A size as people read it: "3.2 MiB", "812 bytes". */
export const sizeText = (n: number): string => (n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : `${n} bytes`);

/**
 * The UTF-8 text of a regular file of at most `limit` bytes. Rejects with a FileReadError whose
 * message says why (missing, not a regular file, too large), for callers to prefix with the path.
 */
export async function readTextFile(path: string, limit: number): Promise<string> {
  let fh;
  try {
    // O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer (no effect on a
    // regular file); the descriptor's own stat then says what was opened, with no race in between.
    fh = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new FileReadError(code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "it is a directory" : (e as Error).message);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new FileReadError(`it is ${kind(st)}, not a regular file`);
    if (st.size > limit) throw new FileReadError(`it is ${sizeText(st.size)}, more than the ${sizeText(limit)} limit`);
    // One byte more than the stat said: a file still growing is refused, never followed.
    const buf = Buffer.alloc(st.size + 1);
    let n = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      n += bytesRead;
      if (bytesRead === 0 || n === buf.length) break;
    }
    if (n > st.size) throw new FileReadError("it grew while being read");
    return buf.toString("utf8", 0, n);
  } finally {
    await fh.close();
  }
}
