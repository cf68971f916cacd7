/** What the clock needs to know about a platform: its test-clock offset (0 outside the sandbox). */
export interface ClockSubject {
  clockOffsetMs: number;
}

/**
 * All domain time comes from here. A platform's "now" is wall-clock time plus its test-clock
 * offset, so `POST /sandbox/clock/advance` moves every deadline of that platform at once.
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch. */
  realNowMs(): number;
  /** The platform's current time. */
  now(subject: ClockSubject | null | undefined): Date;
}

export const systemClock: Clock = {
  realNowMs: () => Date.now(),
  now: (subject) => new Date(Date.now() + (subject?.clockOffsetMs ?? 0)),
};

/** Converts a platform-clock instant to the wall-clock instant at which it will be reached. */
export function toRealTime(subject: ClockSubject | null | undefined, platformTime: Date): Date {
  return new Date(platformTime.getTime() - (subject?.clockOffsetMs ?? 0));
}

/** UTC calendar date (YYYY-MM-DD) of an instant. */
export function utcDate(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}
