import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { errors, IdParam, NoContent } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import { optionalBody } from '../../http/validation.js';
import type { Services } from '../../services.js';
import {
  AccountQuery,
  AuthMethod,
  AuthSession,
  AuthSignedRequestChallenge,
  CredentialChallengeRequest,
  CredentialChallengeResponse,
  CredentialCreate,
  CredentialVerify,
  ExportRequest,
  ExportResponse,
  PasskeyVerifyHeaders,
  SignedRequestChallenge,
  SignedRetryHeaders,
} from './schemas.js';
import type { SignedRetryHeaders as Headers } from './signed-retry.js';

const TAGS = ['Embedded Wallet Auth'];
const SIGNED_RETRY =
  'Protected operation (signed retry): without signature headers the response is 202 with `payloadToSign` and `requestId`; sign the payload with the key of an active session of the account and repeat the same request with `Service-Wallet-Signature` and `Request-Id`.';

function signedRetryHeaders(request: FastifyRequest): Headers {
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return { signature: header('service-wallet-signature'), requestId: header('request-id') };
}

/** Sends a 202 challenge; the idempotency layer keeps the request's key free for the signed retry. */
function challengeReply(reply: FastifyReply, body: unknown) {
  return reply.code(202).send(body);
}

export function walletRoutes(app: Api, { wallets }: Services): void {

  app.post(
    '/auth/credentials',
    {
      schema: {
        summary: 'Register an authentication credential',
        description: `The first credential of an account is registered at once (201; no session yet: verify it). Any later one is a protected operation. ${SIGNED_RETRY} One credential per type per account. EMAIL_OTP sends a code when the credential is created.`,
        tags: TAGS,
        headers: SignedRetryHeaders,
        body: CredentialCreate,
        response: { 201: AuthMethod, 202: AuthSignedRequestChallenge, ...errors(404, 409) },
      },
    },
    async (request, reply) => {
      const outcome = await wallets.credentials.create(request.ctx, request.body, signedRetryHeaders(request));
      return outcome.status === 202 ? challengeReply(reply, outcome.body) : reply.code(201).send(outcome.body);
    },
  );

  app.get(
    '/auth/credentials',
    {
      schema: {
        summary: 'List the credentials of an embedded wallet',
        description: 'Not paginated: an account has at most one credential of each type. An unknown account has none.',
        tags: TAGS,
        querystring: AccountQuery,
        response: { 200: Type.Object({ data: Type.Array(AuthMethod, { description: 'The account\'s credentials, oldest first.' }) }), ...errors() },
      },
    },
    async (request) => wallets.credentials.list(request.ctx, request.query.accountId),
  );

  app.delete(
    '/auth/credentials/:id',
    {
      schema: {
        summary: 'Revoke an authentication credential',
        description: `${SIGNED_RETRY} The signature must come from a session of another credential of the account; the last credential cannot be revoked (400 LAST_CREDENTIAL). Its sessions end with it.`,
        tags: TAGS,
        params: IdParam('id', 'Credential id (`AuthMethod:…`).'),
        headers: SignedRetryHeaders,
        response: { 202: AuthSignedRequestChallenge, 204: NoContent, ...errors(404) },
      },
    },
    async (request, reply) => {
      const outcome = await wallets.credentials.revoke(request.ctx, request.params.id, signedRetryHeaders(request));
      return outcome.status === 202 ? challengeReply(reply, outcome.body) : reply.code(204).send(null);
    },
  );

  app.post(
    '/auth/credentials/:id/challenge',
    {
      schema: {
        summary: 'Issue a new challenge for a credential',
        description:
          'PASSKEY: send `clientPublicKey`; the response carries the WebAuthn `challenge` and the `requestId` to send on verify. EMAIL_OTP: sends a fresh code (the previous one stops working). OAUTH: nothing to issue. At most 3 challenges per credential in 90 seconds, then 429 with Retry-After.',
        tags: TAGS,
        params: IdParam('id', 'Credential id (`AuthMethod:…`).'),
        body: Type.Optional(CredentialChallengeRequest),
        response: { 200: CredentialChallengeResponse, ...errors(404, 429) },
      },
      // EMAIL_OTP and OAUTH need no body.
      preValidation: optionalBody,
    },
    async (request) => wallets.authentication.challenge(request.ctx, request.params.id, request.body),
  );

  app.post(
    '/auth/credentials/:id/verify',
    {
      schema: {
        summary: 'Verify a credential and open a session',
        description:
          'Checks the proof (code, fresh ID token, or passkey assertion with `Request-Id` from /challenge) and returns the new session, its signing key sealed to `clientPublicKey` in `encryptedSessionSigningKey`.',
        tags: TAGS,
        params: IdParam('id', 'Credential id (`AuthMethod:…`).'),
        headers: PasskeyVerifyHeaders,
        body: CredentialVerify,
        response: { 200: AuthSession, ...errors(404) },
      },
    },
    async (request) => wallets.authentication.verify(request.ctx, request.params.id, request.body, signedRetryHeaders(request).requestId),
  );

  app.get(
    '/auth/sessions',
    {
      schema: {
        summary: 'List the active sessions of an embedded wallet',
        description: 'Sessions neither expired nor revoked; their keys are never shown again. Not paginated.',
        tags: TAGS,
        querystring: AccountQuery,
        response: { 200: Type.Object({ data: Type.Array(AuthSession, { description: 'Active sessions, oldest first.' }) }), ...errors() },
      },
    },
    async (request) => wallets.sessions.list(request.ctx, request.query.accountId),
  );

  app.delete(
    '/auth/sessions/:id',
    {
      schema: {
        summary: 'Revoke a session',
        description: `${SIGNED_RETRY} Any active session of the account may sign, the one revoked included. Unknown or expired sessions: 404.`,
        tags: TAGS,
        params: IdParam('id', 'Session id (`Session:…`).'),
        headers: SignedRetryHeaders,
        response: { 202: AuthSignedRequestChallenge, 204: NoContent, ...errors(404) },
      },
    },
    async (request, reply) => {
      const outcome = await wallets.sessions.revoke(request.ctx, request.params.id, signedRetryHeaders(request));
      return outcome.status === 202 ? challengeReply(reply, outcome.body) : reply.code(204).send(null);
    },
  );

  app.post(
    '/internal-accounts/:id/export',
    {
      schema: {
        summary: 'Export an embedded wallet',
        description: `${SIGNED_RETRY} The payload binds \`clientPublicKey\`, and the retry must send the same one. Returns the wallet mnemonic sealed to that key (HPKE).`,
        tags: ['Internal Accounts'],
        params: IdParam('id', 'The EMBEDDED_WALLET internal account.'),
        headers: SignedRetryHeaders,
        body: ExportRequest,
        response: { 200: ExportResponse, 202: SignedRequestChallenge, ...errors(404) },
      },
    },
    async (request, reply) => {
      const outcome = await wallets.exports.exportWallet(request.ctx, request.params.id, request.body, signedRetryHeaders(request));
      return outcome.status === 202 ? challengeReply(reply, outcome.body) : reply.code(200).send(outcome.body);
    },
  );
}
