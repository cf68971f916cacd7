import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { recordingDeletes, rowsRead } from '../../test/support/db.js';
import { systemClock } from './clock.js';
import { emitEvents, eventRows, pruneEvents, type EventType } from './events.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { madeUpEvents: true });
});
afterAll(() => t.close());

describe('event outbox', () => {
  it('events of a platform without a webhook endpoint are written SKIPPED, others PENDING', async () => {
    const quiet = await t.createPlatform();
    const hooked = await t.createPlatform();
    await hooked.api.patch('/config', { webhookEndpoint: 'https://hooks.example.com/x' });
    const { db } = t.corridor.database;
    const [skipped] = await emitEvents(db, quiet.platform, [{ type: 'TEST', data: {} }], systemClock);
    const [pending] = await emitEvents(db, hooked.platform, [{ type: 'TEST', data: {} }], systemClock);
    const states = await db.selectFrom('events').select(['id', 'delivery_state']).where('id', 'in', [skipped, pending]).execute();
    expect(Object.fromEntries(states.map((s) => [s.id, s.delivery_state]))).toEqual({ [skipped]: 'SKIPPED', [pending]: 'PENDING' });
  });

  it('events written together each keep their own data, byte for byte', async () => {
    const quiet = await t.createPlatform();
    const { db } = t.corridor.database;
    const data = [{ n: 1, symbol: '€' }, { n: 2, note: 'say "hi"\\n' }, { n: 3, nested: { list: [1, 'two'] } }];
    const ids = await emitEvents(db, quiet.platform, data.map((d, i) => ({ type: `TEST_${i}` as EventType, data: d })), systemClock);
    const rows = await db.selectFrom('events').select(['id', 'type', sql<string>`data::text`.as('text')]).where('id', 'in', ids).execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(ids.map((id) => byId.get(id))).toEqual(ids.map((id, i) => ({ id, type: `TEST_${i}`, text: JSON.stringify(data[i]) })));
  });

  it('pruning removes finished events older than the cut-off and keeps those still to deliver', async () => {
    const quiet = await t.createPlatform();
    const hooked = await t.createPlatform();
    await hooked.api.patch('/config', { webhookEndpoint: 'https://hooks.example.com/x' });
    const { db } = t.corridor.database;
    const [old] = await emitEvents(db, quiet.platform, [{ type: 'TEST', data: {} }], systemClock);
    const [waiting] = await emitEvents(db, hooked.platform, [{ type: 'TEST', data: {} }], systemClock);
    expect(await pruneEvents(db, new Date(Date.now() - 60_000))).toBe(0);
    expect(await pruneEvents(db, new Date(Date.now() + 60_000))).toBeGreaterThanOrEqual(1);
    const left = (await db.selectFrom('events').select('id').where('id', 'in', [old, waiting]).execute()).map((r) => r.id);
    expect(left).toEqual([waiting]);
  });

  it('pruning goes by when an event was written in real time, not by the test clock of an advanced sandbox', async () => {
    const sandbox = await t.createPlatform({ mode: 'SANDBOX' });
    const advanced = await sandbox.api.post('/sandbox/clock/advance', { seconds: 366 * 24 * 3600 });
    expect(advanced.status).toBe(200);
    const owner = { id: sandbox.platform.id, clockOffsetMs: advanced.body.offsetSeconds * 1000 };
    const { db } = t.corridor.database;
    const [written] = await emitEvents(db, owner, [{ type: 'TEST', data: {} }], systemClock);
    expect(await pruneEvents(db, new Date(Date.now() - 60_000))).toBe(0);
    await pruneEvents(db, new Date(Date.now() + 60_000));
    expect(await db.selectFrom('events').select('id').where('id', '=', written).execute()).toEqual([]);
  });

  it('pruning deletes in batches until none is left', async () => {
    const quiet = await t.createPlatform();
    const { db } = t.corridor.database;
    const ids = await emitEvents(db, quiet.platform, Array.from({ length: 7 }, () => ({ type: 'TEST' as const, data: {} })), systemClock);
    const recording = recordingDeletes(db);
    expect(await pruneEvents(recording.db, new Date(Date.now() + 60_000), 3)).toBeGreaterThanOrEqual(7);
    expect(recording.deleted.length).toBeGreaterThanOrEqual(3);
    expect(recording.deleted.every((n) => n <= 3)).toBe(true);
    expect(await db.selectFrom('events').select('id').where('id', 'in', ids).execute()).toEqual([]);
  });

  it('pruning finds old events through the primary key, without reading the recent ones', async () => {
    const quiet = await t.createPlatform();
    const rows = eventRows(quiet.platform, Array.from({ length: 2000 }, () => ({ type: 'TEST' as const, data: {} })), systemClock);
    const rollback = new Error('rollback');
    let read = 0;
    await t.corridor.database.db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('events').values(rows.map((r) => ({ ...r, delivery_state: 'SKIPPED' as const }))).execute();
        await sql`analyze events`.execute(trx);
        const before = await rowsRead(trx, 'events');
        await pruneEvents(trx, new Date(Date.now() - 3600_000));
        read = (await rowsRead(trx, 'events')) - before;
        throw rollback;
      })
      .catch((error: unknown) => {
        if (error !== rollback) throw error;
      });
    expect(read).toBeLessThan(100);
  });

  it('an event is due the moment it is written, never a rounded-up millisecond later', async () => {
    const hooked = await t.createPlatform();
    await hooked.api.patch('/config', { webhookEndpoint: 'https://hooks.example.com/x' });
    const { db } = t.corridor.database;
    const early: number[] = [];
    for (let i = 0; i < 300; i++) {
      const [id] = await emitEvents(db, hooked.platform, [{ type: 'TEST', data: {} }], systemClock);
      const afterMs = Date.now();
      const row = await db.selectFrom('events').select('next_attempt_at').where('id', '=', id).executeTakeFirstOrThrow();
      if (row.next_attempt_at.getTime() > afterMs) early.push(row.next_attempt_at.getTime() - afterMs);
    }
    expect(early).toEqual([]);
  });
});
