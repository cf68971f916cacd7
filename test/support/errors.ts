import { expect } from 'vitest';
import type { ApiResponse } from './app.js';

/**
 * Asserts the error envelope: the HTTP status, the same `status` and `code` in the body, and a
 * message. With `field`, `details.errors` must hold an entry for it (with `constraint`, when given).
 */
export function expectError(res: ApiResponse, status: number, code: string, field?: string, constraint?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ status, code, message: expect.any(String) });
  if (field) {
    expect(res.body.details.errors).toContainEqual(expect.objectContaining({ field, ...(constraint && { constraint }), message: expect.any(String) }));
  }
}
