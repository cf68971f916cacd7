import { lookup as lookupCallback, type LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { Agent, buildConnector, Client, fetch as undiciFetch } from 'undici';

// Addresses a server must not be made to call on someone else's say-so: a tenant's webhook
// endpoint or identity provider, or the domain a stranger's UMA request names. Loopback, private,
// link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, IETF protocol assignments,
// documentation, benchmarking, multicast and reserved ranges; in IPv6 also the forms that embed an
// IPv4 address (IPv4-compatible, NAT64, 6to4, Teredo), discard-only and site-local addresses.
const PRIVATE_NETWORKS = new BlockList();
const PRIVATE_IPV4 = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const;
const PRIVATE_IPV6 = [
  ['::', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const;
for (const [net, prefix] of PRIVATE_IPV4) PRIVATE_NETWORKS.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of PRIVATE_IPV6) PRIVATE_NETWORKS.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address (v4, v6, or v4 mapped into v6) is one Corridor must not be pointed at. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE_NETWORKS.check(mapped[1], 'ipv4');
  return PRIVATE_NETWORKS.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** `public`: every address of the host is; `private`: at least one is not; `unresolvable`: DNS has no answer. */
export type TargetClass = 'public' | 'private' | 'unresolvable';

/** A URL's host without the brackets of an IPv6 literal. */
const unbracketed = (hostname: string) => hostname.replace(/^\[|\]$/g, '');

/**
 * Resolves the URL's host and classifies its addresses, to refuse a target when a platform sets it.
 * Calls do not rely on this answer: `publicFetch` checks the addresses as each socket connects, so
 * a host whose DNS answer changes later (DNS rebinding) is refused too.
 */
export async function classifyTarget(url: URL): Promise<TargetClass> {
  const host = unbracketed(url.hostname);
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  } catch {
    return 'unresolvable';
  }
  return addresses.some(isPrivateAddress) ? 'private' : 'public';
}

/**
 * Whether a platform's own targets (webhook endpoint, identity providers) may be private: always on
 * sandbox platforms (local receivers on loopback), on production ones only when the operator says so.
 */
export function privateTargetsAllowed(platform: { mode: 'SANDBOX' | 'PRODUCTION' }, operatorAllows: boolean): boolean {
  return platform.mode === 'SANDBOX' || operatorAllows;
}

/** Why a guarded connection was refused: its host is, or resolved to, a private address. */
class PrivateAddressError extends Error {
  readonly code = 'EPRIVATEADDRESS';
  constructor(host: string, address: string) {
    super(host === address ? `${host} is a loopback or private address` : `${host} resolved to ${address}, a loopback or private address`);
  }
}

type Lookup = typeof lookupCallback;

/**
 * dns.lookup that answers only when every address of the host is public. The connection is made
 * to an address this lookup returned, so no later DNS answer can point it elsewhere.
 */
function publicOnlyLookup(resolve: Lookup): Lookup {
  return ((hostname: string, options: { all?: boolean }, callback: (error: Error | null, address?: string | LookupAddress[], family?: number) => void) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error);
      const refused = addresses.find((a) => isPrivateAddress(a.address));
      if (refused) return callback(new PrivateAddressError(hostname, refused.address));
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  }) as Lookup;
}

/** undici's connector with `publicOnlyLookup`; a literal private address is refused before connecting. */
function publicOnlyConnector(resolve: Lookup): buildConnector.connector {
  const connector = buildConnector({ lookup: publicOnlyLookup(resolve) });
  return (options, callback) => {
    const host = unbracketed(options.hostname);
    if (isIP(host) && isPrivateAddress(host)) return callback(new PrivateAddressError(host, host), null);
    connector(options, callback);
  };
}

/**
 * fetch whose connections reach public addresses only: a literal private address is refused, and
 * a name is resolved by `publicOnlyLookup` as the socket connects. `resolve` is for tests.
 */
export function createPublicFetch(resolve: Lookup = lookupCallback): typeof fetch {
  const dispatcher = new Agent({ connect: publicOnlyConnector(resolve) });
  // undici's fetch is the one Node ships; its Response is the WHATWG one the callers read.
  return ((input: string | URL, init?: RequestInit) => undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch;
}

/** The reason `publicFetch` refused to connect, when that is why `error` (fetch's own) was thrown. */
export function guardRefusalOf(error: unknown): string | undefined {
  const cause = (error as { cause?: unknown })?.cause;
  return cause instanceof PrivateAddressError ? cause.message : undefined;
}

/** The fetch for targets that must be public. */
export const publicFetch = createPublicFetch();

/** The fetch for a call: `publicFetch`, or the global fetch when private targets are allowed. */
export function fetchFor(allowPrivate: boolean): typeof fetch {
  return allowPrivate ? fetch : publicFetch;
}

/**
 * fetch through a client of its own for each call, closed when the call ends (with its answer's
 * body, or its failure), and a connection that closes with the answer (undici's pipelining 0 sends
 * `Connection: close`). undici's Agent keeps an object per origin it has ever called, for the
 * life of the process; for hosts that strangers name that would grow without bound. `open` counts
 * the clients not closed yet.
 */
export function createOneCallFetch(options: Client.Options = {}): { fetch: typeof fetch; open: () => number } {
  let open = 0;
  const oneCall = async (input: string | URL, init?: RequestInit) => {
    const client = new Client(new URL(input).origin, { ...options, pipelining: 0 });
    open++;
    try {
      return await undiciFetch(input, { ...(init as object), dispatcher: client });
    } finally {
      // Closing waits for the call in progress, the answer's body included.
      void client.close().finally(() => open--);
    }
  };
  return { fetch: oneCall as unknown as typeof fetch, open: () => open };
}

const publicOneCall = createOneCallFetch({ connect: publicOnlyConnector(lookupCallback) });
const anyOneCall = createOneCallFetch();

/**
 * `fetchFor`, except that every call has a connection (and a client) of its own, closed when the
 * call ends instead of waiting, idle, for the next call to its origin: for calls to hosts that
 * strangers name (UMA counterparties), where kept-alive connections (one per origin, for as long
 * as the host's Keep-Alive asks, up to ten minutes) would outnumber any bound on the calls in
 * flight.
 */
export function closingFetchFor(allowPrivate: boolean): typeof fetch {
  return allowPrivate ? anyOneCall.fetch : publicOneCall.fetch;
}

/** Clients of `closingFetchFor` calls not closed yet (calls in flight, or bodies still being read). */
export const closingClientsOpen = () => publicOneCall.open() + anyOneCall.open();

/** At most `limit` bytes of a response's body: past them the stream is cancelled, not read. */
export async function readAtMost(response: Response, limit: number): Promise<Buffer> {
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value.subarray(0, limit - size));
    size += Math.min(value.length, limit - size);
    if (size >= limit) {
      await reader.cancel();
      break;
    }
  }
  return Buffer.concat(chunks);
}

/** A response body longer than its reader accepts. */
export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * A response's body as text, refused with ResponseTooLargeError past `limit` bytes: at once when
 * its Content-Length says so, else once that many have arrived (nothing more is read).
 */
export async function readCapped(response: Response, limit: number): Promise<string> {
  if (Number(response.headers.get('content-length')) > limit) {
    await response.body?.cancel();
    throw new ResponseTooLargeError(limit);
  }
  const body = await readAtMost(response, limit + 1);
  if (body.length > limit) throw new ResponseTooLargeError(limit);
  return body.toString('utf8');
}
