// The Python version is part of a program's state: CPython's traces differ between versions.
// 3.12 runs list, dict and set comprehensions inline (PEP 709), in the frame of the code that
// holds them, where 3.11 gives each a frame of its own (`<listcomp>`, `<dictcomp>`, `<setcomp>`);
// generator expressions and lambdas have frames of their own on both. The frame grammar and the
// reachable states (adapter/rules/grammar.ts, reach.ts) admit only the frames of the session's version. Real
// 3.10 to 3.13 traces are checked against them (test/slow/pyversion-traces.test.ts): 3.13 traces as
// 3.12, 3.10 as 3.11, so a version before 3.12 is read as 3.11 and any later one as 3.12.
import { PYTHON_VERSION_RE, pythonMinor as minor } from "../format/trajectory.js";

/** The versions a model that does not say was trained on: every model of format 1, the bundled one among them, saw 3.11 traces only. */
export const UNSAID_MODEL_PYTHON: readonly string[] = ["3.11"];
/** The trajectory format of a native model that does not say: the one before the Python version was in the header. */
export const UNSAID_MODEL_FORMAT = 1;

/** A user's "pythonVersion": MAJOR.MINOR such as "3.12"; the error says what is wrong. */
export function checkPythonVersion(v: unknown, what = '"pythonVersion"'): string {
  if (typeof v !== "string" || !PYTHON_VERSION_RE.test(v.trim()))
    throw new Error(`${what} must be a Python version such as "3.11" or "3.12" (major.minor), not ${JSON.stringify(v)}`);
  if (minor(v.trim()) < 8) throw new Error(`${what} must be Python 3.8 or newer (as the tracer needs), not ${v.trim()}`);
  return v.trim();
}

/** Orders versions oldest first. */
export const byVersion = (a: string, b: string): number => minor(a) - minor(b);

/**
 * The version whose traces the model is shown for a session on `python`: that one where the
 * model knows it, else the newest it knows below it, else the oldest it knows.
 */
export function modelPython(known: readonly string[], python: string): string {
  const sorted = [...known].sort(byVersion);
  if (sorted.includes(python)) return python;
  return sorted.filter((v) => byVersion(v, python) < 0).at(-1) ?? sorted[0];
}
