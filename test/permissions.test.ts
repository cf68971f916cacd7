// Token permissions across the whole HTTP API, driven by the app's own OpenAPI document: every
// platform-authenticated operation is called with a token holding only VIEW, only TRANSACT and
// only MANAGE. A token without the permission the operation needs gets 403 PERMISSION_DENIED
// before anything else is looked at; a token with it gets past authorization (any other answer:
// the made-up ids and empty bodies are refused later, as 400 or 404).
//
// What each operation needs is written out here from docs/api/platform.md ("Permissions"), not
// read from the routes: TRANSACT moves money, VIEW reads (and estimates a fee), MANAGE changes
// everything else. A new operation is covered at once by the rule of its method.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX } from '../src/http/app.js';
import { basicAuth, startTestApp, type TestApp } from './support/app.js';

type Permission = 'VIEW' | 'TRANSACT' | 'MANAGE';

/** Operations that move money (docs/api/platform.md). */
const TRANSACT = new Set([
  'POST /quotes',
  'POST /quotes/{quoteId}/execute',
  'POST /transfer-in',
  'POST /transfer-out',
  'POST /transactions/{transactionId}/approve',
  'POST /transactions/{transactionId}/reject',
  'POST /agents/{agentId}/actions/{actionId}/approve',
  'POST /agents/{agentId}/actions/{actionId}/reject',
  'POST /sandbox/internal-accounts/{accountId}/fund',
  'POST /sandbox/send',
  'POST /sandbox/uma/receive',
  'POST /sandbox/clock/advance',
]);
/** Writes that only read: an estimate reserves nothing. */
const VIEW_WRITES = new Set(['POST /crypto/estimate-withdrawal-fee']);

function needed(key: string): Permission {
  if (TRANSACT.has(key)) return 'TRANSACT';
  if (key.startsWith('GET ') || VIEW_WRITES.has(key)) return 'VIEW';
  return 'MANAGE';
}

const grants = (held: Permission, need: Permission) => held === need || need === 'VIEW';

let t: TestApp;
let operations: Array<{ key: string; method: string; path: string }>;
/** Each token's Authorization header. */
const tokens = {} as Record<Permission, string>;

beforeAll(async () => {
  t = await startTestApp();
  const doc = (await t.anonymous.get('/openapi.json')).body;
  operations = [];
  for (const [fullPath, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const security: any[] = op.security ?? doc.security ?? [];
      if (!security.some((s) => 'BasicAuth' in s)) continue;
      const path = fullPath.slice(API_PREFIX.length);
      operations.push({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'Unknown:1') });
    }
  }
  const { api } = await t.createPlatform();
  for (const permission of ['VIEW', 'TRANSACT', 'MANAGE'] as const) {
    const created = await api.post('/tokens', { name: `only ${permission}`, permissions: [permission] });
    expect(created.status).toBe(201);
    tokens[permission] = basicAuth({ clientId: created.body.clientId, clientSecret: created.body.clientSecret });
  }
});

afterAll(async () => {
  await t?.close();
});

describe('token permissions', () => {
  it('the listed money-moving operations all exist', () => {
    const keys = new Set(operations.map((o) => o.key));
    expect([...TRANSACT, ...VIEW_WRITES].filter((key) => !keys.has(key))).toEqual([]);
    expect(operations.length).toBeGreaterThan(50);
  });

  it('each operation refuses a token without the permission it needs, and lets one with it through', async () => {
    const wrong: string[] = [];
    for (const op of operations) {
      for (const held of ['VIEW', 'TRANSACT', 'MANAGE'] as const) {
        // Sent as is (not through the test client, which checks answers against the reference).
        const answer = await t.corridor.app.inject({
          method: op.method as 'GET',
          url: `${API_PREFIX}${op.path}`,
          headers: { authorization: tokens[held] },
          ...(op.method !== 'GET' && op.method !== 'DELETE' && { payload: {} }),
        });
        const code = answer.headers['content-type']?.toString().includes('json') ? answer.json()?.code : undefined;
        const denied = answer.statusCode === 403 && code === 'PERMISSION_DENIED';
        if (denied === grants(held, needed(op.key))) wrong.push(`${op.key} with ${held}: ${answer.statusCode} ${code ?? ''}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
