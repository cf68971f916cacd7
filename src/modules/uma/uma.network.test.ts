import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { callCounterparty } from './counterparty.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ umaAllowPrivateCounterparties: false });
});
afterAll(() => t.close());

describe('counterparty calls and private networks', () => {
  it.each(['http://127.0.0.1:8443/x', 'http://localhost:8443/x', 'https://10.1.2.3/x', 'https://169.254.169.254/latest', 'https://[::1]:8443/x', 'https://192.168.0.10/x'])(
    'refuse %s by default',
    async (url) => {
      await expect(callCounterparty(url, { method: 'GET' }, { allowPrivate: false })).rejects.toThrow(/loopback or private address/);
    },
  );

  it('a lookup of an address on a loopback domain fails with 424 instead of calling it', async () => {
    const p = await t.createPlatform();
    const customer = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Sam Sender' });
    const lookup = await p.api.get('/receiver/uma/$bob@127.0.0.1:8443', { customerId: customer.body.id });
    expect(lookup.status).toBe(424);
    expect(lookup.body.code).toBe('LNURLP_REQUEST_FAILED');
    expect(lookup.body.message).toMatch(/loopback or private/);
  });
});
