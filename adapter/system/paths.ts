// Whether a path lies below a folder: by the path's text, with no file system access (callers
// resolve symlinks first where that matters). One rule for the project's files, the sandbox's
// roots and the tracer's user files. Without case where the platform's file systems are
// (Windows, macOS): `C:\Project\a.py` is below `c:\project`.
import { homedir } from "node:os";
import { join } from "node:path";
import { pathRules, type Platform } from "./platforms.js";

/** The user's cache folder for ndbg: $XDG_CACHE_HOME/ndbg, else ~/.cache/ndbg. */
export function cacheRoot(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "ndbg");
}

/** Whether `p` is strictly below `folder` (both absolute and normalized, in the platform's separators). */
export function under(p: string, folder: string, platform?: Platform): boolean {
  const { caseless, sep } = pathRules(platform);
  const [a, f] = caseless ? [p.toLowerCase(), folder.toLowerCase()] : [p, folder];
  return a.startsWith(f.endsWith(sep) ? f : f + sep) && a !== f;
}
