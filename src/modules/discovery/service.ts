import { INSTITUTIONS, type Institution } from './catalogue/index.js';

export type { Institution } from './catalogue/index.js';

export interface InstitutionFilter {
  country?: string;
  currency?: string;
}

/** Case, accents and spacing do not distinguish bank names ("Banco de Bogotá" = "banco de bogota"). */
function nameKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

function matches(item: Institution, filter: InstitutionFilter): boolean {
  return (!filter.country || item.country === filter.country) && (!filter.currency || item.currency === filter.currency);
}

const byName = new Map<string, Institution[]>();
for (const item of INSTITUTIONS) {
  for (const key of new Set([nameKey(item.bankName), nameKey(item.displayName)])) {
    byName.set(key, [...(byName.get(key) ?? []), item]);
  }
}

/**
 * The built-in catalogue of receiving institutions and rails (no database: it ships with the
 * release, so every instance answers the same).
 */
export function createDiscoveryService() {
  function list(filter: InstitutionFilter = {}): { data: Institution[] } {
    const country = filter.country?.toUpperCase();
    const currency = filter.currency?.toUpperCase();
    return { data: INSTITUTIONS.filter((item) => matches(item, { country, currency })).map((item) => ({ ...item })) };
  }

  /** The institution a client-supplied name refers to (its bankName or displayName, loosely matched). */
  function findInstitution(bankName: string, filter: InstitutionFilter = {}): Institution | undefined {
    const found = byName.get(nameKey(bankName))?.find((item) => matches(item, filter));
    return found && { ...found };
  }

  function isKnownBankName(bankName: string, filter: InstitutionFilter = {}): boolean {
    return findInstitution(bankName, filter) !== undefined;
  }

  return { list, findInstitution, isKnownBankName };
}

export type DiscoveryService = ReturnType<typeof createDiscoveryService>;
