import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { capturingLogger, expectBackoffWhileDown, failOnce, outage } from '../../test/support/faults.js';
import type { Database } from '../db/database.js';
import { transact } from '../db/transact.js';
import type { Platform } from '../modules/platform/service.js';
import { enqueueJobs, JobRunner, platformAsOfDue, retryDelayMs, type ClaimedJob } from './jobs.js';

/** A service context outside any request: no Idempotency-Key to record. */
const contextOf = (database: Database, platform: Platform) => ({ platform, tx: <T>(work: (trx: any) => Promise<T>) => transact(database.db, work) });

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('durable job runner', () => {
  it('a job scheduled before a restart runs after it', async () => {
    const { platform } = await t.createPlatform();
    const { database } = t.corridor;
    const runAt = new Date(Date.now() + 3_600_000);
    await database.db.transaction().execute((trx) =>
      enqueueJobs(trx, platform, [{ kind: 'test.restart', payload: { n: 7 }, runAt }], systemNow()),
    );
    await t.close(); // the first "process" goes away before the job is due

    const restarted = await startTestApp();
    try {
      const ran: unknown[] = [];
      restarted.corridor.services.jobs.register('test.restart', async (job) => {
        ran.push(job.payload);
      });
      expect(await restarted.corridor.services.jobs.runDue()).toBe(0); // not due yet
      await restarted.corridor.services.platforms.advanceClock(contextOf(restarted.corridor.database, platform), 3600);
      expect(ran).toEqual([{ n: 7 }]);
      const left = await database.db.selectFrom('jobs').selectAll().where('kind', '=', 'test.restart').execute();
      expect(left).toHaveLength(0);
    } finally {
      await restarted.close();
      t = await startTestApp();
    }
  });

  it('retries a failing job with backoff doubling from 1 s, then gives up and keeps it for inspection', async () => {
    const { platform } = await t.createPlatform();
    const { database, services } = t.corridor;
    let calls = 0;
    let failedAt = 0;
    services.jobs.register('test.flaky', async () => {
      calls++;
      failedAt = Date.now();
      throw new Error('boom');
    });
    await database.db.transaction().execute((trx) => enqueueJobs(trx, platform, [{ kind: 'test.flaky', maxAttempts: 4 }], systemNow()));
    const row = () => database.db.selectFrom('jobs').selectAll().where('kind', '=', 'test.flaky').executeTakeFirstOrThrow();
    await services.jobs.runDue(platform.id);
    for (const [attempt, delayMs] of [[1, 1_000], [2, 2_000], [3, 4_000]]) {
      expect(calls).toBe(attempt);
      const failed = await row();
      expect(failed).toMatchObject({ attempts: attempt, last_error: 'boom', dead_at: null });
      // Due again `delayMs` after the failure (the runner's own steps take well under a second).
      expect(failed.due_at.getTime() - failedAt).toBeGreaterThanOrEqual(delayMs - 5);
      expect(failed.due_at.getTime() - failedAt).toBeLessThan(delayMs + 1_000);
      // Half the wait on the test clock runs nothing (from 2 s on); the other half, the next attempt.
      const half = Math.floor(delayMs / 2_000);
      if (half > 0) await services.platforms.advanceClock(contextOf(database, platform), half);
      expect(calls).toBe(attempt);
      await services.platforms.advanceClock(contextOf(database, platform), delayMs / 1_000 - half);
    }
    expect(calls).toBe(4);
    expect((await row()).dead_at).not.toBeNull();
    await services.platforms.advanceClock(contextOf(database, platform), 3600);
    expect(calls).toBe(4);
  });

  it('waits double after each failed attempt, up to 30 minutes', () => {
    expect([1, 2, 3, 4, 11, 12, 40].map(retryDelayMs)).toEqual([1_000, 2_000, 4_000, 8_000, 1_024_000, 1_800_000, 1_800_000]);
  });

  it('jobs of a kind with a batch handler run together; a failed batch falls back to one job at a time', async () => {
    const { platform } = await t.createPlatform();
    const { database, services } = t.corridor;
    const batches: number[][] = [];
    const alone: number[] = [];
    let failBatch = false;
    services.jobs.register('test.batched', async (job) => {
      alone.push(Number(job.payload.n));
    });
    services.jobs.registerBatch('test.batched', async (jobs) => {
      if (failBatch) throw new Error('batch broke');
      batches.push(jobs.map((job) => Number(job.payload.n)).sort((a, b) => a - b));
    });
    const enqueue = (ns: number[]) =>
      database.db.transaction().execute((trx) => enqueueJobs(trx, platform, ns.map((n) => ({ kind: 'test.batched', payload: { n } })), systemNow()));

    await enqueue([1, 2, 3]);
    await services.jobs.runDue(platform.id);
    expect(batches).toEqual([[1, 2, 3]]);
    expect(alone).toEqual([]);

    await enqueue([4]); // a batch of one is just a job
    await services.jobs.runDue(platform.id);
    expect(alone).toEqual([4]);

    failBatch = true;
    await enqueue([5, 6]);
    await services.jobs.runDue(platform.id);
    expect(alone.sort((a, b) => a - b)).toEqual([4, 5, 6]);
    const left = await database.db.selectFrom('jobs').select('id').where('kind', '=', 'test.batched').execute();
    expect(left).toHaveLength(0);
    expect(() => services.jobs.registerBatch('test.no-single-handler', async () => {})).toThrow(/one-job handler/);
  });

  it('a round that finds its batch full claims twice as many next, up to the most, then starts small again', async () => {
    const { platform } = await t.createPlatform();
    const { database, clock, log } = t.corridor;
    const runner = new JobRunner({ database, clock, log, batchSize: 5, maxBatchSize: 20 });
    const rounds: number[] = [];
    runner.register('test.backlog', async () => {});
    runner.registerBatch('test.backlog', async (jobs) => {
      rounds.push(jobs.length);
    });
    const enqueue = (n: number) =>
      database.db.transaction().execute((trx) => enqueueJobs(trx, platform, Array.from({ length: n }, () => ({ kind: 'test.backlog' })), systemNow()));

    await enqueue(43);
    expect(await runner.runDue(platform.id)).toBe(43);
    expect(rounds).toEqual([5, 10, 20, 8]);

    rounds.length = 0;
    await enqueue(7);
    await runner.runDue(platform.id);
    expect(rounds).toEqual([5, 2]);
  });

  it('two runners never run the same job twice', async () => {
    const { platform } = await t.createPlatform();
    const other = await startTestApp();
    try {
      const seen: number[] = [];
      const handler = async (job: { id: number }) => {
        seen.push(job.id);
        await new Promise((r) => setTimeout(r, 5));
      };
      t.corridor.services.jobs.register('test.once', handler);
      other.corridor.services.jobs.register('test.once', handler);
      await t.corridor.database.db
        .transaction()
        .execute((trx) => enqueueJobs(trx, platform, Array.from({ length: 30 }, () => ({ kind: 'test.once' })), systemNow()));
      await Promise.all([t.corridor.services.jobs.runDue(), other.corridor.services.jobs.runDue()]);
      expect(seen).toHaveLength(30);
      expect(new Set(seen).size).toBe(30);
    } finally {
      await other.close();
    }
  });

  it('running a platform\'s due jobs waits for those the poller holds, and for what they schedule', async () => {
    const { platform } = await t.createPlatform();
    const { database, log } = t.corridor;
    const runner = new JobRunner({ database, clock: systemNow() as never, log, pollIntervalMs: 10 });
    let started!: () => void;
    const pollerHasIt = new Promise<void>((resolve) => (started = resolve));
    const ran: string[] = [];
    runner.register('test.slow', async () => {
      started();
      await new Promise((r) => setTimeout(r, 200));
      await enqueueJobs(database.db, platform, [{ kind: 'test.next' }], systemNow());
      ran.push('slow');
    });
    runner.register('test.next', async () => {
      ran.push('next');
    });
    await enqueueJobs(database.db, platform, [{ kind: 'test.slow' }], systemNow());
    runner.start();
    try {
      await pollerHasIt;
      // The slow job is leased to the poller: a plain runDue would find nothing and return now.
      await runner.runDueSettled(platform.id);
      expect(ran).toEqual(['slow', 'next']);
    } finally {
      await runner.stop();
    }
  });

  it('running a platform\'s due jobs does not wait for another platform\'s long job in the poller', async () => {
    const [{ platform: busy }, { platform }] = [await t.createPlatform(), await t.createPlatform()];
    const { database, log } = t.corridor;
    const runner = new JobRunner({ database, clock: systemNow() as never, log, pollIntervalMs: 10 });
    let started!: () => void;
    let release!: () => void;
    const pollerHasIt = new Promise<void>((resolve) => (started = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    runner.register('test.long', async () => {
      started();
      await released;
      ran.push('long');
    });
    runner.register('test.quick', async () => {
      ran.push('quick');
    });
    await enqueueJobs(database.db, busy, [{ kind: 'test.long' }], systemNow());
    runner.start();
    try {
      await pollerHasIt;
      await enqueueJobs(database.db, platform, [{ kind: 'test.quick' }], systemNow());
      expect(await runner.runDueSettled(platform.id)).toBe(1);
      expect(ran).toEqual(['quick']);
    } finally {
      release();
      await runner.stop();
    }
    expect(ran).toEqual(['quick', 'long']);
  });

  it('a stopping runner finishes its current round, not the whole backlog', async () => {
    const { platform } = await t.createPlatform();
    const { database, log } = t.corridor;
    const runner = new JobRunner({ database, clock: systemNow() as never, log, batchSize: 1, maxBatchSize: 1 });
    let ran = 0;
    runner.register('test.backlog', async () => {
      ran++;
      void runner.stop();
    });
    await enqueueJobs(database.db, platform, Array.from({ length: 3 }, () => ({ kind: 'test.backlog' })), systemNow());
    expect(await runner.runDue(platform.id)).toBe(1);
    expect(ran).toBe(1);
    const left = await database.db.selectFrom('jobs').select('id').where('platform_id', '=', platform.id).execute();
    expect(left).toHaveLength(2);
  });

  it('running a platform\'s due jobs returns when one stays leased by another process', async () => {
    const { platform } = await t.createPlatform();
    const { database, log } = t.corridor;
    const runner = new JobRunner({ database, clock: systemNow() as never, log });
    let ran = 0;
    runner.register('test.elsewhere', async () => {
      ran++;
    });
    await enqueueJobs(database.db, platform, [{ kind: 'test.elsewhere' }], systemNow());
    const leasedUntil = new Date(Date.now() + 3_600_000);
    await database.db.updateTable('jobs').set({ locked_until: leasedUntil }).where('platform_id', '=', platform.id).execute();

    // Without the bound on rounds this would never return: the job stays due and unclaimable.
    expect(await runner.runDueSettled(platform.id, 3)).toBe(0);
    expect(ran).toBe(0);
    const row = await database.db.selectFrom('jobs').selectAll().where('platform_id', '=', platform.id).executeTakeFirstOrThrow();
    expect(row.locked_until?.getTime()).toBe(leasedUntil.getTime());
    expect(row.attempts).toBe(0);
  });
});

describe('job leases', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const LEASE_MS = 1_500;

  function leasingRunner(kind: string, handler: () => Promise<void>) {
    const { database, log } = t.corridor;
    const runner = new JobRunner({ database, clock: systemNow() as never, log, leaseMs: LEASE_MS });
    runner.register(kind, handler);
    return runner;
  }

  it('are renewed while a round runs: a job that outlasts its lease is not run again beside it', async () => {
    const { platform } = await t.createPlatform();
    const runs: string[] = [];
    const [a, b] = ['a', 'b'].map((name) =>
      leasingRunner('test.long', async () => {
        runs.push(name);
        await sleep(LEASE_MS * 3);
      }),
    );
    await enqueueJobs(t.corridor.database.db, platform, [{ kind: 'test.long' }], systemNow());
    const first = a.runDue(platform.id);
    await expect.poll(() => runs.length).toBe(1);
    // The other runner keeps trying for more than two lease lengths while the job runs.
    for (let tried = 0; tried < 15; tried++) {
      await b.runDue(platform.id);
      await sleep(200);
    }
    await first;
    expect(runs).toEqual(['a']);
    expect(await t.corridor.database.db.selectFrom('jobs').select('id').where('platform_id', '=', platform.id).execute()).toEqual([]);
  });

  it('a renewal the database refuses is logged, and the round goes on to finish its job', async () => {
    const { platform } = await t.createPlatform();
    const { database } = t.corridor;
    const { log, lines } = capturingLogger();
    const runner = new JobRunner({ database, clock: systemNow() as never, log, leaseMs: 600 });
    let ran = 0;
    runner.register('test.renewal-refused', async () => {
      ran++;
      await sleep(900); // past the first renewal (every 200 ms) and the lease itself
    });
    await enqueueJobs(database.db, platform, [{ kind: 'test.renewal-refused' }], systemNow());
    // Only a renewal extends a held lease without a new claim (which counts an attempt).
    const restore = await failOnce(
      database.db,
      'jobs',
      'update',
      `new.platform_id = '${platform.id}' and old.locked_until is not null and new.locked_until > old.locked_until and new.attempts = old.attempts`,
    );
    try {
      expect(await runner.runDue(platform.id)).toBe(1);
    } finally {
      await restore();
    }
    expect(ran).toBe(1);
    expect(lines.filter((l) => l.msg === 'job lease renewal failed')).toHaveLength(1);
    expect(await database.db.selectFrom('jobs').select('id').where('platform_id', '=', platform.id).execute()).toEqual([]);
  });

  it.each([
    ['fails', true],
    ['succeeds', false],
  ])('a runner whose job was claimed again meanwhile leaves the new claim alone when the job %s', async (_outcome, fails) => {
    const { platform } = await t.createPlatform();
    const { db } = t.corridor.database;
    const claimedAgainUntil = new Date(Date.now() + 3_600_000);
    const runner = leasingRunner('test.taken', async () => {
      // What another process's claim writes, after this one's lease ran out unseen (a stalled event loop).
      await db.updateTable('jobs').set({ attempts: sql`attempts + 1`, locked_until: claimedAgainUntil }).where('platform_id', '=', platform.id).execute();
      if (fails) throw new Error('late failure');
    });
    await enqueueJobs(db, platform, [{ kind: 'test.taken' }], systemNow());
    expect(await runner.runDue(platform.id)).toBe(1);
    const row = await db.selectFrom('jobs').selectAll().where('platform_id', '=', platform.id).executeTakeFirstOrThrow();
    expect({ attempts: row.attempts, lockedUntil: row.locked_until?.getTime(), lastError: row.last_error }).toEqual({
      attempts: 2,
      lockedUntil: claimedAgainUntil.getTime(),
      lastError: null,
    });
  });
});

describe('polling while the database is down', () => {
  it('logs the first failed poll, backs off instead of polling every 250 ms, and logs the recovery', async () => {
    const { database, state } = outage(t.corridor.database);
    const { log, lines } = capturingLogger();
    const runner = new JobRunner({ database, clock: systemNow() as never, log, pollIntervalMs: 20 });
    runner.start();
    try {
      await expectBackoffWhileDown(state, lines, { failed: 'job poll failed; while it keeps failing, one line a minute', recovered: 'job poll recovered' });
    } finally {
      await runner.stop();
    }
  });
});

describe('due times', () => {
  it('run as of their due times after a clock advance: a window of due times within a second runs as of its last', async () => {
    const { platform } = await t.createPlatform();
    const { database, services, clock } = t.corridor;
    const start = clock.now(platform).getTime();
    const dueAfterMs = [1_000, 1_500, 10_000, 60_000];
    const ran: { batch: number; dueMs: number; asOfMs: number }[] = [];
    let batches = 0;
    const asOf = async (job: ClaimedJob) => clock.now(await platformAsOfDue(job, (id) => services.platforms.get(id))).getTime();
    const record = async (jobs: ClaimedJob[]) => {
      const batch = batches++;
      for (const job of jobs) ran.push({ batch, dueMs: Number(job.payload.dueMs), asOfMs: await asOf(job) });
    };
    services.jobs.register('test.as-of', (job) => record([job]));
    services.jobs.registerBatch('test.as-of', record);
    const specs = dueAfterMs.map((ms) => ({ kind: 'test.as-of', payload: { dueMs: start + ms }, runAt: new Date(start + ms) }));
    await enqueueJobs(database.db, platform, specs, clock);

    await services.platforms.advanceClock(contextOf(database, platform), 3600);
    ran.sort((a, b) => a.dueMs - b.dueMs);
    const windowEnds = [start + 1_500, start + 1_500, start + 10_000, start + 60_000];
    ran.forEach((r, i) => {
      expect(r.asOfMs).toBeGreaterThanOrEqual(windowEnds[i]);
      expect(r.asOfMs).toBeLessThan(windowEnds[i] + 250);
    });
    expect(ran[0].batch).toBe(ran[1].batch);
    expect(new Set(ran.map((r) => r.batch)).size).toBe(3);
  });

  it('are made real time with the clock offset the platform row holds, not the caller\'s copy; a system job\'s stays as given', async () => {
    const { platform } = await t.createPlatform();
    const { database, services } = t.corridor;
    // `platform` is the copy from before the advance, as another process may still cache it.
    await services.platforms.advanceClock(contextOf(database, platform), 600);
    const runAt = new Date(Date.now() + 3_600_000);
    await enqueueJobs(database.db, platform, [{ kind: 'test.due-platform', runAt }], systemNow());
    await enqueueJobs(database.db, null, [{ kind: 'test.due-system', runAt }], systemNow());
    const rows = await database.db.selectFrom('jobs').select(['kind', 'due_at']).where('kind', 'in', ['test.due-platform', 'test.due-system']).orderBy('kind').execute();
    expect(rows.map((r) => [r.kind, r.due_at.getTime()])).toEqual([
      ['test.due-platform', runAt.getTime() - 600_000],
      ['test.due-system', runAt.getTime()],
    ]);
  });
});

function systemNow() {
  return { realNowMs: () => Date.now(), now: () => new Date() };
}
