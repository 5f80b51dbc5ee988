// Whether a path lies below a folder: by the path's text, with no file system access (callers
// resolve symlinks first where that matters). One rule for the project's files, the sandbox's
// roots and the tracer's user files.
import { sep } from "node:path";

/** Whether `p` is strictly below `folder` (both absolute and normalized, in this platform's separators). */
export function under(p: string, folder: string): boolean {
  return p.startsWith(folder.endsWith(sep) ? folder : folder + sep) && p !== folder;
}
