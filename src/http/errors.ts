import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { ERROR_STATUS, ServiceError, type ErrorCode, type FieldError } from '../core/errors.js';
import { toFieldErrors } from './validation.js';
import { isDatabaseUnavailable } from '../db/database.js';

export interface ErrorBody {
  status: number;
  code: string;
  message: string;
  details?: Record<string, unknown>;
  [extra: string]: unknown;
}

export function envelope(code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  return { status: ERROR_STATUS[code], code, message, ...(details && { details }) };
}

/** The media type a route's body takes: what its schema says it consumes, else JSON. */
function bodyTypeOf(request: FastifyRequest): string {
  const consumes = (request.routeOptions.schema as { consumes?: string[] } | undefined)?.consumes;
  return consumes?.[0] ?? 'application/json';
}

function fromFastifyError(error: FastifyError, request: FastifyRequest): { body: ErrorBody; expected: boolean } {
  if (error.validation) {
    const errors: FieldError[] = toFieldErrors(error.validation as any, error.validationContext);
    const first = errors[0];
    const message = first ? `${first.field} ${first.message}` : 'request is invalid';
    return { body: envelope('INVALID_INPUT', message, { errors }), expected: true };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { body: envelope('PAYLOAD_TOO_LARGE', 'request body is too large'), expected: true };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { body: envelope('UNSUPPORTED_MEDIA_TYPE', `send the body as ${bodyTypeOf(request)}`), expected: true };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { body: envelope('INVALID_INPUT', 'request body is empty but Content-Type is application/json'), expected: true };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { body: envelope('INVALID_INPUT', 'request body is not valid JSON'), expected: true };
  }
  if (error instanceof SyntaxError || (error as { type?: string }).type === 'entity.parse.failed') {
    return { body: envelope('INVALID_INPUT', 'request body is not valid JSON'), expected: true };
  }
  const status = error.statusCode ?? 500;
  if (status === 404) return { body: envelope('NOT_FOUND', 'not found'), expected: true };
  if (status === 405) return { body: envelope('METHOD_NOT_ALLOWED', 'method not allowed'), expected: true };
  if (status === 413) return { body: envelope('PAYLOAD_TOO_LARGE', 'request body is too large'), expected: true };
  if (status === 415) return { body: envelope('UNSUPPORTED_MEDIA_TYPE', error.message), expected: true };
  if (status >= 400 && status < 500) return { body: { ...envelope('INVALID_INPUT', error.message), status }, expected: true };
  return { body: envelope('INTERNAL_ERROR', 'unexpected error; the details are in the server log'), expected: false };
}

export function sendError(reply: FastifyReply, error: ServiceError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).send({
    status: error.status,
    code: error.code,
    message: error.message,
    ...error.extra,
    ...(error.details && { details: error.details }),
  });
}

/**
 * Fastify's answers for a path it cannot route (bad percent-encoding, a parameter over the
 * router's length limit), given before any hook runs: in the API's envelope instead of Fastify's
 * own body.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const message =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a path parameter is longer than any identifier this API uses'
      : 'the path is not valid: percent-escapes must encode UTF-8 text';
  // Sent before the hooks that add these headers to every other answer.
  void reply.code(400).headers({ 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' }).send(envelope('INVALID_INPUT', message));
}

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (broken framing, a request line
 * and headers over Node's 16 KiB, a client too slow to send its request): answered in the
 * envelope, then the connection is closed, as Node's own answer would.
 */
export function clientErrors(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [code, message]: [ErrorCode, string] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? ['REQUEST_TIMEOUT', 'the request did not arrive in time']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? ['HEADERS_TOO_LARGE', 'the request line and headers are larger than 16 KiB']
        : ['INVALID_INPUT', 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify(envelope(code, message));
  const status = ERROR_STATUS[code];
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** One place where failures become responses: expected ones logged at info, the rest at error and masked. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ServiceError) {
      request.log.info({ code: error.code }, error.message);
      return sendError(reply, error);
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      return reply.code(503).send(envelope('SERVICE_UNAVAILABLE', 'the database is unavailable or busy; retry in a moment'));
    }
    const { body, expected } = fromFastifyError(error, request);
    if (expected) request.log.info({ code: body.code }, body.message);
    else request.log.error({ err: error }, 'unhandled error');
    return reply.code(body.status).send(body);
  });

  // The methods some route takes, gathered as routes are added, so that a request the router
  // does not match can be told which methods its path does take: work done only for such requests.
  const methods = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) methods.add(method.toUpperCase());
    if (methods.has('GET')) methods.add('HEAD');
  });
  const byAllowOrder = (a: string, b: string) => allowRank(a) - allowRank(b) || a.localeCompare(b);

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = [...methods].filter((method) => {
      const route = method === request.method ? null : app.findRoute({ method: method as HTTPMethods, url: request.url });
      return route !== null && !hasEmptySegment(route.params);
    });
    if (allowed.length === 0) return reply.code(404).send(envelope('NOT_FOUND', `no route ${request.method} ${path}`));
    const allow = allowed.sort(byAllowOrder).join(', ');
    return reply.code(405).header('allow', allow).send(envelope('METHOD_NOT_ALLOWED', `${path} does not take ${request.method}; it takes ${allow}`));
  });
}

/**
 * Whether the router matched a parameter to an empty path segment (`/customers/` to
 * `/customers/:customerId`, `/quotes//execute`): no path of the API has one, so such a request is
 * an unknown path, as a trailing slash is on a route without a parameter. A wildcard's empty
 * match (`/docs/`) is a path its route chose to serve.
 */
export function hasEmptySegment(params: unknown): boolean {
  for (const key in params as Record<string, unknown>) if ((params as Record<string, unknown>)[key] === '' && key !== '*') return true;
  return false;
}

/** Methods in the order an `Allow` header lists them; any other comes after, alphabetically. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function allowRank(method: string): number {
  const rank = ALLOW_ORDER.indexOf(method);
  return rank < 0 ? ALLOW_ORDER.length : rank;
}
