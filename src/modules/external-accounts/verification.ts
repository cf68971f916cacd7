import type { AccountStatus, VerificationStatus } from './schemas.js';

export interface VerificationOutcome {
  status: VerificationStatus;
  /** The holder name the receiving institution reports (MATCHED, PARTIAL_MATCH). */
  verifiedName?: string;
}

/** What a production name-verification provider would be asked. */
export interface VerificationRequest {
  accountType: string;
  currency: string;
  identifier: string;
  holderName: string;
}

/** A real beneficiary-name check (e.g. Confirmation of Payee); `invalid` means the account does not exist. */
export type BeneficiaryVerifier = (request: VerificationRequest) => Promise<VerificationOutcome | 'INVALID_ACCOUNT'>;

/**
 * The characters that decide sandbox outcomes: the last three of the identifier, or of its
 * user part when it has a domain (PIX e-mail keys, UPI addresses: `maria102@example.com`).
 */
export function sandboxSuffix(identifier: string): string {
  const at = identifier.lastIndexOf('@');
  const local = at > 0 ? identifier.slice(0, at) : identifier;
  return local.slice(-3);
}

/** A name close to, but not the same as, the one given: "Maria Silva" → "M. Silva". */
export function partialName(name: string): string {
  const words = name.trim().split(/\s+/);
  if (words.length > 1) return [`${words[0][0]}.`, ...words.slice(1)].join(' ');
  return name.length > 3 ? name.slice(0, -1) : `${name}.`;
}

/** SPEC §4.7: sandbox beneficiary verification by identifier suffix. */
export function sandboxVerification(identifier: string, holderName: string): VerificationOutcome | 'INVALID_ACCOUNT' {
  switch (sandboxSuffix(identifier)) {
    case '102':
      return { status: 'NOT_MATCHED' };
    case '103':
      return { status: 'PARTIAL_MATCH', verifiedName: partialName(holderName) };
    case '104':
      return { status: 'PENDING' };
    case '105':
      return 'INVALID_ACCOUNT';
    case '106':
      return { status: 'UNSUPPORTED' };
    case '107':
      return { status: 'CHECKED_BY_RECEIVING_FI' };
    default:
      return { status: 'MATCHED', verifiedName: holderName };
  }
}

/**
 * Account status after verification: usable unless the name check is still running (PENDING)
 * or came back as someone else (UNDER_REVIEW). Accounts without a check (wallets) are ACTIVE.
 */
export function accountStatusFor(verification: VerificationStatus | undefined): AccountStatus {
  if (verification === 'PENDING') return 'PENDING';
  if (verification === 'NOT_MATCHED') return 'UNDER_REVIEW';
  return 'ACTIVE';
}

/** The name to verify: an individual's full name or a company's legal name. */
export function holderName(beneficiary: Record<string, unknown> | undefined): string | undefined {
  const name = beneficiary?.fullName ?? beneficiary?.legalName;
  return typeof name === 'string' ? name : undefined;
}
