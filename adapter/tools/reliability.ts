// The reliability table: predicted states grouped by the confidence shown for them (bins of 10
// points), each bin's count, mean stated confidence and share of exact states. A calibrated
// confidence puts every bin's exact share near its mean confidence; the model card and
// `ndbg eval steps` print it, and `ndbg calibrate` prints it for the states it was fitted on.

/** One state: the confidence shown for it, and whether it was the exact next state. */
export interface Rated {
  confidence: number;
  exact: boolean;
}

export interface ReliabilityBin {
  /** The bin holds confidences in [from, to) (the last one includes 1). */
  from: number;
  to: number;
  count: number;
  /** Mean confidence shown in the bin; null when empty. */
  confidence: number | null;
  /** Share of the bin's states that were exact; null when empty. */
  exact: number | null;
}

export interface Reliability {
  states: number;
  bins: ReliabilityBin[];
  /** Expected calibration error: the count-weighted mean of |exact - confidence| over the bins. */
  ece: number | null;
  /** Bins of at least `minCount` states whose exact share is more than `tolerance` from their mean confidence. */
  off: number;
  minCount: number;
  tolerance: number;
}

/** A bin judged by the table: this many states at least (smaller ones are shown, not judged). */
export const MIN_BIN_STATES = 30;
/** How far (in shares) a judged bin's exact share may be from its mean confidence. */
export const TOLERANCE = 0.1;

export function reliability(points: readonly Rated[], nBins = 10): Reliability {
  const sums = Array.from({ length: nBins }, () => ({ n: 0, c: 0, k: 0 }));
  for (const p of points) {
    const b = sums[Math.min(nBins - 1, Math.max(0, Math.floor(p.confidence * nBins)))];
    b.n++;
    b.c += p.confidence;
    if (p.exact) b.k++;
  }
  const bins = sums.map((b, i) => ({
    from: i / nBins,
    to: (i + 1) / nBins,
    count: b.n,
    confidence: b.n ? b.c / b.n : null,
    exact: b.n ? b.k / b.n : null,
  }));
  const n = points.length;
  const ece = n ? bins.reduce((s, b) => s + (b.count ? (b.count / n) * Math.abs(b.exact! - b.confidence!) : 0), 0) : null;
  // A little slack for rounding: 0.1 apart in the table's printed points is within.
  const off = bins.filter((b) => b.count >= MIN_BIN_STATES && Math.abs(b.exact! - b.confidence!) > TOLERANCE + 1e-9).length;
  return { states: n, bins, ece, off, minCount: MIN_BIN_STATES, tolerance: TOLERANCE };
}

const pct = (x: number | null, d = 1): string => (x === null ? "-" : (100 * x).toFixed(d));

/** The table as text: one line a bin, then the ECE and whether every judged bin is within the tolerance. */
export function reliabilityTable(r: Reliability, title: string): string {
  const head = ["confidence", "states", "mean conf %", "exact %", ""];
  const rows = r.bins.map((b) => {
    const judged = b.count >= r.minCount;
    const gap = b.count ? Math.abs(b.exact! - b.confidence!) : 0;
    return [
      `${Math.round(b.from * 100)}-${Math.round(b.to * 100)}%`,
      String(b.count),
      pct(b.confidence),
      pct(b.exact),
      !judged ? (b.count ? `(under ${r.minCount}: not judged)` : "") : gap > r.tolerance + 1e-9 ? `off by ${pct(gap)} points` : "",
    ];
  });
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((x) => x[i].length)));
  const fmt = (x: string[]): string => x.map((c, i) => (i === 0 || i === 4 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ").trimEnd();
  const judged = r.bins.filter((b) => b.count >= r.minCount).length;
  return [
    `${title}: ${r.states} states`,
    ...all.map(fmt),
    `ECE ${pct(r.ece)} points; ${judged - r.off} of ${judged} bins of ${r.minCount}+ states within ${Math.round(r.tolerance * 100)} points of their confidence`,
  ].join("\n");
}
