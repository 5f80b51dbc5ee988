// Finding a Python to run: the interpreters tried when the user names none, one way to ask an
// interpreter a question (a one-line script that runs no user code, within a time limit), and
// one search over the candidates that says why each was passed over.
import { spawn } from "node:child_process";
import { pythonCandidates } from "../system/platforms.js";

/** Tried in this order when no interpreter is named (this platform's: system/platforms.ts). */
export const PYTHON_CANDIDATES: readonly string[] = pythonCandidates();

/** Runs `cmd -c script`; resolves its stdout, rejects with its last stderr line (or its exit code) or why it could not start. */
export function runPythonScript(cmd: string, script: string, timeoutMs = 15_000, env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const child = spawn(cmd, ["-c", script], { stdio: ["ignore", "pipe", "pipe"], ...(env ? { env } : {}) });
    // Not spawn's own timeout option: its timer outlives a command that fails to start.
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(out);
      reject(new Error(err.trim().split("\n").pop() || (signal ? `killed by ${signal}` : `exit code ${code}`)));
    });
  });
}

/**
 * The first interpreter that `probe` accepts: `preferred` alone when given (a setting that cannot
 * be used is an error, not a silent fallback), else each of PYTHON_CANDIDATES. Answers are kept
 * in `cache`, failures not (a later install is seen by the next search). `failure` words the
 * error from the named interpreter and every reason ("python3: it has no debugpy").
 */
export async function firstPython<T>(
  preferred: string | undefined,
  probe: (cmd: string) => Promise<T>,
  cache: Map<string, Promise<T>>,
  failure: (named: string | undefined, why: string[]) => Error,
): Promise<T> {
  const named = preferred?.trim() || undefined;
  const why: string[] = [];
  for (const cmd of named ? [named] : PYTHON_CANDIDATES) {
    let p = cache.get(cmd);
    if (!p) {
      p = probe(cmd);
      cache.set(cmd, p);
      p.catch(() => cache.delete(cmd));
    }
    try {
      return await p;
    } catch (e) {
      why.push(`${cmd}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  throw failure(named, why);
}
