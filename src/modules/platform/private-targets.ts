import { ServiceError, type FieldError } from '../../core/errors.js';
import { classifyTarget, privateTargetsAllowed, type TargetClass } from '../../core/outbound.js';
import type { Platform } from './repository.js';
import type { PlatformConfigUpdate } from './schemas.js';

/** Which of a production platform's targets the operator lets point at private addresses. */
export interface PrivateTargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_ENDPOINTS */
  webhookEndpoints: boolean;
  /** OIDC_ALLOW_PRIVATE_ISSUERS */
  oidcIssuers: boolean;
}

interface Target {
  field: string;
  url: string;
}

/** The URLs in the patch that Corridor will call and that this platform may not point at private addresses. */
function guardedTargets(platform: Platform, patch: PlatformConfigUpdate, webhookEndpoint: string | null | undefined, policy: PrivateTargetPolicy): Target[] {
  const targets: Target[] = [];
  if (webhookEndpoint && !privateTargetsAllowed(platform, policy.webhookEndpoints)) targets.push({ field: 'webhookEndpoint', url: webhookEndpoint });
  if (!privateTargetsAllowed(platform, policy.oidcIssuers)) {
    patch.embeddedWallets?.oidcIssuers?.forEach((entry, i) => {
      targets.push({ field: `embeddedWallets.oidcIssuers.${i}.issuer`, url: entry.issuer });
      if (entry.jwksUri !== undefined) targets.push({ field: `embeddedWallets.oidcIssuers.${i}.jwksUri`, url: entry.jwksUri });
    });
  }
  return targets;
}

/** A malformed URL counts as public here: the format checks report it. */
function classify(value: string): Promise<TargetClass> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return Promise.resolve('public');
  }
  return classifyTarget(url);
}

/**
 * Refuses targets whose host is or resolves to a private address. A host that does not resolve
 * (yet) passes: every call checks again before it connects.
 */
export async function refusePrivateTargets(
  platform: Platform,
  patch: PlatformConfigUpdate,
  webhookEndpoint: string | null | undefined,
  policy: PrivateTargetPolicy,
): Promise<void> {
  const targets = guardedTargets(platform, patch, webhookEndpoint, policy);
  const verdicts = await Promise.all(targets.map((target) => classify(target.url)));
  const errors: FieldError[] = targets
    .filter((_, i) => verdicts[i] === 'private')
    .map(({ field }) => ({ field, constraint: 'publicAddress', message: `${field} is or resolves to a loopback or private address, which production platforms may not use` }));
  if (errors.length > 0) throw new ServiceError('INVALID_INPUT', errors[0].message, { details: { errors } });
}
