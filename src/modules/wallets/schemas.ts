import { Type, type Static } from 'typebox';
import { DateTime, Discriminated, StringEnum } from '../../http/common-schemas.js';

export const AUTH_METHOD_TYPES = ['OAUTH', 'EMAIL_OTP', 'PASSKEY'] as const;
export type AuthMethodType = (typeof AUTH_METHOD_TYPES)[number];

export const AuthMethodTypeSchema = StringEnum(AUTH_METHOD_TYPES, {
  description: 'Kind of credential: OAUTH (OpenID Connect ID token), EMAIL_OTP (code sent by email) or PASSKEY (WebAuthn).',
});

const ClientPublicKey = (description: string) =>
  Type.String({ pattern: '^04[0-9a-fA-F]{128}$', minLength: 130, maxLength: 130, description });
const CLIENT_KEY_TEXT =
  'Fresh P-256 public key of the client, uncompressed SEC1 hex (130 characters, `04…`). The session signing key is sealed to it; keep the private key on the device.';
const b64url = (description: string, maxLength = 4096) => Type.String({ minLength: 1, maxLength, pattern: '^[A-Za-z0-9_-]+={0,2}$', description });
const AccountId = Type.String({ minLength: 1, maxLength: 200, description: 'The EMBEDDED_WALLET internal account (`InternalAccount:…`).' });
const OidcToken = Type.String({ minLength: 1, maxLength: 8192, description: 'OpenID Connect ID token (JWT) from an allowed issuer, issued at most 60 seconds ago.' });

export const AuthMethod = Type.Object(
  {
    id: Type.String({ description: 'Credential identifier (`AuthMethod:…`).' }),
    accountId: Type.String({ description: 'The embedded wallet account the credential unlocks.' }),
    type: AuthMethodTypeSchema,
    nickname: Type.String({ description: 'EMAIL_OTP: the email address; OAUTH: the token\'s email claim; PASSKEY: the name given at registration.' }),
    createdAt: DateTime('When the credential was registered.'),
    updatedAt: DateTime('When the credential last changed (a challenge changes nothing).'),
  },
  { title: 'AuthMethod' },
);
export type AuthMethodView = Static<typeof AuthMethod>;

const EmailOtpCreate = Type.Object(
  {
    type: Type.Literal('EMAIL_OTP', { description: 'Register an email one-time-password credential.' }),
    accountId: AccountId,
    email: Type.Optional(
      Type.String({ format: 'email', maxLength: 254, description: 'Address the codes are sent to. Default: the email of the account\'s customer.' }),
    ),
  },
  { additionalProperties: false, title: 'EmailOtpCredentialCreateRequest' },
);

const OauthCreate = Type.Object(
  { type: Type.Literal('OAUTH', { description: 'Register an OpenID Connect credential.' }), accountId: AccountId, oidcToken: OidcToken },
  { additionalProperties: false, title: 'OauthCredentialCreateRequest' },
);

const TRANSPORTS = ['usb', 'nfc', 'ble', 'internal', 'hybrid', 'smart-card', 'cable'] as const;
export const PasskeyAttestation = Type.Object(
  {
    credentialId: b64url('Raw id of the new WebAuthn credential, base64url.', 1024),
    clientDataJson: b64url('`clientDataJSON` of the registration, base64url.'),
    attestationObject: b64url('Attestation object of the registration (CBOR), base64url.', 16384),
    transports: Type.Optional(Type.Array(StringEnum(TRANSPORTS, { description: 'A WebAuthn transport.' }), { maxItems: 7, description: 'Transports the authenticator reported.' })),
  },
  { additionalProperties: false, title: 'PasskeyAttestation', description: 'The result of `navigator.credentials.create()`.' },
);

const PasskeyCreate = Type.Object(
  {
    type: Type.Literal('PASSKEY', { description: 'Register a WebAuthn passkey.' }),
    accountId: AccountId,
    nickname: Type.String({ minLength: 1, maxLength: 100, description: 'Name the user gives the passkey, e.g. "iPhone".' }),
    challenge: b64url('The registration challenge the platform\'s backend issued (base64url); each may be used once.', 1024),
    attestation: PasskeyAttestation,
  },
  { additionalProperties: false, title: 'PasskeyCredentialCreateRequest' },
);

export const CredentialCreate = Discriminated('type', [EmailOtpCreate, OauthCreate, PasskeyCreate], {
  description: 'The credential to register; its fields depend on `type`.',
});
export type CredentialCreate = Static<typeof EmailOtpCreate> | Static<typeof OauthCreate> | Static<typeof PasskeyCreate>;
export type PasskeyCreate = Static<typeof PasskeyCreate>;

export const CredentialChallengeRequest = Type.Object(
  { clientPublicKey: Type.Optional(ClientPublicKey(`PASSKEY: required. ${CLIENT_KEY_TEXT}`)) },
  { additionalProperties: false, title: 'AuthCredentialChallengeRequest' },
);

export const PasskeyAssertion = Type.Object(
  {
    credentialId: b64url('Raw id of the credential used, base64url.', 1024),
    clientDataJson: b64url('`clientDataJSON` of the assertion, base64url.'),
    authenticatorData: b64url('Authenticator data of the assertion, base64url.'),
    signature: b64url('Assertion signature, base64url.', 1024),
    userHandle: Type.Optional(b64url('User handle returned by the authenticator, base64url.', 1024)),
  },
  { additionalProperties: false, title: 'PasskeyAssertion', description: 'The result of `navigator.credentials.get()`.' },
);
export type PasskeyAssertion = Static<typeof PasskeyAssertion>;

const EmailOtpVerify = Type.Object(
  {
    type: Type.Literal('EMAIL_OTP', { description: 'Verify with the emailed code.' }),
    otp: Type.String({ minLength: 1, maxLength: 16, description: 'The code from the email.' }),
    clientPublicKey: ClientPublicKey(CLIENT_KEY_TEXT),
  },
  { additionalProperties: false, title: 'EmailOtpCredentialVerifyRequest' },
);
const OauthVerify = Type.Object(
  { type: Type.Literal('OAUTH', { description: 'Verify with a fresh ID token.' }), oidcToken: OidcToken, clientPublicKey: ClientPublicKey(CLIENT_KEY_TEXT) },
  { additionalProperties: false, title: 'OauthCredentialVerifyRequest' },
);
const PasskeyVerify = Type.Object(
  {
    type: Type.Literal('PASSKEY', { description: 'Verify with a WebAuthn assertion over the challenge from /challenge.' }),
    assertion: PasskeyAssertion,
    clientPublicKey: Type.Optional(ClientPublicKey('Optional: when given, must equal the key sent to /challenge (the session is sealed to that one).')),
  },
  { additionalProperties: false, title: 'PasskeyCredentialVerifyRequest' },
);
export const CredentialVerify = Discriminated('type', [EmailOtpVerify, OauthVerify, PasskeyVerify], {
  description: 'Proof of the credential; its fields depend on `type`, which must be the credential\'s type.',
});
export type CredentialVerify = Static<typeof EmailOtpVerify> | Static<typeof OauthVerify> | Static<typeof PasskeyVerify>;

export const AuthSession = Type.Object(
  {
    id: Type.String({ description: 'Session identifier (`Session:…`).' }),
    accountId: Type.String({ description: 'The embedded wallet account of the session.' }),
    type: AuthMethodTypeSchema,
    nickname: Type.String({ description: 'Nickname of the credential that opened the session.' }),
    createdAt: DateTime('When the session was opened.'),
    updatedAt: DateTime('When the session last changed.'),
    encryptedSessionSigningKey: Type.Optional(
      Type.String({
        description: 'Only in the verify response: the session\'s P-256 private key sealed with HPKE to `clientPublicKey`, base58check(compressed enc ‖ ciphertext).',
      }),
    ),
    expiresAt: DateTime('When the session stops being accepted.'),
  },
  { title: 'AuthSession' },
);
export type AuthSessionView = Static<typeof AuthSession>;

const ChallengeFields = {
  payloadToSign: Type.String({ description: 'The exact text to sign with the session key; sign these bytes as received.' }),
  requestId: Type.String({ description: 'Send it back in the `Request-Id` header of the signed retry; valid once.' }),
  expiresAt: DateTime('The signed retry must arrive before this instant.'),
};
export const SignedRequestChallenge = Type.Object(ChallengeFields, { title: 'SignedRequestChallenge' });
export const AuthSignedRequestChallenge = Type.Object(
  { type: AuthMethodTypeSchema, ...ChallengeFields },
  { title: 'AuthSignedRequestChallenge', description: 'Sign `payloadToSign` with an active session key and repeat the request with the signature headers.' },
);

export const CredentialChallengeResponse = Type.Object(
  {
    ...AuthMethod.properties,
    challenge: Type.Optional(Type.String({ description: 'PASSKEY only: the WebAuthn challenge (base64url) to pass to `navigator.credentials.get()`.' })),
    requestId: Type.Optional(Type.String({ description: 'PASSKEY only: send it as `Request-Id` on verify.' })),
    expiresAt: Type.Optional(DateTime('PASSKEY only: the assertion must be verified before this instant.')),
  },
  { title: 'AuthCredentialChallengeResponse' },
);
export type CredentialChallengeResponse = Static<typeof CredentialChallengeResponse>;

export const AccountQuery = Type.Object({
  accountId: Type.String({ minLength: 1, maxLength: 200, description: 'The embedded wallet account (`InternalAccount:…`).' }),
});

export const SignedRetryHeaders = Type.Object({
  'service-wallet-signature': Type.Optional(
    Type.String({ maxLength: 4096, description: 'Signed retry: signature over `payloadToSign` (base64 DER, or an API-key stamp).' }),
  ),
  'request-id': Type.Optional(Type.String({ maxLength: 100, description: 'Signed retry: the `requestId` of the 202 response.' })),
});

export const PasskeyVerifyHeaders = Type.Object({
  'request-id': Type.Optional(Type.String({ maxLength: 100, description: 'PASSKEY: the `requestId` returned by /challenge.' })),
});

export const ExportRequest = Type.Object(
  { clientPublicKey: ClientPublicKey('Fresh P-256 public key (uncompressed SEC1 hex) the wallet credentials are sealed to.') },
  { additionalProperties: false, title: 'InternalAccountExportRequest' },
);
export const ExportResponse = Type.Object(
  {
    id: Type.String({ description: 'The exported internal account.' }),
    encryptedWalletCredentials: Type.String({
      description: 'The wallet mnemonic sealed to `clientPublicKey` (HPKE), as a JSON export bundle; see docs/embedded-wallets.md.',
    }),
  },
  { title: 'InternalAccountExportResponse' },
);
