import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyTarget, createPublicFetch, isPrivateAddress, privateTargetsAllowed, publicFetch, readAtMost, readCapped, ResponseTooLargeError } from './outbound.js';

describe('isPrivateAddress', () => {
  it.each([
    '0.0.0.0',
    '10.20.30.40',
    '100.64.0.1',
    '127.0.0.1',
    '169.254.169.254',
    '172.31.255.255',
    '192.0.0.8',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '224.0.0.251',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::a9fe:a9fe',
    '::7f00:1',
    '100::1',
    '2001::7f00:1',
    '2001:db8::1',
    '2002:7f00:1::',
    'fd00::1',
    'fe80::1',
    'fec0::1',
    'ff02::1',
    'ff05::1',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
  ])('%s is private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '93.184.215.14', '172.32.0.1', '198.20.0.1', '::ffff:8.8.8.8', '2606:4700:4700::1111', '2001:4860:4860::8888'])('%s is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('classifyTarget', () => {
  it('classifies literal addresses and resolved names', async () => {
    expect(await classifyTarget(new URL('http://127.0.0.1:9/x'))).toBe('private');
    expect(await classifyTarget(new URL('http://[::1]:9/x'))).toBe('private');
    expect(await classifyTarget(new URL('http://2130706433/x'))).toBe('private');
    expect(await classifyTarget(new URL('http://localhost/x'))).toBe('private');
    expect(await classifyTarget(new URL('https://93.184.215.14/x'))).toBe('public');
    expect(await classifyTarget(new URL('https://no-such-host.invalid/x'))).toBe('unresolvable');
  });
});

describe('privateTargetsAllowed', () => {
  it('allows sandbox platforms always, production ones only when the operator does', () => {
    expect(privateTargetsAllowed({ mode: 'SANDBOX' }, false)).toBe(true);
    expect(privateTargetsAllowed({ mode: 'PRODUCTION' }, false)).toBe(false);
    expect(privateTargetsAllowed({ mode: 'PRODUCTION' }, true)).toBe(true);
  });
});

describe('publicFetch', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** A resolver that answers `answers` for every name (as dns.lookup does with `all: true`). */
  const resolverAnswering = (...answers: string[]) =>
    ((_host: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) =>
      callback(null, answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))) as unknown as typeof import('node:dns').lookup;

  const causeOf = async (request: Promise<Response>) => {
    const error = await request.then(() => undefined, (e: unknown) => e as { cause?: { code?: string; message?: string } });
    return error?.cause;
  };

  it('reaches the loopback server through the global fetch (so the refusals below are the guard)', async () => {
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('reached');
  });

  it('refuses a literal private address', async () => {
    expect(await causeOf(publicFetch(`http://127.0.0.1:${port}/`))).toMatchObject({ code: 'EPRIVATEADDRESS', message: '127.0.0.1 is a loopback or private address' });
    expect((await causeOf(publicFetch(`http://[::1]:${port}/`)))?.code).toBe('EPRIVATEADDRESS');
  });

  it('refuses a name whose answer at connect time is private, though it was public when checked (DNS rebinding)', async () => {
    let calls = 0;
    const rebinding = ((_host: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) =>
      callback(null, [{ address: calls++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }])) as unknown as typeof import('node:dns').lookup;
    const guarded = createPublicFetch(rebinding);
    // The first answer (public) is spent here, as a check before the call would spend it.
    rebinding('rebind.example', {}, () => {});
    expect(await causeOf(guarded(`http://rebind.example:${port}/`))).toMatchObject({
      code: 'EPRIVATEADDRESS',
      message: 'rebind.example resolved to 127.0.0.1, a loopback or private address',
    });
  });

  it('refuses a name with any private address among its answers', async () => {
    const guarded = createPublicFetch(resolverAnswering('93.184.215.14', '10.0.0.7'));
    expect((await causeOf(guarded(`http://mixed.example:${port}/`)))?.message).toBe('mixed.example resolved to 10.0.0.7, a loopback or private address');
  });

  it('lets a name with public answers through to connect (here it cannot: this machine has no route out)', async () => {
    const asked: string[] = [];
    const answersPublic = ((host: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
      asked.push(host);
      callback(null, [{ address: '93.184.215.14', family: 4 }]);
    }) as unknown as typeof import('node:dns').lookup;
    const cause = await causeOf(createPublicFetch(answersPublic)(`http://public.example:${port}/`, { signal: AbortSignal.timeout(300) }));
    expect(asked).toEqual(['public.example']);
    expect(cause?.code).not.toBe('EPRIVATEADDRESS');
  });
});

describe('reading a response body up to a limit', () => {
  /** A body of `size` bytes in chunks of 3, counting the chunks the reader pulled. */
  function chunkedResponse(size: number, headers: Record<string, string> = {}) {
    const pulled = { chunks: 0 };
    let left = size;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (left === 0) return controller.close();
        pulled.chunks++;
        const n = Math.min(3, left);
        left -= n;
        controller.enqueue(new Uint8Array(n).fill(0x61));
      },
    }, { highWaterMark: 0 });
    return { response: new Response(body, { headers }), pulled };
  }

  it('readAtMost keeps the first bytes and pulls nothing past them', async () => {
    const { response, pulled } = chunkedResponse(30);
    expect((await readAtMost(response, 7)).toString()).toBe('aaaaaaa');
    expect(pulled.chunks).toBe(3);
  });

  it('readCapped answers a body of exactly the limit', async () => {
    expect(await readCapped(chunkedResponse(9).response, 9)).toBe('a'.repeat(9));
  });

  it('readCapped refuses once the body passes the limit, reading no further', async () => {
    const { response, pulled } = chunkedResponse(30);
    await expect(readCapped(response, 9)).rejects.toBeInstanceOf(ResponseTooLargeError);
    expect(pulled.chunks).toBe(4);
  });

  it('readCapped refuses a Content-Length past the limit before reading', async () => {
    const { response, pulled } = chunkedResponse(30, { 'content-length': '30' });
    await expect(readCapped(response, 9)).rejects.toThrow('the answer is larger than 9 bytes');
    expect(pulled.chunks).toBe(0);
  });
});
