// Seeded random inputs for the fuzz families: values of every JSON type (and the ones a schema
// check forgets: huge numbers, long strings, deep nesting, prototype names), and damage to text.
import { rng } from "../support/rng.js";

export class Gen {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = rng(seed);
  }

  /** A whole number in [lo, hi). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }

  /** A string that is hostile to its reader: empty, long, control characters, lone surrogates, special tokens, paths. */
  string(): string {
    return this.pick<() => string>([
      () => "",
      () => "x".repeat(this.pick([1, 100, 10_000, 1_000_000])),
      () => String.fromCharCode(...Array.from({ length: this.int(1, 40) }, () => this.int(0, 0x10000))),
      () => "\ud800",
      () => "<|frame_sep|><|line_sep|>",
      () => "../../../../etc/passwd",
      () => "/dev/zero",
      () => "__proto__",
      () => "constructor",
      () => "\u0000",
      () => "1e309",
      () => "['a'*10**6]*10**6",
      () => "[[[0]*1000]*1000]*1000",
    ])();
  }

  number(): number {
    return this.pick([0, -1, 1, 2 ** 31, 2 ** 31 - 1, -(2 ** 53), 2 ** 53 + 2, 1e308, -1e308, 0.5, -0.0001, Number.MAX_SAFE_INTEGER, this.int(-1000, 1000)]);
  }

  /** Any JSON value, nested at most `depth` deep. */
  value(depth = 3): unknown {
    const kinds = depth > 0 ? 8 : 5;
    switch (this.int(0, kinds)) {
      case 0:
        return null;
      case 1:
        return this.chance(0.5);
      case 2:
      case 3:
        return this.number();
      case 4:
        return this.string();
      case 5:
        return Array.from({ length: this.int(0, 4) }, () => this.value(depth - 1));
      case 6:
        return this.chance(0.3) ? JSON.parse(`${"[".repeat(900)}${"]".repeat(900)}`) : Array.from({ length: this.pick([0, 1, 10_001]) }, () => 1);
      default: {
        const o: Record<string, unknown> = {};
        for (let i = this.int(0, 4); i > 0; i--) o[this.pick(["__proto__", "constructor", "x", "path", "line", "name", "value", ""])] = this.value(depth - 1);
        return o;
      }
    }
  }

  /** `obj` with one field (or the whole of it) replaced by a random value, or removed. */
  mutate(obj: Record<string, unknown>): unknown {
    if (this.chance(0.1)) return this.value();
    const out: Record<string, unknown> = JSON.parse(JSON.stringify(obj));
    const keys = Object.keys(out);
    const key = keys.length && this.chance(0.8) ? this.pick(keys) : this.pick(["__proto__", "extra", "toString"]);
    if (this.chance(0.15)) delete out[key];
    else {
      const inner = out[key];
      out[key] = inner && typeof inner === "object" && !Array.isArray(inner) && this.chance(0.5) ? this.mutate(inner as Record<string, unknown>) : this.value();
    }
    return out;
  }

  /** `text` damaged: characters flipped, cut, repeated, or text inserted. */
  damage(text: string, edits = this.int(1, 4)): string {
    let s = text;
    for (let i = 0; i < edits; i++) {
      const at = this.int(0, s.length + 1);
      s = this.pick<() => string>([
        () => s.slice(0, at) + String.fromCharCode(this.int(0, 256)) + s.slice(at + 1),
        () => s.slice(0, at),
        () => s.slice(0, at) + s.slice(at, at + this.int(1, 200)).repeat(this.int(2, 50)) + s.slice(at),
        () => s.slice(0, at) + this.string().slice(0, 100_000) + s.slice(at),
        () => s.slice(0, at) + s.slice(at + this.int(1, 50)),
      ])();
    }
    return s;
  }
}
