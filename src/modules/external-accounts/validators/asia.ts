import { problem, type Problem } from './problem.js';

/** Indian Financial System Code: 4-letter bank, a zero, 6-character branch. */
export function checkIfsc(value: string): Problem | undefined {
  return /^[A-Z]{4}0[A-Z0-9]{6}$/.test(value)
    ? undefined
    : problem('format', 'IFSC must be 11 characters: 4 letters, 0, then 6 letters or digits (e.g. HDFC0000123)');
}

/** UPI virtual payment address: `handle@psp`, the PSP part letters and digits only. */
export function checkVpa(value: string): Problem | undefined {
  if (value.length > 255) return problem('length', 'UPI address is at most 255 characters');
  return /^[a-zA-Z0-9][a-zA-Z0-9._-]{1,254}@[a-zA-Z][a-zA-Z0-9]{1,63}$/.test(value)
    ? undefined
    : problem('format', 'UPI address (VPA) must look like name@bank, e.g. priya.sharma@okhdfc');
}
