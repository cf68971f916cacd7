// Ceiling: raw node:crypto ECDSA P-256/SHA-256 verifications per second on one core, the way
// Corridor verifies a signed retry (cached KeyObject, DER signature over a ~250-byte payload).
// Started by bench/ceilings.mjs in its own process; reports { ok, rps, latency } over IPC.
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { Samples } from '../lib/stats.mjs';

const { durationS, warmupS } = JSON.parse(process.argv[2] ?? '{}');
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const messages = Array.from({ length: 64 }, (_, i) =>
  Buffer.from(JSON.stringify({ requestId: `0193a1b2-0000-7000-8000-${String(i).padStart(12, '0')}`, type: 'OAUTH', accountId: 'InternalAccount:0193a1b2-0000-7000-8000-000000000000', action: 'ADD_CREDENTIAL', requestHash: 'f'.repeat(64), expiresAt: new Date().toISOString() })),
);
const signatures = messages.map((m) => sign('sha256', m, privateKey));

function run(seconds, samples) {
  const end = performance.now() + seconds * 1000;
  let count = 0;
  while (performance.now() < end) {
    // Batches of 100 keep the clock reads from dominating; latency is per verification.
    const started = performance.now();
    for (let i = 0; i < 100; i++) {
      const k = (count + i) & 63;
      if (!verify('sha256', messages[k], { key: publicKey, dsaEncoding: 'der' }, signatures[k])) throw new Error('verification failed');
    }
    samples?.push((performance.now() - started) / 100);
    count += 100;
  }
  return count;
}

try {
  run(warmupS ?? 0.5);
  const samples = new Samples();
  const started = performance.now();
  const count = run(durationS ?? 5, samples);
  const elapsed = (performance.now() - started) / 1000;
  process.send({ ok: true, rps: Math.round(count / elapsed), latency: samples.summary() });
} catch (error) {
  process.send({ ok: false, error: error.stack ?? String(error) });
}
