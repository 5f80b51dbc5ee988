// A sealed run held at one stop, answering the debugger's expressions in its live frames. The
// first expression asked at a stop runs the program to it, as any inspect does, and the run stays
// there (runSealed's `hold`); each later one at the same stop is answered by that run at once,
// with no run again, until the run is let go: another stop asks, any other request reaches the
// sealed child (SealedChild.run), the session ends, or no question comes for a minute.
import type { Hold, Inspected, Question, SealedResult } from "./sealed.js";

/** A held run with no question for this long goes on to its end. */
const IDLE_MS = 60_000;

interface Held {
  /** The stop: its state and all that makes the run reach it (statements, answers). */
  key: string;
  /** Gives the run its next question (undefined lets it go), while it waits for one. */
  next?: (q: Question | undefined) => void;
  /** Takes the answers to the question asked (undefined: the run ended first). */
  answers?: (a: Inspected[] | undefined) => void;
  /** The run's end. */
  run?: Promise<SealedResult>;
}

export class HeldStop {
  private held?: Held;
  /** One question at a time: each waits for the answers before it. */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * The answers to `question` at the stop named `key`: by the run held there, else by a run that
   * `start` begins with the Hold it is given, which then stays there. Where that run ends without
   * answering (it did not reach the stop), its result, which says why.
   */
  ask(key: string, question: Question, start: (hold: Hold) => Promise<SealedResult>): Promise<Inspected[] | SealedResult> {
    const job = this.queue.then(() => this.askNow(key, question, start));
    this.queue = job.catch(() => undefined);
    return job;
  }

  private async askNow(key: string, question: Question, start: (hold: Hold) => Promise<SealedResult>): Promise<Inspected[] | SealedResult> {
    const h = this.held;
    if (h?.key === key && h.next) {
      const next = h.next;
      h.next = undefined;
      const answers = await new Promise<Inspected[] | undefined>((resolve) => {
        h.answers = resolve;
        next(question);
      });
      if (answers) return answers;
      // Let go before it took the question: a run anew; ended by it (its time limit), why.
      const ended = await h.run!.catch(() => undefined);
      if (ended && ended.limit !== "inspect") return ended;
    }
    this.release();
    const held: Held = { key };
    this.held = held;
    const first = new Promise<Inspected[] | undefined>((resolve) => (held.answers = resolve));
    const hold: Hold = (answers) => {
      const take = held.answers;
      held.answers = undefined;
      take?.(answers);
      return new Promise((resolve) => {
        const idle = setTimeout(() => {
          held.next = undefined;
          resolve(undefined);
        }, IDLE_MS);
        idle.unref();
        held.next = (q) => {
          clearTimeout(idle);
          resolve(q);
        };
      });
    };
    const run = (held.run = start(hold).finally(() => {
      held.next = undefined;
      held.answers?.(undefined);
      if (this.held === held) this.held = undefined;
    }));
    run.catch(() => undefined); // (where the answers come first, the run's end is nobody's)
    return (await Promise.race([first, run])) ?? run;
  }

  /** Lets the held run go on to its end. */
  release(): void {
    const h = this.held;
    this.held = undefined;
    const next = h?.next;
    if (h) h.next = undefined;
    next?.(undefined);
  }
}
