import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestPlatform } from '../../../test/support/app.js';
import { expectRefused, latestCode, newWallet, verifyEmail, walletPlatform } from '../../../test/support/wallets.js';
import { generateClientKeyPair } from '../../wallet-client/index.js';
import { OTP_DAILY_FAILURES, OTP_MAX_ATTEMPTS } from './otp.js';

let t: TestApp;
let sandbox: TestPlatform;

beforeAll(async () => {
  t = await startTestApp();
  sandbox = await walletPlatform(t, 'SANDBOX');
});
afterAll(() => t.close());

const advance = (seconds: number) => sandbox.api.post('/sandbox/clock/advance', { seconds });

it(`after ${OTP_DAILY_FAILURES} wrong codes in a day, even the right code is refused until the first of them is a day old`, async () => {
  const wallet = await newWallet(sandbox);
  const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
  const credentialId = created.body.id as string;
  const verify = (otp: string) => wallet.api.post(`/auth/credentials/${credentialId}/verify`, { type: 'EMAIL_OTP', otp, clientPublicKey: generateClientKeyPair().publicKey });
  const wrongFor = (code: string) => (code === '111111' ? '222222' : '111111');

  for (let round = 0; round < OTP_DAILY_FAILURES / OTP_MAX_ATTEMPTS; round++) {
    if (round > 0) {
      await advance(91); // past the re-issue limit
      expect((await wallet.api.post(`/auth/credentials/${credentialId}/challenge`, {})).status).toBe(200);
    }
    const code = latestCode(t, credentialId);
    for (let i = 0; i < OTP_MAX_ATTEMPTS; i++) expectRefused(await verify(wrongFor(code)), 401, 'UNAUTHORIZED', 'Invalid OTP code');
  }
  await advance(91);
  expect((await wallet.api.post(`/auth/credentials/${credentialId}/challenge`, {})).status).toBe(200);
  const limited = await verify(latestCode(t, credentialId));
  expectRefused(limited, 429, 'RATE_LIMITED');
  const wait = Number(limited.headers['retry-after']);
  expect(wait).toBeGreaterThan(86_400 - 4 * 91 - 10);
  expect(wait).toBeLessThanOrEqual(86_400);

  await advance(wait);
  expect((await wallet.api.post(`/auth/credentials/${credentialId}/challenge`, {})).status).toBe(200);
  await verifyEmail(t, wallet.api, credentialId);
});
