// Step latency over the real protocol: starts an adapter (default dist/adapter.js), launches
// examples/demo.py in predict mode with the bundled model, and times each step in (request to
// `stopped`) from a cold first stop; then prints the medians and the adapter's memory, with its
// child processes (the inference host) apart.
//   node scripts/step-latency.mjs [--adapter dist/adapter.js] [--steps 40] [--runs 3] [--threads 1]
// With --server cold|preload|warm, each run starts a warm adapter (`--listen`; no preload, a
// preload without warm-up, a preload with warm-up), waits for its preload line, and times the
// first session's first stop and first step over its socket.
import { DebugClient } from "@vscode/debugadapter-testsupport";
import { spawn } from "node:child_process";
import { createConnection } from "node:net";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const adapter = arg("adapter", join(ROOT, "dist", "adapter.js"));
const steps = Number(arg("steps", "40"));
const runs = Number(arg("runs", "3"));
const threads = Number(arg("threads", "1"));
const server = arg("server", "");
const program = join(ROOT, "examples", "demo.py");

/** A warm adapter on a socket, once it has said `ready` (a regular expression on its stderr). */
async function startServer(args, ready) {
  const dir = mkdtempSync(join(tmpdir(), "ndbg-lat-"));
  const path = join(dir, "a.sock");
  const proc = spawn(process.execPath, [adapter, `--listen=${path}`, "--gpu=cpu", ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`not ready: ${err}`)), 60_000);
    proc.stderr.setEncoding("utf8").on("data", (d) => {
      err += d;
      if (ready.test(err)) (clearTimeout(t), resolve());
    });
    proc.stdout.setEncoding("utf8").on("data", (d) => {
      if (ready.test(d)) (clearTimeout(t), resolve());
    });
  });
  const socket = await new Promise((resolve) => {
    const s = createConnection(path, () => resolve(s));
  });
  const dc = new DebugClient(process.execPath, adapter, "neural-python");
  dc.connect(socket, socket);
  return { dc, pid: proc.pid, stop: () => (proc.stdin.end(), rmSync(dir, { recursive: true, force: true })) };
}

const kb = (pid, field) => {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
};
const children = (pid) =>
  readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const s = readFileSync(`/proc/${n}/stat`, "utf8");
        return Number(s.slice(s.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const stopped = (dc) => new Promise((resolve) => dc.once("stopped", resolve));

const all = [];
const firsts = [];
const firstSteps = [];
let memory;
for (let r = 0; r < runs; r++) {
  const srv = server
    ? await startServer(server === "cold" ? [] : ["--preload=", ...(server === "warm" ? [] : ["--warm=false"])], server === "cold" ? /listening/ : server === "warm" ? /warmed up/ : /preloaded/)
    : undefined;
  const dc = srv?.dc ?? new DebugClient(process.execPath, adapter, "neural-python");
  dc.defaultTimeout = 60_000;
  if (!srv) await dc.start();
  const t0 = performance.now();
  const first = stopped(dc);
  await Promise.all([dc.waitForEvent("initialized").then(() => dc.configurationDoneRequest()), dc.launch({ program, call: "total([3, 1, 4, 1, 5, 9, 2, 6])", mode: "predict", gpu: "cpu", threads })]);
  await first;
  firsts.push(performance.now() - t0);
  for (let i = 0; i < steps; i++) {
    const t = performance.now();
    const next = Promise.race([stopped(dc), dc.waitForEvent("terminated").then(() => "end")]);
    await dc.stepInRequest({ threadId: 1 });
    if ((await next) === "end") break;
    all.push(performance.now() - t);
    if (i === 0) firstSteps.push(all.at(-1));
  }
  const pid = srv?.pid ?? dc._adapterProcess?.pid;
  if (pid) {
    const kids = children(pid);
    memory = { adapterRssMiB: kb(pid, "VmRSS") / 1024, adapterPeakMiB: kb(pid, "VmHWM") / 1024, childrenRssMiB: kids.reduce((a, k) => a + kb(k, "VmRSS"), 0) / 1024 };
  }
  await dc.disconnectRequest({}).catch(() => undefined);
  await dc.stop();
  srv?.stop();
}
console.log(JSON.stringify({ adapter, steps: all.length, medianStepMs: +median(all).toFixed(2), p90StepMs: +[...all].sort((a, b) => a - b)[Math.floor(all.length * 0.9)].toFixed(2), firstStopMs: firsts.map((x) => Math.round(x)), firstStepMs: firstSteps.map((x) => Math.round(x)), memory }, null, 1));
