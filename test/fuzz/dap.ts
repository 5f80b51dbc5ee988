// The DAP steps the fuzz families share, over a Target running dist/adapter.js: a session opened
// as a client opens one, and a launch with its configuration done.
import type { Message } from "../support/raw.js";
import { ADAPTER, ROOT } from "../support/dist.js";
import { join } from "node:path";
import { Target, type Tally } from "./harness.js";

export const SCRIPT = join(ROOT, "test", "fixtures", "dap", "script.py");
export const TRACE = join(ROOT, "test", "fixtures", "traces", "demo.ndbg");
const INITIALIZE = { adapterID: "neural-python", pathFormat: "path", linesStartAt1: true, columnsStartAt1: true, supportsStepBack: true };

/** A fresh adapter, initialized (the initialize request counts as one sent). */
export async function adapter(label: string, tally: Tally): Promise<Target> {
  const t = new Target(label, tally, ADAPTER);
  await t.request("initialize", INITIALIZE);
  return t;
}

/**
 * launch with `args`; when the adapter asks for its configuration (the initialized event),
 * configurationDone. The launch's answer, or undefined (counted) when none came within `ms`.
 */
export async function launch(t: Target, args: unknown, ms: number): Promise<Message | undefined> {
  const from = t.raw.messages.length;
  const answer = t.request("launch", args, ms);
  const init = await Promise.race([t.event(["initialized"], ms, from), answer.then(() => undefined)]);
  if (init) await t.request("configurationDone", {}, ms);
  return answer;
}

/** The next stopped or terminated event after message `from` (undefined: none within `ms`, counted as a hang). */
export async function stopAfter(t: Target, from: number, ms: number, what: string): Promise<Message | undefined> {
  const e = await t.event(["stopped", "terminated"], ms, from);
  if (!e) {
    t.tally.hangs++;
    t.problem(`no stopped or terminated event within ${ms} ms after ${what}`);
  }
  return e;
}

/** disconnect (answered, counted), then the process is closed and checked. */
export async function end(t: Target, terminate = true): Promise<void> {
  await t.request("disconnect", { terminateDebuggee: terminate }, 10_000);
  t.ending();
  await t.close();
}
