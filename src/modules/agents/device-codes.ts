/**
 * Device codes connect agent software: the platform hands the code to the agent, the agent
 * redeems it once (no other authentication) for its access token. Codes carry 80 random bits,
 * are stored only as SHA-256, expire after 24 hours of the platform clock, and failed lookups
 * count against the caller's address like failed logins.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { PlatformRef } from '../../core/context.js';
import { addressKey, createFailureLimiter } from '../../core/failure-limiter.js';
import { ServiceError } from '../../core/errors.js';
import { sha256Hex } from '../../core/secrets.js';
import type { Database, Trx } from '../../db/database.js';
import { transact } from '../../db/transact.js';
import type { PlatformService } from '../platform/service.js';
import { newAccessToken } from './access-tokens.js';
import * as repo from './repository.js';
import type { AgentDeviceCodeView, DeviceCodeRedeemView } from './schemas.js';

export const DEVICE_CODE_LIFETIME_MS = 24 * 3600_000;
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `AGT-XXXX-XXXX-XXXX-XXXX`: 16 Crockford base32 characters (80 bits). */
function newCode(): string {
  const bytes = randomBytes(16);
  const chars = [...bytes].map((b) => ALPHABET[b & 31]).join('');
  return `AGT-${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}-${chars.slice(12, 16)}`;
}

/** Codes are compared case-insensitively (people retype them). */
const hashOf = (code: string) => sha256Hex(code.trim().toUpperCase());

export interface DeviceCodeDeps {
  database: Database;
  clock: Clock;
  platforms: Pick<PlatformService, 'get'>;
}

export function createDeviceCodes(deps: DeviceCodeDeps) {
  const { database, clock } = deps;
  // The same per-address limit as HTTP authentication (src/http/auth.ts); codes are the secret.
  const limiter = createFailureLimiter({ nowMs: () => clock.realNowMs(), what: 'device code attempts' });

  /** A new code for the agent, in the caller's transaction; earlier unredeemed codes stop working. */
  async function issue(trx: Trx, platform: PlatformRef, agentId: string): Promise<AgentDeviceCodeView> {
    const now = clock.now(platform);
    const code = newCode();
    const expiresAt = new Date(now.getTime() + DEVICE_CODE_LIFETIME_MS);
    await repo.deleteUnredeemedCodes(trx, agentId);
    await repo.insertDeviceCode(trx, { code_hash: hashOf(code), platform_id: platform.id, agent_id: agentId, expires_at: expiresAt, redeemed_at: null, created_at: now });
    return { code, agentId, expiresAt: expiresAt.toISOString(), redeemed: false };
  }

  /**
   * Runs `work`, counting a client error against the caller's address. The attempt counts before
   * the lookup and is given back unless it fails so, or parallel guesses would all pass the check.
   */
  async function guarded<T>(ip: string, work: () => Promise<T>): Promise<T> {
    const release = limiter.reserve(addressKey(ip));
    try {
      const result = await work();
      release();
      return result;
    } catch (error) {
      if (!(error instanceof ServiceError && error.status < 500)) release();
      throw error;
    }
  }

  async function find(code: string): Promise<repo.DeviceCodeRow> {
    const row = await repo.findDeviceCode(database.db, hashOf(code));
    if (!row) throw new ServiceError('NOT_FOUND', 'device code not found');
    return row;
  }

  /** A code of the calling platform's agents; another platform's is as unknown as a wrong guess. */
  async function status(platform: PlatformRef, code: string, ip: string) {
    return guarded(ip, async () => {
      const row = await find(code);
      if (row.platform_id !== platform.id) throw new ServiceError('NOT_FOUND', 'device code not found');
      return { code, redeemed: row.redeemed_at !== null, expiresAt: row.expires_at.toISOString() };
    });
  }

  async function redeemOnce(code: string): Promise<DeviceCodeRedeemView> {
    const found = await find(code);
    const platform = await deps.platforms.get(found.platform_id);
    if (!platform) throw new ServiceError('NOT_FOUND', 'device code not found');
    const token = newAccessToken();
    return transact(database.db, async (trx) => {
      // The agent's row first, then the code's: the order re-issuing and deleting lock them in.
      const agent = await repo.findAgent(trx, platform.id, found.agent_id, true);
      const row = agent && (await repo.findDeviceCode(trx, found.code_hash, true));
      if (!agent || !row) throw new ServiceError('NOT_FOUND', 'device code not found');
      if (row.redeemed_at) throw new ServiceError('DEVICE_CODE_ALREADY_REDEEMED', 'this device code was already redeemed; ask the platform for a new agent or code');
      const now = clock.now(platform);
      if (row.expires_at <= now) {
        throw new ServiceError('DEVICE_CODE_EXPIRED', `this device code expired at ${row.expires_at.toISOString()}; ask the platform for a new one`);
      }
      await repo.markRedeemed(trx, row.code_hash, now);
      if (!(await repo.connectAgent(trx, agent.id, token.stored, now))) {
        throw new ServiceError('AGENT_ALREADY_CONNECTED', 'this agent is already connected');
      }
      return { agentId: agent.id, agentName: agent.name, accessToken: token.accessToken, policy: agent.policy };
    });
  }

  return {
    issue,
    /** GET /agents/device-codes/{code}/status (no authentication). */
    status,
    /** POST /agents/device-codes/{code}/redeem (no authentication): the access token, once. */
    redeem: (code: string, ip: string) => guarded(ip, () => redeemOnce(code)),
  };
}

export type DeviceCodes = ReturnType<typeof createDeviceCodes>;
