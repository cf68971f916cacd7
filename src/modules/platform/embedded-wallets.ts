import { Type, type Static } from 'typebox';
import { ServiceError, type FieldError } from '../../core/errors.js';
import { CurrencyCode } from '../../http/common-schemas.js';

/**
 * Corridor extension of the platform configuration: which currencies get an EMBEDDED_WALLET
 * account for every customer, and how production platforms verify passkeys and OIDC tokens.
 */
const Url = (description: string) => Type.String({ minLength: 1, maxLength: 2048, description });

export const PasskeySettings = Type.Object(
  {
    rpId: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$',
      description: 'WebAuthn relying party id: the domain passkeys are bound to (e.g. `wallet.example.com`).',
    }),
    rpName: Type.String({ minLength: 1, maxLength: 100, description: 'Relying party name shown by authenticators.' }),
    origins: Type.Array(Url('An origin, e.g. `https://wallet.example.com`.'), {
      minItems: 1,
      maxItems: 20,
      description: 'Origins allowed in WebAuthn client data (web pages and app origins of the platform).',
    }),
    requireUserVerification: Type.Optional(
      Type.Boolean({ description: 'Refuse assertions without user verification (PIN, biometrics). Default true.' }),
    ),
  },
  { additionalProperties: false, description: 'Passkey relying party. Required on production platforms before passkeys can be registered.' },
);
export type PasskeySettings = Static<typeof PasskeySettings>;

export const OidcIssuerSettings = Type.Object(
  {
    issuer: Url('Issuer identifier, exactly as in the `iss` claim (e.g. `https://accounts.google.com`).'),
    audiences: Type.Array(Type.String({ minLength: 1, maxLength: 512, description: 'An accepted `aud` value (client id).' }), {
      minItems: 1,
      maxItems: 20,
      description: 'Client ids of the platform at this issuer; a token must be issued to one of them.',
    }),
    jwksUri: Type.Optional(Url('Where the issuer publishes its signing keys. Default: `jwks_uri` from its OpenID discovery document.')),
  },
  { additionalProperties: false },
);
export type OidcIssuerSettings = Static<typeof OidcIssuerSettings>;

const walletFields = {
  currencies: Type.Array(CurrencyCode('A currency in which every customer gets an EMBEDDED_WALLET account.'), {
    maxItems: 50,
    description: 'Currencies in which every customer gets an EMBEDDED_WALLET internal account (each must be a supported currency).',
  }),
  oidcIssuers: Type.Array(OidcIssuerSettings, { maxItems: 20, description: 'Identity providers whose ID tokens OAUTH credentials accept.' }),
};

export const EmbeddedWalletSettings = Type.Object(
  { ...walletFields, passkey: Type.Optional(PasskeySettings) },
  { description: 'Corridor extension: embedded wallet accounts and how their credentials are verified.' },
);
export type EmbeddedWalletSettings = Static<typeof EmbeddedWalletSettings>;

export const EmbeddedWalletSettingsView = Type.Object(
  {
    ...EmbeddedWalletSettings.properties,
    exportSignerPublicKey: Type.Optional(
      Type.String({ description: 'Read-only. P-256 key (uncompressed hex) that signs wallet export bundles: check `enclaveQuorumPublic` against it.' }),
    ),
  },
  { description: 'Corridor extension: embedded wallet accounts and how their credentials are verified.' },
);

export const EmbeddedWalletSettingsUpdate = Type.Object(
  {
    currencies: Type.Optional(walletFields.currencies),
    oidcIssuers: Type.Optional(walletFields.oidcIssuers),
    passkey: Type.Optional(Type.Union([PasskeySettings, Type.Null()], { description: 'New relying party settings; null removes them.' })),
  },
  { additionalProperties: false, description: 'Fields left out keep their values; each field given replaces the old one.' },
);
export type EmbeddedWalletSettingsUpdate = Static<typeof EmbeddedWalletSettingsUpdate>;

export const DEFAULT_EMBEDDED_WALLETS: EmbeddedWalletSettings = { currencies: [], oidcIssuers: [] };

/** The settings after a PATCH: given fields replace, left-out fields stay. */
export function mergeEmbeddedWallets(current: EmbeddedWalletSettings, patch: EmbeddedWalletSettingsUpdate): EmbeddedWalletSettings {
  const passkey = patch.passkey === undefined ? current.passkey : (patch.passkey ?? undefined);
  return {
    currencies: patch.currencies ?? current.currencies,
    oidcIssuers: patch.oidcIssuers ?? current.oidcIssuers,
    ...(passkey && { passkey }),
  };
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** https, or http on a loopback host (local development and tests). */
function checkUrl(errors: FieldError[], field: string, value: string, originOnly = false): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    errors.push({ field, constraint: 'format', message: `${field} must be an absolute URL` });
    return undefined;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.test(url.hostname))) {
    errors.push({ field, constraint: 'format', message: `${field} must use https (http only on a loopback host)` });
  }
  if (originOnly && url.origin !== value.replace(/\/$/, '')) {
    errors.push({ field, constraint: 'format', message: `${field} must be an origin (scheme, host and port only)` });
  }
  return url;
}

function checkPasskey(errors: FieldError[], passkey: PasskeySettings): void {
  const rpId = passkey.rpId.toLowerCase();
  passkey.origins.forEach((origin, i) => {
    const url = checkUrl(errors, `embeddedWallets.passkey.origins.${i}`, origin, true);
    if (url && url.hostname !== rpId && !url.hostname.endsWith(`.${rpId}`)) {
      errors.push({
        field: `embeddedWallets.passkey.origins.${i}`,
        constraint: 'rpId',
        message: `origin ${origin} is not on the relying party domain ${rpId}`,
      });
    }
  });
}

/** Validates the merged settings against the platform's supported currencies. */
export function validateEmbeddedWallets(settings: EmbeddedWalletSettings, supportedCurrencies: string[]): void {
  const errors: FieldError[] = [];
  const supported = new Set(supportedCurrencies);
  const seen = new Set<string>();
  settings.currencies.forEach((code, i) => {
    const field = `embeddedWallets.currencies.${i}`;
    if (!supported.has(code)) errors.push({ field, constraint: 'supported', message: `${code} is not one of the platform's supported currencies` });
    if (seen.has(code)) errors.push({ field, constraint: 'unique', message: `${code} is listed twice` });
    seen.add(code);
  });
  const issuers = new Set<string>();
  settings.oidcIssuers.forEach((entry, i) => {
    const field = `embeddedWallets.oidcIssuers.${i}`;
    checkUrl(errors, `${field}.issuer`, entry.issuer);
    if (entry.jwksUri !== undefined) checkUrl(errors, `${field}.jwksUri`, entry.jwksUri);
    if (issuers.has(entry.issuer)) errors.push({ field: `${field}.issuer`, constraint: 'unique', message: `${entry.issuer} is listed twice` });
    issuers.add(entry.issuer);
  });
  if (settings.passkey) checkPasskey(errors, settings.passkey);
  if (errors.length > 0) throw new ServiceError('INVALID_INPUT', errors[0].message, { details: { errors } });
}
