/** `$user@domain`: user 1-64 of a-z 0-9 . _ + - ; domain a host name, optionally with a port. */
const UMA_ADDRESS = /^\$([a-z0-9._+-]{1,64})@([a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?)$/i;
const UMA_DOMAIN = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$/i;

/** A host name, optionally with a port, as the domain of an address or of a signing VASP. */
export function isUmaDomain(value: string): boolean {
  return value.length <= 253 && UMA_DOMAIN.test(value);
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
  if (!match || value.length > 320) return undefined;
  const domain = match[2].toLowerCase();
  return { local: match[1], domain, address: `$${match[1]}@${domain}` };
}

export function domainOf(address: string): string | undefined {
  return parseUmaAddress(address)?.domain;
}
