import { describe, expect, it } from 'vitest';
import {
  checkBolt12Offer,
  checkEvmAddress,
  checkLightningAddress,
  checkLightningInvoice,
  checkSolanaAddress,
  checkSparkAddress,
  checkTronAddress,
  eip55Checksum,
} from './crypto.js';
import { bech32Decode, bech32Encode } from '../../../core/encoding.js';
import { keccak256 } from './keccak.js';

const ok = (p: unknown) => expect(p).toBeUndefined();
const bad = (p: unknown, constraint: string) => expect(p).toMatchObject({ constraint, message: expect.any(String) });
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

const SPARK = 'sp1pgss8u5vh4cldqxarcl2hnqgqelhupdt6g9e9y5x489t8ky355f3veh6dln5pf';
const INVOICE =
  'lnbc15u1p3xnhl2pp5jptserfk3zk4qy42tlucycrfwxhydvlemu9pqr93tuzlv9cc7g3sdqsvfhkcap3xyhx7un8cqzpgxqzjcsp5f8c52y2stc300gl6s4xswtjpc37hrnnr3c9wvtgjfuvqmpm35evq9qyyssqy4lgd8tj637qcjp05rdpxxykjenthxftej7a2zzmwrmrl70fyj9hvj0rewhzj7jfyuwkwcg9g2jpwtk3wkjtwnkdks84hsnu8xps5vsq4gj5hs';

describe('keccak-256', () => {
  it('matches known digests', () => {
    expect(hex(keccak256(new Uint8Array()))).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(hex(keccak256(Buffer.from('abc')))).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
  });
});

describe('EVM addresses', () => {
  it('accepts EIP-55 test vectors and single-case addresses', () => {
    for (const a of [
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
      '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
      '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
      '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
      '0x52908400098527886e0f7030069857d2e4169ee7',
      '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
    ]) {
      ok(checkEvmAddress(a));
    }
    expect(eip55Checksum('5aaeb6053f3e94c9b9a09f33669435e7ef1beaed')).toBe('5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
  });
  it('rejects a broken checksum, wrong length or prefix', () => {
    bad(checkEvmAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'), 'checksum');
    bad(checkEvmAddress('0xAbCDEF1234567890aBCdEf1234567890ABcDef12'), 'checksum');
    bad(checkEvmAddress('0x5aaeb6053f3e94c9b9a09f33669435e7ef1bea'), 'format');
    bad(checkEvmAddress('5aaeb6053f3e94c9b9a09f33669435e7ef1beaed00'), 'format');
  });
});

describe('Spark', () => {
  it('accepts bech32m Spark addresses on every network prefix', () => {
    ok(checkSparkAddress(SPARK));
    const words = bech32Decode(SPARK)!.words;
    ok(checkSparkAddress(bech32Encode('spark', words, 'bech32m')));
    ok(checkSparkAddress(bech32Encode('sprt', words, 'bech32m')));
  });
  it('rejects typos, other prefixes, bech32 (not m) and bad payloads', () => {
    bad(checkSparkAddress(SPARK.slice(0, -1) + 'q'), 'checksum');
    const words = bech32Decode(SPARK)!.words;
    bad(checkSparkAddress(bech32Encode('bc', words, 'bech32m')), 'format');
    bad(checkSparkAddress(bech32Encode('sp', words, 'bech32')), 'checksum');
    bad(checkSparkAddress(bech32Encode('sp', words.slice(0, 20), 'bech32m')), 'format');
  });
});

describe('Lightning', () => {
  it('invoices', () => {
    ok(checkLightningInvoice(INVOICE));
    bad(checkLightningInvoice(INVOICE.replace('lnbc15u', 'lnbc16u')), 'checksum');
    bad(checkLightningInvoice(bech32Encode('bc', [1, 2, 3], 'bech32')), 'format');
  });
  it('BOLT 12 offers', () => {
    ok(checkBolt12Offer('lno1qgsqvgnwgcg35z6ee2h3yczraddm72xrfua9uve2rlrm9deu7xyfzrc'));
    bad(checkBolt12Offer('lnbc1qgsqvgnwgcg35z6ee2h3yczraddm72'), 'format');
    bad(checkBolt12Offer('lno1bbbbbbbbbbbbbbbbbbbbbbbb'), 'format');
  });
  it('addresses', () => {
    ok(checkLightningAddress('satoshi@walletofsatoshi.com'));
    ok(checkLightningAddress('john.doe+tips@lightningwallet.com'));
    bad(checkLightningAddress('john doe@wallet.com'), 'format');
    bad(checkLightningAddress('john@localhost'), 'format');
  });
});

describe('Solana', () => {
  it('accepts base58 32-byte keys', () => {
    ok(checkSolanaAddress('4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg'));
    ok(checkSolanaAddress('So11111111111111111111111111111111111111112'));
    ok(checkSolanaAddress('11111111111111111111111111111111'));
  });
  it('rejects non-base58 characters and wrong lengths', () => {
    bad(checkSolanaAddress('0Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg'), 'format');
    bad(checkSolanaAddress('4Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94U'), 'length');
    bad(checkSolanaAddress('zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'), 'format');
  });
});

describe('Tron', () => {
  it('accepts base58check T-addresses', () => {
    ok(checkTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'));
    ok(checkTronAddress('TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL'));
  });
  it('rejects a broken checksum or shape', () => {
    bad(checkTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u'), 'checksum');
    bad(checkTronAddress('AR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), 'format');
    bad(checkTronAddress('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6'), 'format');
  });
});
