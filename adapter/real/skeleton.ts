// A long run's skeleton (adapter/python/tracer.py's Skeleton): where each of its events stands
// (kind, line, depth, file) and how much standard output came before it, a few bytes an event.
// The debugger's semantics (semantics.ts) read it as they read a recording's frames, so every
// move over a run of millions of events is answered here, and only the states a session stops
// at are recorded, a window at a time, by running the program again (predictors/longRun.ts).
import type { EventKind } from "../format/trajectory.js";
import { placesOf, type Place, type Places } from "./semantics.js";
import { RecordError } from "./run.js";

const KINDS: readonly EventKind[] = ["call", "line", "return", "exception"];

/** Little-endian bytes (as tracer.py writes them) from base64, in a buffer of their own (aligned). */
function bytes(b64: unknown, what: string): ArrayBuffer {
  if (typeof b64 !== "string") throw new RecordError(`the skeleton's ${what} is missing`);
  return new Uint8Array(Buffer.from(b64, "base64")).buffer;
}

/** The value in force at event `i` of a column kept only where it changes (`at`: the events where it does, ascending). */
function changedAt(at: Uint32Array, values: ArrayLike<number>, i: number): number {
  let lo = 0;
  let hi = at.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (at[mid] <= i) lo = mid + 1;
    else hi = mid;
  }
  return lo ? values[lo - 1] : 0;
}

export class RunSkeleton {
  readonly length: number;
  /** The events as the semantics read them (a view: each read makes the one Place asked for). */
  readonly places: Places;

  private constructor(
    private readonly kind: Uint8Array,
    private readonly line: Int32Array,
    private readonly depth: Uint16Array,
    private readonly fileAt: Uint32Array,
    private readonly file: Uint16Array,
    private readonly outAt: Uint32Array,
    private readonly out: Uint32Array,
    private readonly files: readonly string[],
  ) {
    this.length = kind.length;
    this.places = placesOf(0, this.length, (i) => this.place(i));
  }

  /** Reads a skeleton record; throws a RecordError where it does not hold together (the program shares the channel). */
  static read(r: Record<string, unknown>): RunSkeleton {
    const kind = new Uint8Array(bytes(r.kind, "kinds"));
    const line = new Int32Array(bytes(r.line, "lines"));
    const depth = new Uint16Array(bytes(r.depth, "depths"));
    const fileAt = new Uint32Array(bytes(r.fileAt, "file changes"));
    const file = new Uint16Array(bytes(r.file, "files"));
    const outAt = new Uint32Array(bytes(r.outAt, "output changes"));
    const out = new Uint32Array(bytes(r.out, "output offsets"));
    const files = r.files;
    if (!Array.isArray(files) || !files.every((f) => typeof f === "string")) throw new RecordError("the skeleton's file names are missing");
    const n = kind.length;
    if (line.length !== n || depth.length !== n || fileAt.length !== file.length || outAt.length !== out.length) throw new RecordError("the skeleton's columns differ in length");
    for (let i = 0; i < n; i++) if (kind[i] >= KINDS.length || line[i] < 1) throw new RecordError(`the skeleton's event ${i} is not valid`);
    const ascending = (at: Uint32Array): boolean => at.every((x, k) => x < n && (k === 0 || x > at[k - 1]));
    if (!ascending(fileAt) || !ascending(outAt) || !file.every((f) => f < files.length)) throw new RecordError("the skeleton's changes are not in order");
    return new RunSkeleton(kind, line, depth, fileAt, file, outAt, out, files as string[]);
  }

  place(i: number): Place {
    const f = changedAt(this.fileAt, this.file, i);
    return { event: KINDS[this.kind[i]], line: this.line[i], depth: this.depth[i], ...(f ? { file: this.files[f] } : {}) };
  }

  /** Bytes of standard output the run wrote before event `i` was recorded (what a record's stdout ends with); past the last event, undefined. */
  outBefore(i: number): number | undefined {
    return i < this.length ? changedAt(this.outAt, this.out, i) : undefined;
  }
}
