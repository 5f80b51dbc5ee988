// Environment variables that a test file sets for the adapters, probe children and inference
// hosts it starts (they inherit this process's), each test with a verdict cache of its own.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";

export interface TestEnv<K extends string> {
  /** A fresh verdict cache ($XDG_CACHE_HOME) under `dir`, and of `names` only those in `env`; returns the cache folder. */
  fresh(dir: string, env?: Partial<Record<K, string>>): string;
  /** Puts back the values the file started with. */
  restore(): void;
}

export function testEnv<K extends string>(names: readonly K[]): TestEnv<K> {
  const all = ["XDG_CACHE_HOME", ...names];
  const saved = Object.fromEntries(all.map((k) => [k, process.env[k]]));
  return {
    fresh(dir, env = {}) {
      const cache = mkdtempSync(join(dir, "cache-"));
      for (const k of names) delete process.env[k];
      process.env.XDG_CACHE_HOME = cache;
      Object.assign(process.env, env);
      return cache;
    },
    restore() {
      for (const k of all) if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    },
  };
}
