import { Type, type TProperties, type TSchema } from 'typebox';
import { StringEnum } from '../../../http/common-schemas.js';
import { beneficiaryUnion } from './beneficiary.js';
import { EASTERN_BANK_TYPES } from './banks-east.js';
import { WESTERN_BANK_TYPES } from './banks-west.js';
import type { AccountTypeDef } from './define.js';
import { MOBILE_MONEY_TYPES, WALLET_TYPES } from './mobile-and-wallets.js';

export { identifierOf, text, type AccountInfo, type AccountTypeDef } from './define.js';

/** Every account type the create request accepts, as the reference API lists them. */
export const ACCOUNT_TYPES: readonly AccountTypeDef[] = [...WESTERN_BANK_TYPES, ...EASTERN_BANK_TYPES, ...MOBILE_MONEY_TYPES, ...WALLET_TYPES];

const BY_TYPE = new Map(ACCOUNT_TYPES.map((def) => [def.accountType, def]));

/** The definition of a type the schema has already accepted. */
export function accountTypeDef(accountType: string): AccountTypeDef {
  const def = BY_TYPE.get(accountType);
  if (!def) throw new Error(`unknown account type ${accountType}`);
  return def;
}

function tag(def: AccountTypeDef) {
  return Type.Literal(def.accountType, { description: `${def.title}; currency ${def.currencies.join(' or ')}.` });
}

function beneficiaryField(def: AccountTypeDef): TProperties {
  return def.individual ? { beneficiary: beneficiaryUnion(def.individual) } : {};
}

/** Request shape of one account type. */
export function createVariant(def: AccountTypeDef): TSchema {
  return Type.Object(
    { accountType: tag(def), ...def.fields, ...beneficiaryField(def) },
    { additionalProperties: false, title: def.title },
  );
}

/** Response shape of one account type: the request's fields plus the rails the account can use. */
export function responseVariant(def: AccountTypeDef): TSchema {
  const rails: TProperties =
    def.paymentRails.length > 0
      ? { paymentRails: Type.Array(StringEnum(def.paymentRails, { description: 'A payment rail.' }), { description: 'Rails Corridor can use to pay this account.' }) }
      : {};
  return Type.Object({ accountType: tag(def), ...def.fields, ...rails, ...beneficiaryField(def) }, { title: def.title });
}
