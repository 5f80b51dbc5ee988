// Real interpreters of a given Python version, for the tests that check that version's traces.
// Looked for where Pythons are installed: `python3.N` on PATH, /usr/bin and /usr/local/bin, then
// pyenv's versions (~/.pyenv/versions/3.N.*/bin/python3, newest first). Each candidate is asked
// which Python it is, as the adapter asks (adapter/real/hostRun.ts: whichPython); one that cannot
// answer (a pyenv shim for a version not selected) is passed over.
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { whichPython } from "../../adapter/real/hostRun.js";

export interface RealPython {
  exe: string;
  /** MAJOR.MINOR, as trajectories name it. */
  version: string;
}

function candidates(version: string): string[] {
  const out = [`python${version}`, `/usr/bin/python${version}`, `/usr/local/bin/python${version}`];
  const pyenv = join(process.env.PYENV_ROOT || join(homedir(), ".pyenv"), "versions");
  if (existsSync(pyenv)) {
    const micro = (v: string): number => Number(v.slice(version.length + 1)) || 0;
    const installed = readdirSync(pyenv).filter((v) => v.startsWith(`${version}.`) && /^\d+$/.test(v.slice(version.length + 1)));
    for (const v of installed.sort((a, b) => micro(b) - micro(a))) out.push(join(pyenv, v, "bin", "python3"));
  }
  return out;
}

/** The first real Python `version` ("3.12") found, or why there is none (a test's skip reason). */
export async function realPython(version: string): Promise<RealPython | string> {
  const tried = candidates(version);
  for (const cmd of tried) {
    try {
      const found = await whichPython(cmd);
      if (found.version === version) return found;
    } catch {
      // not this one
    }
  }
  return `no Python ${version} found (tried ${tried.join(", ")}): install one to check its traces`;
}
