#!/usr/bin/env node
// `npm run demo`: what predict mode does, on examples/shop.py (a class, methods, an exception caught),
// each state beside the real run's where there is one:
//   1. predict mode as users get it: the program runs sealed; every state is exact and known;
//   2. the same script with one method not written yet: the model predicts its value, marked;
//   3. the model alone (--no-compute), the paper's neural debugger, on the same script and actions.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const ACTIONS = "step_over,step_over,step_into,step_over,step_return,step_over,step_over,step_over,step_over,step_over,step_over";
const steps = [
  ["1. Predict mode: examples/shop.py runs sealed (CPython in WebAssembly; nothing reaches this machine). Every state is the real one.", ["examples/shop.py", "--compare"]],
  ["2. The same script with Cart.total() not written yet (examples/shop_unfinished.py): the model predicts only its value, marked.", ["examples/shop_unfinished.py", "--breakpoints", "26"]],
  ["3. The model alone (--no-compute) on examples/shop.py: every state predicted, against the real run.", ["examples/shop.py", "--no-compute", "--compare"]],
];
let failed = 0;
for (const [title, args] of steps) {
  process.stdout.write(`\n${title}\n\n`);
  const actions = args[0].includes("unfinished") ? "continue,step_over" : ACTIONS;
  const r = spawnSync(process.execPath, [join(root, "dist/ndbg.js"), "predict", ...args, "--actions", actions, "--threads", "1"], { cwd: root, stdio: "inherit" });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
