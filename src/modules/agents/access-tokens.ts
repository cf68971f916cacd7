/**
 * Agent access tokens: `agt_<token id>_<secret>`. The id finds the agent; only a salted SHA-256
 * of the secret is stored, compared in constant time. A verified agent is trusted for one second
 * without a database read (like platform API tokens); pausing, deleting or changing an agent
 * evicts it from this process at once, other processes follow within the second.
 */
import type { Clock } from '../../core/clock.js';
import { ServiceError } from '../../core/errors.js';
import { hashSecret, randomSecret, safeEqual } from '../../core/secrets.js';
import type { Database } from '../../db/database.js';
import type { AgentAuthenticator } from '../../http/auth.js';
import { findAgent, findAgentByTokenId, type AgentRow } from './repository.js';
import type { AgentPermission } from './policy.js';

const TOKEN_PATTERN = /^agt_([0-9a-f]{16})_([0-9a-f]{48})$/;

/** The id part of an access token (not secret), or undefined when it is not one. */
export function agentTokenIdOf(accessToken: string): string | undefined {
  return TOKEN_PATTERN.exec(accessToken)?.[1];
}
const CACHE_TTL_MS = 1000;
const CACHE_MAX = 10_000;

export interface NewAccessToken {
  accessToken: string;
  stored: { id: string; salt: string; hash: string };
}

export function newAccessToken(): NewAccessToken {
  const id = randomSecret(8);
  const secret = randomSecret(24);
  const salt = randomSecret(16);
  return { accessToken: `agt_${id}_${secret}`, stored: { id, salt, hash: hashSecret(secret, salt) } };
}

interface Entry {
  row: AgentRow;
  expiresAtMs: number;
}

export function createAgentAuthenticator(deps: { database: Database; clock: Clock }) {
  const byTokenId = new Map<string, Entry>();
  const tokenIdOfAgent = new Map<string, string>();

  function remember(row: AgentRow): Entry {
    if (byTokenId.size >= CACHE_MAX) {
      byTokenId.clear();
      tokenIdOfAgent.clear();
    }
    const entry = { row, expiresAtMs: deps.clock.realNowMs() + CACHE_TTL_MS };
    byTokenId.set(row.token_id!, entry);
    tokenIdOfAgent.set(row.id, row.token_id!);
    return entry;
  }

  async function load(tokenId: string): Promise<AgentRow | undefined> {
    const cached = byTokenId.get(tokenId);
    if (cached && cached.expiresAtMs > deps.clock.realNowMs()) return cached.row;
    const row = await findAgentByTokenId(deps.database.db, tokenId);
    if (!row) {
      byTokenId.delete(tokenId);
      return undefined;
    }
    return remember(row).row;
  }

  const authenticator: AgentAuthenticator = {
    async authenticate(accessToken) {
      const match = TOKEN_PATTERN.exec(accessToken);
      if (!match) return undefined;
      const row = await load(match[1]);
      if (!row?.token_hash || !row.token_salt || !safeEqual(hashSecret(match[2], row.token_salt), row.token_hash)) return undefined;
      return { platformId: row.platform_id, agentId: row.id, customerId: row.customer_id, paused: row.is_paused };
    },
  };

  /** The agent as last verified by this process (the request's own authentication put it here). */
  async function current(agentId: string): Promise<AgentRow | undefined> {
    const tokenId = tokenIdOfAgent.get(agentId);
    return tokenId ? load(tokenId) : undefined;
  }

  return {
    authenticator,
    /** Throws 403 PERMISSION_DENIED unless the calling agent's policy grants one of `needed`. */
    async requirePermission(platformId: string, agentId: string, needed: AgentPermission[]): Promise<void> {
      const row = (await current(agentId)) ?? (await findAgent(deps.database.db, platformId, agentId));
      if (!row) throw new ServiceError('UNAUTHORIZED', 'invalid or revoked agent access token');
      if (needed.some((p) => row.policy.permissions.includes(p))) return;
      throw new ServiceError('PERMISSION_DENIED', `the agent's policy does not grant ${needed.join(' or ')}`, {
        details: { requiredPermission: needed.length === 1 ? needed[0] : needed },
      });
    },
    /** Forgets what this process knows about the agent (after a change). */
    evict(agentId: string): void {
      const tokenId = tokenIdOfAgent.get(agentId);
      if (tokenId) byTokenId.delete(tokenId);
      tokenIdOfAgent.delete(agentId);
    },
  };
}

export type AgentAuthentication = ReturnType<typeof createAgentAuthenticator>;
