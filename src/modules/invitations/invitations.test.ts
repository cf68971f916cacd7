import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectError } from '../../../test/support/quotes.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';

let t: TestApp;
let inviter: TestPlatform;
let other: TestPlatform;
let receiver: WebhookReceiver;
let alice: { id: string; umaAddress: string };
let bob: { id: string; umaAddress: string };
let carol: { id: string; umaAddress: string };

async function customer(p: TestPlatform, name: string, umaAddress: string) {
  const res = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: name, umaAddress, currencies: ['USD', 'EUR'] });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; umaAddress: string };
}

async function invite(body: Record<string, unknown> = {}) {
  const res = await inviter.api.post('/invitations', { inviterUma: alice.umaAddress, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const advance = (p: TestPlatform, seconds: number) => p.api.post('/sandbox/clock/advance', { seconds });

beforeAll(async () => {
  t = await startTestApp({ publicUrl: 'https://corridor.example' });
  inviter = await t.createPlatform();
  other = await t.createPlatform();
  receiver = await startWebhookReceiver();
  await inviter.api.patch('/config', { webhookEndpoint: receiver.url });
  alice = await customer(inviter, 'Alice Inviter', '$alice@inviter.example');
  bob = await customer(other, 'Bob Invitee', '$bob@other.example');
  carol = await customer(inviter, 'Carol Sameplatform', '$carol@inviter.example');
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

describe('POST /invitations', () => {
  it('creates a PENDING invitation with an unguessable code and a URL on PUBLIC_URL', async () => {
    const created = await invite({ firstName: 'Alice', amountToSend: 12550 });
    expect(created).toMatchObject({
      status: 'PENDING',
      inviterUma: alice.umaAddress,
      firstName: 'Alice',
      amountToSend: { amount: 12550, currency: { code: 'USD', decimals: 2 } },
    });
    expect(created.code).toMatch(/^[A-Za-z0-9_-]{20}$/);
    expect(created.url).toBe(`https://corridor.example/2025-10-13/invitations/${created.code}`);
    expect(created.expiresAt).toBeUndefined();
    expect(created.claimedAt).toBeUndefined();
    const second = await invite();
    expect(second.code).not.toBe(created.code);
  });

  it('takes the amount in another of the inviter\'s currencies', async () => {
    const created = await invite({ amountToSend: 500, currency: 'EUR' });
    expect(created.amountToSend).toMatchObject({ amount: 500, currency: { code: 'EUR' } });
  });

  it('refuses bad input with the error envelope', async () => {
    const cases: Array<[Record<string, unknown>, number, string, string]> = [
      [{ inviterUma: 'alice' }, 400, 'INVALID_UMA_ADDRESS', 'inviterUma'],
      [{ inviterUma: '$nobody@inviter.example' }, 404, 'USER_NOT_FOUND', 'inviterUma'],
      [{ inviterUma: bob.umaAddress }, 404, 'USER_NOT_FOUND', 'inviterUma'],
      [{ inviterUma: alice.umaAddress, amountToSend: 0 }, 400, 'INVALID_INPUT', 'amountToSend'],
      [{ inviterUma: alice.umaAddress, amountToSend: 10, currency: 'MXN' }, 400, 'INVALID_CURRENCY', 'currency'],
      [{ inviterUma: alice.umaAddress, currency: 'USD' }, 400, 'INVALID_INPUT', 'currency'],
      [{ inviterUma: alice.umaAddress, expiresAt: '2001-01-01T00:00:00Z' }, 400, 'INVALID_INPUT', 'expiresAt'],
      [{ inviterUma: alice.umaAddress, expiresAt: 'tomorrow' }, 400, 'INVALID_INPUT', 'expiresAt'],
      [{ inviterUma: alice.umaAddress, surprise: true }, 400, 'INVALID_INPUT', 'surprise'],
      [{}, 400, 'INVALID_INPUT', 'inviterUma'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await inviter.api.post('/invitations', body);
      expectError(res, status, code);
      expect(res.body.details?.errors?.[0]?.field, JSON.stringify(body)).toBe(field);
    }
  });

  it('needs authentication', async () => {
    expect((await t.anonymous.post('/invitations', { inviterUma: alice.umaAddress })).status).toBe(401);
  });
});

describe('claiming', () => {
  it('PENDING → CLAIMED through another platform, and INVITATION.CLAIMED reaches the inviter platform', async () => {
    receiver.reset();
    const created = await invite({ firstName: 'Alice', amountToSend: 2500 });
    const seen = await other.api.get(`/invitations/${created.code}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual(created);

    const claimed = await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: bob.umaAddress });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    expect(claimed.body).toMatchObject({ code: created.code, status: 'CLAIMED', inviteeUma: bob.umaAddress, claimedAt: expect.any(String) });
    expect((await inviter.api.get(`/invitations/${created.code}`)).body).toEqual(claimed.body);

    await t.corridor.services.webhooks.deliverDue();
    const [hook] = await receiver.waitForRequests(1);
    expect(hook.json).toMatchObject({ type: 'INVITATION.CLAIMED', data: claimed.body });
    const otherEvents = await t.corridor.database.db.selectFrom('events').select('type').where('platform_id', '=', other.platform.id).execute();
    expect(otherEvents.map((e) => e.type)).not.toContain('INVITATION.CLAIMED');
  });

  it('a claimed invitation cannot be claimed or cancelled again', async () => {
    const created = await invite();
    expect((await inviter.api.post(`/invitations/${created.code}/claim`, { inviteeUma: carol.umaAddress })).status).toBe(200);
    expectError(await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: bob.umaAddress }), 400, 'INVITATION_ALREADY_CLAIMED');
    expectError(await inviter.api.post(`/invitations/${created.code}/cancel`), 400, 'INVITATION_ALREADY_CLAIMED');
  });

  it('refuses bad claims', async () => {
    const created = await invite();
    expectError(await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: 'bob' }), 400, 'INVALID_UMA_ADDRESS');
    expectError(await other.api.post(`/invitations/${created.code}/claim`, {}), 400, 'INVALID_INPUT');
    // The invitee must be a customer of the claiming platform.
    const stranger = await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: carol.umaAddress });
    expectError(stranger, 404, 'USER_NOT_FOUND');
    expect(stranger.body.details.errors[0].field).toBe('inviteeUma');
    const self = await inviter.api.post(`/invitations/${created.code}/claim`, { inviteeUma: alice.umaAddress });
    expectError(self, 400, 'INVALID_INPUT');
    expect((await inviter.api.get(`/invitations/${created.code}`)).body.status).toBe('PENDING');
  });

  it('unknown codes are 404 INVITATION_NOT_FOUND', async () => {
    const unknown = await other.api.get('/invitations/no-such-code');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ status: 404, code: 'INVITATION_NOT_FOUND', message: 'invitation not found' });
    expectError(await other.api.post('/invitations/no-such-code/claim', { inviteeUma: bob.umaAddress }), 404, 'INVITATION_NOT_FOUND');
    expectError(await inviter.api.post('/invitations/no-such-code/cancel'), 404, 'INVITATION_NOT_FOUND');
  });
});

describe('cancelling', () => {
  it('PENDING → CANCELLED by the creating platform; then it cannot be claimed', async () => {
    const created = await invite();
    expectError(await other.api.post(`/invitations/${created.code}/cancel`), 403, 'FORBIDDEN');
    const cancelled = await inviter.api.post(`/invitations/${created.code}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
    expectError(await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: bob.umaAddress }), 400, 'INVITATION_CANCELLED');
    expectError(await inviter.api.post(`/invitations/${created.code}/cancel`), 400, 'INVITATION_CANCELLED');
  });

  it('deleting the inviter cancels its pending invitations; others keep theirs', async () => {
    const leaving = await customer(inviter, 'Lee Leaving', '$lee@inviter.example');
    const res = await inviter.api.post('/invitations', { inviterUma: leaving.umaAddress, amountToSend: 1_000 });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const kept = await invite();
    expect((await inviter.api.delete(`/customers/${leaving.id}`)).status).toBe(200);
    expect((await inviter.api.get(`/invitations/${res.body.code}`)).body.status).toBe('CANCELLED');
    expectError(await other.api.post(`/invitations/${res.body.code}/claim`, { inviteeUma: bob.umaAddress }), 400, 'INVITATION_CANCELLED');
    expect((await inviter.api.get(`/invitations/${kept.code}`)).body.status).toBe('PENDING');
  });
});

describe('expiry on the platform clock', () => {
  it('PENDING → EXPIRED when the inviter platform\'s clock passes expiresAt (the job records it)', async () => {
    const p = await t.createPlatform();
    const dave = await customer(p, 'Dave Inviter', '$dave@expiry.example');
    const now = Date.now();
    const created = (await p.api.post('/invitations', { inviterUma: dave.umaAddress, expiresAt: new Date(now + 3600_000).toISOString() })).body;
    expect(created.status).toBe('PENDING');
    await advance(p, 3601);
    const row = await t.corridor.database.db.selectFrom('invitations').select('status').where('code', '=', created.code).executeTakeFirstOrThrow();
    expect(row.status).toBe('EXPIRED');
    expect((await other.api.get(`/invitations/${created.code}`)).body.status).toBe('EXPIRED');
    expectError(await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: bob.umaAddress }), 400, 'INVITATION_EXPIRED');
    expectError(await p.api.post(`/invitations/${created.code}/cancel`), 400, 'INVITATION_EXPIRED');
  });

  it('an invitation past expiresAt is refused even before its job ran, and recorded EXPIRED then', async () => {
    const created = await invite({ expiresAt: new Date(Date.now() + 60_000).toISOString() });
    // Move the clock without running jobs: only the lazy check can see it.
    await t.corridor.database.db.updateTable('platforms').set({ clock_offset_ms: 120_000 }).where('id', '=', inviter.platform.id).execute();
    t.corridor.services.platforms.evict(inviter.platform.id);
    try {
      expect((await other.api.get(`/invitations/${created.code}`)).body.status).toBe('EXPIRED');
      expectError(await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: bob.umaAddress }), 400, 'INVITATION_EXPIRED');
      const row = await t.corridor.database.db.selectFrom('invitations').select('status').where('code', '=', created.code).executeTakeFirstOrThrow();
      expect(row.status).toBe('EXPIRED');
    } finally {
      await t.corridor.database.db.updateTable('platforms').set({ clock_offset_ms: 0 }).where('id', '=', inviter.platform.id).execute();
      t.corridor.services.platforms.evict(inviter.platform.id);
    }
  });

  it('can be claimed before it expires', async () => {
    const created = await invite({ expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    const claimed = await other.api.post(`/invitations/${created.code}/claim`, { inviteeUma: bob.umaAddress });
    expect(claimed.body.status).toBe('CLAIMED');
  });
});
