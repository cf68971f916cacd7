// Latency samples and their percentiles, in milliseconds with sub-millisecond precision
// (autocannon's own histogram rounds to whole milliseconds).

export class Samples {
  constructor(initial = 1 << 16) {
    this.values = new Float64Array(initial);
    this.length = 0;
  }
  push(ms) {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = ms;
  }
  /** { count, mean, p50, p90, p99, max } in ms, rounded to 0.01 ms. */
  summary() {
    const sorted = this.values.slice(0, this.length).sort();
    const at = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : NaN);
    let sum = 0;
    for (const v of sorted) sum += v;
    const r = (v) => Math.round(v * 100) / 100;
    return {
      count: sorted.length,
      mean: r(sorted.length ? sum / sorted.length : NaN),
      p50: r(at(0.5)),
      p90: r(at(0.9)),
      p99: r(at(0.99)),
      max: r(sorted.length ? sorted[sorted.length - 1] : NaN),
    };
  }
}
