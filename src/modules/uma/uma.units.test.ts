import { X509Certificate } from 'node:crypto';
import { generateEcKeyPair } from '../../core/ec-keys.js';
import { PubKeyResponse, signPayload } from '@uma-sdk/core';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../config.js';
import { parseUmaAddress } from './address.js';
import { createAuthenticator, UmaAuthError } from './authentication.js';
import { createKeyDirectory, isLoopbackDomain, type KeyDirectory } from './counterparty.js';
import { systemClock } from '../../core/clock.js';
import { startFakeVasp } from '../../../test/support/uma-vasp.js';
import { createInvoice, parseInvoice, preimageMatches } from './invoice.js';
import { verifyUmaSignature } from './keys.js';
import { fromUmaData, missingMandatory, payerDataOptions, requiredFieldsFrom, toUmaData, umaKeyOf } from './payer-data.js';
import { selfSignedCertificate } from './x509.js';

describe('SANDBOX_UMA_DOMAIN', () => {
  it('defaults to sandbox.uma.money and takes a domain, optionally with a port', () => {
    expect(loadConfig({}).sandboxUmaDomain).toBe('sandbox.uma.money');
    expect(loadConfig({ SANDBOX_UMA_DOMAIN: 'Sandbox.Example.COM:8443' }).sandboxUmaDomain).toBe('sandbox.example.com:8443');
  });

  it.each(['https://sandbox.uma.money', 'bad domain', '-x.example', 'a'.repeat(254)])('refuses %j naming the variable', (value) => {
    expect(() => loadConfig({ SANDBOX_UMA_DOMAIN: value })).toThrow(ConfigError);
    expect(() => loadConfig({ SANDBOX_UMA_DOMAIN: value })).toThrow(/SANDBOX_UMA_DOMAIN/);
  });
});

describe('invoices', () => {
  it('commit to the preimage\'s hash and carry the amount', () => {
    const made = createInvoice(12_345_000, Date.UTC(2025, 9, 13));
    expect(made.invoice).toMatch(/^lnbcrt123450000p1/);
    expect(parseInvoice(made.invoice)).toEqual({ paymentHash: made.paymentHash, amountMsats: 12_345_000 });
    expect(preimageMatches(made.preimage, made.paymentHash)).toBe(true);
    expect(preimageMatches(createInvoice(1, 0).preimage, made.paymentHash)).toBe(false);
    expect(preimageMatches('zz', made.paymentHash)).toBe(false);
  });

  it('reads nothing else', () => {
    expect(parseInvoice('lnbc1500n1pj9…')).toBeUndefined();
    const made = createInvoice(1_000, 0).invoice;
    expect(parseInvoice(`${made}q`)).toBeUndefined();
    expect(parseInvoice(made.replace('lnbcrt10000p', 'lnbcrt10001p'))).toBeUndefined();
  });
});

describe('payer data names', () => {
  it('maps Corridor field names to UMA keys and back', () => {
    expect(umaKeyOf('FULL_NAME')).toBe('name');
    expect(umaKeyOf('COUNTRY_OF_RESIDENCE')).toBe('countryOfResidence');
    expect(payerDataOptions([{ name: 'BIRTH_DATE', mandatory: true }])).toEqual({ birthDate: { mandatory: true } });
    expect(toUmaData({ FULL_NAME: 'Ada', EMAIL: ' ', UNKNOWN: 1, POSTAL_ADDRESS: { city: 'X' } })).toEqual({ name: 'Ada', postalAddress: { city: 'X' } });
    expect(fromUmaData({ name: 'Ada', identifier: '$a@b.c', compliance: {}, colour: 'red' })).toEqual({ FULL_NAME: 'Ada' });
  });

  it('reads an lnurlp response\'s options, skipping protocol and unknown keys', () => {
    const options = { identifier: { mandatory: true }, compliance: { mandatory: true }, name: { mandatory: true }, phoneNumber: { mandatory: false }, shoeSize: { mandatory: true } };
    expect(requiredFieldsFrom(options)).toEqual([
      { name: 'FULL_NAME', mandatory: true },
      { name: 'PHONE_NUMBER', mandatory: false },
    ]);
    expect(missingMandatory(requiredFieldsFrom(options), { name: '' })).toEqual(['FULL_NAME']);
    expect(missingMandatory(requiredFieldsFrom(options), { name: 'Ada' })).toEqual([]);
  });
});

describe('addresses and domains', () => {
  it('parses UMA addresses, lower-casing the domain', () => {
    expect(parseUmaAddress('$Bob@Example.com:8081')).toEqual({ local: 'Bob', domain: 'example.com:8081', address: '$Bob@example.com:8081' });
    for (const bad of ['bob@example.com', '$@example.com', '$bob', '$bob@', '$b b@example.com', '$bob@-example.com', '$bob@b..c', '$bob@c.com:99999', '$bob@c.com:0', '$bob@c.com:', '$bob@c.com:80:80']) {
      expect(parseUmaAddress(bad), bad).toBeUndefined();
    }
    expect(parseUmaAddress('$bob@c.com:65535')?.domain).toBe('c.com:65535');
  });

  it('uses plain http only for loopback domains', () => {
    expect(['localhost:8080', '127.0.0.1:1', '[::1]:80', 'api.localhost'].every(isLoopbackDomain)).toBe(true);
    expect(['example.com', '127.0.0.2:80', 'localhost.example.com', '10.0.0.1'].some(isLoopbackDomain)).toBe(false);
  });
});

describe('keys and signatures', () => {
  it('makes a self-signed secp256k1 certificate that node and the UMA SDK read', async () => {
    const { privateKey, publicKey, d } = generateEcKeyPair('secp256k1');
    const der = selfSignedCertificate({ commonName: 'pay.example.com', spkiDer: publicKey.export({ type: 'spki', format: 'der' }), privateKey, notBefore: new Date(), notAfter: new Date(Date.UTC(2060, 0, 1)) });
    const cert = new X509Certificate(der);
    expect(cert.subject).toBe('CN=pay.example.com');
    expect(cert.verify(publicKey)).toBe(true);
    const point = PubKeyResponse.fromJson(JSON.stringify({ signingCertChain: [der.toString('hex')], encryptionCertChain: [der.toString('hex')] })).getSigningPubKey();
    const raw = new Uint8Array(d);
    const signature = await signPayload('$bob@pay.example.com|1|2', raw);
    expect(verifyUmaSignature('$bob@pay.example.com|1|2', signature, point)).toBe(true);
    expect(verifyUmaSignature('$bob@pay.example.com|1|3', signature, point)).toBe(false);
    expect(verifyUmaSignature('$bob@pay.example.com|1|2', 'not hex', point)).toBe(false);
  });
});

describe('certificates, many times', () => {
  it('always encode as strict DER (random serials included)', () => {
    const { privateKey, publicKey } = generateEcKeyPair('secp256k1');
    const spkiDer = publicKey.export({ type: 'spki', format: 'der' });
    for (let i = 0; i < 300; i++) {
      const der = selfSignedCertificate({ commonName: 'x.example', spkiDer, privateKey, notBefore: new Date(), notAfter: new Date(Date.now() + 86_400_000) });
      expect(() => new X509Certificate(der)).not.toThrow();
    }
  });
});

describe('counterparty keys', () => {
  it('are not fetched for a signing domain that is not a host name', async () => {
    let fetched = 0;
    const keys = { keysOf: async () => (fetched++, { keys: { signing: new Uint8Array(), encryption: new Uint8Array() }, cached: false }) } as unknown as KeyDirectory;
    const auth = createAuthenticator({ database: undefined as never, clock: systemClock, keys });
    const message = { payload: 'x', signature: 'ab', nonce: 'n1', timestampSec: Math.floor(Date.now() / 1000) };
    for (const domain of ['evil.example/a1', 'evil.example?x', 'a b', '']) {
      await expect(auth.verifyMessage({ ...message, domain })).rejects.toThrow(UmaAuthError);
    }
    expect(fetched).toBe(0);
  });

  it('are kept for a bounded number of domains, the least recently used going first, and not at all once expired', async () => {
    const vasp = await startFakeVasp();
    try {
      let expirationTimestamp: number | undefined = Math.floor(Date.now() / 1000) + 3600;
      vasp.handle((request) =>
        request.url.startsWith('/.well-known/lnurlpubkey') ? { body: { signingPubKey: vasp.publicKeyHex, encryptionPubKey: vasp.publicKeyHex, expirationTimestamp } } : undefined,
      );
      const port = vasp.domain.split(':')[1];
      const [a, b] = [`127.0.0.1:${port}`, `localhost:${port}`];
      const directory = createKeyDirectory(systemClock, { allowPrivate: true }, { maxDomains: 1 });
      const fetches = () => vasp.requests.filter((r) => r.url.startsWith('/.well-known/lnurlpubkey')).length;
      expect((await directory.keysOf(a)).cached).toBe(false);
      expect((await directory.keysOf(a)).cached).toBe(true);
      await directory.keysOf(b); // takes the one place: a is forgotten
      expect((await directory.keysOf(a)).cached).toBe(false);
      expect(fetches()).toBe(3);
      expirationTimestamp = undefined; // keys without an expiry are used once, never kept
      expect((await directory.keysOf(b, { fresh: true })).cached).toBe(false);
      expect((await directory.keysOf(b)).cached).toBe(false);
    } finally {
      await vasp.close();
    }
  });
});
