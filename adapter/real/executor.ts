// Where a program runs under the tracer for the predictors that run it: this machine's Python
// (hybrid mode, in a trusted workspace: hostRun.ts) or the sealed CPython (predict mode:
// sealed.ts). One interface, so that a predictor asks what a run can do, never which one it has.
import { runTrace } from "./hostRun.js";
import type { TraceOptions } from "./run.js";
import { runSealed, type Hold, type Inspect, type Probes, type SealedResult, type Statement } from "./sealed.js";

/** One run: the tracer's options, and what is asked of the run where it repeats (Executor.repeats). */
export interface RunRequest extends TraceOptions {
  /** Expressions evaluated in the frame at an event of the run. */
  inspect?: Inspect;
  /** The run held there, answering the next expressions asked (heldStop.ts). */
  hold?: Hold;
  /** Debug Console lines, each run in the frame at its event (the run's input). */
  statements?: readonly Statement[];
  /** Expressions evaluated in the frame at every line event on some places (breakpoint conditions, log messages). */
  probes?: Probes;
}

export interface Executor {
  /** Where the program runs: said to the user (a module "not in the sandbox" or "not installed"). */
  readonly where: "host" | "sealed";
  /**
   * Whether a run repeats exactly: a pure function of the program, its input and its holes'
   * answers (the sealed run; the host's reads the clock, the disk and the network). Only then is
   * an expression or a statement at a stop answered by running the program again to that stop.
   */
  readonly repeats: boolean;
  /** Runs the program to its end or a limit. Rejects for a missing program or no Python to run it; a program that fails still resolves. */
  run(program: string, request: RunRequest): Promise<SealedResult>;
}

export const HOST_EXECUTOR: Executor = {
  where: "host",
  repeats: false,
  run: (program, { inspect, hold, statements, probes, ...trace }) => {
    if (inspect || hold || statements?.length || probes) return Promise.reject(new Error("a run on this machine does not repeat: nothing can be asked of it at a stop"));
    return runTrace(program, trace);
  },
};

export const SEALED_EXECUTOR: Executor = {
  where: "sealed",
  repeats: true,
  run: (program, request) => runSealed(program, request),
};
