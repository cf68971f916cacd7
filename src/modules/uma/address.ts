/** `$user@domain`: user 1-64 of a-z 0-9 . _ + - ; domain as `isUmaDomain` says. */
const UMA_ADDRESS = /^\$([a-z0-9._+-]{1,64})@(.+)$/i;
const HOST = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i;
const PORT = /^[0-9]{1,5}$/;

/**
 * A host name (labels of a-z 0-9 -, no empty one), optionally with a port from 1 to 65535, as the
 * domain of an address or of a signing VASP: one that passes makes a valid URL.
 */
export function isUmaDomain(value: string): boolean {
  if (value.length > 253) return false;
  const [host, port, ...more] = value.split(':');
  if (more.length > 0 || !HOST.test(host) || host.includes('..')) return false;
  return port === undefined || (PORT.test(port) && Number(port) >= 1 && Number(port) <= 65_535);
}

export interface UmaAddress {
  /** The part after `$` and before `@`, as written. */
  local: string;
  /** Lower case, port included. */
  domain: string;
  /** `$local@domain` with the domain in lower case. */
  address: string;
}

export function parseUmaAddress(value: string): UmaAddress | undefined {
  const match = UMA_ADDRESS.exec(value);
  if (!match || value.length > 320 || !isUmaDomain(match[2])) return undefined;
  const domain = match[2].toLowerCase();
  return { local: match[1], domain, address: `$${match[1]}@${domain}` };
}

export function domainOf(address: string): string | undefined {
  return parseUmaAddress(address)?.domain;
}
