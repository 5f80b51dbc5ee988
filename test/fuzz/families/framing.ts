// Malformed DAP framing: bodies that are no JSON or no message, null, wrong, huge, negative or
// missing Content-Lengths, junk between messages, deep nesting, a request split in random
// chunks. After each, a request must still be answered; a well-formed request, however split,
// must be answered itself.
import { frame } from "../../support/raw.js";
import type { Gen } from "../gen.js";
import type { Tally } from "../harness.js";
import { adapter, end } from "../dap.js";

const threads = (seq: number): string => JSON.stringify({ seq, type: "request", command: "threads" });

export async function framing(g: Gen, label: string, tally: Tally): Promise<void> {
  const t = await adapter(label, tally);
  for (let i = g.int(1, 6); i > 0; i--) {
    const body = threads(g.int(0, 100_000));
    const broken = g.pick<() => Buffer>([
      () => frame(g.damage(body)),
      () => frame(g.pick(["null", "[]", "42", '"threads"', "{}", "true", '{"type":"request"}', '{"seq":-1,"type":"request","command":""}'])),
      () => Buffer.from(`Content-Length: ${body.length + g.int(-body.length, 200)}\r\n\r\n${body}`),
      () => Buffer.from(`Content-Length: ${g.pick(["-5", "abc", "", "1e3", "99999999999999999999", "999999999999999", " 12 ", "0x20"])}\r\n\r\n${body}`),
      () => Buffer.from(`${g.pick(["Content-Type: x", "content-length: 10", "X: y"])}\r\n\r\n${body}`),
      () => Buffer.from(Array.from({ length: g.int(1, 3000) }, () => g.int(0, 256))),
      () => frame(`${"[".repeat(g.int(900, 200_000))}`),
      () => frame(`{"seq":1,"type":"request","command":"evaluate","arguments":{"expression":"1","x":${"[".repeat(5000)}${"]".repeat(5000)}}}`),
      () => frame(Buffer.from([0xff, 0xfe, 0x7b])),
    ])();
    t.write(broken);
    // A well-formed request after it, written in random pieces, must be answered.
    await t.request("threads", undefined, 10_000, (b) => {
      const bytes = frame(b);
      const cuts = Array.from({ length: g.int(0, 4) }, () => g.int(0, bytes.length)).sort((a, b) => a - b);
      return [0, ...cuts].map((c, k, all) => bytes.subarray(c, all[k + 1] ?? bytes.length));
    });
  }
  await end(t);
}
