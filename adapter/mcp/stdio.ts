// The MCP stdio transport (one JSON-RPC message a line, both ways), written here rather than taken
// from the SDK because the SDK's drops what it cannot read: a request whose params are not an
// object, or a line that is no JSON, gets no answer at all, and a client waits for it until its own
// timeout. Here every request with an id is answered, a malformed one with JSON-RPC's own error
// (-32700, -32600, -32602) and a message that says what is wrong; the protocol's own refusals of
// ill-typed params are told in one line, not as a dump of the schema check. The input's end is the
// client going: the transport closes, and the server ends its sessions.
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { cutText } from "../format/values.js";

/** The longest line read (a message past it is answered as too long, and skipped to its end). */
export const MAX_LINE = 16 * 1024 * 1024;

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

type Id = string | number;
const isId = (v: unknown): v is Id => typeof v === "string" || (typeof v === "number" && Number.isInteger(v));
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Why a request's shape is wrong where the SDK would drop it or dump its schema check; undefined when it is fine. */
export function paramsProblem(method: string, params: unknown): string | undefined {
  if (params !== undefined && !isObject(params)) return `params must be an object, not ${Array.isArray(params) ? "a list" : params === null ? "null" : typeof params}`;
  if (method !== "tools/call") return undefined;
  if (!isObject(params) || typeof params.name !== "string") return "tools/call needs params.name, the name of a tool (a string); tools/list lists them";
  if (params.arguments !== undefined && !isObject(params.arguments)) return "params.arguments must be an object of the tool's arguments by name";
  return undefined;
}

/**
 * An error message the SDK made from a failed schema check (a JSON list of issues, after a
 * prefix), in one line: "Invalid params: params.cursor: expected string, received number".
 */
export function condensed(message: string): string {
  const at = message.indexOf("[");
  if (at < 0) return message;
  try {
    const issues = JSON.parse(message.slice(at)) as unknown;
    if (!Array.isArray(issues) || !issues.every((i) => isObject(i) && typeof i.message === "string")) return message;
    const prefix = message.slice(0, at).trim().replace(/:$/, "") || "Invalid params";
    const said = issues.map((i: Record<string, unknown>) => `${Array.isArray(i.path) && i.path.length ? `${i.path.join(".")}: ` : ""}${i.message as string}`);
    return cutText(`${prefix}: ${said.join("; ")}`, 1000);
  } catch {
    return message;
  }
}

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private parts: Buffer[] = [];
  private size = 0;
  /** The current line is past MAX_LINE: it is skipped to its end, then answered. */
  private skipping = false;
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {}

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.on("close", this.onEnd);
    this.input.on("error", this.onInputError);
    // A client that has gone cannot be written to: that is its going, not a failure of ours.
    this.output.on("error", this.onEnd);
  }

  private readonly onEnd = (): void => void this.close();
  private readonly onInputError = (e: Error): void => {
    this.onerror?.(e);
    void this.close();
  };

  private readonly onData = (chunk: Buffer): void => {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
      if (this.skipping) this.reply(null, INVALID_REQUEST, `a message longer than ${MAX_LINE} bytes was not read`);
      else {
        this.parts.push(chunk.subarray(start, nl));
        this.line(Buffer.concat(this.parts).toString("utf8"));
      }
      this.parts = [];
      this.size = 0;
      this.skipping = false;
      start = nl + 1;
      if (this.closed) return;
    }
    const rest = chunk.subarray(start);
    if (!rest.length || this.skipping) return;
    this.size += rest.length;
    if (this.size > MAX_LINE) {
      this.skipping = true;
      this.parts = [];
    } else this.parts.push(rest);
  };

  /** One line: a message for the server, or an answer here to what cannot be one. */
  private line(text: string): void {
    const line = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (!line.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch (e) {
      return this.reply(null, PARSE_ERROR, `Parse error: ${(e as Error).message}`);
    }
    const id = isObject(v) && isId(v.id) ? v.id : undefined;
    const method = isObject(v) && typeof v.method === "string" ? v.method : undefined;
    if (id !== undefined && method !== undefined) {
      const problem = paramsProblem(method, (v as Record<string, unknown>).params);
      if (problem) return this.reply(id, INVALID_PARAMS, `Invalid params: ${problem}`);
    }
    const parsed = JSONRPCMessageSchema.safeParse(v);
    if (parsed.success) return this.onmessage?.(parsed.data);
    // A notification, or an answer to a request of ours, that is malformed has no one to answer.
    if (id === undefined && method !== undefined) return this.onerror?.(new Error(`a malformed notification "${cutText(method, 60)}" was dropped`));
    this.reply(id ?? null, INVALID_REQUEST, `Invalid Request: ${method === undefined ? "no method" : "not a JSON-RPC 2.0 message"} (a request is {"jsonrpc": "2.0", "id": 1, "method": "...", "params": {...}})`);
  }

  private reply(id: Id | null, code: number, message: string): void {
    this.write({ jsonrpc: "2.0", id, error: { code, message: cutText(message, 1000) } });
  }

  send(message: JSONRPCMessage): Promise<void> {
    if ("error" in message && message.error && typeof message.error.message === "string") {
      const said = condensed(message.error.message);
      // A failed schema check of a request's params is the client's error, not the server's.
      if (said !== message.error.message) message = { ...message, error: { ...message.error, message: said, code: message.error.code === INTERNAL_ERROR ? INVALID_PARAMS : message.error.code } };
    }
    return this.write(message);
  }

  private write(message: unknown): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.output.write(JSON.stringify(message) + "\n")) resolve();
      else this.output.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("close", this.onEnd);
    this.input.off("error", this.onInputError);
    this.input.pause();
    this.onclose?.();
  }
}
