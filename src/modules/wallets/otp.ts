import { randomInt } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import { ServiceError } from '../../core/errors.js';

/** One-time passwords: 6 random digits, valid 10 minutes, 5 wrong tries burn the code. */
export const OTP_LIFETIME_SECONDS = 600;
export const OTP_MAX_ATTEMPTS = 5;
/**
 * Wrong codes a credential may see in a day, over all its codes. Five per code and three codes
 * per 90 seconds alone would let a guesser try about 14,000 codes a day: a 1.4% chance.
 */
export const OTP_DAILY_FAILURES = 20;
export const OTP_FAILURE_WINDOW_MS = 86_400_000;
/** Accepted by sandbox platforms in place of the emailed code (SPEC §5). */
export const SANDBOX_OTP = '000000';
export const INVALID_OTP_REASON = 'Invalid OTP code';

export function newOtpCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

export interface OtpEmail {
  platformId: string;
  accountId: string;
  credentialId: string;
  to: string;
  code: string;
  expiresAt: Date;
}

/** A message kept by the development outbox (no SMTP configured, or a sandbox platform). */
export interface OutboxEntry extends OtpEmail {
  sentAt: Date;
}

const OUTBOX_LIMIT = 500;

/**
 * Sends one-time passwords. Production platforms use SMTP (`SMTP_URL`) when it is configured;
 * without it, and always for sandbox platforms, the code goes to the development outbox: kept in
 * memory for the dashboard and written to the log, the one place a code is ever logged.
 */
export function createOtpMailer(options: { smtpUrl?: string; smtpFrom: string; log: Logger }) {
  const outbox: OutboxEntry[] = [];
  const transport = options.smtpUrl ? nodemailer.createTransport(options.smtpUrl) : undefined;

  function toOutbox(email: OtpEmail): void {
    if (outbox.length >= OUTBOX_LIMIT) outbox.shift();
    outbox.push({ ...email, sentAt: new Date() });
    options.log.info(
      { outbox: 'otp', platformId: email.platformId, credentialId: email.credentialId, to: email.to, code: email.code },
      'development outbox: one-time password email (no SMTP delivery)',
    );
  }

  async function send(email: OtpEmail, mode: 'SANDBOX' | 'PRODUCTION'): Promise<void> {
    if (mode === 'SANDBOX') return toOutbox(email);
    // A production code is never logged: refuseWithoutDelivery keeps requests from getting here.
    if (!transport) throw new Error('SMTP_URL is not set');
    const minutes = Math.round((email.expiresAt.getTime() - Date.now()) / 60_000);
    await transport.sendMail({
      from: options.smtpFrom,
      to: email.to,
      subject: `Your verification code: ${email.code}`,
      text: `Your verification code is ${email.code}. It expires in ${minutes} minutes and works once.\n\nIf you did not ask for it, ignore this email.`,
    });
  }

  return {
    /**
     * Refuses (before anything is written) to issue a production platform a code that could only
     * be logged: without SMTP_URL no email leaves, and a code in the log is a code for whoever reads it.
     */
    refuseWithoutDelivery(mode: 'SANDBOX' | 'PRODUCTION'): void {
      if (mode === 'PRODUCTION' && !transport) {
        throw new ServiceError('SERVICE_UNAVAILABLE', 'this server has no SMTP_URL, so it cannot email one-time passwords for production platforms; the operator must set it');
      }
    },
    /** Delivers the code; failures are logged (without the code), never thrown: the client can ask for a new code. */
    async deliver(email: OtpEmail, mode: 'SANDBOX' | 'PRODUCTION'): Promise<void> {
      try {
        await send(email, mode);
      } catch (error) {
        options.log.error({ err: { message: (error as Error).message }, credentialId: email.credentialId }, 'one-time password email failed');
      }
    },
    /** Newest first; the dashboard's view of the development outbox. */
    outbox: (platformId?: string): OutboxEntry[] => outbox.filter((e) => !platformId || e.platformId === platformId).reverse(),
    close: () => transport?.close(),
  };
}

export type OtpMailer = ReturnType<typeof createOtpMailer>;
