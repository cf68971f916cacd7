import { setImmediate } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from './support/app.js';

// Read coalescing (src/http/coalescing.ts) in the real app: identical concurrent reads share a
// run, and still see every write acknowledged before they were sent.

let t: TestApp;
let a: TestPlatform;
let b: TestPlatform;

function customer(name: string) {
  return { customerType: 'INDIVIDUAL', platformCustomerId: name, fullName: name, birthDate: '1990-01-15', nationality: 'US' };
}

async function sharedReads(route: string): Promise<number> {
  const metrics = await t.anonymous.get('/metrics');
  const line = String(metrics.body)
    .split('\n')
    .find((l) => l.startsWith(`corridor_http_shared_reads_total{route="${route}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

beforeAll(async () => {
  t = await startTestApp();
  a = await t.createPlatform();
  b = await t.createPlatform();
  for (let i = 0; i < 3; i++) expect((await a.api.post('/customers', customer(`a-${i}`))).status).toBe(201);
  expect((await b.api.post('/customers', customer('b-0'))).status).toBe(201);
});
afterAll(() => t.close());

describe('identical concurrent reads', () => {
  it('share runs and all get the same page', async () => {
    const before = await sharedReads('/2025-10-13/customers');
    const responses = await Promise.all(Array.from({ length: 25 }, () => a.api.get('/customers', { limit: 20 })));
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.body).toEqual(responses[0].body);
    }
    expect(responses[0].body.totalCount).toBe(3);
    expect(await sharedReads('/2025-10-13/customers')).toBeGreaterThan(before);
  });

  it('never cross platforms', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? b : a).api.get('/customers', { limit: 20 })));
    responses.forEach((response, i) => {
      const names = response.body.data.map((c: { platformCustomerId: string }) => c.platformCustomerId);
      expect(names.every((name: string) => name.startsWith(i % 2 ? 'b-' : 'a-'))).toBe(true);
    });
  });

  it('see every write acknowledged before they were sent, while identical reads keep running', async () => {
    let storming = true;
    const storm = Array.from({ length: 8 }, async () => {
      while (storming) {
        // In-process requests on PGlite never leave the microtask queue; a real client's come from I/O.
        await setImmediate();
        expect((await a.api.get('/customers', { limit: 100 })).status).toBe(200);
      }
    });
    try {
      for (let i = 0; i < 20; i++) {
        const created = await a.api.post('/customers', customer(`written-${i}`));
        expect(created.status).toBe(201);
        const page = await a.api.get('/customers', { limit: 100 });
        expect(page.body.data.map((c: { id: string }) => c.id)).toContain(created.body.id);
        expect(page.body.totalCount).toBe(4 + i);
      }
    } finally {
      storming = false;
      await Promise.all(storm);
    }
  });

  it('share a 404 too', async () => {
    const responses = await Promise.all(Array.from({ length: 5 }, () => a.api.get('/customers/Customer:019a0000-0000-7000-8000-000000000000')));
    for (const response of responses) expect(response.body).toMatchObject({ status: 404, code: 'USER_NOT_FOUND' });
  });
});
