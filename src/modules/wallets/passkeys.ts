import { verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import { decodeClientDataJSON } from '@simplewebauthn/server/helpers';
import type { PlatformRef } from '../../core/context.js';
import { invalidInput, ServiceError } from '../../core/errors.js';
import type { EmbeddedWalletSettings } from '../platform/embedded-wallets.js';
import type { CredentialRow } from './repository.js';
import type { PasskeyAssertion, PasskeyCreate } from './schemas.js';

/** Accepted by sandbox platforms as `assertion.signature` (SPEC §5). */
export const SANDBOX_PASSKEY_SIGNATURE = 'sandbox-valid-passkey-signature';
export const INVALID_PASSKEY_REASON = 'Invalid passkey signature';

type PasskeyPlatform = PlatformRef & { embeddedWallets: EmbeddedWalletSettings };

/** What Corridor keeps of a registered passkey. */
export interface RegisteredPasskey {
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  origin: string;
  rpId: string;
}

interface Expectations {
  origins: string[];
  rpId: string;
  requireUserVerification: boolean;
}

/**
 * Which origins and relying party to expect. Production platforms need `embeddedWallets.passkey`;
 * a sandbox platform without it accepts the origin the browser reported (and its host as rpId).
 */
function registrationExpectations(platform: PasskeyPlatform, clientDataJson: string): Expectations {
  const configured = platform.embeddedWallets.passkey;
  if (configured) {
    return { origins: configured.origins, rpId: configured.rpId, requireUserVerification: configured.requireUserVerification ?? true };
  }
  if (platform.mode === 'PRODUCTION') {
    throw invalidInput('type', 'set embeddedWallets.passkey (relying party id and origins) with PATCH /config before registering passkeys', 'configuration');
  }
  let origin: string;
  try {
    origin = decodeClientDataJSON(clientDataJson).origin;
    return { origins: [origin], rpId: new URL(origin).hostname, requireUserVerification: false };
  } catch {
    throw invalidInput('attestation.clientDataJson', 'clientDataJson is not base64url JSON with an origin', 'format');
  }
}

/** Verifies a registration ("none" or any supported attestation) against the challenge the platform issued. */
export async function verifyRegistration(platform: PasskeyPlatform, input: PasskeyCreate): Promise<RegisteredPasskey> {
  const { attestation } = input;
  const expect = registrationExpectations(platform, attestation.clientDataJson);
  let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    result = await verifyRegistrationResponse({
      response: {
        id: attestation.credentialId,
        rawId: attestation.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: attestation.clientDataJson, attestationObject: attestation.attestationObject, transports: attestation.transports as any },
      },
      expectedChallenge: input.challenge,
      expectedOrigin: expect.origins,
      expectedRPID: expect.rpId,
      requireUserVerification: expect.requireUserVerification,
    });
  } catch (error) {
    throw invalidInput('attestation', `the passkey registration does not verify: ${(error as Error).message}`, 'webauthn');
  }
  if (!result.verified) throw invalidInput('attestation', 'the passkey registration does not verify', 'webauthn');
  const { credential, origin, rpID } = result.registrationInfo;
  return {
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: attestation.transports ?? [],
    origin,
    rpId: rpID ?? expect.rpId,
  };
}

function invalidPasskey(message: string): ServiceError {
  return new ServiceError('UNAUTHORIZED', message, { extra: { reason: INVALID_PASSKEY_REASON } });
}

/** Verifies an assertion over `challenge` made with the stored passkey; returns the authenticator's new counter. */
export async function verifyAssertion(platform: PasskeyPlatform, credential: CredentialRow, assertion: PasskeyAssertion, challenge: string): Promise<number> {
  if (assertion.credentialId !== credential.passkey_credential_id) throw invalidPasskey('the assertion was made with another passkey');
  const configured = platform.embeddedWallets.passkey;
  // Without configuration (sandbox only), the origin and relying party seen at registration.
  const origins = configured?.origins ?? [credential.passkey_origin!];
  const rpId = configured?.rpId ?? credential.passkey_rp_id!;
  try {
    const { verified, authenticationInfo } = await verifyAuthenticationResponse({
      response: {
        id: assertion.credentialId,
        rawId: assertion.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: assertion.clientDataJson,
          authenticatorData: assertion.authenticatorData,
          signature: assertion.signature,
          ...(assertion.userHandle && { userHandle: assertion.userHandle }),
        },
      },
      expectedChallenge: challenge,
      expectedOrigin: origins,
      expectedRPID: rpId,
      credential: {
        id: credential.passkey_credential_id!,
        publicKey: new Uint8Array(Buffer.from(credential.passkey_public_key!, 'base64url')),
        counter: credential.passkey_counter ?? 0,
      },
      requireUserVerification: configured ? (configured.requireUserVerification ?? true) : false,
    });
    if (!verified) throw new Error('the signature does not verify');
    return authenticationInfo.newCounter;
  } catch (error) {
    throw invalidPasskey(`the passkey assertion does not verify: ${(error as Error).message}`);
  }
}
