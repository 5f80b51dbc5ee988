// Launch arguments: every attribute ill-typed, out of range or naming a path that is no regular
// file (FIFOs, devices, folders). The launch must be answered, a session that started must end
// when asked, and nothing may be left running.
import { join } from "node:path";
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { SCRIPT, TRACE, adapter, end, launch, stopAfter } from "../dap.js";
import { mkfifoSync } from "./fifo.js";

export async function launchArgs(g: Gen, label: string, tally: Tally, work: string): Promise<void> {
  const t = await adapter(label, tally);
  const fifo = join(work, "named.fifo");
  mkfifoSync(fifo);
  const path = (): unknown => g.pick([SCRIPT, TRACE, fifo, "/dev/stdin", "/dev/zero", "/dev/null", "/proc/self/mem", "/", "/nonexistent.py", "", "relative.py", g.value(1)]);
  const args: Record<string, unknown> = {
    program: g.chance(0.8) ? path() : g.value(),
    mode: g.pick(["predict", "record", "replay", "compare", "hybrid", "bogus", undefined, g.value(1)]),
    trusted: g.pick([true, false, undefined, "true"]),
  };
  // Predict mode loads a model: a path that is not one, so that launches stay short.
  args.model = g.pick([fifo, "/dev/zero", "/nonexistent.gguf", "/", SCRIPT, g.value(1)]);
  for (const k of ["stopOnEntry", "timeout", "maxSteps", "maxOutput", "maxRepr", "threads", "lowConfidence", "cwd", "python", "call", "gpu", "dialect", "layout", "resync", "predictor", "predict", "args", "env"])
    if (g.chance(0.3)) args[k] = g.pick([g.value(1), -1, 0, 2_147_483, 1e300, fifo, "/dev/stdin"]);
  const from = t.raw.messages.length;
  const r = await launch(t, g.chance(0.05) ? g.value() : args, 60_000);
  if (r?.success) {
    const stop = await stopAfter(t, from, 30_000, "the launch");
    if (stop?.event === "stopped") await t.request("continue", { threadId: 1 }, 30_000);
  }
  await end(t);
}
