// One autocannon run, measured the same way for every target (Corridor, Prism, hello-world).
import autocannon from 'autocannon';
import { Samples } from './stats.mjs';

/**
 * Loads `origin` with `requests` (an autocannon requests array) for `warmup` + `duration` seconds
 * on the same `connections`, and measures the last `duration` seconds. Latencies are recorded
 * here, per response, in fractional milliseconds (autocannon's own histogram rounds to 1 ms).
 *
 * The warm-up is the first part of one autocannon run rather than autocannon's own `warmup`
 * option: that one closes its connections and opens new ones for the measured part, and on a
 * busy server the first request of each new connection waited up to 450 ms on the client while
 * the server answered it in under 130 ms: a wait that clients keeping their connections never see.
 *
 * `onStart` runs when the measured part begins (after the warm-up); CPU accounting hooks it.
 *
 * Returns {
 *   rps:        2xx responses per second of the measured part (non-2xx and socket errors are NOT throughput),
 *   totalRps:   all responses per second of the measured part,
 *   latency:    { count, mean, p50, p90, p99, max } of its 2xx responses, ms,
 *   errors:     non-2xx responses + socket errors + timeouts, warm-up included,
 *   statusCodes: { "200": n, ... } and socketErrors, timeouts (warm-up included), ok, total (measured part),
 *   durationS, warmupRequests
 * }
 */
export async function runLoad({ origin, requests, headers = {}, connections, duration, warmup = 0, timeoutS = 10, onStart }) {
  const samples = new Samples();
  let measuredFromMs;
  let ok = 0;
  let total = 0;
  let warmupRequests = 0;
  const instance = autocannon({ url: origin, connections, duration: warmup + duration, timeout: timeoutS, headers, requests });
  const measure = () => {
    measuredFromMs = performance.now();
    onStart?.();
  };
  let timer;
  instance.on('start', () => (warmup > 0 ? (timer = setTimeout(measure, warmup * 1000)) : measure()));
  instance.on('response', (_client, statusCode, _bytes, ms) => {
    if (measuredFromMs === undefined) return void warmupRequests++;
    total++;
    if (statusCode >= 200 && statusCode < 300) {
      ok++;
      samples.push(ms);
    }
  });
  const result = await instance;
  clearTimeout(timer);
  const durationS = measuredFromMs === undefined ? 0 : (performance.now() - measuredFromMs) / 1000;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  return {
    rps: durationS > 0 ? Math.round(ok / durationS) : 0,
    totalRps: durationS > 0 ? Math.round(total / durationS) : 0,
    latency: samples.summary(),
    // autocannon counts a timeout in `errors` too.
    errors: result.non2xx + result.errors,
    ok,
    total,
    statusCodes,
    socketErrors: result.errors - result.timeouts,
    timeouts: result.timeouts,
    durationS,
    warmupRequests,
  };
}
