// Tenant isolation across the whole HTTP API, driven by the app's own OpenAPI document.
//
// Platform A gets one object of every kind the API can reach (customers and their internal
// accounts, a deleted customer, a business with a beneficial owner, external accounts, quotes
// pending / executed / real-time funded / paid from an embedded wallet, their transactions, an
// incoming payment waiting for approval, tokens, an invitation, a document and a verification,
// an agent with a pending action, wallet credentials and sessions, signed-retry challenges, a bulk
// import job, UMA and external-account lookups). Platform B then:
//   - calls every platform-authenticated operation with a path parameter with A's real ids (GET,
//     PATCH, PUT, DELETE, and POST with a body that would pass for A; with the sandbox's accepted
//     wallet signature and A's own Request-Ids where an operation is signed);
//   - reads every list and id-taking query, bare and with each of A's values as filter (and with
//     A's page cursors);
//   - sends the very same GETs as A at the same moment (reads are coalesced: src/http/coalescing.ts);
//   - creates things naming A's objects in the body (and reuses A's Idempotency-Key).
// B must get a 4xx (404 with the resource's *_NOT_FOUND code, 403 where the API defines it) and
// never see one of A's ids. Afterwards A's objects, lists, balances and events must be unchanged,
// and A itself must get through the very same calls (a different answer than B's), so every id
// and body is real and each refusal came from the platform boundary, not from a bad request.
//
// New routes are covered automatically. A path parameter without an entry in pathIds, a query
// parameter in neither queryValues nor NOT_IDENTIFYING, a write without path parameters in neither
// REFERENCE_PROBES nor NO_REFERENCES (these tables are in test/support/isolation-routes.ts), or a
// new non-platform-authenticated operation fails the first test until someone classifies it; a
// body B's probe gets refused for (so that A is too) fails the last one.
//
// Not probed (not authenticated as a platform, so there is no "platform B" to be):
//   - the agent API, `/agents/me/*` (OpenAPI security AgentAuth: a bearer token scoped to one
//     agent of one customer), and `/agents/device-codes/{code}/redeem` (no authentication; the
//     code is the capability). Listed in NOT_PLATFORM_AUTH. The
//     embedded-wallet routes (`/auth/credentials`, `/auth/sessions`, `/internal-accounts/{id}/export`)
//     are platform-authenticated (BasicAuth) and are probed.
//   - routes outside the API and outside /openapi.json: /healthz, /metrics, /docs, /openapi.json
//     (no tenant data) and the UMA protocol endpoints for other providers (/.well-known/lnurlpubkey,
//     /.well-known/lnurlp/{user}, /uma/payreq/{user}, /uma/settle), which pick the platform by its
//     Host header and are public by design. B does reach A's lnurlp endpoint through
//     GET /receiver/uma/{A's customer's address} (the app listens for that), and B's answer is
//     checked for A's ids.
//
// By design (docs/api/invitations.md, docs/uma.md) two answers to B are 2xx: any platform may read
// an invitation by its code, and a UMA address is a public receiving address any provider may look
// up. Those are listed in BY_DESIGN; B's answers are still checked for every other secret of A's.
//
// ISOLATION_LOG=1 prints every request and answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_PREFIX } from '../src/http/app.js';
import { basicAuth, type TestApp, type TestPlatform } from './support/app.js';
import { BY_DESIGN, NO_REFERENCES, NOT_IDENTIFYING, NOT_PLATFORM_AUTH, OTHER_REFUSALS, ownPathIds, ownQueryValues, PATH_OP_BODIES, PATH_OP_HEADERS, PATH_OP_QUERIES, pathIds, queryValues, REFERENCE_PROBES, type Probe } from './support/isolation-routes.js';
import { balancesOfA, MARK, ok, type RequestSpec, type WorldA, type WorldB, startWorlds } from './support/isolation-world.js';
import { multipart, pdfFile } from './support/verification.js';
import type { WebhookReceiver } from './support/webhook-receiver.js';

let t: TestApp;
let receiver: WebhookReceiver;
let doc: any;
let A: WorldA;
let B: WorldB;
/** Strings that are A's and must never reach B: ids, client ids, codes, UMA addresses, the marker. */
let secrets: string[] = [];
/** A's view of everything, before B's probes. */
let snapshotBefore: Map<string, unknown>;
let balancesBefore: Record<string, unknown>;
let eventsOfABefore: string[];

/** The events (webhooks) a platform has, as type and data. */
async function eventsOf(platformId: string): Promise<string[]> {
  const rows = await t.corridor.database.db.selectFrom('events').select(['id', 'type', 'data']).where('platform_id', '=', platformId).orderBy('id').execute();
  return rows.map((r) => `${r.id} ${r.type} ${JSON.stringify(r.data)}`);
}

// ---------------------------------------------------------------------------------------------
// Requests (sent with app.inject directly, so that an unexpected 2xx is reported, not thrown by
// the reference check of the shared client)

interface Sent {
  side: 'A' | 'B';
  method: string;
  path: string;
  spec: RequestSpec;
  status: number;
  body: any;
  raw: string;
  /** Everything B put in the request: A's values in it are known to B and may be echoed. */
  requestText: string;
}

async function send(tp: TestPlatform, side: 'A' | 'B', method: string, path: string, spec: RequestSpec = {}): Promise<Sent> {
  const headers: Record<string, string> = { authorization: basicAuth(tp.credentials), ...spec.headers };
  let payload: string | Buffer | undefined;
  const form = (spec.body as any)?.multipart as Record<string, string> | undefined;
  if (form) {
    const built = multipart(form, [pdfFile()]);
    payload = built.payload;
    headers['content-type'] = built.contentType;
  } else if (spec.body !== undefined) {
    payload = JSON.stringify(spec.body);
    headers['content-type'] = 'application/json';
  }
  const response = await t.corridor.app.inject({ method: method as any, url: `${API_PREFIX}${path}`, query: spec.query, headers, payload });
  let body: any = response.body;
  try {
    body = JSON.parse(response.body);
  } catch {
    /* not JSON */
  }
  const raw = `${response.body}\n${JSON.stringify(response.headers)}`;
  const requestText = `${decodeURIComponent(path)}?${JSON.stringify(spec.query ?? {})} ${JSON.stringify(spec.body ?? {})} ${JSON.stringify(spec.headers ?? {})}`;
  const sent = { side, method, path, spec, status: response.statusCode, body, raw, requestText };
  if (process.env.ISOLATION_LOG) console.log(describeSent(sent));
  return sent;
}

function describeSent(s: Sent): string {
  const q = s.spec.query && Object.keys(s.spec.query).length ? `?${new URLSearchParams(s.spec.query)}` : '';
  const body = s.spec.body === undefined ? '' : ` ${JSON.stringify(s.spec.body)}`;
  return `${s.side}: ${s.method} ${s.path}${q}${body} → ${s.status} ${typeof s.body === 'object' ? JSON.stringify(s.body).slice(0, 300) : String(s.body).slice(0, 200)}`;
}

/** A's strings in B's answer that B did not send itself (and that the operation may not show by design). */
function leaked(s: Sent, mayShow: string[] = []): string[] {
  return secrets.filter((secret) => s.raw.includes(secret) && !s.requestText.includes(secret) && !mayShow.includes(secret));
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI document

interface Operation {
  key: string;
  method: string;
  /** Without the API prefix. */
  path: string;
  pathParams: string[];
  queryParams: Array<{ name: string; required: boolean }>;
  isList: boolean;
  basicAuth: boolean;
}

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [fullPath, item] of Object.entries<any>(doc.paths)) {
    expect(fullPath.startsWith(`${API_PREFIX}/`), fullPath).toBe(true);
    const path = fullPath.slice(API_PREFIX.length);
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const security: any[] = op.security ?? doc.security ?? [];
      const params: any[] = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      let ok = op.responses?.['200']?.content?.['application/json']?.schema;
      if (ok?.$ref) ok = doc.components.schemas[ok.$ref.split('/').pop()];
      out.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: !!p.required })),
        isList: method === 'get' && !!ok?.properties?.data,
        basicAuth: security.some((s) => 'BasicAuth' in s),
      });
    }
  }
  return out;
}

/** Every way of filling the path's parameters with A's ids, alone or next to B's own ids. */
function pathVariants(op: Operation): Array<{ path: string; allA: boolean }> {
  const ids = pathIds(A);
  const own = ownPathIds(B);
  let combos: Array<Array<{ value: string; ofA: boolean }>> = [[]];
  for (const name of op.pathParams) {
    const choices = [...(ids[name] ?? []).map((value) => ({ value, ofA: true })), ...(own[name] && op.pathParams.length > 1 ? [{ value: own[name]!, ofA: false }] : [])];
    combos = combos.flatMap((combo) => choices.map((c) => [...combo, c]));
  }
  return combos
    .filter((combo) => combo.some((c) => c.ofA))
    .map((combo) => {
      let i = 0;
      return { path: op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(combo[i++]!.value)), allA: combo.every((c) => c.ofA) };
    });
}

function pathOpSpec(op: Operation, own: { customer: string }): RequestSpec {
  const body = PATH_OP_BODIES[op.key]?.(A) ?? (['POST', 'PATCH', 'PUT'].includes(op.method) ? {} : undefined);
  return { body, query: PATH_OP_QUERIES[op.key]?.(own), headers: PATH_OP_HEADERS[op.key]?.(A) };
}

/** Operations with a write method first read, then change, then delete (the customer last). */
function replayOrder(op: Operation): number {
  const rank: Record<string, number> = { GET: 0, PATCH: 1, PUT: 2, POST: 3, DELETE: 4 };
  return rank[op.method]! * 10 + (op.key === 'DELETE /customers/{customerId}' ? 5 : op.key.startsWith('DELETE /auth/credentials') ? 2 : 0);
}

// ---------------------------------------------------------------------------------------------
// A's view of its own objects

async function snapshotOfA(ops: Operation[]): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const values = queryValues(A);
  for (const op of ops.filter((o) => o.basicAuth && o.method === 'GET')) {
    if (op.pathParams.length > 0) {
      if (BY_DESIGN[op.key] || PATH_OP_QUERIES[op.key]) continue; // lookups: each call makes a new lookup
      for (const v of pathVariants(op).filter((v) => v.allA)) {
        const r = await send(A.tp, 'A', 'GET', v.path);
        if (r.status === 200) out.set(v.path, r.body);
      }
    } else {
      const query: Record<string, string> = {};
      for (const q of op.queryParams) {
        if (q.name === 'limit') query.limit = '100';
        if (q.name === 'isIncludingDeleted') query.isIncludingDeleted = 'true';
        if (q.required) query[q.name] = values[q.name]![0]!;
      }
      const r = await send(A.tp, 'A', 'GET', op.path, { query });
      if (r.status === 200) out.set(`${op.path}?${new URLSearchParams(query)}`, r.body);
    }
  }
  return out;
}

/** Reads served from another request's run so far (all routes). */
async function sharedReads(): Promise<number> {
  const metrics = String((await t.anonymous.get('/metrics')).body);
  return metrics
    .split('\n')
    .filter((line) => line.startsWith('corridor_http_shared_reads_total{'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

const ID_PATTERN = /\b[A-Z][A-Za-z]+:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;

function idsIn(value: unknown): Set<string> {
  return new Set(JSON.stringify(value).match(ID_PATTERN) ?? []);
}

// ---------------------------------------------------------------------------------------------
// Setup

beforeAll(async () => {
  ({ t, receiver, doc, A, B } = await startWorlds());

  const ops = operations();
  snapshotBefore = await snapshotOfA(ops);
  balancesBefore = await balancesOfA(A);
  eventsOfABefore = await eventsOf(A.platformId);
  // A's secrets: every id in A's view of its objects (no id is shared between platforms).
  const aIds = new Set<string>();
  for (const body of snapshotBefore.values()) for (const id of idsIn(body)) aIds.add(id);
  for (const [key, value] of Object.entries(A)) if (key !== 'tp' && typeof value === 'string' && value) aIds.add(value);
  secrets = [...aIds];
  secrets.push(MARK);
  expect(secrets).toEqual(expect.arrayContaining([A.platformId, A.customer, A.usd, A.txPending, A.invitation, A.tokenClientId, A.customerUma]));
});

afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

// ---------------------------------------------------------------------------------------------
// The checks

/** B's answers to the path probes, by operation key, for the sanity check at the end. */
const pathAnswers = new Map<string, Array<{ path: string; spec: RequestSpec; b: Sent }>>();
const queryAnswers: Array<{ op: Operation; param: string; aQuery: Record<string, string>; b: Sent; list: boolean; cursor: boolean }> = [];
const referenceAnswers: Array<{ key: string; probe: Probe; b: Sent }> = [];

describe('tenant isolation', () => {
  it('every operation of the OpenAPI document is classified', () => {
    const ops = operations();
    const problems: string[] = [];
    const ids = pathIds(A);
    const values = queryValues(A);
    for (const op of ops) {
      if (!op.basicAuth) {
        if (!NOT_PLATFORM_AUTH.has(op.key)) problems.push(`${op.key}: not platform-authenticated and not listed in NOT_PLATFORM_AUTH`);
        continue;
      }
      for (const name of op.pathParams) if (!ids[name]?.length) problems.push(`${op.key}: no id of A's for path parameter {${name}}`);
      for (const q of op.queryParams) {
        if (!NOT_IDENTIFYING.has(q.name) && q.name !== 'cursor' && !values[q.name]?.length) problems.push(`${op.key}: query parameter ${q.name} is neither in queryValues nor in NOT_IDENTIFYING`);
      }
      if (op.pathParams.length === 0 && op.method !== 'GET' && !REFERENCE_PROBES[op.key] && !NO_REFERENCES[op.key]) problems.push(`${op.key}: a write without path parameters in neither REFERENCE_PROBES nor NO_REFERENCES`);
    }
    for (const key of [...Object.keys(PATH_OP_BODIES), ...Object.keys(PATH_OP_QUERIES), ...Object.keys(PATH_OP_HEADERS), ...Object.keys(OTHER_REFUSALS), ...Object.keys(BY_DESIGN), ...Object.keys(REFERENCE_PROBES), ...Object.keys(NO_REFERENCES), ...NOT_PLATFORM_AUTH]) {
      if (!ops.some((o) => o.key === key)) problems.push(`${key}: listed here but not in /openapi.json`);
    }
    expect(problems).toEqual([]);
  });

  it("B gets a 4xx and none of A's data from every operation with a path parameter", async () => {
    const failures: string[] = [];
    let probes = 0;
    for (const op of operations().filter((o) => o.basicAuth && o.pathParams.length > 0)) {
      const answers: Array<{ path: string; spec: RequestSpec; b: Sent }> = [];
      for (const v of pathVariants(op)) {
        const spec = pathOpSpec(op, { customer: B.customer });
        const b = await send(B.tp, 'B', op.method, v.path, spec);
        probes++;
        if (v.allA) answers.push({ path: v.path, spec, b });
        const design = BY_DESIGN[op.key];
        const leaks = leaked(b, design?.mayShow(A) ?? []);
        if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
        if (design) {
          if (b.status >= 500) failures.push(`5xx ${describeSent(b)}`);
          continue;
        }
        if (b.status < 400 || b.status >= 500) failures.push(`NOT REFUSED ${describeSent(b)}`);
        else if (b.status === 404 && !/NOT_FOUND$/.test(b.body?.code)) failures.push(`404 without a *_NOT_FOUND code: ${describeSent(b)}`);
        else if (b.status !== 404 && b.status !== 403 && OTHER_REFUSALS[op.key]?.status !== b.status) failures.push(`neither 404 nor 403: ${describeSent(b)}`);
      }
      pathAnswers.set(op.key, answers);
    }
    expect(probes).toBeGreaterThan(40);
    expect(failures).toEqual([]);
  });

  it("B's lists, and queries naming A's objects, show nothing of A's", async () => {
    const failures: string[] = [];
    const values = queryValues(A);
    const own = ownQueryValues(B);
    for (const op of operations().filter((o) => o.basicAuth && o.method === 'GET' && o.pathParams.length === 0)) {
      const base = (side: 'A' | 'B', skip?: string): Record<string, string> => {
        const query: Record<string, string> = {};
        for (const q of op.queryParams) {
          if (q.name === 'limit') query.limit = '100';
          if (q.name === 'isIncludingDeleted') query.isIncludingDeleted = 'true';
          if (q.required && q.name !== skip) query[q.name] = side === 'B' ? own[q.name]! : values[q.name]![0]!;
        }
        return query;
      };
      // Unfiltered (B's own required values).
      if (op.queryParams.every((q) => !q.required || own[q.name])) {
        const b = await send(B.tp, 'B', 'GET', op.path, { query: base('B') });
        const leaks = leaked(b);
        if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
      }
      for (const q of op.queryParams) {
        const tries: Array<{ value: string; cursor: boolean }> = (values[q.name] ?? []).map((value) => ({ value, cursor: false }));
        if (q.name === 'cursor') {
          const first = await send(A.tp, 'A', 'GET', op.path, { query: { ...base('A'), limit: '1' } });
          if (first.body?.nextCursor) tries.push({ value: first.body.nextCursor, cursor: true });
        }
        for (const { value, cursor } of tries) {
          const query = { ...base('B', q.name), [q.name]: value };
          const b = await send(B.tp, 'B', 'GET', op.path, { query });
          queryAnswers.push({ op, param: q.name, aQuery: { ...base('A', q.name), [q.name]: value }, b, list: op.isList, cursor });
          // A's cursor is not A's data: B may see its own page, but nothing of A's.
          const leaks = leaked(b);
          if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
          if (cursor || b.status >= 400 && b.status < 500) continue;
          if (b.status >= 500) failures.push(`5xx ${describeSent(b)}`);
          else if (!op.isList) failures.push(`ANSWERED ${describeSent(b)}`);
          else if (!Array.isArray(b.body?.data) || b.body.data.length > 0) failures.push(`NOT EMPTY ${describeSent(b)}`);
        }
      }
    }
    expect(queryAnswers.length).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });

  it('identical GETs of A and B at the same moment do not share answers', async () => {
    // GETs are coalesced (src/http/coalescing.ts): identical reads in flight share one run. A and
    // B send the very same URLs together, several times over; B must still get its own answers.
    const failures: string[] = [];
    const values = queryValues(A);
    const urls: Array<{ path: string; query: Record<string, string>; single: boolean }> = [];
    for (const op of operations().filter((o) => o.basicAuth && o.method === 'GET' && !BY_DESIGN[o.key] && !PATH_OP_QUERIES[o.key])) {
      if (op.pathParams.length > 0) {
        for (const v of pathVariants(op).filter((v) => v.allA)) urls.push({ path: v.path, query: {}, single: true });
      } else {
        const query: Record<string, string> = {};
        for (const q of op.queryParams) {
          if (q.name === 'limit') query.limit = '100';
          if (q.required) query[q.name] = values[q.name]![0]!;
        }
        urls.push({ path: op.path, query, single: false });
      }
    }
    let aAnswered = 0;
    const sharedBefore = await sharedReads();
    for (const { path, query, single } of urls) {
      // Both orders: the request that starts a shared run is the one whose answer the others get.
      for (const first of [A, B] as Array<WorldA | WorldB>) {
        const sides = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? first : first === A ? B : A));
        const answers = await Promise.all(sides.map((w) => send(w.tp, w === A ? 'A' : 'B', 'GET', path, { query })));
        for (const r of answers) {
          if (r.side === 'A') {
            if (r.status === 200) aAnswered++;
            continue;
          }
          const leaks = leaked(r);
          if (leaks.length > 0) failures.push(`LEAK ${describeSent(r)}\n    shows A's ${leaks.join(', ')}`);
          if (single && (r.status < 400 || r.status >= 500)) failures.push(`NOT REFUSED ${describeSent(r)}`);
        }
      }
    }
    // The reads did overlap: some were served from another request's run.
    expect(await sharedReads()).toBeGreaterThan(sharedBefore);
    expect(aAnswered).toBeGreaterThan(urls.length);
    expect(failures).toEqual([]);
  });

  it("B cannot name A's objects in what it creates", async () => {
    const failures: string[] = [];
    for (const [key, probes] of Object.entries(REFERENCE_PROBES)) {
      const [method, path] = key.split(' ') as [string, string];
      for (const probe of probes) {
        const spec = probe.b(A, B);
        const b = await send(B.tp, 'B', method, spec.path ?? path, spec);
        referenceAnswers.push({ key, probe, b });
        if (probe.undo && b.status < 300) ok(await probe.undo(b.body, B), 200, `undo ${key}`);
        const leaks = leaked(b);
        if (leaks.length > 0) failures.push(`LEAK ${describeSent(b)}\n    shows A's ${leaks.join(', ')}`);
        if (probe.expect !== undefined) {
          if (!probe.expect.includes(b.status)) failures.push(`expected ${probe.expect.join(' or ')}: ${describeSent(b)}`);
        } else if (b.status < 400 || b.status >= 500) failures.push(`NOT REFUSED ${describeSent(b)}`);
        else if (b.status === 404 && !/NOT_FOUND$/.test(b.body?.code)) failures.push(`404 without a *_NOT_FOUND code: ${describeSent(b)}`);
      }
    }
    // B moves its own clock by an hour: A's pending quote (5 minutes) must stay pending.
    ok(await B.tp.api.post('/sandbox/clock/advance', { seconds: 3_600 }), 200, "B's clock");
    expect(failures).toEqual([]);
  });

  it("A's objects, balances and lists are as they were", async () => {
    const after = await snapshotOfA(operations());
    const changed = [...snapshotBefore.keys()].filter((key) => JSON.stringify(after.get(key)) !== JSON.stringify(snapshotBefore.get(key)));
    expect(changed.map((key) => `${key}\n  before ${JSON.stringify(snapshotBefore.get(key)).slice(0, 400)}\n  after  ${JSON.stringify(after.get(key)).slice(0, 400)}`)).toEqual([]);
    expect([...after.keys()].sort()).toEqual([...snapshotBefore.keys()].sort());
    // The same, spelled out for the objects B tried hardest to change.
    const api = A.tp.api;
    expect((await api.get(`/quotes/${A.pendingQuote}`)).body.status).toBe('PENDING');
    expect((await api.get(`/transactions/${A.txPending}`)).body.status).toBe('PENDING');
    expect((await api.get(`/customers/${A.customer}`)).body).toMatchObject({ fullName: `Ada ${MARK}`, isDeleted: false });
    expect((await api.get(`/agents/${A.agent}`)).body).toMatchObject({ name: `Agent ${MARK}`, isPaused: false });
    expect((await api.get('/agents/approvals', { agentId: A.agent })).body.data.map((x: any) => x.id)).toEqual([A.action]);
    expect((await api.get(`/invitations/${A.invitation}`)).body.status).toBe('PENDING');
    expect((await api.get(`/tokens/${A.token}`)).status).toBe(200);
    expect((await api.get(`/documents/${A.document}`)).body.documentType).toBe('PASSPORT');
    expect((await api.get(`/beneficial-owners/${A.owner}`)).body.ownershipPercentage).not.toBe(1);
    expect(await balancesOfA(A)).toEqual(balancesBefore);
    // B's probes caused no event (webhook) on A's side, and none of B's events carries A's data
    // (but for the platformCustomerId and UMA address B gave customers of its own, on purpose).
    expect(await eventsOf(A.platformId)).toEqual(eventsOfABefore);
    const bEvents = (await eventsOf(B.tp.platform.id)).join('\n');
    expect(secrets.filter((secret) => bEvents.includes(secret) && secret !== A.customerUma && secret !== A.customerPcid)).toEqual([]);
  });

  // Last: A changes its own objects here.
  it('A itself gets through the same calls, so every refusal above came from the platform boundary', async () => {
    const failures: string[] = [];
    // Each identifying query parameter finds something of A's for A with at least one of the values B tried.
    const found = new Map<string, string[]>();
    for (const { op, param, aQuery, list, cursor } of queryAnswers) {
      if (cursor) continue;
      const a = await send(A.tp, 'A', 'GET', op.path, { query: aQuery });
      const hit = a.status === 200 && (!list || (Array.isArray(a.body?.data) && a.body.data.length > 0));
      const key = `${op.key} ?${param}`;
      if (!found.has(key)) found.set(key, []);
      if (!hit) found.get(key)!.push(describeSent(a));
      else found.set(key, ['found']);
    }
    for (const [key, misses] of found) if (!misses.includes('found')) failures.push(`${key}: finds nothing even for A:\n    ${misses.join('\n    ')}`);
    for (const { key, probe, b } of referenceAnswers) {
      const [method, path] = key.split(' ') as [string, string];
      const spec = probe.a(A, B);
      const a = await send(A.tp, 'A', method, spec.path ?? path, spec);
      if (a.status >= 500 || (probe.expect === undefined && a.status === b.status && a.body?.code === b.body?.code)) {
        failures.push(`${key}: A gets what B got, so B's refusal proves nothing:\n    ${describeSent(a)}\n      vs ${describeSent(b)}`);
      }
    }
    // Then the path operations, reads first, deletions last (they change A's objects).
    const ops = operations().filter((o) => o.basicAuth && o.pathParams.length > 0 && !BY_DESIGN[o.key]);
    ops.sort((x, y) => replayOrder(x) - replayOrder(y));
    for (const op of ops) {
      const answers = pathAnswers.get(op.key) ?? [];
      const replays: string[] = [];
      let differs = false;
      for (const { path, b } of answers) {
        const a = await send(A.tp, 'A', op.method, path, pathOpSpec(op, { customer: A.customer }));
        replays.push(`${describeSent(a)}\n      vs ${describeSent(b)}`);
        if (a.status < 500 && (a.status !== b.status || a.body?.code !== b.body?.code)) differs = true;
      }
      if (!differs) failures.push(`${op.key}: A gets what B got, so B's refusal proves nothing:\n    ${replays.join('\n    ')}`);
    }
    expect(failures).toEqual([]);
  });
});
