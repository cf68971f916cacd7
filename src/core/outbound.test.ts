import { describe, expect, it } from 'vitest';
import { classifyTarget, isPrivateAddress, privateTargetsAllowed } from './outbound.js';

describe('isPrivateAddress', () => {
  it.each([
    '0.0.0.0',
    '10.20.30.40',
    '100.64.0.1',
    '127.0.0.1',
    '169.254.169.254',
    '172.31.255.255',
    '192.0.0.8',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '224.0.0.251',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    'fd00::1',
    'fe80::1',
  ])('%s is private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '93.184.215.14', '172.32.0.1', '198.20.0.1', '::ffff:8.8.8.8', '2606:4700:4700::1111'])('%s is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('classifyTarget', () => {
  it('classifies literal addresses and resolved names', async () => {
    expect(await classifyTarget(new URL('http://127.0.0.1:9/x'))).toBe('private');
    expect(await classifyTarget(new URL('http://[::1]:9/x'))).toBe('private');
    expect(await classifyTarget(new URL('http://2130706433/x'))).toBe('private');
    expect(await classifyTarget(new URL('http://localhost/x'))).toBe('private');
    expect(await classifyTarget(new URL('https://93.184.215.14/x'))).toBe('public');
    expect(await classifyTarget(new URL('https://no-such-host.invalid/x'))).toBe('unresolvable');
  });
});

describe('privateTargetsAllowed', () => {
  it('allows sandbox platforms always, production ones only when the operator does', () => {
    expect(privateTargetsAllowed({ mode: 'SANDBOX' }, false)).toBe(true);
    expect(privateTargetsAllowed({ mode: 'PRODUCTION' }, false)).toBe(false);
    expect(privateTargetsAllowed({ mode: 'PRODUCTION' }, true)).toBe(true);
  });
});
