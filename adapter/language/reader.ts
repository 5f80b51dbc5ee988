// LSP's framing on stdio, read by the server itself with the byte-level reader it shares with the
// adapter (`system/framing.ts`). vscode-jsonrpc's reader never finds the next header after a
// Content-Length that is no number, too short or too long: every later message is read as part of
// a broken one and the server stops answering. Here a broken frame is reported (`problem`, with
// the request's id where its text shows one) and reading goes on at the next header.
import type { Readable } from "node:stream";
import { AbstractMessageReader, type DataCallback, type Disposable, type Message, type MessageReader } from "vscode-languageserver/node";
import { ends, FrameReader } from "../system/framing.js";

/** The largest body read; a larger one is skipped (a 91 MB trace opened whole is under it). */
export const MAX_BODY_BYTES = 256 * 1024 * 1024;

type Request = { id?: number | string };

/** The id of a request whose body is broken, where its text shows one. */
function idIn(text: string): number | string | undefined {
  const m = /"id"\s*:\s*(\d{1,15}|"[^"\\]{0,200}")/.exec(text);
  return m ? JSON.parse(m[1]) : undefined;
}
const identify = (head: Buffer, tail: Buffer): Request => {
  const id = idIn(head.toString("utf8")) ?? idIn(tail.toString("utf8"));
  return id === undefined ? {} : { id };
};

export class TolerantReader extends AbstractMessageReader implements MessageReader {
  constructor(
    private readonly input: Readable,
    private readonly problem: (why: string, id?: number | string) => void,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    const reader = new FrameReader<Request>((f) => ("body" in f ? this.deliver(f.body, callback) : this.problem(f.problem, f.id)), identify, MAX_BODY_BYTES);
    const onData = (chunk: Buffer): void => reader.push(chunk);
    this.input.on("data", onData);
    this.input.on("error", (e) => this.fireError(e));
    this.input.on("close", () => this.fireClose());
    return { dispose: () => void this.input.off("data", onData) };
  }

  private deliver(body: Buffer, callback: DataCallback): void {
    const text = body.toString("utf8");
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.problem("its body is not JSON", identify(...ends(body)).id);
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return this.problem(`its body is ${Array.isArray(msg) ? "an array" : String(msg).slice(0, 40)}, not a message object`);
    callback(msg as Message);
  }
}
