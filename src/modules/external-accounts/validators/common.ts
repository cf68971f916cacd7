import { isCountryCode } from '../../../core/countries.js';
import { problem, type Problem } from './problem.js';

// The WHATWG (HTML) e-mail grammar, with at least one dot in the domain.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function checkEmail(value: string): Problem | undefined {
  if (value.length > 254) return problem('length', 'email address is at most 254 characters');
  return EMAIL.test(value) ? undefined : problem('format', 'must be a valid email address');
}

export function checkUuid(value: string, what = 'value'): Problem | undefined {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)
    ? undefined
    : problem('format', `${what} must be a UUID (8-4-4-4-12 hex digits)`);
}

/** An international phone number in E.164 form: `+`, country code, subscriber number, 7-15 digits. */
export function checkE164(value: string): Problem | undefined {
  return /^\+[1-9][0-9]{6,14}$/.test(value) ? undefined : problem('format', 'must be an E.164 phone number such as +14155550123');
}

export function checkCountryCode(value: string): Problem | undefined {
  return isCountryCode(value) ? undefined : problem('country', 'must be an ISO 3166-1 alpha-2 country code');
}

/** A calendar date (YYYY-MM-DD) that exists, not in the future and not before 1900. */
export function checkBirthDate(value: string, today: Date): Problem | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!match) return problem('format', 'must be a date in the form YYYY-MM-DD');
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return problem('format', 'is not a calendar date');
  }
  if (year < 1900 || date.getTime() > today.getTime()) return problem('range', 'must be between 1900-01-01 and today');
  return undefined;
}
