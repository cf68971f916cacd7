import { describe, expect, it } from 'vitest';
import { checkEvmAddress, checkSparkAddress, checkTronAddress } from '../external-accounts/validators/crypto.js';
import { checkIban } from '../external-accounts/validators/europe.js';
import { evmAddress, iban, sparkAddress, tronAddress } from './sandbox-addresses.js';

// The deposit details Corridor hands out must pass the checks it applies to accounts it is given.
describe('sandbox deposit addresses', () => {
  it.each(['a', 'InternalAccount:0193', 'another seed'])('are valid by our own validators (seed %s)', (seed) => {
    expect(checkSparkAddress(sparkAddress(seed))).toBeUndefined();
    expect(checkTronAddress(tronAddress(seed))).toBeUndefined();
    expect(checkEvmAddress(evmAddress(seed))).toBeUndefined();
    expect(checkIban(iban('DE', '370400440532013000'))).toBeUndefined();
  });
});
