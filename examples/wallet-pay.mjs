#!/usr/bin/env node
// Pays out of an embedded wallet end to end on a sandbox platform, the way a platform backend and
// a customer's device share the work: register an EMAIL_OTP credential, open a session, decrypt
// its key on the "device", and sign a quote execution with it.
//
//   npm run build   # the client helper is loaded from dist/
//   CORRIDOR=http://127.0.0.1:8080/2025-10-13 AUTH=<token id>:<client secret> node examples/wallet-pay.mjs
//
// On sandbox platforms the code 000000 verifies any EMAIL_OTP credential; with a real code, read
// it from the email (or the server log's development outbox line) instead.
import { decryptSessionKey, generateClientKeyPair, signPayload } from '../dist/wallet-client/index.js';

const base = process.env.CORRIDOR ?? 'http://127.0.0.1:8080/2025-10-13';
const auth = `Basic ${Buffer.from(process.env.AUTH ?? '').toString('base64')}`;
const otp = process.env.OTP ?? '000000';

async function call(method, path, body, headers = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: auth, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json().catch(() => undefined);
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}
const step = (text) => process.stdout.write(`${text}\n`);

// Backend: every customer gets a USD embedded wallet.
await call('PATCH', '/config', { embeddedWallets: { currencies: ['USD'] } });
const email = `wallet.${Date.now()}@example.com`;
const customer = await call('POST', '/customers', {
  customerType: 'INDIVIDUAL', fullName: 'Wanda Wallet', email, birthDate: '1990-04-01', nationality: 'US',
  address: { line1: '1 Main St', city: 'Springfield', state: 'IL', postalCode: '62701', country: 'US' },
});
const [wallet] = (await call('GET', `/customers/internal-accounts?customerId=${customer.id}&type=EMBEDDED_WALLET`)).data;
step(`wallet ${wallet.id}`);

// Backend: the first credential needs no signature; the code goes to the customer's email.
const credential = await call('POST', '/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.id, email });
step(`credential ${credential.id}`);

// Device: a fresh key pair; the session key comes back sealed to it and is opened on the device.
const client = generateClientKeyPair();
const session = await call('POST', `/auth/credentials/${credential.id}/verify`, { type: 'EMAIL_OTP', otp, clientPublicKey: client.publicKey });
const sessionKey = await decryptSessionKey(session.encryptedSessionSigningKey, client.privateKey);
step(`session ${session.id} until ${session.expiresAt}`);

// Backend: sandbox money in, a verified customer (non-regulated platforms require it), a payee.
await call('POST', `/sandbox/internal-accounts/${wallet.id}/fund`, { amount: 10000 });
const document = new FormData();
document.set('documentHolder', customer.id);
document.set('documentType', 'PASSPORT');
document.set('country', 'US');
document.set('file', new Blob([Buffer.from('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'passport.pdf');
const uploaded = await fetch(`${base}/documents`, { method: 'POST', headers: { authorization: auth }, body: document });
if (!uploaded.ok) throw new Error(`POST /documents: ${uploaded.status} ${await uploaded.text()}`);
await call('POST', '/verifications', { customerId: customer.id });
const bank = await call('POST', '/customers/external-accounts', {
  customerId: customer.id, currency: 'USD',
  accountInfo: { accountType: 'USD_ACCOUNT', accountNumber: '987654001', routingNumber: '021000021', beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Wanda Wallet' } },
});

// Backend: a quote out of the wallet carries what the device must sign.
const quote = await call('POST', '/quotes', {
  source: { sourceType: 'ACCOUNT', accountId: wallet.id },
  destination: { destinationType: 'ACCOUNT', accountId: bank.id },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: 2500,
});
const { payloadToSign } = quote.paymentInstructions[0].accountOrWalletInfo;

// Device signs; backend executes with the signature.
const executed = await call('POST', `/quotes/${quote.id}/execute`, undefined, { 'Service-Wallet-Signature': signPayload(payloadToSign, sessionKey) });
step(`quote ${executed.id}: ${executed.status}`);
