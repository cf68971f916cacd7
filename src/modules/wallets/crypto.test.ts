import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle, decryptExportBundle, getPublicKey } from '@turnkey/crypto';
import { describe, expect, it } from 'vitest';
import {
  buildStamp,
  decryptSessionKey,
  decryptWalletExport,
  generateClientKeyPair,
  sessionKeyFromPrivateKey,
  signPayload,
  toHex,
} from '../../wallet-client/index.js';
import { buildExportBundle } from './crypto/export-bundle.js';
import { sealCredentialBundle } from './crypto/hpke.js';
import { newSessionKeyPair, parseUncompressedPublicKey, verifyDerSignature } from './crypto/keys.js';
import { createWalletKeys } from './crypto/secrets.js';
import { parseSignatureHeader } from './signature.js';

const payload = '{"requestId":"0193a1b2-0000-7000-8000-000000000000","type":"EMAIL_OTP","accountId":"InternalAccount:x","expiresAt":"2026-01-01T00:00:00.000Z"}';

function verifyHeader(header: string, publicKeyHex: string): boolean {
  const parsed = parseSignatureHeader(header);
  if (!parsed || parsed.kind === 'magic') return false;
  if (parsed.kind === 'stamp' && parsed.publicKey !== publicKeyHex) return false;
  return verifyDerSignature(publicKeyHex, Buffer.from(payload), parsed.der);
}

describe('session key sealing', () => {
  it('opens with @turnkey/crypto decryptCredentialBundle and with the client helper', async () => {
    const client = generateClientKeyPair();
    const session = newSessionKeyPair();
    const bundle = await sealCredentialBundle(parseUncompressedPublicKey(client.publicKey)!, session.privateKey);
    expect(decryptCredentialBundle(bundle, client.privateKey)).toBe(toHex(session.privateKey));
    const opened = await decryptSessionKey(bundle, client.privateKey);
    expect(opened).toEqual({ privateKey: toHex(session.privateKey), publicKey: session.publicKeyHex });
  });

  it('does not open with another key', async () => {
    const bundle = await sealCredentialBundle(parseUncompressedPublicKey(generateClientKeyPair().publicKey)!, newSessionKeyPair().privateKey);
    await expect(decryptSessionKey(bundle, generateClientKeyPair().privateKey)).rejects.toThrow();
  });
});

describe('signature header', () => {
  const session = newSessionKeyPair();
  const key = sessionKeyFromPrivateKey(toHex(session.privateKey));

  it('accepts a stamp made by @turnkey/api-key-stamper', async () => {
    const stamper = new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey });
    const { stampHeaderValue } = await stamper.stamp(payload);
    expect(toHex(getPublicKey(key.privateKey, true))).toBe(session.publicKeyHex);
    expect(verifyHeader(stampHeaderValue, session.publicKeyHex)).toBe(true);
  });

  it('accepts the client helper formats: base64 DER and stamp', () => {
    expect(verifyHeader(signPayload(payload, key), session.publicKeyHex)).toBe(true);
    expect(verifyHeader(buildStamp(payload, key), session.publicKeyHex)).toBe(true);
  });

  it('refuses a tampered payload, another key and garbage', () => {
    const header = signPayload(payload, key);
    const parsed = parseSignatureHeader(header);
    expect(parsed?.kind).toBe('der');
    expect(verifyDerSignature(session.publicKeyHex, Buffer.from(payload.replace('EMAIL_OTP', 'PASSKEY')), (parsed as any).der)).toBe(false);
    expect(verifyHeader(header, newSessionKeyPair().publicKeyHex)).toBe(false);
    for (const junk of ['', 'abc', '%%%', Buffer.from('{"publicKey":1}').toString('base64url')]) expect(parseSignatureHeader(junk)).toBeUndefined();
    expect(parseSignatureHeader('sandbox-valid-signature')).toEqual({ kind: 'magic' });
    const stamp = JSON.parse(Buffer.from(buildStamp(payload, key), 'base64url').toString());
    const withDigit = Buffer.from(JSON.stringify({ ...stamp, signature: `${stamp.signature}0` })).toString('base64url');
    expect(parseSignatureHeader(withDigit)).toBeUndefined();
  });
});

describe('wallet export bundle', () => {
  it('opens with @turnkey/crypto decryptExportBundle and the client helper', async () => {
    const keys = createWalletKeys('11'.repeat(32));
    const client = generateClientKeyPair();
    const mnemonic = 'abandon ability able about above absent absorb abstract absurd abuse access accident';
    const bundle = await buildExportBundle({ recipient: parseUncompressedPublicKey(client.publicKey)!, secret: mnemonic, organizationId: 'InternalAccount:1', signer: keys.exportSigner });
    const viaTurnkey = await decryptExportBundle({
      exportBundle: bundle,
      embeddedKey: client.privateKey,
      organizationId: 'InternalAccount:1',
      dangerouslyOverrideSignerPublicKey: keys.exportSigner.publicKeyHex,
      returnMnemonic: true,
    });
    expect(viaTurnkey).toBe(mnemonic);
    expect(await decryptWalletExport(bundle, client.privateKey, { signerPublicKey: keys.exportSigner.publicKeyHex, organizationId: 'InternalAccount:1' })).toBe(mnemonic);
    await expect(decryptWalletExport(bundle, client.privateKey, { signerPublicKey: createWalletKeys('22'.repeat(32)).exportSigner.publicKeyHex })).rejects.toThrow();
  });

  it('encrypts secrets at rest bound to their context', () => {
    const keys = createWalletKeys(undefined);
    expect(keys.isDevelopmentKey).toBe(true);
    const stored = keys.encrypt('secret words', 'InternalAccount:1');
    expect(stored).not.toContain('secret');
    expect(keys.decrypt(stored, 'InternalAccount:1')).toBe('secret words');
    expect(() => keys.decrypt(stored, 'InternalAccount:2')).toThrow(expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' }));
    expect(() => createWalletKeys('22'.repeat(32)).decrypt(stored, 'InternalAccount:1')).toThrow(/WALLET_ENCRYPTION_KEY/);
  });
});
