import type { CounterPartyDataOptions } from '@uma-sdk/core';
import { CUSTOMER_INFO_FIELDS, type CustomerInfoField } from '../platform/schemas.js';
import type { RequiredPayerField } from '../quotes/schemas.js';

/**
 * Corridor names counterparty fields like the reference (FULL_NAME, BIRTH_DATE); UMA payer and
 * payee data use camelCase keys (name, birthDate; UMAD-04). FULL_NAME is UMA's `name`; every
 * other field is its name in camelCase.
 */
const SPECIAL: Partial<Record<CustomerInfoField, string>> = { FULL_NAME: 'name' };
/** UMA keys that are protocol machinery, not information about a person. */
const PROTOCOL_KEYS = new Set(['identifier', 'compliance']);

export function umaKeyOf(field: CustomerInfoField): string {
  return SPECIAL[field] ?? field.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

const BY_UMA_KEY = new Map<string, CustomerInfoField>(CUSTOMER_INFO_FIELDS.map((f) => [umaKeyOf(f), f]));

export function fieldOfUmaKey(key: string): CustomerInfoField | undefined {
  return BY_UMA_KEY.get(key);
}

/** lnurlp `payerData` options for the fields a receiver requires. */
export function payerDataOptions(fields: RequiredPayerField[]): CounterPartyDataOptions {
  return Object.fromEntries(fields.map((f) => [umaKeyOf(f.name), { mandatory: f.mandatory }]));
}

/** The fields an lnurlp response asks for, in Corridor's names (unknown keys are left out). */
export function requiredFieldsFrom(options: CounterPartyDataOptions | undefined): RequiredPayerField[] {
  const out: RequiredPayerField[] = [];
  for (const [key, option] of Object.entries(options ?? {})) {
    const field = PROTOCOL_KEYS.has(key) ? undefined : fieldOfUmaKey(key);
    if (field) out.push({ name: field, mandatory: option.mandatory });
  }
  return out;
}

/** Several currencies' requirements as one list: a field is mandatory if any currency makes it so. */
export function mergeRequirements(lists: RequiredPayerField[][]): RequiredPayerField[] {
  const merged = new Map<CustomerInfoField, boolean>();
  for (const field of lists.flat()) merged.set(field.name, (merged.get(field.name) ?? false) || field.mandatory);
  return [...merged].map(([name, mandatory]) => ({ name, mandatory }));
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');
}

/** Information keyed by Corridor names → UMA payer data keys (blank values dropped). */
export function toUmaData(info: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(info)) {
    if ((CUSTOMER_INFO_FIELDS as readonly string[]).includes(name) && present(value)) out[umaKeyOf(name as CustomerInfoField)] = value;
  }
  return out;
}

/** UMA payer or payee data → Corridor names (protocol keys and unknown keys dropped). */
export function fromUmaData(data: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data ?? {})) {
    const field = PROTOCOL_KEYS.has(key) ? undefined : fieldOfUmaKey(key);
    if (field && present(value)) out[field] = value;
  }
  return out;
}

/** Mandatory fields absent from UMA payer data. */
export function missingMandatory(required: RequiredPayerField[], payerData: Record<string, unknown> | undefined): CustomerInfoField[] {
  return required.filter((f) => f.mandatory && !present(payerData?.[umaKeyOf(f.name)])).map((f) => f.name);
}
