// Every wait of a tool call is bounded: by the server's deadline for that kind of call and by the
// client, which may cancel a request (notifications/cancelled) or go away. A wait that ends early
// leaves the session where it was; the work it waited for is told to stop, or, where it cannot be
// (a model that is still loading), its result is released when it comes.

/**
 * A deadline: its signal aborts after `ms` (a TimeoutError), or as soon as one of `also` does.
 * Made with a timer and a controller held here, not with AbortSignal.timeout and AbortSignal.any,
 * whose signals are held weakly and can be collected before they fire (then nothing ever aborts).
 * `end` it when the work is done, so that its timer and listeners go.
 */
export class Deadline {
  private readonly ctl = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly unlisten: (() => void)[] = [];

  constructor(ms: number, also: readonly (AbortSignal | undefined)[] = []) {
    this.timer = setTimeout(() => this.ctl.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError")), ms);
    for (const s of also) {
      if (!s) continue;
      if (s.aborted) {
        this.ctl.abort(s.reason);
        continue;
      }
      const on = (): void => this.ctl.abort(s.reason);
      s.addEventListener("abort", on, { once: true });
      this.unlisten.push(() => s.removeEventListener("abort", on));
    }
  }

  get signal(): AbortSignal {
    return this.ctl.signal;
  }

  end(): void {
    clearTimeout(this.timer);
    for (const u of this.unlisten.splice(0)) u();
  }
}

/** The reason a wait ended early, in words: the deadline, or the client's cancel. */
export function stopReason(signal: AbortSignal, what: string, ms: number): string {
  const r: unknown = signal.reason;
  if (r instanceof Error && r.name === "TimeoutError") return `${what} took longer than ${Math.round(ms / 1000)} s and was stopped`;
  return `${what} was cancelled`;
}

/**
 * `work`, unless `signal` aborts first: then it rejects at once with the signal's reason, and
 * `late` gets the work's result when it comes (to release it), whatever it is.
 */
export function bounded<T>(work: Promise<T>, signal: AbortSignal, late?: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    void work.then((v) => late?.(v), () => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const onAbort = (): void => {
      done = true;
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        if (done) late?.(v);
        else resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        if (!done) reject(e);
      },
    );
  });
}

/**
 * Calls on one session take turns: a step and a read of the variables never see each other half
 * done, and output is told to the call that moved past it. Waiting for a turn is bounded by the
 * caller's signal.
 */
export class Turns {
  private tail: Promise<void> = Promise.resolve();

  async take<T>(signal: AbortSignal, work: () => Promise<T> | T): Promise<T> {
    const before = this.tail;
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    this.tail = before.then(() => mine);
    try {
      await bounded(before, signal);
      return await work();
    } finally {
      release();
    }
  }
}
