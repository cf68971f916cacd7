import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fastifyMultipart, { type MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { invalidInput, ServiceError } from '../core/errors.js';

/** The one file of a multipart request, received and measured. */
export interface UploadedFile {
  /** File name as the client sent it (directory parts removed). */
  fileName: string;
  /** Content type the client declared for the part. */
  declaredType: string;
  size: number;
  sha256: string;
  /** The first bytes, to recognise the file type. */
  head: Buffer;
  /** Where the file was staged on disk (disk uploads), or its bytes (memory uploads). */
  path?: string;
  bytes?: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The file of a multipart request, after `multipartBody` ran. */
    upload?: UploadedFile;
    /** A staged file to remove when the request ends (moved away by a service that keeps it). */
    stagedPath?: string;
  }
}

export interface MultipartBodyOptions {
  /** Largest accepted file. */
  maxFileBytes: number;
  /** Stage the file on disk at the path this returns; without it, the file is read into memory. */
  stagePath?: () => Promise<string>;
}

const HEAD_BYTES = 16;
const FIELD_BYTES = 2048;

/** Registers multipart parsing in this scope, and removes staged files that the request's handler did not keep. */
export async function installMultipart(scope: FastifyInstance): Promise<void> {
  await scope.register(fastifyMultipart, { throwFileSizeLimit: true });
  const discard = async (request: FastifyRequest) => {
    if (request.stagedPath) await rm(request.stagedPath, { force: true }).catch(() => {});
  };
  // Before the answer goes out, so a client that sees the answer sees the file gone too.
  scope.addHook('onSend', async (request, _reply, payload) => {
    await discard(request);
    return payload;
  });
  scope.addHook('onRequestAbort', discard);
}

/** Control characters, and the invisible ones that reorder or hide text (`evil\u202Efdp.exe` shows as `evilexe.pdf`). */
const HIDDEN_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;

function baseName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop()!.replace(HIDDEN_CHARACTERS, '').trim();
  return (base || 'upload').slice(0, 255);
}

/** Passes bytes through while counting, hashing and keeping the first few. */
function meter() {
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (size < HEAD_BYTES) head.push(chunk.subarray(0, HEAD_BYTES - size));
      size += chunk.length;
      hash.update(chunk);
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ size, sha256: hash.digest('hex'), head: Buffer.concat(head) }) };
}

function memorySink(chunks: Buffer[]): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
}

async function receive(request: FastifyRequest, part: MultipartFile, options: MultipartBodyOptions): Promise<UploadedFile> {
  const measured = meter();
  const chunks: Buffer[] = [];
  let path: string | undefined;
  if (options.stagePath) {
    path = await options.stagePath();
    request.stagedPath = path;
  }
  await pipeline(part.file, measured.stream, path ? createWriteStream(path) : memorySink(chunks));
  if (part.file.truncated) throw invalidInput('file', `the file is larger than the limit of ${options.maxFileBytes} bytes`, 'maxSize');
  return {
    fileName: baseName(part.filename),
    declaredType: (part.mimetype || 'application/octet-stream').toLowerCase(),
    ...measured.result(),
    ...(path ? { path } : { bytes: Buffer.concat(chunks) }),
  };
}

/** Turns the multipart parser's failures into the API's errors; local I/O failures stay 500s. */
function multipartError(error: unknown, options: MultipartBodyOptions): unknown {
  if (error instanceof ServiceError) return error;
  const code = (error as { code?: string }).code ?? '';
  if (code === 'FST_REQ_FILE_TOO_LARGE') return invalidInput('file', `the file is larger than the limit of ${options.maxFileBytes} bytes`, 'maxSize');
  if (code === 'FST_FILES_LIMIT') return invalidInput('file', 'send exactly one file, in the `file` field', 'maxItems');
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') return invalidInput('body', 'the form has too many fields', 'maxProperties');
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'send the body as multipart/form-data');
  if ((error as { syscall?: string }).syscall) return error;
  return new ServiceError('INVALID_INPUT', `the multipart body could not be read: ${(error as Error).message}`);
}

/**
 * A preValidation hook that reads a multipart/form-data body: text fields become `request.body`
 * (so the route's schema validates them like JSON fields), and the one file, in the `file` field,
 * is received within `maxFileBytes` into `request.upload` (`body.file` holds its file name).
 */
export function multipartBody(options: MultipartBodyOptions): preValidationAsyncHookHandler {
  return async (request) => {
    if (!request.isMultipart()) throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'send the body as multipart/form-data');
    const fields: Record<string, string> = {};
    try {
      const parts = request.parts({ limits: { fileSize: options.maxFileBytes, files: 1, fields: 20, parts: 25, fieldSize: FIELD_BYTES } });
      for await (const part of parts) {
        if (part.type === 'file' && part.fieldname === 'file') {
          request.upload = await receive(request, part, options);
          fields.file = request.upload.fileName;
        } else if (part.type === 'file') {
          await pipeline(part.file, new Writable({ write: (_c, _e, done) => done() }));
          fields[part.fieldname] = part.filename;
        } else {
          if (part.valueTruncated) throw invalidInput(part.fieldname, `${part.fieldname} is longer than ${FIELD_BYTES} bytes`, 'maxLength');
          const value = String(part.value);
          // As in JSON bodies: PostgreSQL text cannot hold NUL.
          if (value.includes('\u0000')) throw invalidInput(part.fieldname, `${part.fieldname} must not contain NUL characters (\\u0000)`, 'format');
          fields[part.fieldname] = value;
        }
      }
    } catch (error) {
      throw multipartError(error, options);
    }
    request.body = fields;
  };
}
