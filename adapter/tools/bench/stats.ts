// Summaries of timings: median and 90th percentile (linear interpolation between ranks, as
// numpy's default), rounded for the report.

export interface Summary {
  n: number;
  median: number;
  p90: number;
}

export function quantile(values: readonly number[], q: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/** Median and p90 of a sample; undefined when it is empty. */
export function summarize(values: readonly number[]): Summary | undefined {
  if (!values.length) return undefined;
  return { n: values.length, median: round(quantile(values, 0.5)), p90: round(quantile(values, 0.9)) };
}

export function mean(values: readonly number[]): number | undefined {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined;
}

/** Three significant digits at least, two decimals at most below 100. */
export function round(x: number): number {
  if (!Number.isFinite(x)) return x;
  const a = Math.abs(x);
  const d = a >= 100 ? 1 : a >= 1 ? 2 : a >= 0.01 ? 4 : 6;
  return Number(x.toFixed(d));
}
