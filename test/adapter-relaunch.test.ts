// A launch on a live session replaces the session: over the real protocol, ten predict launches
// one after another on one session, with the bundled model, must not keep ten model contexts.
// Each context of this model takes ~33 MB of the adapter's memory (measured: 175 MB after the
// first launch, 459 MB after the tenth, when the previous one was never freed).
import { before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, buildDist } from "./support/dist.js";
import { openSession } from "./support/dap.js";

const PROGRAM = join(ROOT, "test", "fixtures", "dap", "script.py");
const LAUNCHES = 10;

before(() => buildDist());

test(`${LAUNCHES} launches on one session keep one model context`, { timeout: 240_000 }, async () => {
  const s = await openSession(60_000);
  const pid = (s.dc as unknown as { _adapterProcess: { pid: number } })._adapterProcess.pid;
  const rssMb = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  try {
    await s.dc.initializeRequest();
    const rss: number[] = [];
    for (let i = 0; i < LAUNCHES; i++) {
      const stopped = new Promise((r) => s.dc.once("stopped", r));
      await s.dc.launch({ mode: "predict", program: PROGRAM, gpu: "cpu", threads: 1, stopOnEntry: true });
      if (i === 0) await s.dc.configurationDoneRequest();
      await stopped;
      rss.push(Math.round(rssMb()));
    }
    // Allocator noise is tens of MB; nine contexts kept would be ~300.
    const growth = rss.at(-1)! - rss[0];
    assert.ok(growth < 100, `RSS after each launch (MB): ${rss.join(" ")}`);
  } finally {
    await s.dc.stop();
  }
});
