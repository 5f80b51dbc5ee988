// Raw framed messages (`Content-Length: N`, a blank line, N bytes of JSON) both ways: for tests that
// write bytes a well-behaved client never would, and read every message the other side sends.
import type { Writable } from "node:stream";

/** A body with its header. */
export const frame = (body: string | Buffer): Buffer => {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body);
  return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]);
};

export type Message = {
  type?: string;
  seq?: number;
  request_seq?: number;
  command?: string;
  event?: string;
  success?: boolean;
  message?: string;
  body?: Record<string, unknown>;
  id?: number | string | null;
  result?: unknown;
  error?: { code: number; message: string };
};

/** The other side of a raw byte stream: its messages as they come, and waits for one. */
export class Raw {
  readonly messages: Message[] = [];
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  constructor(
    readonly input: Writable,
    output: NodeJS.ReadableStream,
  ) {
    output.on("data", (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      for (;;) {
        const end = this.buf.indexOf("\r\n\r\n");
        if (end < 0) break;
        const n = Number(/Content-Length: (\d+)/.exec(this.buf.subarray(0, end).toString())?.[1]);
        if (this.buf.length < end + 4 + n) break;
        this.messages.push(JSON.parse(this.buf.subarray(end + 4, end + 4 + n).toString()));
        this.buf = this.buf.subarray(end + 4 + n);
      }
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** The first message that `pred` accepts, or a rejection after `ms` saying `what`. */
  waitFor(pred: (m: Message) => boolean, ms: number, what: string): Promise<Message> {
    return new Promise((resolve, reject) => {
      // A wait given up on (a race lost) must not keep the process up.
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(this.messages).slice(0, 500)}`)), ms).unref();
      const check = (): void => {
        const r = this.messages.find(pred);
        if (r) {
          clearTimeout(timer);
          resolve(r);
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** The DAP response to request `seq`, or a rejection after `ms`. */
  response(seq: number, ms = 10_000): Promise<Message> {
    return this.waitFor((m) => m.type === "response" && m.request_seq === seq, ms, `response to request ${seq}`);
  }
}
