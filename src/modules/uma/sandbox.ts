import type { RailPlan } from '../rails/rail.js';
import type { RequiredPayerField } from '../quotes/schemas.js';
import type { SandboxOutcome } from './repository.js';

/**
 * The sandbox UMA counterparty (SPEC 4.7): addresses on the sandbox UMA domain whose local part
 * decides what a payment to them does. They are answered by Corridor itself, without any network
 * call, for sandbox platforms only.
 */
export interface SandboxReceiver {
  currency: string;
  outcome: SandboxOutcome;
}

const RECEIVERS: Record<string, SandboxReceiver> = {
  'success.usd': { currency: 'USD', outcome: 'SUCCESS' },
  'success.eur': { currency: 'EUR', outcome: 'SUCCESS' },
  'success.mxn': { currency: 'MXN', outcome: 'SUCCESS' },
  'pending.long.usd': { currency: 'USD', outcome: 'PENDING_LONG' },
  'fail.compliance.usd': { currency: 'USD', outcome: 'FAIL_COMPLIANCE' },
};

export function sandboxReceiver(local: string): SandboxReceiver | undefined {
  return RECEIVERS[local.toLowerCase()];
}

export const SANDBOX_PROVIDER_NAME = 'Sandbox UMA provider';
export const SANDBOX_REGIONS = ['US', 'MX', 'DE', 'ES', 'FR', 'IT', 'NL'];
export const SANDBOX_CURRENCIES = ['EUR', 'MXN', 'USD'];
/** What sandbox receivers accept, in the smallest unit of their currency. */
export const SANDBOX_LIMITS = { min: 1, max: 100_000_000 };
/** What sandbox receivers ask about the sender: the name always, birth date and nationality if known. */
export const SANDBOX_PAYER_FIELDS: RequiredPayerField[] = [
  { name: 'FULL_NAME', mandatory: true },
  { name: 'BIRTH_DATE', mandatory: false },
  { name: 'NATIONALITY', mandatory: false },
];
/** How long `$pending.long.*` keeps a payment PROCESSING (platform clock). */
export const SANDBOX_LONG_PENDING_MS = 60 * 60_000;

/** What paying a sandbox receiver does once the quote is executed. */
export function sandboxPlan(outcome: SandboxOutcome): RailPlan {
  switch (outcome) {
    case 'SUCCESS':
      return { steps: [{ afterMs: 0, event: { kind: 'COMPLETED' } }] };
    case 'PENDING_LONG':
      return { steps: [{ afterMs: SANDBOX_LONG_PENDING_MS, event: { kind: 'COMPLETED' } }] };
    case 'FAIL_COMPLIANCE':
      return { steps: [{ afterMs: 0, event: { kind: 'FAILED', detail: 'COMPLIANCE_FAILED', reason: 'QUOTE_EXECUTION_FAILED' } }] };
  }
}

/** What a simulated sandbox sender tells the receiver about itself. */
export const SANDBOX_SENDER_INFORMATION: Record<string, unknown> = { FULL_NAME: 'Sandbox Sender', NATIONALITY: 'US' };
