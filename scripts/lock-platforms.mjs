#!/usr/bin/env node
// Completes package-lock.json with the per-platform optional packages it lacks, so that `npm ci`
// accepts it. node-llama-cpp lists a prebuilt binary package per platform as optional
// dependencies (@node-llama-cpp/mac-arm64-metal, win-x64, ...), all at its own version; where the
// registry has no such version of a platform's package (here: only the Linux ones of 3.22.1),
// `npm install` leaves it out of the lock, and `npm ci` refuses a lock that misses a dependency.
// Each missing package gets an entry at the version asked for, with the os / cpu / libc fields of
// its newest published version, so that npm skips it on every other platform without fetching it;
// on its own platform npm tries it and, being optional, goes on without it when it is not there.
// Run it after `npm install` changes the lock:   node scripts/lock-platforms.mjs [--check]
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const lockPath = join(root, "package-lock.json");
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const packages = lock.packages;

/** Where npm would look for `name` from the package at `from`: its own node_modules, then each folder above. */
function located(from, name) {
  for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf("/node_modules/")))) {
    const at = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
    if (packages[at]) return at;
    if (!dir) return undefined;
  }
}

const missing = [];
for (const [at, entry] of Object.entries(packages))
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) if (!located(at, name)) missing.push({ name, spec });

if (process.argv.includes("--check")) {
  if (missing.length) {
    console.error(`package-lock.json lacks ${missing.map((m) => `${m.name}@${m.spec}`).join(", ")}: run node scripts/lock-platforms.mjs`);
    process.exit(1);
  }
  console.log("package-lock.json has every optional dependency");
  process.exit(0);
}

for (const { name, spec } of missing) {
  const fields = JSON.parse(execFileSync("npm", ["view", name, "os", "cpu", "libc", "engines", "license", "--json"], { encoding: "utf8" }));
  const entry = { version: spec };
  for (const k of ["cpu", "libc", "license"]) if (fields[k]) entry[k] = fields[k];
  entry.optional = true;
  if (fields.os) entry.os = fields.os;
  if (fields.engines) entry.engines = fields.engines;
  packages[`node_modules/${name}`] = entry;
  console.log(`package-lock.json: ${name}@${spec} (${[fields.os, fields.cpu].flat().filter(Boolean).join(" ")})`);
}
// npm writes the entries sorted by path.
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b, "en"))));
writeFileSync(lockPath, JSON.stringify(lock, null, 2) + "\n");
if (!missing.length) console.log("package-lock.json has every optional dependency");
