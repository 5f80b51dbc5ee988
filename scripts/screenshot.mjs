#!/usr/bin/env node
// Refreshes the README's screenshot, docs/screenshot.png: runs the end-to-end test that walks the
// README's predict example in a real VS Code (test/e2e/suites/readme.ts, through scripts/e2e.mjs,
// which installs what it needs into .e2e/ the first time) and copies the screenshot it takes.
//
//   node scripts/screenshot.mjs        (on this checkout; E2E_VSIX=FILE.vsix for a package)
import { spawnSync } from "node:child_process";
import { copyFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const shots = join(root, ".e2e", "screenshots");
const NAME = /-readme-predict\.png$/;
const t0 = Date.now();

const r = spawnSync(process.execPath, [join(root, "scripts", "e2e.mjs")], { stdio: "inherit", env: { ...process.env, E2E_FILTER: "^README: " } });
if (r.status !== 0) {
  console.error(`screenshot: the end-to-end test failed (exit ${r.status ?? r.signal}); docs/screenshot.png is unchanged`);
  process.exit(1);
}
let names = [];
try {
  names = readdirSync(shots).filter((n) => NAME.test(n) && statSync(join(shots, n)).mtimeMs >= t0);
} catch {
  // no folder: no screenshot
}
if (!names.length) {
  console.error(`screenshot: the test took no screenshot in ${shots} (is the page driver running?)`);
  process.exit(1);
}
const newest = names.sort().at(-1);
copyFileSync(join(shots, newest), join(root, "docs", "screenshot.png"));
console.log(`screenshot: docs/screenshot.png from ${newest}`);
