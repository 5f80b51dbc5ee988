// Model files with damaged headers (block count, head counts, epsilon, alignment, tensor infos,
// truncation), loaded by a predict session over DAP. llama.cpp aborts the process on some of
// these: the launch must be refused with a message, or the model must load and step, and the
// adapter must never die.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readGgufHeader } from "../../../adapter/model/gguf.js";
import { randomDamage } from "../../support/gguf-damage.js";
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { SCRIPT, adapter, end, launch, stopAfter } from "../dap.js";
import { tinyModel } from "./tiny.js";

export async function models(g: Gen, label: string, tally: Tally, work: string, shared: string): Promise<void> {
  const intact = tinyModel(shared);
  const tensors = (await readGgufHeader(intact)).tensors.map((t) => t.name);
  const [d] = randomDamage(g.int(0, 2 ** 31), 1, tensors, true);
  const copy = Buffer.from(readFileSync(intact));
  const cut = d.damage(copy);
  const model = join(work, "damaged.gguf");
  writeFileSync(model, Buffer.isBuffer(cut) ? cut : copy);
  const t = await adapter(`${label} (${d.what})`, tally);
  const from = t.raw.messages.length;
  const r = await launch(t, { program: SCRIPT, mode: "predict", model, gpu: "cpu", threads: 1, layout: "original", stopOnEntry: true }, 90_000);
  if (r?.success) {
    let stop = await stopAfter(t, from, 90_000, "the launch");
    for (let i = 2; stop?.event === "stopped" && i > 0; i--) {
      const before = t.raw.messages.length;
      await t.request("next", { threadId: 1 }, 60_000);
      stop = await stopAfter(t, before, 60_000, "a step");
    }
  } else if (r && !/model/i.test(r.message ?? "")) t.problem(`the launch was refused without naming the model: ${r.message}`);
  await end(t);
}
