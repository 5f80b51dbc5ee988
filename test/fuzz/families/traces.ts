// Hostile trace files in replay mode (allowed in untrusted workspaces): headers that name a FIFO,
// /dev/stdin or a device as the program, huge lines, broken headers, and random damage to a good
// trace; the trace itself a FIFO. The launch must be answered, and a session that started must
// answer moves and end when asked.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { TRACE, adapter, end, launch, stopAfter } from "../dap.js";
import { mkfifoSync } from "./fifo.js";

const GOOD = readFileSync(TRACE, "utf8");
const BODY = GOOD.slice(GOOD.indexOf("\n") + 1);

export async function traces(g: Gen, label: string, tally: Tally, work: string): Promise<void> {
  const fifo = join(work, "named.fifo");
  mkfifoSync(fifo);
  let file = join(work, "hostile.ndbg");
  const header = (meta: Record<string, unknown>): string => `#ndbg 1 ${JSON.stringify(meta)}\n`;
  const text = g.pick<() => string>([
    () => header({ program: g.pick([fifo, "/dev/stdin", "/dev/zero", "/proc/self/fd/0", "/", "../../../etc/passwd"]), call: "total([3, 1, 2])", mode: "record" }) + BODY,
    () => header({ program: "demo.py", call: "total([3, 1, 2])" }) + BODY.replace("\n", "\n" + "x".repeat(g.pick([10 ** 6, 2 * 10 ** 7])) + "\n"),
    () => g.pick(["#ndbg 99 {}\n", "#ndbg 1 {\n", "#ndbg 1 null\n", "#ndbg 1 []\n", "#ndbg\n", "", "#ndbg 1 {\"program\": 5}\n", `#ndbg 1 {"program":"demo.py","call":"${"(".repeat(5000)}"}\n`]) + BODY,
    () => g.damage(GOOD, g.int(1, 8)),
    () => GOOD + g.damage(BODY).repeat(g.int(1, 50)),
    () => "<|frame_sep|>".repeat(g.int(1, 200_000)),
  ])();
  if (g.chance(0.1)) file = fifo;
  else writeFileSync(file, text);
  const t = await adapter(label, tally);
  const from = t.raw.messages.length;
  const r = await launch(t, { program: file, mode: "replay", stopOnEntry: true }, 30_000);
  if (r?.success) {
    let stop = await stopAfter(t, from, 30_000, "the launch");
    for (let i = g.int(1, 8); stop?.event === "stopped" && i > 0; i--) {
      const before = t.raw.messages.length;
      await t.request(g.pick(["next", "stepIn", "stepOut", "stepBack", "continue", "reverseContinue"]), { threadId: 1 }, 15_000);
      stop = await stopAfter(t, before, 15_000, "a move");
      await t.request("stackTrace", { threadId: 1 }, 15_000);
    }
  }
  await end(t);
}
