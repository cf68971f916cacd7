import { describe, expect, it } from 'vitest';
import { MAX_FAILING_POLL_INTERVAL_MS, PollFailures, STILL_FAILING_LOG_MS } from './poll-failures.js';

function harness(intervalMs = 250) {
  let now = 1_000_000;
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const log = {
    error: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'error', fields, msg }),
    info: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'info', fields, msg }),
  };
  const polls = new PollFailures(log as never, 'job poll', intervalMs, () => now);
  return { polls, lines, advance: (ms: number) => void (now += ms) };
}

describe('PollFailures', () => {
  it('logs the first failure with its error, then one line a minute, then the recovery', () => {
    const { polls, lines, advance } = harness();
    const down = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    polls.failed(down);
    expect(lines).toEqual([{ level: 'error', fields: { err: down, nextPollInMs: 500 }, msg: 'job poll failed; while it keeps failing, one line a minute' }]);
    // An hour of polls every 5 s: one line a minute, each without the stack.
    for (let elapsed = 0; elapsed < 3_600_000; elapsed += MAX_FAILING_POLL_INTERVAL_MS) {
      advance(MAX_FAILING_POLL_INTERVAL_MS);
      polls.failed(down);
    }
    expect(lines).toHaveLength(1 + 3_600_000 / STILL_FAILING_LOG_MS);
    expect(lines[1]).toEqual({
      level: 'error',
      fields: { error: 'connect ECONNREFUSED 127.0.0.1:5432', failures: 13, failingForMs: 60_000, nextPollInMs: 5_000 },
      msg: 'job poll still failing',
    });
    advance(1_000);
    expect(polls.succeeded()).toBe(250);
    expect(lines.at(-1)).toEqual({ level: 'info', fields: { failures: 721, failedForMs: 3_601_000 }, msg: 'job poll recovered' });
    expect(polls.succeeded()).toBe(250);
    expect(lines.at(-1)?.msg).toBe('job poll recovered');
    expect(lines.filter((l) => l.msg === 'job poll recovered')).toHaveLength(1);
  });

  it('doubles the wait between failing polls up to 5 s, and is back to the interval once one succeeds', () => {
    const { polls } = harness(250);
    expect(Array.from({ length: 7 }, () => polls.failed(new Error('down')))).toEqual([500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
    expect(polls.succeeded()).toBe(250);
    expect(polls.failed(new Error('down'))).toBe(500);
  });
});
