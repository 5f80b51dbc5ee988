// The layout the model knows. The bundled model was trained only on programs printed by
// ast.unparse (no docstrings, comments, blank lines or annotations); on a user's file it counts
// lines as if those were not there. python/canonical.py re-prints the file that way (parsing it,
// never running it) and maps every line both ways, statement by statement; this module obtains
// that map and answers line questions with it.
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { tracerScript } from "../real/run.js";
import { findPython } from "../real/hostRun.js";

export const LAYOUTS = ["canonical", "original"] as const;
export type LayoutName = (typeof LAYOUTS)[number];

/** Why the canonical layout could not be had (no usable Python, a syntax error, a timeout). */
export class LayoutError extends Error {}

const DEFAULT_TIMEOUT_MS = 10_000;

/** A user's file and its canonical text, with the line map between them. */
export class CanonicalLayout {
  constructor(
    /** The program as the model was trained to read it. */
    readonly text: string,
    /** toCanonical[L]: canonical line of the statement holding user line L, 0 where none does. */
    private readonly forward: readonly number[],
    /** toUser[C]: first user line of canonical line C's statement, 0 where none. */
    private readonly backward: readonly number[],
  ) {}

  /**
   * The canonical line of user line `line`: its statement's, else (a comment, a blank line, a
   * docstring, `else:`) the next statement's, else the last statement's.
   */
  toCanonical(line: number): number {
    return nearest(this.forward, line) ?? line;
  }

  /** The canonical line of the statement at or after user line `line`; undefined past the last statement (a breakpoint there is never hit). */
  statementAfter(line: number): number | undefined {
    for (let l = Math.max(1, line); l < this.forward.length; l++) if (this.forward[l]) return this.forward[l];
    return undefined;
  }

  /** The user line of canonical line `line`: the first line of its statement (the next statement's for a line such as `else:`). */
  toUser(line: number): number {
    return nearest(this.backward, line) ?? line;
  }
}

/** xs[line], else the first mapped entry after it, else the last one before it. */
function nearest(xs: readonly number[], line: number): number | undefined {
  if (xs[line]) return xs[line];
  for (let l = Math.max(1, line + 1); l < xs.length; l++) if (xs[l]) return xs[l];
  for (let l = Math.min(line - 1, xs.length - 1); l >= 1; l--) if (xs[l]) return xs[l];
  return undefined;
}

/** canonical.py, beside tracer.py (adapter/python/ in the source tree, dist/python/ beside the bundle). */
export function canonicalScript(): string {
  return path.join(path.dirname(tracerScript()), "canonical.py");
}

/**
 * The canonical layout of `source`. Runs canonical.py on an isolated interpreter (-I -S: no
 * site, no user paths; cwd a temporary folder) so nothing of the user's folder is imported.
 * Rejects with a LayoutError saying why it cannot be had.
 */
export async function canonicalLayout(source: string, opts: { python?: string; timeoutMs?: number } = {}): Promise<CanonicalLayout> {
  let python: string;
  try {
    python = await findPython(opts.python);
  } catch (e) {
    throw new LayoutError((e as Error).message);
  }
  const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn(python, ["-I", "-S", "-B", canonicalScript()], { cwd: tmpdir(), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new LayoutError(`reading the program's layout took more than ${timeout / 1000} s`));
    }, timeout);
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdin.on("error", () => undefined); // a process that died early: reported at close
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(new LayoutError(`cannot start Python "${python}": ${e.message}`));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0 || code === 2) resolve(stdout);
      else reject(new LayoutError(`canonical.py failed (exit code ${code}): ${stderr.trim().split("\n").at(-1) ?? ""}`));
    });
    child.stdin.end(source, "utf8");
  });
  let r: { canonical?: unknown; to_canonical?: unknown; to_user?: unknown; error?: unknown };
  try {
    r = JSON.parse(out);
  } catch {
    throw new LayoutError(`canonical.py wrote no map: ${JSON.stringify(out.slice(0, 200))}`);
  }
  if (typeof r.error === "string") throw new LayoutError(r.error);
  if (typeof r.canonical !== "string" || !Array.isArray(r.to_canonical) || !Array.isArray(r.to_user)) throw new LayoutError("canonical.py wrote a map without its parts");
  const lines = (xs: unknown[]): number[] => xs.map((x) => (typeof x === "number" ? x : 0));
  return new CanonicalLayout(r.canonical, lines(r.to_canonical), lines(r.to_user));
}
