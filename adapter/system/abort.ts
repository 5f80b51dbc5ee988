// Whether an error is work that was stopped (an AbortSignal's abort or timeout), not a failure of
// the work: the one test every layer that passes a signal on uses.

/** An error an aborted or timed-out signal raised: a wait that ended early, not the work failing. */
export const isAbort = (e: unknown): boolean => e instanceof Error && (e.name === "AbortError" || e.name === "TimeoutError");
