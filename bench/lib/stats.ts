// Small statistics over lists of samples: median, percentiles (nearest rank), rounding.

/** Nearest-rank percentile (p in 0..100) of the samples; NaN for an empty list. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

/** Middle value (mean of the two middle ones for an even count); NaN for an empty list. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export interface Summary {
  n: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  return {
    n: samples.length,
    median: round(median(samples)),
    p95: round(percentile(samples, 95)),
    min: round(samples.length ? Math.min(...samples) : Number.NaN),
    max: round(samples.length ? Math.max(...samples) : Number.NaN),
  };
}

/** Rounds to `digits` decimals (default 1); keeps NaN. */
export function round(v: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
