// Failed authentications counted and refused (429): per address and credential id, and per
// address alone. Each test starts its own app, so that counts from other tests do not mix in.
import { describe, expect, it } from 'vitest';
import { apiClient, startTestApp, type TestApp } from './support/app.js';

describe('failed authentications', () => {
  // Two apps of its own (on PostgreSQL, two new databases to migrate): slow on a loaded machine.
  it('counts failures by the address X-Forwarded-For gives only when TRUST_PROXY names the proxy', async () => {
    const failUntilLimited = async (app: TestApp, from: string) => {
      const wrong = apiClient(app.corridor, { clientId: 'guesser', clientSecret: 'w'.repeat(20) });
      for (let i = 0; i < 20; i++) expect((await wrong.request({ method: 'GET', path: '/config', headers: { 'x-forwarded-for': from } })).status).toBe(401);
      return (other: string) => wrong.request({ method: 'GET', path: '/config', headers: { 'x-forwarded-for': other } });
    };
    const proxied = await startTestApp({ trustProxy: ['127.0.0.1'] });
    const direct = await startTestApp();
    try {
      const viaProxy = await failUntilLimited(proxied, '198.51.100.1');
      expect((await viaProxy('198.51.100.1')).status).toBe(429);
      expect((await viaProxy('198.51.100.2')).status).toBe(401);
      const spoofed = await failUntilLimited(direct, '198.51.100.1');
      expect((await spoofed('198.51.100.2')).status).toBe(429);
    } finally {
      await proxied.close();
      await direct.close();
    }
  });

  it('rate limits repeated authentication failures from one address', async () => {
    const limited = await startTestApp();
    try {
      const wrong = apiClient(limited.corridor, { clientId: 'nobody-here', clientSecret: 'y'.repeat(20) });
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) statuses.push((await wrong.get('/config')).status);
      expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
      const blocked = await wrong.get('/config');
      expect(blocked.status).toBe(429);
      expect(blocked.body.code).toBe('RATE_LIMITED');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      // Counted per credential id: the same address with a working token is not locked out.
      const platform = await limited.createPlatform();
      expect((await platform.api.get('/config')).status).toBe(200);
      const wrongSecret = apiClient(limited.corridor, { clientId: platform.credentials.clientId, clientSecret: 'z'.repeat(20) });
      for (let i = 0; i < 20; i++) expect((await wrongSecret.get('/config')).status).toBe(401);
      expect((await wrongSecret.get('/config')).status).toBe(429);
      expect((await platform.api.get('/config')).status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('answers no more than the limit of failed authentications sent at once', async () => {
    const limited = await startTestApp();
    try {
      // An unknown client id is looked up in the database on every attempt, so all of these are
      // in flight together.
      const wrong = apiClient(limited.corridor, { clientId: 'burst-guesser', clientSecret: 'v'.repeat(20) });
      const statuses = await Promise.all(Array.from({ length: 40 }, () => wrong.get('/config').then((r) => r.status)));
      expect(statuses.filter((s) => s === 401)).toHaveLength(20);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    } finally {
      await limited.close();
    }
  });

  it('from one address with many credential ids: a hundred in a minute lock the address out, other addresses go on', async () => {
    const proxied = await startTestApp({ trustProxy: ['127.0.0.1'] });
    try {
      const platform = await proxied.createPlatform();
      const from = (address: string) => ({ 'x-forwarded-for': address });
      const attempt = (clientId: string, secret: string, address = '203.0.113.9') =>
        apiClient(proxied.corridor, { clientId, clientSecret: secret }).request({ method: 'GET', path: '/config', headers: from(address) });
      const { clientId, clientSecret } = platform.credentials;
      const spray = async (id: string) => {
        for (let i = 0; i < 20; i++) expect((await attempt(id, 's'.repeat(20))).status).toBe(401);
        expect((await attempt(id, 's'.repeat(20))).status).toBe(429);
      };
      for (const id of ['sprayer-1', 'sprayer-2', 'sprayer-3', 'sprayer-4']) await spray(id);
      // Eighty failures with four ids (four broken clients behind one proxy, say): the others work.
      expect((await attempt(clientId, clientSecret)).status).toBe(200);
      await spray('sprayer-5');
      const blocked = await attempt(clientId, clientSecret);
      expect(blocked.status).toBe(429);
      expect(blocked.body.code).toBe('RATE_LIMITED');
      expect(blocked.body.message).toContain('from this address');
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
      expect((await attempt('sprayer-6', 's'.repeat(20))).status).toBe(429);
      expect((await attempt(clientId, clientSecret, '203.0.113.10')).status).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});
