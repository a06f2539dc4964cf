/**
 * The samples of a CouchDB histogram: those of the last `[stats] interval` seconds (at most
 * `MAX_SAMPLES` of them), summarised the way `GET /_node/_local/_stats` shows a histogram.
 */

const MAX_SAMPLES = 4096;
const PERCENTILES = [50, 75, 90, 95, 99, 999] as const;
const BINS = 10;

export interface HistogramValue {
  min: number;
  max: number;
  arithmetic_mean: number;
  geometric_mean: number;
  harmonic_mean: number;
  median: number;
  variance: number;
  standard_deviation: number;
  skewness: number;
  kurtosis: number;
  percentile: [number, number][];
  histogram: [number, number][];
  n: number;
}

export class SampleWindow {
  readonly #times: number[] = [];
  readonly #values: number[] = [];
  readonly #windowMs: () => number;
  readonly #now: () => number;

  constructor(windowMs: () => number, now: () => number = Date.now) {
    this.#windowMs = windowMs;
    this.#now = now;
  }

  add(value: number): void {
    this.#times.push(this.#now());
    this.#values.push(value);
    // Trimmed in chunks, so a request costs O(1) amortised, not a shift of thousands of samples.
    if (this.#values.length > 2 * MAX_SAMPLES) this.#drop(this.#values.length - MAX_SAMPLES);
  }

  #drop(count: number): void {
    this.#times.splice(0, count);
    this.#values.splice(0, count);
  }

  /** The samples still inside the window, oldest first. */
  samples(): number[] {
    const oldest = this.#now() - this.#windowMs();
    let expired = 0;
    while (expired < this.#times.length && this.#times[expired]! < oldest) expired++;
    this.#drop(Math.max(expired, this.#values.length - MAX_SAMPLES));
    return [...this.#values];
  }

  summary(): HistogramValue {
    return summarise(this.samples());
  }
}

function percentileOf(sorted: readonly number[], permille: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((permille / 1000) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

function moments(values: readonly number[], mean: number): { variance: number; skewness: number; kurtosis: number } {
  const n = values.length;
  if (n < 2) return { variance: 0, skewness: 0, kurtosis: 0 };
  const sum = (power: number): number => values.reduce((total, value) => total + (value - mean) ** power, 0);
  const variance = sum(2) / (n - 1);
  const deviation = Math.sqrt(variance);
  if (deviation === 0) return { variance, skewness: 0, kurtosis: 0 };
  return { variance, skewness: sum(3) / n / deviation ** 3, kurtosis: sum(4) / n / deviation ** 4 - 3 };
}

function bins(sorted: readonly number[]): [number, number][] {
  if (sorted.length === 0) return [[0, 0]];
  const low = sorted[0]!;
  const width = (sorted[sorted.length - 1]! - low) / BINS || 1;
  const counts = new Array<number>(BINS).fill(0);
  for (const value of sorted) counts[Math.min(BINS - 1, Math.floor((value - low) / width))]!++;
  return counts.map((count, index) => [round(low + width * (index + 1)), count]);
}

const round = (value: number): number => Math.round(value * 1000) / 1000;

/** CouchDB's histogram statistics (folsom's) of some samples; all zero without any. */
export function summarise(values: readonly number[]): HistogramValue {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = n === 0 ? 0 : sorted.reduce((total, value) => total + value, 0) / n;
  const positive = sorted.filter((value) => value > 0);
  const geometric = positive.length === 0 ? 0 : Math.exp(positive.reduce((total, value) => total + Math.log(value), 0) / positive.length);
  const harmonic = positive.length === 0 ? 0 : positive.length / positive.reduce((total, value) => total + 1 / value, 0);
  const { variance, skewness, kurtosis } = moments(sorted, mean);
  return {
    min: n === 0 ? 0 : round(sorted[0]!),
    max: n === 0 ? 0 : round(sorted[n - 1]!),
    arithmetic_mean: round(mean),
    geometric_mean: round(geometric),
    harmonic_mean: round(harmonic),
    median: round(percentileOf(sorted, 500)),
    variance: round(variance),
    standard_deviation: round(Math.sqrt(variance)),
    skewness: round(skewness),
    kurtosis: round(kurtosis),
    percentile: PERCENTILES.map((p) => [p, round(percentileOf(sorted, p === 999 ? 999 : p * 10))]),
    histogram: bins(sorted),
    n,
  };
}
