import type { TProperties, TSchema } from 'typebox';
import { checkField, problem, type FieldProblem, type Problem } from '../validators/problem.js';

/** Account details as stored: the create request's `accountInfo`, bankName made canonical. */
export interface AccountInfo {
  accountType: string;
  beneficiary?: Record<string, unknown>;
  [field: string]: unknown;
}

export interface AccountTypeDef {
  accountType: string;
  title: string;
  /** Currencies an account of this type can hold. */
  currencies: readonly string[];
  /** Country of the rail: `bankName` must be listed for it, and BICs and phone numbers belong to it. */
  country?: string;
  /** Fields besides `accountType` and `beneficiary`, as the create request takes them. */
  fields: TProperties;
  /** Schema of an individual holder; wallets have no beneficiary. */
  individual?: TSchema;
  /** Every rail this type can use (documents the response enum). */
  paymentRails: readonly string[];
  /** The rails a particular account can use. */
  railsFor(info: AccountInfo): string[];
  /** Name of the field holding the account's main identifier (sandbox outcomes key on its end). */
  identifierField(info: AccountInfo): string;
  /** Checks beyond the schema (checksums, country rules); field paths relative to accountInfo. */
  check(info: AccountInfo, problems: FieldProblem[]): void;
}

type Definition = Omit<AccountTypeDef, 'railsFor' | 'identifierField' | 'check'> &
  Partial<Pick<AccountTypeDef, 'railsFor' | 'identifierField' | 'check'>>;

export function define(def: Definition): AccountTypeDef {
  return {
    railsFor: () => [...def.paymentRails],
    identifierField: () => 'accountNumber',
    check: () => {},
    ...def,
  };
}

export function text(info: AccountInfo, name: string): string | undefined {
  return typeof info[name] === 'string' ? (info[name] as string) : undefined;
}

/** Field checks as a table: field name → check, each run when the field is present. */
export function checks(rules: Record<string, (value: string) => Problem | undefined>) {
  return (info: AccountInfo, problems: FieldProblem[]) => {
    for (const [name, rule] of Object.entries(rules)) checkField(problems, name, info[name], rule);
  };
}

/** At least one of `names` must be present; reports the first as missing. */
export function requireAny(info: AccountInfo, problems: FieldProblem[], names: string[]): void {
  if (names.some((name) => text(info, name) !== undefined)) return;
  problems.push({ field: names[0], ...problem('required', `provide one of ${names.join(', ')}`) });
}

/** The first of `names` that is present (callers have ensured one is). */
export function firstOf(info: AccountInfo, names: string[]): string {
  return names.find((name) => text(info, name) !== undefined) ?? names[0];
}

/** The account's main identifier: account number, IBAN, CLABE, PIX key, phone, address… */
export function identifierOf(def: AccountTypeDef, info: AccountInfo): { field: string; value: string } {
  const field = def.identifierField(info);
  return { field, value: String(info[field] ?? '') };
}
