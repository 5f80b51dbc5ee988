// The user's files inside the sealed run (worker side; the parent's half is workspace.ts). The
// project's folders are mounted, read-only and lazily, at the same paths as on this machine: a
// folder is listed and a file read only when the program looks it up or reads it, each time by
// asking the parent over the channel, which checks every path against the allowed roots (the child
// itself reads no file of the machine: Node's permission model forbids it). What the program
// writes, creates, renames or deletes lands in Emscripten's in-memory file system over the
// listing (the program reads back its own writes) and is reported after the run; nothing is ever
// written to disk. Each run mounts the folders afresh, so no run sees what an earlier one wrote.
//
// The mount is MEMFS with lazy nodes: a folder node asks for its listing at its first lookup or
// readdir; a file node asks for its bytes at the first access to its contents (its size comes
// from the listing, so stat needs no read).

/** What the worker asks the parent, and the answers (adapter/real/workspace.ts answers them). */
export type FsRequest = { fs: "list"; path: string } | { fs: "read"; path: string };
/** A listing: [name, "d" (a folder) or "f" (a file), size in bytes]; or a file's bytes (base64); or an errno name. */
export type FsAnswer = { entries: [string, "d" | "f", number][] } | { data: string } | { errno: FsErrno };
/** The errors the parent may answer with, by name (the child maps them to Emscripten's numbers). */
export type FsErrno = "ENOENT" | "EACCES" | "EFBIG" | "EIO" | "ENOTDIR";

/** One file the run changed, as the report after the run gives it. */
export interface Written {
  path: string;
  /** Gone at the end of the run (deleted, or renamed away). */
  deleted?: boolean;
  size?: number;
  /** Its first bytes as UTF-8 text, where they are text. */
  text?: string;
  /** The text is cut short. */
  cut?: boolean;
}

/** Bytes of a written file's text the report carries. */
const REPORT_BYTES = 64 * 1024;
/** Files the report names at most. */
const REPORT_FILES = 200;

/** The first REPORT_BYTES of a file as UTF-8 text; undefined where they are not text (a cut may split one character: up to 3 bytes fewer are tried). */
function textOf(node: { contents: Uint8Array | null }, size: number): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = node.contents?.subarray(0, Math.min(size, REPORT_BYTES)) ?? new Uint8Array(0);
  } catch {
    return undefined; // no longer readable: its size alone
  }
  for (let drop = 0; drop <= (size > REPORT_BYTES ? 3 : 0); drop++) {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, bytes.length - drop));
    } catch {
      // not text (yet)
    }
  }
  return undefined;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- Emscripten's FS is untyped JavaScript */
type Node = any;

export interface SandboxFs {
  /**
   * Mounts each folder, at the path the program sees (the parent is asked by that path), for one
   * run; the write budget starts afresh, and whatever an earlier run left in the in-memory file
   * system (a file in /tmp, a folder) is gone.
   */
  mount(folders: readonly string[]): void;
  /** What the run changed in the mounted folders, then the mounts are gone. */
  unmount(): Written[];
}

/**
 * The lazy mounts over Pyodide's FS. `ask` sends one request to the parent and waits for its
 * answer (a synchronous round trip on the channel). `maxWrite`: bytes a run may write in all, to
 * any file of the in-memory file system (past it the write fails with ENOSPC, in the program).
 */
export function sandboxFs(FS: any, errnos: Record<string, number>, ask: (r: FsRequest) => FsAnswer, maxWrite: number): SandboxFs {
  const MEMFS = FS.filesystems.MEMFS;
  const S_IFDIR = 0o040000;
  const S_IFREG = 0o100000;
  const fail = (name: string): never => {
    throw new FS.ErrnoError(errnos[name] ?? errnos.EIO);
  };
  let mounted: string[] = [];
  // The in-memory file system as it stands before any run (less the kernel's /dev and /proc):
  // anything else is what a run made, removed before the next (deepest first).
  const SKIP = new Set(["/dev", "/proc"]);
  const walk = (dir: string, out: string[]): string[] => {
    for (const name of FS.readdir(dir) as string[]) {
      if (name === "." || name === "..") continue;
      const p = dir === "/" ? `/${name}` : `${dir}/${name}`;
      if (SKIP.has(p)) continue;
      out.push(p);
      const node = FS.lookupPath(p, { follow: false }).node;
      if (FS.isDir(node.mode) && !FS.isMountpoint(node)) walk(p, out);
    }
    return out;
  };
  const pristine = new Set(walk("/", []));
  const scrub = (): void => {
    for (const p of walk("/", []).reverse()) {
      if (pristine.has(p)) continue;
      try {
        if (FS.isDir(FS.lookupPath(p, { follow: false }).node.mode)) FS.rmdir(p);
        else FS.unlink(p);
      } catch {
        // (held by a mount that is gone with its outer one, or already removed)
      }
    }
  };
  let changed = new Set<string>();
  let written = 0;
  let quiet = false;
  const inMount = (node: Node): boolean => node?.mount?.type === WORKSPACE;
  const touch = (node: Node, name?: string): void => {
    if (quiet || !inMount(node)) return;
    changed.add(name === undefined ? FS.getPath(node) : `${FS.getPath(node).replace(/\/$/, "")}/${name}`);
  };

  // Every file of the in-memory file system counts against the run's write budget; a file of a
  // mount is also marked changed. (MEMFS keeps its ops in one table, made when Pyodide loaded.)
  const fileStream = MEMFS.ops_table.file.stream;
  const fileNode = MEMFS.ops_table.file.node;
  const write = fileStream.write;
  fileStream.write = (stream: any, buffer: any, offset: number, length: number, position: number, canOwn: boolean): number => {
    const growth = Math.max(0, position + length - stream.node.usedBytes);
    if (written + growth > maxWrite) fail("ENOSPC");
    written += growth;
    touch(stream.node);
    return write(stream, buffer, offset, length, position, canOwn);
  };
  const setattr = fileNode.setattr;
  fileNode.setattr = (node: Node, attr: any): void => {
    if (attr.size !== undefined) touch(node);
    setattr(node, attr);
  };

  const base = MEMFS.ops_table.dir.node;
  /**
   * The listing of a folder node, asked once: its entries become lazy nodes beside what the program
   * made. (A node's `source` is the path its contents are asked by, fixed when it is made: one the
   * program renames still comes from where it was.)
   */
  const list = (dir: Node): void => {
    if (dir.listed) return;
    dir.listed = true;
    const answer = ask({ fs: "list", path: dir.source });
    if ("errno" in answer) return fail(answer.errno);
    if (!("entries" in answer)) return fail("EIO");
    // (nodes made here, by MEMFS.createNode, pass no op of ours: nothing counts as written)
    for (const [name, kind, size] of answer.entries) {
      if (Object.prototype.hasOwnProperty.call(dir.contents, name) || name === "." || name === ".." || name.includes("/")) continue;
      const source = `${dir.source.replace(/\/$/, "")}/${name}`;
      if (kind === "d") lazyDir(MEMFS.createNode(dir, name, S_IFDIR | 0o755, 0), source);
      else lazyFile(MEMFS.createNode(dir, name, S_IFREG | 0o644, 0), source, size);
    }
  };
  const dirOps = {
    ...base,
    lookup(parent: Node, name: string): Node {
      list(parent);
      const node = parent.contents[name];
      return node ?? fail("ENOENT");
    },
    readdir(node: Node): string[] {
      list(node);
      return base.readdir(node);
    },
    mknod(parent: Node, name: string, mode: number, dev: number): Node {
      list(parent);
      const node = base.mknod(parent, name, mode, dev);
      if (FS.isDir(node.mode)) {
        node.node_ops = dirOps;
        node.listed = true; // made by the program: nothing on the machine to list
      }
      touch(parent, name);
      return node;
    },
    rename(old: Node, dir: Node, name: string): void {
      list(dir);
      touch(old);
      base.rename(old, dir, name);
      touch(dir, name);
    },
    unlink(parent: Node, name: string): void {
      list(parent);
      touch(parent, name);
      base.unlink(parent, name);
    },
    rmdir(parent: Node, name: string): void {
      list(parent);
      base.rmdir(parent, name);
    },
    symlink(parent: Node, name: string, target: string): Node {
      list(parent);
      touch(parent, name);
      return base.symlink(parent, name, target);
    },
  };
  const lazyDir = (node: Node, source: string): Node => {
    node.node_ops = dirOps;
    node.source = source;
    node.listed = false;
    return node;
  };
  const lazyFile = (node: Node, source: string, size: number): void => {
    let loaded = false;
    let data: Uint8Array | null = null;
    let used = size;
    const load = (): void => {
      loaded = true;
      const answer = ask({ fs: "read", path: source });
      if ("errno" in answer) {
        loaded = false;
        fail(answer.errno);
      }
      data = "data" in answer ? new Uint8Array(Buffer.from(answer.data, "base64")) : fail("EIO");
      used = data.length;
    };
    Object.defineProperty(node, "contents", {
      get: () => (loaded || load(), data),
      set: (v: Uint8Array | null) => {
        loaded = true;
        data = v;
      },
    });
    Object.defineProperty(node, "usedBytes", {
      get: () => used,
      set: (v: number) => {
        if (!loaded) load();
        used = v;
      },
    });
  };
  const WORKSPACE = {
    mount(m: { opts: { source: string } }): Node {
      return lazyDir(MEMFS.createNode(null, "/", S_IFDIR | 0o755, 0), m.opts.source);
    },
  };

  return {
    mount(folders) {
      written = 0;
      changed = new Set();
      scrub();
      quiet = true;
      try {
        // Outer folders first: a folder inside another is mounted on a node of the outer mount.
        for (const folder of [...folders].sort((a, b) => a.length - b.length)) {
          try {
            FS.mkdirTree(folder);
            FS.mount(WORKSPACE, { source: folder }, folder);
            mounted.push(folder);
          } catch {
            // (a folder that cannot be a mount point here: its files are not in the sandbox, and the program meets ENOENT)
          }
        }
      } finally {
        quiet = false;
      }
    },
    unmount() {
      const report: Written[] = [];
      for (const path of [...changed].sort().slice(0, REPORT_FILES)) {
        let node: Node;
        try {
          node = FS.lookupPath(path, { follow: false }).node;
        } catch {
          report.push({ path, deleted: true });
          continue;
        }
        if (!FS.isFile(node.mode)) continue;
        const size = node.usedBytes as number;
        const text = textOf(node, size);
        report.push({ path, size, ...(text !== undefined ? { text } : {}), ...(text !== undefined && size > REPORT_BYTES ? { cut: true } : {}) });
      }
      for (const folder of mounted.reverse()) {
        try {
          FS.unmount(folder);
        } catch {
          // already gone with an outer one
        }
      }
      mounted = [];
      changed = new Set();
      return report;
    },
  };
}
