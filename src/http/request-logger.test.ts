import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { lazyRequestLogger } from './request-logger.js';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()));
      done();
    },
  });
  const parent = pino({ level }, sink);
  return { parent, lines, childCalls: vi.spyOn(parent, 'child') };
}

describe('lazyRequestLogger', () => {
  it('builds no child for lines below the level', () => {
    const { parent, lines, childCalls } = capture('warn');
    const log = lazyRequestLogger(parent, { reqId: 'r-1' }, {});
    log.info({ code: 'NOT_FOUND' }, 'not found');
    log.debug('detail');
    expect(childCalls).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(log.level).toBe('warn');
  });

  it('writes enabled lines with the request id bound, building the child once', async () => {
    const { parent, lines, childCalls } = capture('info');
    const log = lazyRequestLogger(parent, { reqId: 'r-2' }, {});
    log.info({ code: 'NOT_FOUND' }, 'not found');
    log.error('failed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(childCalls).toHaveBeenCalledTimes(1);
    expect(lines).toMatchObject([
      { level: 30, reqId: 'r-2', code: 'NOT_FOUND', msg: 'not found' },
      { level: 50, reqId: 'r-2', msg: 'failed' },
    ]);
    expect((log.child({ step: 'x' }) as pino.Logger).bindings()).toEqual({ reqId: 'r-2', step: 'x' });
  });
});
