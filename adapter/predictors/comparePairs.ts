// Compare mode's pairs: a predicted state checked against the real one, and the running agreement
// over a session (per step with resync, until the first divergence without).
import { sameLocals, type Frame, type Step } from "../format/trajectory.js";
import type { Agreement, Observable, PairCheck, Ratio } from "../protocol.js";
import type { RealState } from "./compareReal.js";

// ---------------------------------------------------------------------------------------------
// Comparing a predicted state with the real one

/** Compares a predicted state with a real one; undefined when there is no real state (its side was cut off). */
export function checkPair(predicted: Step, real: RealState): PairCheck | undefined {
  if (real.origin === "cut") return undefined;
  const pf = predicted.frame;
  const rf = real.step.frame;
  const seen = (o: Observable): boolean => !real.unobserved.includes(o);
  if (!pf || !rf) {
    if (!pf && !rf) {
      const pe = predicted.exit!;
      const re = real.step.exit!;
      const value = seen("value") ? pe.value === re.value : null;
      const event = pe.status === re.status;
      return { exact: event && value !== false, event, place: true, line: null, locals: null, value, differing: [], names: { agree: 0, total: 0 } };
    }
    const locals = pf?.locals ?? rf?.locals ?? {};
    return { exact: false, event: false, place: false, line: false, locals: false, value: null, differing: Object.keys(locals), names: { agree: 0, total: Object.keys(locals).length } };
  }
  const event = pf.event === rf.event;
  const place = pf.func === rf.func && pf.depth === rf.depth && pf.file === rf.file;
  const line = seen("line") ? pf.line === rf.line : null;
  let locals: boolean | null = null;
  const differing: string[] = [];
  const names = { agree: 0, total: 0 };
  if (seen("locals")) {
    for (const k of new Set([...Object.keys(pf.locals), ...Object.keys(rf.locals)])) {
      names.total++;
      if (k in pf.locals && k in rf.locals && pf.locals[k] === rf.locals[k]) names.agree++;
      else differing.push(k);
    }
    locals = sameLocals(pf.locals, rf.locals);
  }
  const hasValue = (f: Frame): boolean => f.event === "return" || f.event === "exception";
  const value = hasValue(pf) || hasValue(rf) ? (seen("value") ? pf.value === rf.value : null) : null;
  return { exact: event && place && line !== false && locals !== false && value !== false, event, place, line, locals, value, differing, names };
}

// ---------------------------------------------------------------------------------------------
// Running agreement

/** One step of a compare session: the action, the predicted and real states, and how they agree. */
export interface Pair {
  /** 0 for the first state. */
  index: number;
  /** The user's action ("start" for the first state). */
  action: string;
  /** Index of the predicted state in the engine's history. */
  historyIndex: number;
  predicted: Step;
  real: RealState;
  check?: PairCheck;
  /** The predicted state was replaced by the real one (the next step is predicted from it). */
  resynced: boolean;
  /** The user edited the predicted state (setVariable). */
  edited: boolean;
  realMs: number;
  predictedMs: number;
}

function ratio(pairs: readonly Pair[], pick: (c: PairCheck) => boolean | null): Ratio {
  const r = { agree: 0, total: 0 };
  for (const p of pairs) {
    const v = p.check ? pick(p.check) : null;
    if (v === null) continue;
    r.total++;
    if (v) r.agree++;
  }
  return r;
}

export function agreementOf(all: readonly Pair[], mode: "resync" | "free"): Agreement {
  const pairs = all.filter((p) => p.index > 0);
  const compared = pairs.filter((p) => p.check);
  const first = compared.find((p) => !p.check!.exact);
  const names = { agree: 0, total: 0 };
  for (const p of compared) {
    names.agree += p.check!.names.agree;
    names.total += p.check!.names.total;
  }
  const moves = pairs;
  const mean = (xs: number[]): number => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0);
  return {
    mode,
    steps: pairs.length,
    compared: compared.length,
    states: ratio(pairs, (c) => c.exact),
    lines: ratio(pairs, (c) => c.line),
    locals: ratio(pairs, (c) => c.locals),
    names,
    firstDivergence: first ? first.index : null,
    horizon: first ? compared.indexOf(first) : compared.length,
    realMs: mean(moves.map((p) => p.realMs)),
    predictedMs: mean(moves.map((p) => p.predictedMs)),
  };
}

const pct = (r: Ratio): string => (r.total ? `${r.agree}/${r.total} (${Math.round((100 * r.agree) / r.total)}%)` : "-");

export function describeAgreement(a: Agreement): string {
  const tail = a.mode === "resync" ? "per step, resynced" : `free-running, ${a.firstDivergence === null ? "no divergence yet" : `first divergence at step ${a.firstDivergence}`}`;
  return `states ${pct(a.states)}, lines ${pct(a.lines)}, locals ${pct(a.locals)} (${tail})`;
}

/** One line on what differs in a pair, e.g. `line 7 ≠ real 8; x = 3 ≠ real 4`. */
export function describeDifference(pair: Pair): string {
  const c = pair.check;
  if (!c) return `no real state (${pair.real.note ?? "the real side has ended"})`;
  if (c.exact) return "same state";
  const p = pair.predicted;
  const r = pair.real.step;
  if (!p.frame || !r.frame) return `${stateLabel(p)} ≠ real ${stateLabel(r, pair.real.unobserved)}`;
  const parts: string[] = [];
  if (!c.event || !c.place) parts.push(`${stateLabel(p)} ≠ real ${stateLabel(r, pair.real.unobserved)}`);
  else if (c.line === false) parts.push(`line ${p.frame.line} ≠ real ${r.frame.line}`);
  if (c.value === false) parts.push(`value ${p.frame.value ?? "(none)"} ≠ real ${r.frame.value ?? "(none)"}`);
  for (const k of c.differing.slice(0, 6)) parts.push(`${k} = ${p.frame.locals[k] ?? "(none)"} ≠ real ${r.frame.locals[k] ?? "(none)"}`);
  if (c.differing.length > 6) parts.push(`${c.differing.length - 6} more`);
  return parts.join("; ");
}

/** A short name for a state: `line 7 in f`, `return from f (line 9)`, `exit (normal)`; a line not observed is left out. */
export function stateLabel(s: Step, unobserved: readonly Observable[] = []): string {
  if (s.exit) return `exit (${s.exit.status}${s.exit.value ? `: ${s.exit.value}` : ""})`;
  const f = s.frame!;
  const where = `${f.func}${f.file ? ` (${f.file})` : ""}`;
  const at = unobserved.includes("line") ? "" : ` (line ${f.line})`;
  switch (f.event) {
    case "call":
      return `call of ${where}${at}`;
    case "return":
      return `return from ${where}${at}`;
    case "exception":
      return `exception in ${where}${at}`;
    default:
      return `line ${f.line} in ${where}`;
  }
}
