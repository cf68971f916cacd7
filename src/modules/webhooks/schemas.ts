import { Type, type Static } from 'typebox';
import { DateTime, StringEnum } from '../../http/common-schemas.js';

export const SigningKeyView = Type.Object(
  {
    publicKey: Type.String({ description: 'PEM-encoded SubjectPublicKeyInfo of the P-256 key that signs this platform\'s webhooks.' }),
    algorithm: StringEnum(['ECDSA_P256_SHA256'] as const, { description: 'Signature algorithm: ECDSA on curve P-256 over the SHA-256 digest of the raw request body.' }),
    signatureEncoding: StringEnum(['BASE64_DER'] as const, { description: 'How the signature header is encoded: base64 of the DER (ASN.1) ECDSA signature.' }),
    signatureHeader: Type.String({ description: 'The request header that carries the signature.' }),
    createdAt: DateTime('When the key was created.'),
  },
  { title: 'WebhookSigningKey', description: 'The public half of the key Corridor signs this platform\'s webhooks with.' },
);
export type SigningKeyView = Static<typeof SigningKeyView>;

export const TestWebhookResult = Type.Object(
  {
    url: Type.String({ format: 'uri', description: 'The endpoint the test webhook was posted to.' }),
    response_status: Type.Integer({ description: 'HTTP status the endpoint answered with.' }),
    response_body: Type.Optional(Type.String({ description: 'What the endpoint answered, as text (first 64 KiB).' })),
  },
  { title: 'TestWebhookResponse', description: 'Result of sending a TEST webhook to the configured endpoint.' },
);
export type TestWebhookResult = Static<typeof TestWebhookResult>;
