// A sealed run held at one stop, answering the debugger in its live frames. The first question
// asked at a stop runs the program to it, as any inspect does, and the run stays there
// (runSealed's `hold`); each later one at the same stop is answered by that run at once, with no
// run again, until the run is let go: another stop asks, any other request reaches the sealed
// child (SealedChild.run), the session ends, or no question comes for a minute. A line of the
// Debug Console run there with its effects kept leaves the run where a run with that line among
// its statements would stand: the stop is then that run's (`then`).
import type { Hold, HeldAnswer, Question, SealedResult } from "./sealed.js";

/** A held run with no question for this long goes on to its end. */
const IDLE_MS = 60_000;

interface Held {
  /** The stop: its state and all that makes the run reach it (statements, answers). */
  key: string;
  /** The run's first answer (undefined: it ended before it reached the stop). */
  first: Promise<HeldAnswer | undefined>;
  /** Gives the run its next question (undefined lets it go), while it waits for one. */
  next?: (q: Question | undefined) => void;
  /** Takes the answer to the question asked (undefined: the run ended first). */
  answer?: (a: HeldAnswer | undefined) => void;
  /** The run's end (set as it begins). */
  run?: Promise<SealedResult>;
}

export class HeldStop {
  private held?: Held;
  /** One question at a time: each waits for the answer before it. */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * The answer to `question` at the stop named `key`: by the run held there, else by a run that
   * `start` begins with the Hold it is given (inspecting no expression where the question is a
   * line), which then stays there. Where that run ends without answering (it did not reach the
   * stop), its result, which says why. `then`: the stop's name once the question is answered (a
   * line kept among the run's statements).
   */
  ask(key: string, question: Question, start: (hold: Hold) => Promise<SealedResult>, then = key): Promise<HeldAnswer | SealedResult> {
    const job = this.queue.then(async () => {
      const got = await this.askNow(key, question, start);
      if (this.held && "results" in got) this.held.key = then;
      return got;
    });
    this.queue = job.catch(() => undefined);
    return job;
  }

  /**
   * Begins a run to the stop named `key` before anything is asked there (a long run's stop, where
   * the first question would otherwise wait for a run as long as the program's way to it): `start`
   * runs it inspecting no expression, as a run the sealed child stops for any other request.
   */
  ahead(key: string, start: (hold: Hold) => Promise<SealedResult>): void {
    if (this.held?.key === key) return;
    this.release();
    this.begin(key, start);
  }

  /** Whether a run is held (or begun) for the stop named `key`. */
  holds(key: string): boolean {
    return this.held?.key === key;
  }

  private async askNow(key: string, question: Question, start: (hold: Hold) => Promise<SealedResult>): Promise<HeldAnswer | SealedResult> {
    const h = this.held;
    if (h?.key === key) {
      // (one begun ahead, on its way: it is asked once there; one that ended on the way is run anew)
      if (h.next || (await h.first) !== undefined) {
        const answer = await this.put(h, question);
        if (answer) return answer;
        // Let go before it took the question: a run anew; ended by it (its time limit), why.
        const ended = await h.run?.catch(() => undefined);
        if (ended && ended.limit !== "inspect") return ended;
      }
    }
    this.release();
    const held = this.begin(key, start);
    const run = held.run!;
    const answer = await Promise.race([held.first, run]);
    if (!answer || !("results" in answer)) return answer ?? run;
    // A line: the run began with no expression, and now stands at the stop to be asked it.
    return "code" in question ? ((await this.put(held, question)) ?? run) : answer;
  }

  /** A run to the stop named `key`, held there once it answers its first question. */
  private begin(key: string, start: (hold: Hold) => Promise<SealedResult>): Held {
    let first!: (a: HeldAnswer | undefined) => void;
    const held: Held = { key, first: new Promise((resolve) => (first = resolve)) };
    held.answer = first;
    this.held = held;
    const hold: Hold = (answer) => {
      const take = held.answer;
      held.answer = undefined;
      take?.(answer);
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
    held.run = start(hold).finally(() => {
      held.next = undefined;
      held.answer?.(undefined);
      first(undefined);
      if (this.held === held) this.held = undefined;
    });
    held.run.catch(() => undefined); // (where the answer comes first, the run's end is nobody's)
    return held;
  }

  /** Asks the held run `question`: its answer, or undefined where the run ended first. */
  private put(h: Held, question: Question): Promise<HeldAnswer | undefined> {
    const next = h.next;
    h.next = undefined;
    if (!next) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      h.answer = resolve;
      next(question);
    });
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
