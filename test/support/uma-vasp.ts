import { generateEcKeyPair } from '../../src/core/ec-keys.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeToUrl, getSignableLnurlpRequestPayload, signPayload, type LnurlpRequest } from '@uma-sdk/core';

/** One request the fake VASP got. */
export interface VaspRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface VaspAnswer {
  status?: number;
  body?: unknown;
  /** Send the status, the headers and the start of the body, then nothing more (a stalled counterparty). */
  stall?: boolean;
}

/** Answers a request; undefined falls through to the default (pubkey, else 404). */
export type VaspHandler = (request: VaspRequest) => Promise<VaspAnswer | undefined> | VaspAnswer | undefined;

/**
 * A loopback stand-in for another UMA VASP: its own secp256k1 key (published at
 * `/.well-known/lnurlpubkey` as raw keys, the pre-certificate form), and scripted answers for
 * everything else. Tests use it to send Corridor forged, replayed or stale messages, and to answer
 * Corridor's requests in ways a real Corridor never would.
 */
export interface FakeVasp {
  /** `127.0.0.1:<port>`: its UMA domain. */
  domain: string;
  privateKey: Uint8Array;
  publicKeyHex: string;
  requests: VaspRequest[];
  /** TCP connections accepted so far (a call refused before connecting adds none). */
  connections: number;
  /** Replaces the scripted handler. */
  handle(handler: VaspHandler): void;
  /** When set, `/.well-known/lnurlpubkey` answers this status instead of the keys. */
  pubkeyStatus?: number;
  sign(payload: string): Promise<string>;
  /** Closes every open connection, stalled answers included: their callers fail at once instead of at their timeout. */
  endStalls(): void;
  close(): Promise<void>;
}

function keyPair(): { privateKey: Uint8Array; publicKeyHex: string } {
  const { d, point } = generateEcKeyPair('secp256k1');
  return { privateKey: new Uint8Array(d), publicKeyHex: point.toString('hex') };
}

/** A fresh secp256k1 key pair as UMA uses them (raw private scalar, uncompressed public point hex). */
export const umaKeyPair = keyPair;

async function readBody(request: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

export async function startFakeVasp(): Promise<FakeVasp> {
  const keys = keyPair();
  let handler: VaspHandler = () => undefined;
  const vasp: FakeVasp = {
    domain: '',
    privateKey: keys.privateKey,
    publicKeyHex: keys.publicKeyHex,
    requests: [],
    connections: 0,
    handle: (next) => {
      handler = next;
    },
    sign: (payload) => signPayload(payload, keys.privateKey),
    endStalls: () => server.closeAllConnections(),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // stalled answers included
      }),
  };

  async function respond(request: IncomingMessage, response: ServerResponse) {
    const received: VaspRequest = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: await readBody(request) };
    vasp.requests.push(received);
    let answer = await handler(received);
    if (!answer && received.url.startsWith('/.well-known/lnurlpubkey')) {
      answer = vasp.pubkeyStatus ? { status: vasp.pubkeyStatus, body: {} } : { body: { signingPubKey: vasp.publicKeyHex, encryptionPubKey: vasp.publicKeyHex } };
    }
    answer ??= { status: 404, body: { status: 'ERROR', reason: 'not found', code: 'USER_NOT_FOUND' } };
    response.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
    if (answer.stall) response.write('{"status": "'); // and never ends: the caller's timeout must
    else response.end(JSON.stringify(answer.body ?? {}));
  }

  const server = createServer((request, response) => {
    respond(request, response).catch(() => response.destroy());
  });
  server.on('connection', () => vasp.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  vasp.domain = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return vasp;
}

/**
 * The path and query of an lnurlp request for `receiverAddress`, signed by `sender` (or `key`)
 * and naming its domain as the one to fetch keys from, unless `overrides` say otherwise.
 */
export async function lnurlpRequestPath(sender: FakeVasp, receiverAddress: string, overrides: Partial<LnurlpRequest> = {}, key = sender.privateKey): Promise<string> {
  const request: LnurlpRequest = {
    receiverAddress,
    nonce: String(Math.random()).slice(2),
    timestamp: new Date(),
    vaspDomain: sender.domain,
    isSubjectToTravelRule: true,
    umaVersion: '1.0',
    signature: '',
    ...overrides,
  };
  request.signature = await signPayload(getSignableLnurlpRequestPayload(request), key);
  const url = encodeToUrl(request);
  return `${url.pathname}${url.search}`;
}
