// DAP's framing, read by the adapter itself (the byte-level reader is `system/framing.ts`, which
// the trace language server shares). The library's reader ends the process on a body that is not
// a message (its error event shuts the session down) and is deaf after a wrong Content-Length.
// Here every broken frame is answered where its seq and command can be read and logged
// otherwise, and a body nested deeper than any request needs is refused before a handler
// recurses into it.
import { PassThrough, type Readable, type Writable } from "node:stream";
import { Response, type DebugSession } from "@vscode/debugadapter";
import type { DebugProtocol } from "@vscode/debugprotocol";
import { FrameReader, ends, type Frame as RawFrame, type Problem as RawProblem } from "../system/framing.js";
import { quoted } from "../session/launch.js";

/** The largest message read; a larger one is skipped as it arrives, never buffered. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** Deepest nesting of arrays and objects in a message: no request needs more, and handlers recurse. */
export const MAX_DEPTH = 1000;

/** What a broken frame shows of the request it was. */
type Request = { seq?: number; command?: string };
export type Problem = RawProblem<Request>;
export type Frame = RawFrame<Request>;

/** The request a broken body was, as far as its text shows: the first `"command"`, the first `"seq"` else the last. */
export function identify(head: Buffer, tail: Buffer): Request {
  const h = head.toString("utf8");
  const t = tail.toString("utf8");
  const command = /"command"\s*:\s*"([A-Za-z_][\w-]{0,63})"/.exec(h)?.[1] ?? /"command"\s*:\s*"([A-Za-z_][\w-]{0,63})"/.exec(t)?.[1];
  const seqs = (s: string) => [...s.matchAll(/"seq"\s*:\s*(\d{1,15})\b/g)].map((m) => Number(m[1]));
  const seq = seqs(h)[0] ?? seqs(t).at(-1);
  return { ...(seq !== undefined ? { seq } : {}), ...(command !== undefined ? { command } : {}) };
}

const identifyBody = (body: Buffer): Request => identify(...ends(body));

/** DAP's frames from a byte stream: bodies, and problems named by seq and command. */
export const frameReader = (emit: (frame: Frame) => void, maxBytes = MAX_MESSAGE_BYTES): FrameReader<Request> => new FrameReader(emit, identify, maxBytes);

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
  const reader = frameReader((frame) => {
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
