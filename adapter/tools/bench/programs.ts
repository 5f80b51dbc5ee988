// The bench's fixed programs: small functions of the shape the native model is trained on (an
// entry function `f` with a loop, helpers, lists, strings and dicts). They are written to a
// temporary folder for each run, so the bench never writes into the project (debugpy leaves
// __pycache__ beside what it runs).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface BenchProgram {
  name: string;
  source: string;
  /** The entry call. */
  call: string;
  /** Where `continue` stops: a line inside the loop that calls a helper (stepIn enters it, stepOut leaves it). */
  breakpoint?: number;
}

/**
 * One cycle of moves, from a stop on the breakpoint: into the helper, a line in it, out of it,
 * over the rest of the loop body, and on to the breakpoint again. Each of the four actions is
 * timed in every cycle, and the program stays in its loop (debugpy keeps running it).
 */
export const CYCLE = ["continue", "stepIn", "next", "stepOut", "next"] as const;
export type MoveName = "next" | "stepIn" | "stepOut" | "continue";
export const ACTIONS: readonly MoveName[] = ["next", "stepIn", "stepOut", "continue"];

const lines = (...l: string[]): string => l.join("\n") + "\n";

export const PROGRAMS: readonly BenchProgram[] = [
  {
    name: "helpers.py",
    source: lines(
      "def g(x):",
      "    y = x * 3",
      "    if y % 2:",
      "        y += 1",
      "    return y // 2",
      "",
      "",
      "def f(n):",
      "    total = 0",
      "    for i in range(n):",
      "        s = g(i)",
      "        total += s",
      "    return total",
    ),
    call: "f(40)",
    breakpoint: 11,
  },
  {
    name: "words.py",
    source: lines(
      "def norm(w):",
      "    w = w.strip().lower()",
      "    return w.replace('-', '')",
      "",
      "",
      "def f(text):",
      "    counts = {}",
      "    words = text.split(' ')",
      "    for w in words:",
      "        k = norm(w)",
      "        counts[k] = counts.get(k, 0) + 1",
      "    return sorted(counts.items())",
    ),
    call: "f('the Cat saw-a dog and The cat-a')",
    breakpoint: 10,
  },
  {
    name: "recursion.py",
    source: lines(
      "def depth(xs, d):",
      "    if not xs:",
      "        return d",
      "    head = xs[0]",
      "    return depth(xs[1:], d + head % 3)",
      "",
      "",
      "def f(xs):",
      "    acc = []",
      "    for x in xs:",
      "        acc.append(depth(list(range(x)), 0))",
      "    return acc",
    ),
    call: "f([3, 1, 4, 1, 5, 2, 6, 3])",
    breakpoint: 11,
  },
];

/** The long session: a loop that runs for thousands of lines, stepped over one line at a time. */
export const LONG_PROGRAM: BenchProgram = {
  name: "long.py",
  source: lines(
    "def f(n):",
    "    s = 0",
    "    k = 1",
    "    for i in range(n):",
    "        s += i * k",
    "        k = (k * 7) % 11",
    "    return s",
  ),
  call: "f(5000)",
};

/** Writes the programs into a new temporary folder; returns it. */
export function writePrograms(programs: readonly BenchProgram[]): string {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-bench-"));
  for (const p of programs) writeFileSync(join(dir, p.name), p.source);
  return dir;
}

/**
 * A script that runs a program's entry call the way a user's launch would under debugpy: the
 * module imported from its folder, then the call on the last line (where the session starts).
 */
export function driverFor(dir: string, p: BenchProgram): { name: string; source: string; entryLine: number } {
  const mod = p.name.replace(/\.py$/, "");
  const source = lines("import sys", `sys.path.insert(0, ${JSON.stringify(dir)})`, `from ${mod} import *`, `result = ${p.call}`);
  return { name: `run_${p.name}`, source, entryLine: 4 };
}
