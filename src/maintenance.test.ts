import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../test/support/app.js';
import { recordingDeletes } from '../test/support/db.js';
import { IDEMPOTENCY_RETENTION_MS, pruneIdempotencyKeys } from './http/idempotency.js';

const HOUR = 3600_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('idempotency keys', () => {
  it('are deleted in batches once past retention; younger ones stay', async () => {
    const { database } = t.corridor;
    const scope = `prune-test-${Date.now()}`;
    const row = (key: string, ageMs: number) => ({ scope, key, request_hash: 'x', status_code: 200, created_at: new Date(Date.now() - ageMs) });
    const old = Array.from({ length: 7 }, (_, i) => row(`old-${i}`, IDEMPOTENCY_RETENTION_MS + HOUR));
    await database.db.insertInto('idempotency_keys').values([...old, row('young', IDEMPOTENCY_RETENTION_MS - HOUR)]).execute();
    const recording = recordingDeletes(database.db);
    expect(await pruneIdempotencyKeys({ ...database, db: recording.db }, Date.now(), 3)).toBeGreaterThanOrEqual(7);
    expect(recording.deleted.every((n) => n <= 3)).toBe(true);
    const left = await database.db.selectFrom('idempotency_keys').select('key').where('scope', '=', scope).execute();
    expect(left.map((r) => r.key)).toEqual(['young']);
  });
});
