import type { VerificationStatus } from '../customers/schemas.js';

/** What a verification check decides about one person or business. */
export type Outcome = Extract<VerificationStatus, 'APPROVED' | 'PENDING' | 'REJECTED'>;

/**
 * Sandbox outcome by the last 3 characters of a value (SPEC 4.7): `001` PENDING, `002` REJECTED,
 * anything else APPROVED. Applied to a business's registrationNumber, a beneficial owner's
 * lastName and (a Corridor extension, the same rule) an individual customer's fullName.
 */
export function sandboxOutcome(value: string | undefined): Outcome {
  const suffix = (value ?? '').trim().slice(-3);
  if (suffix === '001') return 'PENDING';
  if (suffix === '002') return 'REJECTED';
  return 'APPROVED';
}

const SEVERITY: Record<Outcome, number> = { APPROVED: 0, PENDING: 1, REJECTED: 2 };

/** The most severe of several outcomes: one rejected party rejects, one pending keeps it pending. */
export function combinedOutcome(outcomes: Outcome[]): Outcome {
  return outcomes.reduce<Outcome>((worst, o) => (SEVERITY[o] > SEVERITY[worst] ? o : worst), 'APPROVED');
}

/** A person's KYC status when they are added or their identity changes. */
export function screenPerson(mode: 'SANDBOX' | 'PRODUCTION', lastName: string): Outcome {
  return mode === 'SANDBOX' ? sandboxOutcome(lastName) : 'PENDING';
}
