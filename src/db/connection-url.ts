/**
 * DATABASE_URL as node-postgres reads it (its `pg-connection-string`), without connecting.
 *
 * WHATWG's URL parser refuses a user name before an empty host (`postgres://app@/corridor`),
 * the usual way to name a Unix socket (`?host=/var/run/postgresql`); node-postgres then parses
 * the URL again with a placeholder host and takes the host from `host=`, and so does this. The
 * forms accepted:
 *
 * - `postgres://user:password@host:port/database?…` (or `postgresql://`);
 * - a Unix socket: `postgres://user@/database?host=/var/run/postgresql`,
 *   `postgres:///database?host=/var/run/postgresql&user=user`, or the socket directory
 *   percent-encoded as the host, `postgres://user@%2Fvar%2Frun%2Fpostgresql/database`;
 * - node-postgres's own socket form: `socket:/var/run/postgresql?db=database` (`socket://user:password@/var/run/postgresql?db=…`).
 */

/** The placeholder host node-postgres puts in `user@/…` before parsing it again. */
const PLACEHOLDER_HOST = '___DUMMY___';

export interface ConnectionUrl {
  url: URL;
  /** The URL named no host (`user@/database`): `url.hostname` is a placeholder. */
  hostless: boolean;
}

/**
 * The URL of `raw` as node-postgres would parse it, or undefined when it is not one of the forms
 * above (another scheme is returned: the caller names it).
 */
export function parseConnectionUrl(raw: string): ConnectionUrl | undefined {
  // node-postgres percent-encodes spaces and stray percent signs before parsing (pg-connection-string).
  const text = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(raw) ? encodeURI(raw).replace(/%25(\d\d)/g, '%$1') : raw;
  let url: URL;
  let hostless = false;
  try {
    url = new URL(text);
  } catch {
    try {
      url = new URL(text.replace('@/', `@${PLACEHOLDER_HOST}/`));
      hostless = true;
    } catch {
      return undefined;
    }
  }
  if (url.protocol === 'socket:') {
    // The socket directory is the path.
    const path = hostless ? url.pathname : url.hostname ? undefined : url.pathname;
    return path?.startsWith('/') ? { url, hostless } : undefined;
  }
  if ((url.protocol === 'postgres:' || url.protocol === 'postgresql:') && !/^postgres(ql)?:\/\//i.test(raw)) return undefined;
  return { url, hostless };
}

/**
 * The URL without its `options` parameter, and that parameter's value (node-postgres takes the
 * last one given): node-postgres lets a parameter of the URL win over the same setting given
 * beside it, so the options Corridor adds can only be combined with the URL's outside it. The
 * rest of the URL is left for node-postgres to read, as it does on every new connection (SSL
 * certificate files included).
 */
export function takeOptions(raw: string): { connectionString: string; options?: string } {
  const parsed = parseConnectionUrl(raw);
  if (!parsed?.url.searchParams.has('options')) return { connectionString: raw };
  const { url, hostless } = parsed;
  const options = url.searchParams.getAll('options').at(-1);
  url.searchParams.delete('options');
  const text = url.toString();
  return { connectionString: hostless ? text.replace(`@${PLACEHOLDER_HOST}/`, '@/') : text, options };
}

export const ACCEPTED_FORMS =
  'postgres://user:password@host:port/database, or for a Unix socket postgres://user@/database?host=/var/run/postgresql or socket:/var/run/postgresql?db=database';

/**
 * The connection URL as it may be shown in messages and logs: scheme, user, host, port, database
 * and the socket directory (`host=`), without the password or any other parameter (which may
 * hold one).
 */
export function displayConnectionUrl(raw: string): string {
  const parsed = parseConnectionUrl(raw);
  if (!parsed) return 'DATABASE_URL';
  const { url, hostless } = parsed;
  const user = url.username ? `${decodeURIComponent(url.username)}@` : '';
  if (url.protocol === 'socket:') {
    const db = url.searchParams.get('db');
    return `socket:${decodeURI(url.pathname)}${db ? `?db=${db}` : ''}`;
  }
  const host = hostless ? '' : url.host;
  const shown = ['host', 'port'].flatMap((name) => url.searchParams.getAll(name).map((value) => `${name}=${value}`));
  return `${url.protocol}//${user}${host}${url.pathname}${shown.length > 0 ? `?${shown.join('&')}` : ''}`;
}
