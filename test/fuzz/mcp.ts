// The MCP steps the fuzz family shares, over a Target running `dist/ndbg.js mcp`: JSON-RPC lines
// both ways (the MCP stdio transport: one JSON message a line), requests with a deadline each,
// counted as the DAP families count theirs, and the lines a well-behaved client never writes.
import { StringDecoder } from "node:string_decoder";
import { NDBG } from "../support/dist.js";
import { Target, type Tally } from "./harness.js";

export interface Reply {
  id?: number | string | null;
  result?: { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> } & Record<string, unknown>;
  error?: { code: number; message: string };
}

/** The longest message an answer may carry (the server cuts what it quotes). */
const MAX_ANSWER = 4000;

/** A server under test, initialized as a client initializes one. */
export class McpTarget {
  readonly t: Target;
  private readonly replies: Reply[] = [];
  private waiters: (() => void)[] = [];
  private buf = "";
  private nextId = 1;
  private exited = false;
  private readonly gone: Promise<"exit">;

  constructor(label: string, tally: Tally, flags: string[]) {
    this.t = new Target(label, tally, NDBG, ["mcp", ...flags]);
    this.gone = new Promise((resolve) => this.t.proc.on("exit", () => ((this.exited = true), resolve("exit"))));
    // Bytes, not an encoding set on the stream: the harness's own reader shares it and reads bytes.
    const text = new StringDecoder("utf8");
    this.t.proc.stdout!.on("data", (d: Buffer) => {
      this.buf += text.write(d);
      for (let nl = this.buf.indexOf("\n"); nl >= 0; nl = this.buf.indexOf("\n")) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        try {
          this.replies.push(JSON.parse(line) as Reply);
        } catch {
          this.t.problem(`a line on stdout that is no JSON: ${line.slice(0, 200)}`);
        }
      }
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** One line as it is (a broken message, a notification). */
  line(text: string): void {
    this.t.write(text.endsWith("\n") ? text : text + "\n");
  }

  /** A request that must be answered within `ms` (a result or an error, both with a readable message). */
  async request(method: string, params: unknown, ms = 30_000): Promise<Reply | undefined> {
    const id = this.nextId++;
    const name: unknown = params !== null && typeof params === "object" ? (params as { name?: unknown }).name : undefined;
    const what = `${method} request ${id}${method === "tools/call" ? ` (${typeof name === "string" ? name.slice(0, 40) : typeof name})` : ""}`;
    const tally = this.t.tally;
    tally.sent++;
    if (this.exited) {
      this.t.problem(`${what} not answered: the server had exited (${this.t.stderr.trim().split("\n").slice(-2).join(" | ").slice(0, 300)})`);
      return undefined;
    }
    this.line(JSON.stringify({ jsonrpc: "2.0", id, method, ...(params !== undefined ? { params } : {}) }));
    const r = await Promise.race([this.waitFor(id, ms), this.gone]);
    if (r === "hang") {
      tally.hangs++;
      this.t.problem(`${what} not answered within ${ms} ms (hang)`);
      return undefined;
    }
    if (r === "exit") {
      this.t.problem(`${what} not answered: the server exited (${this.t.stderr.trim().split("\n").slice(-2).join(" | ").slice(0, 300)})`);
      return undefined;
    }
    tally.answered++;
    const why = r.error?.message ?? (r.result?.isError ? (r.result.content ?? []).map((c) => c.text ?? "").join("\n") : "");
    if (why.length > MAX_ANSWER) this.t.problem(`${what} answered with a message of ${why.length} characters`);
    if (/\n\s+at \S.*:\d+:\d+\)?$/m.test(why)) this.t.problem(`${what} answered with a stack trace: ${why.slice(0, 300)}`);
    if ((r.error || r.result?.isError) && !why.trim()) this.t.problem(`${what} refused without a message`);
    if (/internal error/.test(why)) this.t.problem(`${what}: ${why.slice(0, 300)}`);
    return r;
  }

  /** tools/call. */
  call(name: unknown, args: unknown, ms?: number): Promise<Reply | undefined> {
    return this.request("tools/call", { name, arguments: args }, ms);
  }

  private waitFor(id: number, ms: number): Promise<Reply | "hang"> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve("hang"), ms).unref();
      const check = (): void => {
        const r = this.replies.find((m) => m.id === id);
        if (r) {
          clearTimeout(timer);
          resolve(r);
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** initialize, then the initialized notification. */
  async initialize(): Promise<void> {
    const r = await this.request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } });
    if (r && !r.result) this.t.problem(`initialize refused: ${r.error?.message}`);
    this.line(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
  }

  /** The client goes (its end of stdin closed), then the server and what it left are checked. */
  async close(): Promise<void> {
    this.t.ending();
    await this.t.close();
  }
}
