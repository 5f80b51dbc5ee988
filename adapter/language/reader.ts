// LSP's framing on stdio (a `Content-Length: N` header, a blank line, N bytes of JSON-RPC), read
// by the server itself. vscode-jsonrpc's reader never finds the next header after a Content-Length
// that is no number, too short or too long: every later message is read as part of a broken one
// and the server stops answering. Here a broken frame is reported (`problem`, with the request's
// id where its text shows one) and reading goes on at the next header. No JSON-RPC body holds
// "Content-Length: N" and a line break (JSON strings hold no raw line breaks), so one inside a
// body means the body is shorter than its header said. Bodies are copied once: linear in size.
import type { Readable } from "node:stream";
import { AbstractMessageReader, type DataCallback, type Disposable, type Message, type MessageReader } from "vscode-languageserver/node";

const HEADER = /Content-Length:[ \t]*(\S*)[ \t]*\r\n/i;
const NEXT = /Content-Length:[ \t]*\d+[ \t]*\r\n/i;
const END = "\r\n\r\n";
/** A header's start cut off by the end of the text ("Content-Le", "Content-Length: 5\r"); no JSON ends so. */
const NEXT_AT_END = /C(?:o(?:n(?:t(?:e(?:n(?:t(?:-(?:L(?:e(?:n(?:g(?:t(?:h(?::(?: *\d{0,15}\r?)?)?)?)?)?)?)?)?)?)?)?)?)?)?)?$/i;
/** Bytes kept from one chunk of a body to find a header that straddles two chunks. */
const SEAM = 64;
/** A header longer than this is junk. */
const MAX_HEADER = 8 * 1024;
/** The largest body read; a larger one is skipped (a 91 MB trace opened whole is under it). */
export const MAX_BODY_BYTES = 256 * 1024 * 1024;

/** The id of a request whose body is broken, where its text shows one. */
function idIn(text: string): number | string | undefined {
  const m = /"id"\s*:\s*(\d{1,15}|"[^"\\]{0,200}")/.exec(text);
  return m ? JSON.parse(m[1]) : undefined;
}

export class TolerantReader extends AbstractMessageReader implements MessageReader {
  /** Header mode: bytes not yet a whole header, as latin1 text (one char a byte). */
  private head = "";
  /** Skipping a body whose length is unknown, up to the next header. */
  private skipping = false;
  private body?: { length: number; got: number; chunks: Buffer[]; seam: string };

  constructor(
    private readonly input: Readable,
    private readonly problem: (why: string, id?: number | string) => void,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    const onData = (chunk: Buffer): void => {
      let rest: string | undefined = chunk.toString("latin1");
      while (rest) rest = this.body ? this.readBody(rest, callback) : this.readHeader(rest);
    };
    this.input.on("data", onData);
    this.input.on("error", (e) => this.fireError(e));
    this.input.on("close", () => this.fireClose());
    return { dispose: () => void this.input.off("data", onData) };
  }

  /** Reads a header from `text` (latin1); returns what follows it. */
  private readHeader(text: string): string | undefined {
    let buf = this.head + text;
    if (this.skipping) {
      const at = buf.search(NEXT);
      if (at < 0) {
        this.head = buf.slice(-SEAM);
        return undefined;
      }
      this.skipping = false;
      buf = buf.slice(at);
    }
    const end = buf.indexOf(END);
    if (end < 0) {
      if (buf.length > MAX_HEADER) {
        this.problem(`${buf.length} bytes outside a message (no Content-Length header): skipped`);
        this.skipping = true;
        this.head = buf.slice(-SEAM);
      } else this.head = buf;
      return undefined;
    }
    this.head = "";
    const header = buf.slice(0, end + 2);
    const m = HEADER.exec(header);
    const value = m?.[1] ?? "";
    const before = m ? header.slice(0, m.index) : "";
    if (before && !/^([A-Za-z][\w-]*:[^\r\n]*\r\n)+$/.test(before)) this.problem(`${before.length} bytes outside a message (no Content-Length header before them): skipped`);
    if (!m || !/^\d{1,15}$/.test(value)) {
      this.problem(m ? `its Content-Length ${JSON.stringify(value.slice(0, 40))} is not a number of bytes: skipped to the next header` : "a header without Content-Length: skipped to the next header");
      this.skipping = true;
      return buf.slice(end + END.length);
    }
    this.body = { length: Number(value), got: 0, chunks: [], seam: "" };
    return buf.slice(end + END.length);
  }

  /** Reads body bytes from `text`; returns what follows the body. */
  private readBody(text: string, callback: DataCallback): string | undefined {
    const b = this.body!;
    const part = text.slice(0, b.length - b.got);
    // A header inside the body: the body ended before its Content-Length said.
    const joined = b.seam + part;
    let cut = joined.search(NEXT);
    // A body that ends in the start of a header ran into the next message too.
    if (cut < 0 && b.got + part.length === b.length) {
      const at = joined.slice(-40).search(NEXT_AT_END);
      if (at >= 0) cut = Math.max(0, joined.length - 40) + at;
    }
    if (cut >= 0) {
      const kept = Math.max(0, cut - b.seam.length);
      b.chunks.push(Buffer.from(part.slice(0, kept), "latin1"));
      this.body = undefined;
      const got = Buffer.concat(b.chunks).toString("utf8");
      this.problem(`its Content-Length (${b.length}) is more than the ${b.got + kept} bytes before the next header`, idIn(got));
      return joined.slice(cut) + text.slice(part.length);
    }
    b.got += part.length;
    if (b.length <= MAX_BODY_BYTES) b.chunks.push(Buffer.from(part, "latin1"));
    b.seam = joined.slice(-SEAM);
    if (b.got < b.length) return undefined;
    this.body = undefined;
    if (b.length > MAX_BODY_BYTES) this.problem(`a message of ${b.length} bytes, over the limit of ${MAX_BODY_BYTES}: skipped`);
    else this.deliver(b.chunks.length === 1 ? b.chunks[0] : Buffer.concat(b.chunks), callback);
    return text.slice(part.length);
  }

  private deliver(body: Buffer, callback: DataCallback): void {
    const text = body.toString("utf8");
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.problem("its body is not JSON", idIn(text));
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return this.problem(`its body is ${Array.isArray(msg) ? "an array" : String(msg).slice(0, 40)}, not a message object`);
    callback(msg as Message);
  }
}
