/** Why a value is not acceptable: the rule it broke and a message for the API client. */
export interface Problem {
  constraint: 'format' | 'checksum' | 'length' | 'country' | 'enum' | 'required' | 'range';
  message: string;
}

/** A problem located at a field path (relative to the object being checked). */
export interface FieldProblem extends Problem {
  field: string;
}

export function problem(constraint: Problem['constraint'], message: string): Problem {
  return { constraint, message };
}

/** Runs a check on a field when the field is present, prefixing the problem with its path. */
export function checkField(
  problems: FieldProblem[],
  field: string,
  value: unknown,
  check: (value: string) => Problem | undefined,
): void {
  if (typeof value !== 'string') return;
  const found = check(value);
  if (found) problems.push({ field, ...found });
}

/** A string of `min`–`max` ASCII digits. */
export function checkDigits(value: string, min: number, max: number, what: string): Problem | undefined {
  if (!/^[0-9]+$/.test(value)) return problem('format', `${what} must contain digits only`);
  if (value.length < min || value.length > max) {
    return problem('length', min === max ? `${what} must be ${min} digits` : `${what} must be ${min}-${max} digits`);
  }
  return undefined;
}
