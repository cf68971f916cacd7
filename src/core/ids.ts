import { randomFillSync } from 'node:crypto';

// Random bytes for ids, drawn from the CSPRNG 4 KiB at a time: one system call per id was ~3% of
// the CPU of a request that creates a quote and its transaction.
const entropy = Buffer.alloc(4096);
let entropyUsed = entropy.length;

/** CSPRNG bytes from the process's pool (for ids and references; not for keys or nonces). */
export function pooledRandomBytes(count: number): Buffer {
  if (entropyUsed + count > entropy.length) {
    randomFillSync(entropy);
    entropyUsed = 0;
  }
  const out = Buffer.from(entropy.subarray(entropyUsed, entropyUsed + count));
  entropyUsed += count;
  return out;
}

let lastMs = 0;
let sequence = 0;

/**
 * RFC 9562 UUIDv7. Ids made in the same millisecond by this process stay ordered: a 12-bit
 * counter fills rand_a, so keyset pagination on (created_at, id) is stable for bulk inserts.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    sequence = pooledRandomBytes(1)[0]; // start low so a burst rarely overflows
  } else {
    sequence++;
    if (sequence > 0xfff) {
      lastMs++;
      sequence = 0;
    }
  }
  const ms = lastMs;
  const bytes = pooledRandomBytes(16);
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
  bytes[2] = (ms >>> 24) & 0xff;
  bytes[3] = (ms >>> 16) & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The smallest UUIDv7 of millisecond `ms`: a uuidv7 made before `ms` (wall-clock time) sorts below
 * it, one made at `ms` or later does not. For pruning by age through a primary key of ids.
 */
export function uuidv7Floor(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/** Object identifiers are `<Type>:<uuidv7>`, e.g. `Customer:0193…`. */
export function newId(type: string): string {
  return `${type}:${uuidv7()}`;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const idPatterns = new Map<string, RegExp>();

/** True when `value` is a well-formed id of the given type. */
export function isIdOf(type: string, value: string): boolean {
  let re = idPatterns.get(type);
  if (!re) {
    re = new RegExp(`^${type}:${UUID}$`, 'i');
    idPatterns.set(type, re);
  }
  return re.test(value);
}

const REFERENCE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'; // Crockford base32: no I, L, O, U

/**
 * A reference people copy (reconciliation, deposit memo): the prefix and 12 characters of
 * Crockford base32 (60 random bits), short and upper-case, safe in any bank's memo field.
 */
export function newReference(prefix = 'CR'): string {
  const bytes = pooledRandomBytes(12);
  let out = prefix;
  for (let i = 0; i < 12; i++) out += REFERENCE_ALPHABET[bytes[i] & 31];
  return out;
}
