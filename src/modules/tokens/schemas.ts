import { Type, type Static } from 'typebox';
import { DateTime, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';

export const PERMISSIONS = ['VIEW', 'TRANSACT', 'MANAGE'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Whether `held` allows what `needed` does: moving money and managing both include seeing. */
export function grants(held: readonly Permission[], needed: Permission): boolean {
  if (held.includes(needed)) return true;
  return needed === 'VIEW' && (held.includes('TRANSACT') || held.includes('MANAGE'));
}

export const PermissionSchema = StringEnum(PERMISSIONS, {
  description: 'VIEW reads everything; TRANSACT also moves money; MANAGE also changes configuration, tokens, customers and accounts.',
});

export const ApiToken = Type.Object(
  {
    id: Type.String({ description: 'Token identifier (`Token:…`).' }),
    name: Type.String({ description: 'Label chosen at creation.' }),
    permissions: Type.Array(PermissionSchema, { description: 'What requests made with this token may do.' }),
    clientId: Type.String({ description: 'Username for HTTP Basic authentication.' }),
    clientSecret: Type.Optional(
      Type.String({ description: 'Password for HTTP Basic authentication. Returned once, at creation; only a hash is kept.' }),
    ),
    createdAt: DateTime('When the token was created.'),
    updatedAt: DateTime('When the token last changed.'),
  },
  { title: 'ApiToken' },
);
export type ApiTokenView = Static<typeof ApiToken>;

export const ApiTokenCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Label to recognize the token by.' }),
    permissions: Type.Array(PermissionSchema, {
      minItems: 1,
      maxItems: 3,
      uniqueItems: true,
      description: 'Permissions to grant.',
    }),
  },
  { additionalProperties: false },
);
export type ApiTokenCreate = Static<typeof ApiTokenCreate>;

export const TokenListQuery = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200, description: 'Only tokens with exactly this name.' })),
  createdAfter: Type.Optional(DateTime('Only tokens created at or after this time.')),
  createdBefore: Type.Optional(DateTime('Only tokens created at or before this time.')),
  updatedAfter: Type.Optional(DateTime('Only tokens updated at or after this time.')),
  updatedBefore: Type.Optional(DateTime('Only tokens updated at or before this time.')),
  ...PageQuery,
});
export type TokenListQuery = Static<typeof TokenListQuery>;
