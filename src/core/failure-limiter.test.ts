import { describe, expect, it } from 'vitest';
import { addressKey, createFailureLimiter } from './failure-limiter.js';

describe('createFailureLimiter', () => {
  it('refuses a key after its limit until the window ends, with Retry-After', () => {
    let now = 0;
    const limiter = createFailureLimiter({ limit: 2, windowMs: 10_000, nowMs: () => now, what: 'tries' });
    limiter.record('a');
    limiter.record('a');
    expect(() => limiter.check('a')).toThrowError(expect.objectContaining({ code: 'RATE_LIMITED', headers: { 'retry-after': '10' } }));
    expect(() => limiter.check('b')).not.toThrow();
    now = 10_001;
    expect(() => limiter.check('a')).not.toThrow();
  });

  it('reserve counts an attempt before it runs, so attempts in flight cannot pass the limit; release gives it back', () => {
    const limiter = createFailureLimiter({ limit: 2, windowMs: 10_000, nowMs: () => 0, what: 'tries' });
    const first = limiter.reserve('a');
    limiter.reserve('a');
    expect(() => limiter.reserve('a')).toThrowError(expect.objectContaining({ code: 'RATE_LIMITED' }));
    first();
    expect(() => limiter.check('a')).not.toThrow();
    limiter.reserve('a');
    expect(() => limiter.check('a')).toThrow();
  });

  it('forgets the oldest key when full, not every key', () => {
    const limiter = createFailureLimiter({ limit: 2, windowMs: 10_000, nowMs: () => 0, what: 'tries', maxKeys: 2 });
    limiter.record('old');
    limiter.record('recent');
    limiter.record('new');
    limiter.record('recent');
    limiter.record('old'); // forgotten: counts from one again
    expect(() => limiter.check('old')).not.toThrow();
    expect(() => limiter.check('recent')).toThrow();
  });
  it('keeps a key that is locked out when full, however many new keys fail', () => {
    const limiter = createFailureLimiter({ limit: 2, windowMs: 10_000, nowMs: () => 0, what: 'tries', maxKeys: 3 });
    limiter.record('guesser');
    limiter.record('guesser');
    for (let i = 0; i < 1_000; i++) limiter.record(`flood-${i}`);
    expect(() => limiter.check('guesser')).toThrow();
    expect(() => limiter.check('flood-998')).not.toThrow();
    limiter.record('flood-0'); // forgotten long ago: counts from one again
    expect(() => limiter.check('flood-0')).not.toThrow();
    limiter.record('flood-999');
    expect(() => limiter.check('flood-999')).toThrow();
  });

  it('keeps every lockout to the end of its window, past maxKeys, however the flood is ordered', () => {
    const limiter = createFailureLimiter({ limit: 1, windowMs: 10_000, nowMs: () => 0, what: 'tries', maxKeys: 150 });
    for (let i = 0; i < 300; i++) limiter.record(`locked-${i}`);
    for (let i = 0; i < 1_000; i++) limiter.record(`flood-${i}`);
    const lockedOut = (key: string) => {
      try {
        limiter.check(key);
        return false;
      } catch {
        return true;
      }
    };
    expect(Array.from({ length: 300 }, (_, i) => `locked-${i}`).every(lockedOut)).toBe(true);
  });
});

describe('addressKey', () => {
  it('keeps IPv4 addresses and keys IPv6 by their /64', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('::ffff:203.0.113.7');
    expect(addressKey('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64');
    expect(addressKey('2001:0DB8:0000:0001:bbbb:cccc:dddd:eeee')).toBe('2001:db8:0:1::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });
});
