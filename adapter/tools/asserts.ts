// Executing asserts: each `assert (<call>) == (<expected>)` in a separate Python process with a
// timeout (python/checker.py), so that a prediction is scored by what Python says of it.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { tracerScript } from "../real/run.js";
import { findPython } from "../real/hostRun.js";

// ---- executing asserts ----

/** `assert (<call>) == (<expected>)`, run after the program's code. */
export interface AssertCase {
  code: string;
  /** A call of the function, e.g. `f([1, 2])`: one expression that calls `func`. */
  call: string;
  /** One expression, e.g. a repr. */
  expected: string;
  /** The function the call must call (default "f"). */
  func?: string;
}

export interface AssertResult {
  pass: boolean;
  /** Why it did not pass: "AssertionError", "timeout", an exception, a rejected text. */
  error?: string;
}

/** checker.py, beside tracer.py; its text runs with `-c`, so that the asserts' folder is the temporary one and not ours. */
const checkerText = (): Promise<string> => readFile(join(dirname(tracerScript()), "checker.py"), "utf8");

/**
 * Executes each case's assert in a separate Python process, `timeout` seconds each (default 3):
 * one checker process for the batch, one forked child per assert, in a temporary directory.
 * Results are in the order of the cases; a checker that dies fails the items it had not answered.
 */
export async function checkAsserts(cases: readonly AssertCase[], opts: { python?: string; timeout?: number } = {}): Promise<AssertResult[]> {
  if (!cases.length) return [];
  const timeout = opts.timeout ?? 3;
  if (!(timeout > 0)) throw new RangeError(`the assert timeout must be positive, got ${timeout}`);
  const python = await findPython(opts.python);
  const checker = await checkerText();
  const cwd = await mkdtemp(join(tmpdir(), "ndbg-check-"));
  const results: AssertResult[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(python, ["-B", "-s", "-c", checker, String(timeout)], {
        cwd,
        stdio: ["pipe", "pipe", "pipe"],
        detached: process.platform !== "win32",
        env: { ...process.env, PYTHONHASHSEED: "0", PYTHONIOENCODING: "utf-8" },
      });
      let stderr = "";
      let partial = "";
      // Every item has its own deadline; the whole batch gets their sum and a margin.
      const timer = setTimeout(() => {
        try {
          if (child.pid && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
          else child.kill("SIGKILL");
        } catch {
          child.kill("SIGKILL");
        }
      }, (cases.length * (timeout + 1) + 10) * 1000);
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        const lines = (partial + d).split("\n");
        partial = lines.pop() ?? "";
        for (const l of lines) {
          if (!l.trim()) continue;
          try {
            const r = JSON.parse(l) as AssertResult;
            results.push(r.error !== undefined ? { pass: r.pass === true, error: String(r.error) } : { pass: r.pass === true });
          } catch {
            stderr += l + "\n";
          }
        }
      });
      child.stderr.setEncoding("utf8").on("data", (d: string) => {
        if (stderr.length < 8192) stderr += d;
      });
      child.stdin.on("error", () => undefined); // a checker that died: reported at close
      child.on("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`cannot start Python "${python}": ${e.message}`));
      });
      child.on("close", () => {
        clearTimeout(timer);
        const why = stderr.trim().split("\n").slice(-1)[0] || "the checker ended early";
        while (results.length < cases.length) results.push({ pass: false, error: `not checked: ${why}` });
        resolve();
      });
      for (const c of cases) child.stdin.write(JSON.stringify({ code: c.code, call: c.call, expected: c.expected, func: c.func ?? "f" }) + "\n");
      child.stdin.end();
    });
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
  return results.slice(0, cases.length);
}
