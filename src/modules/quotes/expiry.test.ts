import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { sharedTestDatabase } from '../../../test/support/db.js';

// Migration 0024: the partial index the expiry sweep reads must serve the sweep and no query that
// filters waiting quotes without saying `executed_at is null` (an execution's claim), or that
// query may be planned on it and scan every waiting quote of the platform.
async function plan(query: string): Promise<string> {
  const { db } = await sharedTestDatabase();
  return db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    const { rows } = await sql<Record<string, string>>`${sql.raw(`explain ${query}`)}`.execute(trx);
    return rows.map((r) => Object.values(r)[0]).join('\n');
  });
}

it('the expiry sweep reads quotes_expiring; a claim of a waiting quote cannot', async () => {
  const now = `'2026-01-01T00:00:00Z'::timestamptz`;
  const sweep = await plan(`select id from quotes where platform_id = 'P' and status = 'PENDING' and executed_at is null and expires_at <= ${now}`);
  expect(sweep).toContain('quotes_expiring');
  const claim = await plan(`update quotes set status = 'PROCESSING' where platform_id = 'P' and id = 'Q' and status = 'PENDING' and expires_at > ${now}`);
  expect(claim).not.toContain('quotes_expiring');
  const waiting = await plan(`select id from quotes where platform_id = 'P' and status = 'PENDING' and expires_at > ${now}`);
  expect(waiting).not.toContain('quotes_expiring');
});
