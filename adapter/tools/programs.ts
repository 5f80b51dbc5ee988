// The programs an evaluation runs: JSONL lines shaped like CRUXEval's (code, input, output, id,
// optionally entry; or "script": true), or a folder of scripts; each line is checked before anything runs.
import { open, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";

/**
 * One program of a CRUXEval-shaped file: the call is `f(<input>)`, or `<entry>(<input>)` when the
 * line names its function. A script (a file of a folder of scripts, or a line with "script": true and
 * input "") runs whole, its module level traced.
 */
export interface Program {
  id: string;
  code: string;
  input: string;
  output?: string;
  /** The function the input is for, when it is not `f`. */
  entry?: string;
  script?: boolean;
}

/** The function a program's input is for. */
export function entryOf(prog: Program): string {
  return prog.entry ?? "f";
}

/** The call of a program's function with `args` (default: its input). */
export function callOf(prog: Program, args = prog.input): string {
  return `${entryOf(prog)}(${args})`;
}

/** How the tracer runs a program: its entry call, or the whole script. */
export function traceOf(prog: Program): { source: string; call?: string } {
  return prog.script ? { source: prog.code } : { source: prog.code, call: callOf(prog) };
}

/** A data file that cannot be used (the message says where and why). */
export class DataError extends Error {}

/**
 * Reads a JSONL file of programs (code, input, output, id); every line is checked before anything
 * runs. A folder instead is read as scripts: each `NAME.py` in it, by name.
 */
export async function readPrograms(file: string, opts: { limit?: number; needOutput?: boolean } = {}): Promise<Program[]> {
  const limit = opts.limit ?? Number.MAX_SAFE_INTEGER;
  if ((await stat(file).catch(() => undefined))?.isDirectory()) {
    if (opts.needOutput) throw new DataError(`${file} is a folder of scripts: a script has no call whose output or input could be predicted`);
    const names = (await readdir(file)).filter((f) => f.endsWith(".py")).sort().slice(0, limit);
    return Promise.all(names.map(async (f) => ({ id: f.slice(0, -3), code: await readFile(join(file, f), "utf8"), input: "", script: true })));
  }
  let fh;
  try {
    fh = await open(file, "r");
  } catch (e) {
    throw new DataError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  const out: Program[] = [];
  const ids = new Set<string>();
  let n = 0;
  try {
    for await (const line of createInterface({ input: fh.createReadStream({ encoding: "utf8" }), crlfDelay: Infinity })) {
      n++;
      if (!line.trim()) continue;
      let r: Record<string, unknown>;
      try {
        r = JSON.parse(line);
      } catch {
        throw new DataError(`${file}:${n}: not a JSON object`);
      }
      if (typeof r !== "object" || r === null || typeof r.code !== "string" || typeof r.input !== "string")
        throw new DataError(`${file}:${n}: a program needs "code" and "input" strings (CRUXEval-shaped: code, input, output, id)`);
      if (r.script !== undefined && typeof r.script !== "boolean") throw new DataError(`${file}:${n}: "script" must be true or false`);
      const script = r.script === true;
      if (script && (r.entry !== undefined || r.input !== ""))
        throw new DataError(`${file}:${n}: a script runs whole: it has no "entry", and its "input" is ""`);
      if (script && opts.needOutput) throw new DataError(`${file}:${n}: a script has no call whose output or input could be predicted`);
      if (opts.needOutput && typeof r.output !== "string") throw new DataError(`${file}:${n}: an "output" string is needed for this evaluation`);
      if (r.entry !== undefined && (typeof r.entry !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(r.entry)))
        throw new DataError(`${file}:${n}: "entry" must be the name of the program's function`);
      const id = typeof r.id === "string" && r.id ? r.id : `line${n}`;
      if (ids.has(id)) throw new DataError(`${file}:${n}: id "${id}" appears twice`);
      ids.add(id);
      if (out.length < limit)
        out.push({
          id,
          code: r.code,
          input: r.input,
          ...(typeof r.output === "string" ? { output: r.output } : {}),
          ...(typeof r.entry === "string" ? { entry: r.entry } : {}),
          ...(script ? { script } : {}),
        });
    }
  } finally {
    await fh.close();
  }
  if (!out.length) throw new DataError(`${file} holds no program`);
  return out;
}
