import { AFRICA } from './africa.js';
import { AMERICAS } from './americas.js';
import { ASIA } from './asia.js';
import { EUROPE } from './europe.js';

/** A receiving institution or rail that external accounts can name as their `bankName`. */
export interface Institution {
  bankName: string;
  displayName: string;
  country: string;
  currency: string;
}

function parse(table: string): Institution[] {
  const out: Institution[] = [];
  let country = '';
  let currency = '';
  for (const line of table.split('\n').map((l) => l.trim())) {
    if (!line) continue;
    const header = /^([A-Z]{2}) ([A-Z]{3})$/.exec(line);
    if (header) {
      [country, currency] = [header[1], header[2]];
      continue;
    }
    const [bankName, displayName] = line.split('|').map((part) => part.trim());
    out.push({ bankName, displayName: displayName || bankName, country, currency });
  }
  return out;
}

export const INSTITUTIONS: readonly Institution[] = Object.freeze([AMERICAS, EUROPE, ASIA, AFRICA].flatMap(parse));
