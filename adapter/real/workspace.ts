// The user's files as the sealed run sees them (the parent's half; the child's is sandboxFs.ts).
// The child asks for a folder's listing or a file's bytes by path; each path is answered here,
// after resolving it (symlinks included), only inside the allowed roots:
// - the project: the launch's `cwd`, else the program's folder, up to the root of its package
//   (the highest folder above it that still has an __init__.py), less version control folders,
//   virtual environments, node_modules and caches;
// - the libraries of the launch's Python: its site-packages, found by asking that Python in
//   isolated mode (-I -S: no site, no .pth file runs), less their caches. They are seen at
//   /site-packages/N, not at their paths here, so that the sandbox shows nothing of this
//   machine's folders but the project's.
// Only folders and regular files are offered (no FIFO, device or socket), each file up to a bound,
// a run's reads up to a bound in all; past one the program gets an error and the Debug Console
// says which bound. Nothing is ever written: writes stay in the child's memory.
import { execFile } from "node:child_process";
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { MiB, sizeText } from "../system/files.js";
import { under } from "../system/paths.js";
import type { FsAnswer, FsRequest } from "./sandboxFs.js";

/** The bounds of what one run may read. */
export const SANDBOX_LIMITS = {
  /** Bytes of one file. */
  file: 32 * MiB,
  /** Bytes of all files one run reads. */
  total: 256 * MiB,
  /** Files one run reads. */
  files: 20_000,
  /** Entries of one folder's listing. */
  entries: 10_000,
};

/** Folders of a project that are never offered: version control, virtual environments, dependencies of other languages, caches. */
const NOT_OFFERED = new Set([
  ".git", ".hg", ".svn", ".bzr", ".jj",
  ".venv", "venv", ".env", "env", ".tox", ".nox", ".conda",
  "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".ipynb_checkpoints", ".cache",
]);

/** A root of the sandbox: a folder of this machine, seen inside at the same path (a project) or at /site-packages/N (a library). */
export interface SandboxRoot {
  /** The folder's path here (absolute, not resolved through symlinks). */
  path: string;
  /** "project": the user's folder (the list of folders not offered applies); "library": a site-packages. */
  kind: "project" | "library";
}

/** Where the libraries' folders are seen in the sandbox. */
export const LIBRARIES_AT = "/site-packages";

/** The project folder of a launch: its cwd, else the program's folder up to the root of its package. */
export function projectRoot(program: string, cwd?: string): string {
  if (cwd) return path.resolve(cwd);
  let dir = path.dirname(path.resolve(program));
  while (existsSync(path.join(dir, "__init__.py")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

// Run with -I -S, so that no .pth file of it runs: site's venv() is not called, so a virtual
// environment is found as site finds it (a pyvenv.cfg beside the executable or one folder up).
const SITE_SCRIPT = `
import json, os, site, sys
prefixes, user = [sys.prefix], True
here = os.path.dirname(os.path.abspath(sys.executable))
for cfg in (os.path.join(here, "pyvenv.cfg"), os.path.join(os.path.dirname(here), "pyvenv.cfg")):
    if os.path.isfile(cfg):
        with open(cfg, encoding="utf-8") as f:
            keys = dict((k.strip().lower(), v.strip().lower()) for k, _, v in (line.partition("=") for line in f))
        system = keys.get("include-system-site-packages") == "true"
        prefixes, user = [os.path.dirname(cfg)] + (prefixes if system else []), system
        break
paths = site.getsitepackages(prefixes) + ([site.getusersitepackages()] if user else [])
print(json.dumps(paths))
`;

const asked = new Map<string, Promise<string[]>>();
/**
 * The site-packages folders of a Python, asked of it in isolated mode without site (so no .pth
 * file of it runs); those that exist. Empty where the Python cannot say (a warning is no error:
 * the program then meets its missing modules as holes).
 */
export function sitePackages(python: string): Promise<string[]> {
  let found = asked.get(python);
  if (!found) {
    found = new Promise<string[]>((resolve) => {
      execFile(python, ["-I", "-S", "-B", "-c", SITE_SCRIPT], { timeout: 10_000, windowsHide: true, maxBuffer: MiB }, (err, stdout) => {
        if (err) return resolve([]);
        try {
          const paths = JSON.parse(String(stdout)) as unknown;
          const dirs = Array.isArray(paths) ? paths.filter((p): p is string => typeof p === "string" && path.isAbsolute(p)) : [];
          resolve([...new Set(dirs.map((p) => path.resolve(p)))].filter((p) => isDir(p)));
        } catch {
          resolve([]);
        }
      });
    });
    asked.set(python, found);
  }
  return found;
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function realOrNull(p: string): string | undefined {
  try {
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}

const inside = (p: string, root: string): boolean => p === root || under(p, root);

/** Whether a name may be offered in a root of this kind: of a project, none of NOT_OFFERED; of a library, no cache. */
const nameOffered = (name: string, kind: SandboxRoot["kind"]): boolean => (kind === "library" ? name !== "__pycache__" : !NOT_OFFERED.has(name));

/** A virtual environment, whatever its name: a folder with a pyvenv.cfg. */
const isVenv = (folder: string): boolean => existsSync(path.join(folder, "pyvenv.cfg"));

/** The file system of one sealed session: the roots, and what each run has read so far. */
export class SandboxFiles {
  /** The roots whose real folder exists, with it and the path the program sees (`at`). */
  private readonly roots: (SandboxRoot & { real: string; at: string })[];
  private read = { bytes: 0, files: 0 };
  /** What the program met this run (a bound, a file it may not read), for the Debug Console. */
  notices: string[] = [];

  constructor(roots: readonly SandboxRoot[]) {
    this.roots = [];
    for (const r of roots) {
      const real = realOrNull(r.path);
      // The file system's root, or a folder above Pyodide's own (/lib, /tmp, ...), is no project: nothing is mounted for it.
      if (!real || path.resolve(r.path) === "/" || real === "/" || !path.isAbsolute(r.path)) continue;
      if (this.roots.some((o) => o.path === path.resolve(r.path))) continue;
      const at = r.kind === "library" ? `${LIBRARIES_AT}/${this.roots.filter((o) => o.kind === "library").length}` : path.resolve(r.path);
      this.roots.push({ ...r, path: path.resolve(r.path), real, at });
    }
  }

  /** The folders the child mounts (the paths the program sees). */
  get mounts(): string[] {
    return this.roots.map((r) => r.at);
  }

  /** The library folders as the program sees them, for the sandbox's sys.path. */
  get libraries(): string[] {
    return this.roots.filter((r) => r.kind === "library").map((r) => r.at);
  }

  /** A new run: its reads start from nothing. */
  startRun(): void {
    this.read = { bytes: 0, files: 0 };
    this.notices = [];
  }

  private notice(text: string): void {
    if (!this.notices.includes(text)) this.notices.push(text);
  }

  /**
   * The path here of a sandbox path, resolved, where it may be offered (with the kinds of the
   * roots that hold it, by the path seen and by the real path): inside a root by both, with no
   * part of it that is not offered.
   */
  private allowed(seen: string): { real: string; kinds: SandboxRoot["kind"][] } | undefined {
    if (typeof seen !== "string" || !path.isAbsolute(seen) || seen.includes("\0") || path.normalize(seen) !== seen) return undefined;
    const given = this.roots.filter((r) => inside(seen, r.at)).sort((a, b) => b.at.length - a.at.length)[0];
    if (!given) return undefined;
    const rel = path.relative(given.at, seen);
    if (!this.offered(given.path, rel, given.kind)) return undefined;
    const real = realOrNull(path.join(given.path, rel));
    if (!real) return undefined;
    const within = this.roots.filter((r) => inside(real, r.real)).sort((a, b) => b.real.length - a.real.length)[0];
    if (!within || !this.offered(within.real, path.relative(within.real, real), within.kind)) return undefined;
    return { real, kinds: [given.kind, within.kind] };
  }

  /** Whether a path inside a root passes the parts not offered: each part by its name (nameOffered), and the folders of a project with a pyvenv.cfg. */
  private offered(root: string, rel: string, kind: SandboxRoot["kind"]): boolean {
    if (rel.startsWith("..") || path.isAbsolute(rel)) return false;
    const parts = rel.split(path.sep).filter(Boolean);
    if (!parts.every((part) => nameOffered(part, kind))) return false;
    if (kind === "library") return true;
    for (let i = 1; i <= parts.length; i++) if (isVenv(path.join(root, ...parts.slice(0, i)))) return false;
    return true;
  }

  /** The answer to one request of the child. */
  answer(request: FsRequest): FsAnswer {
    const found = this.allowed(request.path);
    if (!found) return { errno: "ENOENT" };
    try {
      return request.fs === "list" ? this.list(request.path, found.real, found.kinds) : this.readFile(request.path, found.real);
    } catch {
      return { errno: "EIO" };
    }
  }

  /**
   * A folder's entries. The folder itself is allowed (in roots of `kinds`), so an entry that is no
   * symlink lies in the same roots and needs only its own name checked by their rules; a symlink
   * gets every check of a path (allowed), since it may lead anywhere.
   */
  private list(p: string, real: string, kinds: readonly SandboxRoot["kind"][]): FsAnswer {
    if (!statSync(real).isDirectory()) return { errno: "ENOTDIR" };
    const names = readdirSync(real).sort();
    const entries: [string, "d" | "f", number][] = [];
    for (const name of names) {
      if (entries.length >= SANDBOX_LIMITS.entries) {
        this.notice(`${p} has more than ${SANDBOX_LIMITS.entries} entries: the sandbox shows the first ${SANDBOX_LIMITS.entries}`);
        break;
      }
      if (!kinds.every((kind) => nameOffered(name, kind))) continue;
      let st: Stats;
      try {
        st = lstatSync(path.join(real, name));
        if (st.isSymbolicLink()) {
          const target = this.allowed(path.join(p, name));
          if (!target) continue;
          st = statSync(target.real);
        } else if (kinds.includes("project") && st.isDirectory() && isVenv(path.join(real, name))) continue;
      } catch {
        continue; // gone, or unreadable: not offered
      }
      if (st.isDirectory()) entries.push([name, "d", 0]);
      else if (st.isFile()) entries.push([name, "f", st.size]);
    }
    return { entries };
  }

  private readFile(p: string, real: string): FsAnswer {
    // O_NONBLOCK: a FIFO put in place of a file after the listing never holds the adapter.
    const fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return { errno: "EACCES" };
      if (st.size > SANDBOX_LIMITS.file) {
        this.notice(`${p} is ${sizeText(st.size)}: past the sandbox's ${sizeText(SANDBOX_LIMITS.file)} for one file, the program cannot read it (EFBIG)`);
        return { errno: "EFBIG" };
      }
      if (this.read.bytes + st.size > SANDBOX_LIMITS.total || this.read.files + 1 > SANDBOX_LIMITS.files) {
        this.notice(`the run read ${this.read.files} files, ${sizeText(this.read.bytes)}: past the sandbox's ${sizeText(SANDBOX_LIMITS.total)} or ${SANDBOX_LIMITS.files} files in all, ${p} cannot be read (EFBIG)`);
        return { errno: "EFBIG" };
      }
      const data = Buffer.alloc(st.size);
      let off = 0;
      while (off < data.length) {
        const n = readSync(fd, data, off, data.length - off, off);
        if (n === 0) break;
        off += n;
      }
      this.read.bytes += off;
      this.read.files++;
      return { data: data.subarray(0, off).toString("base64") };
    } finally {
      closeSync(fd);
    }
  }
}
