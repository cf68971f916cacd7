// One autocannon run, measured the same way for every target (Corridor, Prism, hello-world).
import autocannon from 'autocannon';
import { Samples } from './stats.mjs';

/**
 * Loads `origin` with `requests` (an autocannon requests array) for `duration` seconds after a
 * `warmup`-second warm-up at the same concurrency. Latencies are recorded here, per response, in
 * fractional milliseconds (autocannon's own histogram rounds to 1 ms).
 *
 * `onStart` runs when the measured part begins (after the warm-up); CPU accounting hooks it.
 *
 * Returns {
 *   rps:        2xx responses per second (non-2xx and socket errors are NOT throughput),
 *   totalRps:   all responses per second,
 *   latency:    { count, mean, p50, p90, p99, max } of 2xx responses, ms,
 *   errors:     non-2xx responses + socket errors + timeouts,
 *   statusCodes: { "200": n, ... }, socketErrors, timeouts, ok, durationS, warmupRequests
 * }
 */
export async function runLoad({ origin, requests, headers = {}, connections, duration, warmup = 0, timeoutS = 10, onStart }) {
  const samples = new Samples();
  const instance = autocannon({
    url: origin,
    connections,
    duration,
    timeout: timeoutS,
    headers,
    requests,
    ...(warmup > 0 && { warmup: { connections, duration: warmup } }),
  });
  instance.on('start', () => onStart?.());
  instance.on('response', (_client, statusCode, _bytes, ms) => {
    if (statusCode >= 200 && statusCode < 300) samples.push(ms);
  });
  const result = await instance;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  const ok = result['2xx'];
  const durationS = result.duration;
  const warmupRequests = result.warmup?.requests?.total ?? 0;
  return {
    rps: Math.round(ok / durationS),
    totalRps: Math.round(result.requests.total / durationS),
    latency: samples.summary(),
    // autocannon counts a timeout in `errors` too.
    errors: result.non2xx + result.errors,
    ok,
    total: result.requests.total,
    statusCodes,
    socketErrors: result.errors - result.timeouts,
    timeouts: result.timeouts,
    durationS,
    warmupRequests,
  };
}
