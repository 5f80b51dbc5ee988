// The `Content-Length: N` framing that DAP and LSP share (a header, a blank line, N bytes of
// JSON), read from a byte stream. The libraries' readers never find the next header after a wrong
// Content-Length (the peer is deaf from then on) and copy everything buffered on every chunk
// (quadratic in a message's size). This one reports every broken frame, with what its protocol
// can read of the request it was, finds the next header after it, and copies a body once. What a
// body means, and how a request is named, is the protocol's: DAP's in `dap/framing.ts`, LSP's in
// `language/reader.ts`.

/** Bytes before a header's end beyond which they are junk, not a header. */
const MAX_HEADER = 8 * 1024;
/** How much of a broken or skipped body is kept to identify it from. */
const KEEP = 4 * 1024;
/** Bytes of a body kept across chunks to find a header that straddles them. */
const SEAM = 64;
const MARK = Buffer.from("Content-Length:");
const END = Buffer.from("\r\n\r\n");
const EMPTY: Buffer = Buffer.alloc(0);

/**
 * What a protocol reads from a broken frame's first and last bytes to name the request it was
 * (DAP: seq and command; LSP: the id), so that the request can still be answered with an error.
 */
export type Identify<Id extends object> = (head: Buffer, tail: Buffer) => Id;

/** A frame that is not a message: what is wrong, and the request it was, as far as it can be read. */
export type Problem<Id extends object> = { problem: string } & Id;

export type Frame<Id extends object> = { body: Buffer } | Problem<Id>;

/**
 * Where a header starts in `buf`: "Content-Length:", digits and a line break. No JSON body holds
 * one (a raw line break never stands in a JSON string, and the name outside a string is no JSON),
 * so one inside a body means the body is shorter than its header said. -1: none.
 */
function headerIn(buf: Buffer): number {
  for (let at = buf.indexOf(MARK); at >= 0; at = buf.indexOf(MARK, at + 1)) {
    let i = at + MARK.length;
    while (buf[i] === 0x20) i++;
    const digits = i;
    while (buf[i] >= 0x30 && buf[i] <= 0x39) i++;
    if (i > digits && buf[i] === 0x0d && buf[i + 1] === 0x0a) return at;
  }
  return -1;
}

/** A header's start cut off by the end of `buf` ("Content-Le", "Content-Length: 5\r"): where it starts, or -1. */
const HEADER_START = /C(?:o(?:n(?:t(?:e(?:n(?:t(?:-(?:L(?:e(?:n(?:g(?:t(?:h(?::(?: *\d{0,15}\r?)?)?)?)?)?)?)?)?)?)?)?)?)?)?)?$/;
function headerStartAtEnd(buf: Buffer): number {
  const tail = buf.subarray(-40).toString("latin1");
  const at = tail.search(HEADER_START);
  return at < 0 ? -1 : buf.length - tail.length + at;
}

/** A body's first and last bytes, what a protocol's Identify reads. */
export const ends = (body: Buffer): [Buffer, Buffer] => [body.subarray(0, KEEP), body.subarray(Math.max(0, body.length - KEEP))];

/** Turns a byte stream into message bodies and problems, in linear time; a broken frame never stops it. */
export class FrameReader<Id extends object> {
  /** Header mode: bytes that are not yet a whole header (at most MAX_HEADER and a chunk). */
  private head = EMPTY;
  /** Bytes skipped since the last header, with their first and last KEEP bytes, reported at the next one. */
  private junk?: { bytes: number; first: Buffer; last: Buffer; why: string };
  /** Body mode: the body being read. */
  private body?: { length: number; got: number; chunks: Buffer[]; first: Buffer; last: Buffer; seam: Buffer };

  /** `maxBytes`: the largest body read; a larger one is skipped as it arrives, never buffered. */
  constructor(
    private readonly emit: (frame: Frame<Id>) => void,
    private readonly identify: Identify<Id>,
    private readonly maxBytes: number,
  ) {}

  push(chunk: Buffer): void {
    while (chunk.length) chunk = this.body ? this.readBody(chunk) : this.readHeader(chunk);
  }

  private problem(problem: string, head = EMPTY, tail = EMPTY): void {
    this.emit({ problem, ...this.identify(head, tail) });
  }

  private readHeader(chunk: Buffer): Buffer {
    const buf = this.head.length ? Buffer.concat([this.head, chunk]) : chunk;
    const end = buf.indexOf(END);
    if (end < 0) {
      // Keep what may still become a header: from its last "Content-Length:", else a partial one.
      let keep = buf.lastIndexOf(MARK);
      if (keep < 0 || buf.length - keep > MAX_HEADER) keep = Math.max(0, buf.length - MARK.length);
      if (buf.length > MAX_HEADER || keep > MAX_HEADER) {
        this.skip(buf.subarray(0, keep), "bytes outside a message (no Content-Length header before them)");
        this.head = Buffer.from(buf.subarray(keep));
      } else this.head = Buffer.from(buf);
      return EMPTY;
    }
    this.head = EMPTY;
    this.header(buf.subarray(0, end));
    return buf.subarray(end + END.length);
  }

  /** A header's text (without its blank line): bytes before its Content-Length line that are not header lines are junk. */
  private header(text: Buffer): void {
    const at = text.lastIndexOf(MARK);
    if (at < 0) {
      // Its body, if any, is junk before the next header, and is reported with this reason then.
      this.skip(Buffer.concat([text, END]), "a header without Content-Length");
      return;
    }
    const before = text.subarray(0, at).toString("latin1");
    if (before && !/^([A-Za-z][\w-]*: [^\r\n]*\r\n)+$/.test(before)) this.skip(text.subarray(0, at), "bytes outside a message (no Content-Length header before them)");
    this.flushJunk();
    const value = text.subarray(at + MARK.length).toString("latin1").split("\r\n")[0].trim();
    if (!/^\d{1,15}$/.test(value)) {
      // Its body is junk before the next header, and is reported with this reason when that comes.
      this.junk = { bytes: 0, first: EMPTY, last: EMPTY, why: `its Content-Length ${JSON.stringify(value.slice(0, 60))} is not a number of bytes` };
      return;
    }
    const length = Number(value);
    if (length === 0) return this.problem("a message with an empty body");
    this.body = { length, got: 0, chunks: [], first: EMPTY, last: EMPTY, seam: EMPTY };
  }

  private readBody(chunk: Buffer): Buffer {
    const b = this.body!;
    const part = chunk.subarray(0, b.length - b.got);
    // The next header inside this body means the body ended before its Content-Length said. It
    // may start in the last bytes read (the seam, negative offsets) or in this part.
    const inSeam = headerIn(Buffer.concat([b.seam, part.subarray(0, SEAM)]));
    const inPart = headerIn(part);
    let cut = inSeam >= 0 && inSeam < b.seam.length ? inSeam - b.seam.length : inPart >= 0 ? inPart : undefined;
    // A body that ends in the start of a header ran into the next message too: no JSON ends so.
    if (cut === undefined && b.got + part.length === b.length) {
      const end = Buffer.concat([b.seam, part.subarray(-SEAM)]);
      const at = headerStartAtEnd(end);
      if (at >= 0) cut = at - (end.length - Math.min(part.length, SEAM)) + (part.length - Math.min(part.length, SEAM));
    }
    if (cut === undefined) {
      this.collect(part);
      if (b.got < b.length) return EMPTY;
      this.body = undefined;
      if (b.length > this.maxBytes) this.problem(`a message of ${b.length} bytes, over the limit of ${this.maxBytes}: skipped`, b.first, b.last);
      else this.emit({ body: b.chunks.length === 1 ? b.chunks[0] : Buffer.concat(b.chunks, b.length) });
      return chunk.subarray(part.length);
    }
    this.collect(part.subarray(0, Math.max(cut, 0)));
    const got = b.got + Math.min(cut, 0);
    this.body = undefined;
    const read = b.length <= this.maxBytes ? this.identify(...ends(Buffer.concat(b.chunks, got))) : this.identify(b.first, b.last);
    this.emit({ problem: `its Content-Length (${b.length}) is more than the ${got} bytes before the next header`, ...read });
    return cut < 0 ? Buffer.concat([b.seam.subarray(b.seam.length + cut), chunk]) : chunk.subarray(cut);
  }

  /** Adds bytes to the body: kept whole up to the limit; past it only the first and last KEEP bytes. */
  private collect(bytes: Buffer): void {
    const b = this.body!;
    if (!bytes.length) return;
    b.got += bytes.length;
    b.seam = Buffer.concat([b.seam, bytes.subarray(Math.max(0, bytes.length - SEAM))]).subarray(-SEAM);
    if (b.length <= this.maxBytes) b.chunks.push(bytes);
    else {
      if (b.first.length < KEEP) b.first = Buffer.concat([b.first, bytes.subarray(0, KEEP - b.first.length)]);
      b.last = Buffer.concat([b.last, bytes.subarray(Math.max(0, bytes.length - KEEP))]).subarray(-KEEP);
    }
  }

  private skip(bytes: Buffer, why: string): void {
    if (!bytes.length) return;
    const j = (this.junk ??= { bytes: 0, first: EMPTY, last: EMPTY, why });
    j.bytes += bytes.length;
    if (j.first.length < KEEP) j.first = Buffer.concat([j.first, bytes.subarray(0, KEEP - j.first.length)]);
    j.last = Buffer.concat([j.last, bytes.subarray(Math.max(0, bytes.length - KEEP))]).subarray(-KEEP);
  }

  private flushJunk(): void {
    const j = this.junk;
    if (!j) return;
    this.junk = undefined;
    this.problem(`${j.why}: ${j.bytes} bytes skipped`, j.first, j.last);
  }
}
