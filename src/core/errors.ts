/**
 * The closed set of error codes Corridor returns, each mapped to exactly one HTTP status.
 * Adding a code means adding it here, so a code without a status cannot exist.
 * Codes follow the reference API where it names them; the rest are ours.
 */
export const ERROR_STATUS = {
  // 400
  INVALID_INPUT: 400,
  INVALID_CURRENCY: 400,
  INVALID_AMOUNT: 400,
  AMOUNT_OUT_OF_RANGE: 400,
  INVALID_BANK_ACCOUNT: 400,
  INVALID_UMA_ADDRESS: 400,
  INVALID_RECEIVER: 400,
  INVALID_TIMESTAMP: 400,
  INVALID_NONCE: 400,
  INVALID_REQUEST_FORMAT: 400,
  MISSING_MANDATORY_USER_INFO: 400,
  MISSING_MANDATORY_PAYEE_DATA: 400,
  SELF_PAYMENT: 400,
  INSUFFICIENT_FUNDS: 400,
  LOOKUP_REQUEST_FAILED: 400,
  SENDER_NOT_ACCEPTED: 400,
  WEBHOOK_ENDPOINT_NOT_SET: 400,
  WEBHOOK_DELIVERY_ERROR: 400,
  INVITATION_ALREADY_CLAIMED: 400,
  INVITATION_CANCELLED: 400,
  INVITATION_EXPIRED: 400,
  EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS: 400,
  PASSKEY_CREDENTIAL_ALREADY_EXISTS: 400,
  OAUTH_CREDENTIAL_ALREADY_EXISTS: 400,
  LAST_CREDENTIAL: 400,
  DEVICE_CODE_EXPIRED: 400,
  DEVICE_CODE_ALREADY_REDEEMED: 400,
  // 401
  UNAUTHORIZED: 401,
  INVALID_SIGNATURE: 401,
  // 403
  FORBIDDEN: 403,
  SANDBOX_ONLY: 403,
  USER_NOT_READY: 403,
  AGENT_PAUSED: 403,
  SPENDING_LIMIT_EXCEEDED: 403,
  PERMISSION_DENIED: 403,
  VELOCITY_LIMIT_EXCEEDED: 403,
  // 404
  NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  TOKEN_NOT_FOUND: 404,
  QUOTE_NOT_FOUND: 404,
  TRANSACTION_NOT_FOUND: 404,
  LOOKUP_REQUEST_NOT_FOUND: 404,
  INVITATION_NOT_FOUND: 404,
  BULK_UPLOAD_JOB_NOT_FOUND: 404,
  REFERENCE_NOT_FOUND: 404,
  // 405
  METHOD_NOT_ALLOWED: 405,
  // 408
  REQUEST_TIMEOUT: 408,
  // 409
  CONFLICT: 409,
  UMA_ADDRESS_EXISTS: 409,
  PLATFORM_CUSTOMER_ID_EXISTS: 409,
  DEFAULT_UMA_DEPOSIT_ACCOUNT_EXISTS: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  QUOTE_EXPIRED: 409,
  QUOTE_ALREADY_EXECUTED: 409,
  QUOTE_PENDING_APPROVAL: 409,
  TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL: 409,
  AGENT_ACTION_NOT_PENDING: 409,
  AGENT_ALREADY_CONNECTED: 409,
  // 410
  CUSTOMER_DELETED: 410,
  GONE: 410,
  // 412
  UNSUPPORTED_UMA_VERSION: 412,
  // 413
  PAYLOAD_TOO_LARGE: 413,
  // 415
  UNSUPPORTED_MEDIA_TYPE: 415,
  // 422
  IDEMPOTENCY_KEY_MISMATCH: 422,
  // 424
  LNURLP_REQUEST_FAILED: 424,
  PAYREQ_REQUEST_FAILED: 424,
  COUNTERPARTY_PUBKEY_FETCH_ERROR: 424,
  NO_COMPATIBLE_UMA_VERSION: 424,
  // 429
  RATE_LIMITED: 429,
  // 431
  HEADERS_TOO_LARGE: 431,
  // 500
  INTERNAL_ERROR: 500,
  // 501
  NOT_IMPLEMENTED: 501,
  // 503
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldError {
  field: string;
  constraint: string;
  message: string;
}

/** An expected failure: carries a stable code; the HTTP layer turns it into the error envelope. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  /** Extra top-level envelope fields (SPEC §5 puts `reason` next to `code` on sandbox 401s). */
  readonly extra?: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      details?: Record<string, unknown>;
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    this.details = options.details;
    this.extra = options.extra;
    this.headers = options.headers;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export function invalidInput(field: string, message: string, constraint = 'invalid'): ServiceError {
  return new ServiceError('INVALID_INPUT', message, {
    details: { errors: [{ field, constraint, message }] satisfies FieldError[] },
  });
}

export function notFound(what: string, code: ErrorCode = 'NOT_FOUND'): ServiceError {
  return new ServiceError(code, `${what} not found`);
}
