// DAP's framing (a `Content-Length: N` header, a blank line, N bytes of JSON), read by the adapter
// itself. The library's reader ends the process on a body that is not a message (its error event
// shuts the session down), never finds the next header after a wrong Content-Length (the
// session is deaf from then on), and copies everything buffered on every chunk (quadratic in a
// message's size). Here every broken frame is answered where its seq and command can be read and
// logged otherwise, the reader finds the next header after it, and a body is copied once.
import { PassThrough, type Readable, type Writable } from "node:stream";
import { Response, type DebugSession } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { quoted } from "./requests.js";

/** The largest message read; a larger one is skipped as it arrives, never buffered. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Deepest nesting of arrays and objects in a message: no request needs more, and handlers recurse. */
export const MAX_DEPTH = 1000;

const MARK = Buffer.from("Content-Length:");
const END = Buffer.from("\r\n\r\n");
/** Bytes before a header's end beyond which they are junk, not a header. */
const MAX_HEADER = 8 * 1024;
/** How much of a broken or skipped body is kept to read its seq and command from. */
const KEEP = 4 * 1024;
/** Bytes of a body kept across chunks to find a header that straddles them. */
const SEAM = 64;
const EMPTY = Buffer.alloc(0);

/** A frame that is not a message: what is wrong, and the request it was, where that can be read. */
export interface Problem {
  problem: string;
  seq?: number;
  command?: string;
}

export type Frame = { body: Buffer } | Problem;

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

/** The request a broken body was, as far as its text shows: the first `"command"`, the first `"seq"` else the last. */
export function identify(head: Buffer, tail: Buffer): { seq?: number; command?: string } {
  const h = head.toString("utf8");
  const t = tail.toString("utf8");
  const command = /"command"\s*:\s*"([A-Za-z_][\w-]{0,63})"/.exec(h)?.[1] ?? /"command"\s*:\s*"([A-Za-z_][\w-]{0,63})"/.exec(t)?.[1];
  const seqs = (s: string) => [...s.matchAll(/"seq"\s*:\s*(\d{1,15})\b/g)].map((m) => Number(m[1]));
  const seq = seqs(h)[0] ?? seqs(t).at(-1);
  return { ...(seq !== undefined ? { seq } : {}), ...(command !== undefined ? { command } : {}) };
}

const identifyBody = (body: Buffer): { seq?: number; command?: string } => identify(body.subarray(0, KEEP), body.subarray(Math.max(0, body.length - KEEP)));

/** Turns a byte stream into message bodies and problems, in linear time; a broken frame never stops it. */
export class FrameReader {
  /** Header mode: bytes that are not yet a whole header (at most MAX_HEADER and a chunk). */
  private head = EMPTY;
  /** Bytes skipped since the last header, with their first and last KEEP bytes, reported at the next one. */
  private junk?: { bytes: number; first: Buffer; last: Buffer; why: string };
  /** Body mode: the body being read. */
  private body?: { length: number; got: number; chunks: Buffer[]; first: Buffer; last: Buffer; seam: Buffer };

  constructor(
    private readonly emit: (frame: Frame) => void,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    while (chunk.length) chunk = this.body ? this.readBody(chunk) : this.readHeader(chunk);
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
      this.junk = { bytes: 0, first: EMPTY, last: EMPTY, why: `its Content-Length ${quoted(value)} is not a number of bytes` };
      return;
    }
    const length = Number(value);
    if (length === 0) return this.emit({ problem: "a message with an empty body" });
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
      if (b.length > this.maxBytes)
        this.emit({ problem: `a message of ${b.length} bytes, over the limit of ${this.maxBytes}: skipped`, ...identify(b.first, b.last) });
      else this.emit({ body: b.chunks.length === 1 ? b.chunks[0] : Buffer.concat(b.chunks, b.length) });
      return chunk.subarray(part.length);
    }
    this.collect(part.subarray(0, Math.max(cut, 0)));
    const got = b.got + Math.min(cut, 0);
    this.body = undefined;
    const read = b.length <= this.maxBytes ? identifyBody(Buffer.concat(b.chunks, got)) : identify(b.first, b.last);
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
    this.emit({ problem: `${j.why}: ${j.bytes} bytes skipped`, ...identify(j.first, j.last) });
  }
}

/** Nesting depth of arrays and objects in JSON text, counted up to `limit` + 1 (strings skipped). */
export function nestingDepth(body: Buffer, limit = MAX_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

/** A body as a protocol message, or what is wrong with it. */
export function decode(body: Buffer): { message: DebugProtocol.ProtocolMessage } | Problem {
  if (nestingDepth(body) > MAX_DEPTH) return { problem: `a message nested more than ${MAX_DEPTH} deep`, ...identifyBody(body) };
  let msg: unknown;
  try {
    msg = JSON.parse(body.toString("utf8"));
  } catch {
    return { problem: "its body is not JSON", ...identifyBody(body) };
  }
  if (msg === null || typeof msg !== "object" || Array.isArray(msg)) return { problem: `its body is ${quoted(msg)}, not a message object` };
  const m = msg as Record<string, unknown>;
  const seq = Number.isInteger(m.seq) ? { seq: m.seq as number } : {};
  const command = typeof m.command === "string" && m.command !== "" ? { command: m.command } : {};
  if (m.type !== "request" && m.type !== "response" && m.type !== "event")
    return { problem: `"type" must be "request", "response" or "event", not ${quoted(m.type)}`, ...seq, ...command };
  if (m.type === "request") {
    if (!("seq" in seq)) return { problem: `a request's "seq" must be a whole number, not ${quoted(m.seq)}`, ...command };
    if (!("command" in command)) return { problem: `a request's "command" must be a name, not ${quoted(m.command)}`, ...seq };
  }
  return { message: msg as DebugProtocol.ProtocolMessage };
}

const stderrLog = (m: string): void => void process.stderr.write(`neural-python adapter: ${m}\n`);

/**
 * Starts `session` on `input` / `output` with this reader in place of the library's. The library
 * still writes the output, and still ends the session when the input closes or fails: its reader
 * gets a stream that carries no data and closes with the input.
 */
export function startSession(session: DebugSession, input: Readable, output: Writable, log = stderrLog): void {
  const relay = new PassThrough();
  session.start(relay, output);
  input.on("close", () => relay.destroy());
  input.on("error", (e) => relay.destroy(e));
  const reader = new FrameReader((frame) => {
    const d = "body" in frame ? decode(frame.body) : frame;
    if ("message" in d) {
      try {
        session.handleMessage(d.message);
        return;
      } catch (e) {
        const r = d.message as Partial<DebugProtocol.Request>;
        return refuse({ problem: `internal error: ${e instanceof Error ? e.message : String(e)}`, seq: r.seq, command: r.command });
      }
    }
    refuse(d);
  });
  /** An error response where the request can be named; the log either way. */
  function refuse(p: Problem): void {
    const answered = p.seq !== undefined && p.command !== undefined && p.command !== "";
    log(`invalid message${answered ? ` (${p.command} request ${p.seq}, answered)` : ""}: ${p.problem}`);
    if (answered) session.sendResponse(new Response({ seq: p.seq, command: p.command } as DebugProtocol.Request, `invalid message: ${p.problem}`));
  }
  input.on("data", (chunk: Buffer) => reader.push(chunk));
}
