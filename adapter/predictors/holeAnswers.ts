// The values the user gave a program's holes, kept in its project so that later launches use them
// without stopping: `.vscode/neural-python-holes.json`, plain JSON, to be read and edited by hand
// (VS Code's "Neural Python: Forget Answered Holes" deletes it). An answer is keyed by the program
// (relative to the project), the hole's name and what its value depends on: a stub's arguments,
// or, for a missing call (`x = mod.f(a)`, `input()`), its line and the locals where it is called,
// each a repr as the Variables view shows it. A file that cannot be read is never written over:
// the user's answers are not lost to a typo.
import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { readTextFile } from "../system/files.js";
import type { Hole } from "../engine/predictor.js";
import { HOLE_ANSWERS_FILE } from "../protocol.js";

export { HOLE_ANSWERS_FILE };

/** One answer, as the file holds it. */
export interface SavedAnswer {
  program: string;
  hole: string;
  /** A missing call's line (a stub's answer depends on its arguments only). */
  line?: number;
  /** The stub's arguments, or the locals where the missing call is made. */
  arguments: Record<string, string>;
  value: string;
}

const ABOUT =
  "Values given to the holes of your programs (functions not written yet, modules that are not installed, input()) while debugging with Neural Python. Each is used, without stopping, where the same program reaches the same hole with the same arguments. Edit a value, or delete an entry or the file, as you like.";

/** More than any hand-kept file of answers: a larger one is not read (nor written over). */
const ANSWERS_LIMIT = 4 * 1024 * 1024;

/** A hole's key: the same hole with the same arguments (and, for a missing call, at the same line). */
const keyOf = (a: Pick<SavedAnswer, "program" | "hole" | "line" | "arguments">): string =>
  JSON.stringify([a.program, a.hole, a.line ?? null, Object.entries(a.arguments).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))]);

export class HoleAnswers {
  private readonly byKey = new Map<string, SavedAnswer>();
  /** Why the file could not be read (then it is not written either). */
  problem?: string;

  private constructor(
    /** The file. */
    readonly path: string,
    /** The program, as the file names it: relative to the project's folder. */
    private readonly program: string,
  ) {}

  /** The answers kept for `program` in the project at `root`; none where there is no file yet. */
  static async open(root: string, program: string): Promise<HoleAnswers> {
    const store = new HoleAnswers(join(root, HOLE_ANSWERS_FILE), relative(root, program).split("\\").join("/"));
    if (!existsSync(store.path)) return store;
    let text: string;
    try {
      // (as every file a workspace names is read: a FIFO or a device there never blocks the launch)
      text = await readTextFile(store.path, ANSWERS_LIMIT);
    } catch (e) {
      store.problem = `cannot read ${store.path}: ${(e as Error).message}`;
      return store;
    }
    try {
      const data = JSON.parse(text) as { answers?: unknown };
      if (!Array.isArray(data.answers)) throw new Error(`no "answers" list`);
      for (const a of data.answers as unknown[]) {
        const s = a as SavedAnswer;
        const strings = (o: unknown): boolean => !!o && typeof o === "object" && Object.values(o).every((v) => typeof v === "string");
        if (typeof s?.program !== "string" || typeof s.hole !== "string" || typeof s.value !== "string" || !strings(s.arguments) || (s.line !== undefined && !Number.isInteger(s.line)))
          throw new Error(`an answer is not {"program", "hole", "arguments", "value"[, "line"]}: ${JSON.stringify(a).slice(0, 120)}`);
        store.byKey.set(keyOf(s), s);
      }
    } catch (e) {
      store.problem = `${store.path} is not a file of answers (${(e as Error).message}): it is neither used nor written over`;
    }
    return store;
  }

  private key(hole: Pick<Hole, "name" | "arguments">, line?: number): string {
    return keyOf({ program: this.program, hole: hole.name, ...(line !== undefined ? { line } : {}), arguments: hole.arguments });
  }

  /** The value kept for this hole with these arguments (`line`: a missing call's). */
  get(hole: Pick<Hole, "name" | "arguments">, line?: number): string | undefined {
    return this.byKey.get(this.key(hole, line))?.value;
  }

  /** Keeps a value for this hole with these arguments, in the file; refused where the file could not be read. */
  async set(hole: Pick<Hole, "name" | "arguments">, value: string, line?: number): Promise<void> {
    if (this.problem) throw new Error(this.problem);
    const answer: SavedAnswer = { program: this.program, hole: hole.name, ...(line !== undefined ? { line } : {}), arguments: hole.arguments, value };
    this.byKey.set(this.key(hole, line), answer);
    await mkdir(dirname(this.path), { recursive: true });
    // Written whole and moved into place: a reader never sees half a file. The temporary file is
    // created anew (a link planted under its name is removed, never written through).
    const temp = `${this.path}.${process.pid}.tmp`;
    await rm(temp, { force: true });
    await writeFile(temp, JSON.stringify({ about: ABOUT, answers: [...this.byKey.values()] }, null, 2) + "\n", { flag: "wx" });
    await rename(temp, this.path);
  }
}
