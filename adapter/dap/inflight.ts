// The session's work in flight, by the request that asked for it (its seq; the launch's own
// work by negative keys), so that cancel aborts one request, pause the moves, and a session that
// ends everything it still runs.
export class Inflight {
  private work = new Map<number, { ctl: AbortController; move: boolean }>();

  /** Runs `work` with a signal that cancel, pause (`move`: the work is a move) or the end aborts. */
  async run<T>(key: number, move: boolean, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ctl = new AbortController();
    this.work.set(key, { ctl, move });
    try {
      return await work(ctl.signal);
    } finally {
      if (this.work.get(key)?.ctl === ctl) this.work.delete(key);
    }
  }

  /** Whether a move is in flight. */
  moving(): boolean {
    for (const { move } of this.work.values()) if (move) return true;
    return false;
  }

  /** A cancel request: the work of request `key`, if any, is aborted. */
  cancel(key: number): void {
    this.work.get(key)?.ctl.abort(new DOMException("cancelled", "AbortError"));
  }

  /** Aborts the work in flight (moves only, or all); returns how much. */
  abort(reason: string, movesOnly = false): number {
    let n = 0;
    for (const [key, { ctl, move }] of this.work) {
      if (movesOnly && !move) continue;
      ctl.abort(new DOMException(reason, "AbortError"));
      this.work.delete(key);
      n++;
    }
    return n;
  }
}
