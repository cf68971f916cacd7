// Scenario: signed-retry verification under load (embedded wallets).
//
// Each operation is one protected request done the way a wallet client does it: the call without
// signature (202 + payloadToSign), then the signed retry (verified against the account's session
// keys, request id consumed). Operations alternate between adding an OAUTH credential (201) and
// revoking it (204), so the state of an account returns to where it started and the scenario can
// run for any duration. One operation = one signature verification, so the table's ops/s is the
// verifications/s to compare with the raw node:crypto ceiling ("p256-verify").
//
// Each operation borrows one of the embedded wallets set up here (customer, EMAIL_OTP credential,
// session opened with the sandbox code) and signs with node:crypto in this process.
import { createPrivateKey, sign } from 'node:crypto';
import { p256 } from '@noble/curves/nist.js';

const JSON_BODY = { 'content-type': 'application/json' };
const WALLET_CURRENCY = 'USD';

/** An unsigned JWT from a well-known issuer: sandbox platforms accept it on create (decoded only). */
function sandboxIdToken(subject) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { iss: 'https://accounts.google.com', sub: subject, aud: 'bench', email: `${subject}@example.com`, iat: Math.floor(Date.now() / 1000) };
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2ln`;
}

function signingKey(privateKeyHex) {
  const point = p256.getPublicKey(Buffer.from(privateKeyHex, 'hex'), false);
  const b64 = (bytes) => Buffer.from(bytes).toString('base64url');
  return createPrivateKey({ key: { kty: 'EC', crv: 'P-256', d: b64(Buffer.from(privateKeyHex, 'hex')), x: b64(point.slice(1, 33)), y: b64(point.slice(33)) }, format: 'jwk' });
}

async function must(response, what) {
  if (response.status < 200 || response.status >= 300) throw new Error(`${what} → HTTP ${response.status}: ${JSON.stringify(response.body).slice(0, 300)}`);
  return response.body;
}

/** One wallet with an open session: { accountId, key, subject, credentialId? }. */
async function openWallet(ctx, client, i) {
  const customer = await must(
    await ctx.api.request('POST', '/customers', { customerType: 'INDIVIDUAL', platformCustomerId: `bench-wallet-${ctx.runId}-${i}`, fullName: 'Bench Wallet', email: `w${i}@example.com` }),
    'create customer',
  );
  const accounts = await must(await ctx.api.request('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}&type=EMBEDDED_WALLET`), 'list accounts');
  const accountId = accounts.data[0].id;
  const credential = await must(await ctx.api.request('POST', '/auth/credentials', { type: 'EMAIL_OTP', accountId }), 'create credential');
  const pair = client.generateClientKeyPair();
  const session = await must(
    await ctx.api.request('POST', `/auth/credentials/${encodeURIComponent(credential.id)}/verify`, { type: 'EMAIL_OTP', otp: '000000', clientPublicKey: pair.publicKey }),
    'verify credential',
  );
  const { privateKey } = await client.decryptSessionKey(session.encryptedSessionSigningKey, pair.privateKey);
  return { accountId, key: signingKey(privateKey), subject: `bench-${ctx.runId}-${i}`, credentialId: undefined };
}

export function signedRetryScenario({ connections }) {
  // autocannon clears a connection's context after every pair, so wallets are lent per operation:
  // taken when its first request is built, given back when its last response arrives.
  let free = [];
  let all = [];

  function take() {
    return free.pop() ?? all[Math.floor(Math.random() * all.length)];
  }

  /** The operation the wallet is due for: add the OAUTH credential, or revoke it. */
  function operation(ctx, wallet) {
    if (wallet.credentialId) return { method: 'DELETE', path: ctx.path(`/auth/credentials/${encodeURIComponent(wallet.credentialId)}`), body: undefined };
    const body = JSON.stringify({ type: 'OAUTH', accountId: wallet.accountId, oidcToken: sandboxIdToken(wallet.subject) });
    return { method: 'POST', path: ctx.path('/auth/credentials'), body };
  }

  return {
    key: 'wallets.signed-retry',
    name: 'Signed retry: 202 → signed request (add/revoke credential)',
    issue: 4,
    pairs: true,
    prism: false,
    async setup(ctx) {
      const client = await import('../../dist/wallet-client/index.js');
      const config = await must(await ctx.api.request('GET', '/config'), 'read config');
      const before = config.embeddedWallets?.currencies ?? [];
      await must(await ctx.api.request('PATCH', '/config', { embeddedWallets: { currencies: [...new Set([...before, WALLET_CURRENCY])] } }), 'enable wallets');
      try {
        // Connections cut at the end of the warm-up keep the wallet they held: plan for two sets.
        const count = 2 * connections + 2;
        all = [];
        for (let i = 0; i < count; i += 8) {
          all.push(...(await Promise.all(Array.from({ length: Math.min(8, count - i) }, (_, j) => openWallet(ctx, client, i + j)))));
        }
        free = [...all];
      } finally {
        await ctx.api.request('PATCH', '/config', { embeddedWallets: { currencies: before } });
      }
    },
    requests: (ctx) => [
      {
        method: 'POST',
        path: ctx.path('/auth/credentials'),
        setupRequest: (req, context) => {
          const wallet = take();
          const op = operation(ctx, wallet);
          Object.assign(context, { wallet, op, challenge: undefined });
          return { ...req, method: op.method, path: op.path, body: op.body, headers: { ...req.headers, ...(op.body && JSON_BODY) } };
        },
        onResponse: (status, body, context) => {
          context.challenge = status === 202 ? JSON.parse(body) : undefined;
          if (!context.challenge) free.push(context.wallet);
        },
      },
      {
        method: 'POST',
        path: ctx.path('/auth/credentials'),
        setupRequest: (req, context) => {
          const { op, challenge, wallet } = context;
          if (!challenge) return null;
          const signature = sign('sha256', Buffer.from(challenge.payloadToSign), wallet.key).toString('base64');
          const headers = { ...req.headers, ...(op.body && JSON_BODY), 'service-wallet-signature': signature, 'request-id': challenge.requestId };
          return { ...req, method: op.method, path: op.path, body: op.body, headers };
        },
        onResponse: (status, body, context) => {
          if (status === 201) context.wallet.credentialId = JSON.parse(body).id;
          else if (status === 204) context.wallet.credentialId = undefined;
          free.push(context.wallet);
        },
      },
    ],
  };
}
