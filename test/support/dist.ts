// The built bundles the tests run over the real boundaries (dist/adapter.js, dist/ndbg.js), the
// build itself, and running a command to its end.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "..", "..");
export const ADAPTER = join(ROOT, "dist", "adapter.js");
export const NDBG = join(ROOT, "dist", "ndbg.js");

/**
 * Builds dist/ (scripts/build.mjs); a failed build fails the caller with esbuild's message. Under
 * `npm test` the build is done once before the suites run (NDBG_DIST_BUILT): files run side by
 * side, and a rebuild would rewrite the bundles and the .wasm while another file's adapter loads them.
 */
export function buildDist(): void {
  if (process.env.NDBG_DIST_BUILT === "1") return;
  const b = spawnSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
  assert.equal(b.status, 0, `build failed: ${b.stderr}`);
}

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (killed after `timeout` ms); a failure is a result (code -1 when it had no exit code), never a rejection. */
export function sh(cmd: string, args: string[], opts: { timeout: number; cwd?: string }): Promise<Result> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd ?? ROOT, timeout: opts.timeout, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `ndbg ARGS...` from the built CLI, each run killed after `timeout` ms. */
export const ndbgWithin =
  (timeout: number) =>
  (...args: string[]): Promise<Result> =>
    sh(process.execPath, [NDBG, ...args], { timeout });
