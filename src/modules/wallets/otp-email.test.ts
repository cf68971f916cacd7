import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { expectRefused, newWallet, verifyEmail, walletPlatform } from '../../../test/support/wallets.js';
import { ConfigError, loadConfig } from '../../config.js';

/** A loopback SMTP server that accepts every message and keeps its text. */
function smtpSink(): Promise<{ server: Server; port: number; messages: string[] }> {
  const messages: string[] = [];
  const server = createServer((socket) => {
    let data: string | undefined;
    socket.write('220 sink ready\r\n');
    socket.on('data', (chunk) => {
      for (const line of chunk.toString().split('\r\n')) {
        if (data !== undefined) {
          if (line === '.') {
            messages.push(data);
            data = undefined;
            socket.write('250 queued\r\n');
          } else data += `${line}\n`;
          continue;
        }
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 sink\r\n');
        else if (verb === 'DATA') {
          data = '';
          socket.write('354 go on\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else if (line) socket.write('250 ok\r\n');
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, messages })));
}

let t: TestApp;
let sink: Awaited<ReturnType<typeof smtpSink>>;

beforeAll(async () => {
  sink = await smtpSink();
  t = await startTestApp({ smtpUrl: `smtp://127.0.0.1:${sink.port}`, smtpFrom: 'Wallets <wallets@example.com>' });
});
afterAll(async () => {
  await t.close();
  sink.server.close();
});

describe('one-time passwords by SMTP', () => {
  it('emails the code on production platforms, never logging it', async () => {
    const wallet = await newWallet(await walletPlatform(t, 'PRODUCTION'));
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expect(created.status).toBe(201);
    const message = sink.messages.find((m) => m.includes(wallet.email));
    expect(message).toMatch(/From: Wallets <wallets@example.com>/);
    const code = /Your verification code is (\d{6})/.exec(message!)![1];
    expect(t.corridor.services.wallets.outbox(wallet.tp.platform.id)).toEqual([]);
    expect((await verifyEmail(t, wallet.api, created.body.id, code)).response.status).toBe(200);
    for (const line of t.logs) expect(line).not.toContain(`"${code}"`);
  });

  it('keeps sandbox codes in the development outbox', async () => {
    const wallet = await newWallet(await walletPlatform(t, 'SANDBOX'));
    const before = sink.messages.length;
    const created = await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
    expect(sink.messages.length).toBe(before);
    expect(t.corridor.services.wallets.outbox(wallet.tp.platform.id)[0]).toMatchObject({ credentialId: created.body.id, to: wallet.email });
    expectRefused(await wallet.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId }), 400, 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS');
  });
});

describe('wallet configuration variables', () => {
  it('reads and checks them', () => {
    const config = loadConfig({ SMTP_URL: 'smtps://u:p@mail.example.com:465', SMTP_FROM: 'a@example.com', SESSION_LIFETIME_SECONDS: '600', WALLET_ENCRYPTION_KEY: 'AB'.repeat(32) });
    expect(config).toMatchObject({ smtpUrl: 'smtps://u:p@mail.example.com:465', smtpFrom: 'a@example.com', sessionLifetimeSeconds: 600, walletEncryptionKey: 'ab'.repeat(32) });
    expect(loadConfig({})).toMatchObject({ sessionLifetimeSeconds: 900, smtpUrl: undefined, walletEncryptionKey: undefined });
    for (const [env, variable] of [
      [{ SMTP_URL: 'http://mail' }, 'SMTP_URL'],
      [{ SMTP_FROM: 'not an address' }, 'SMTP_FROM'],
      [{ SESSION_LIFETIME_SECONDS: '10' }, 'SESSION_LIFETIME_SECONDS'],
      [{ WALLET_ENCRYPTION_KEY: 'abc' }, 'WALLET_ENCRYPTION_KEY'],
    ] as const) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(variable);
    }
  });
});
