import { createECDH, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateEcKeyPair } from './ec-keys.js';

describe('generateEcKeyPair', () => {
  for (const [crv, openssl] of [['P-256', 'prime256v1'], ['secp256k1', 'secp256k1']] as const) {
    it(`${crv}: the key objects, the scalar and the point are one key pair`, () => {
      for (let i = 0; i < 50; i++) {
        const { privateKey, publicKey, d, point } = generateEcKeyPair(crv);
        expect(d).toHaveLength(32);
        expect(point).toHaveLength(65);
        const ecdh = createECDH(openssl);
        ecdh.setPrivateKey(d);
        expect(ecdh.getPublicKey().equals(point)).toBe(true);
        expect(publicKey.export({ format: 'jwk' })).toMatchObject({ crv, x: point.subarray(1, 33).toString('base64url') });
        const signature = sign('sha256', Buffer.from(`message ${i}`), privateKey);
        expect(verify('sha256', Buffer.from(`message ${i}`), publicKey, signature)).toBe(true);
      }
    });
  }
});
