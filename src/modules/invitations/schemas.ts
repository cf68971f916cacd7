import { Type, type Static } from 'typebox';
import { CurrencyAmount, CurrencyCode, DateTime, StringEnum } from '../../http/common-schemas.js';

export const INVITATION_STATUSES = ['PENDING', 'CLAIMED', 'EXPIRED', 'CANCELLED'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

const UmaAddress = (description: string) => Type.String({ minLength: 3, maxLength: 255, description });

export const InvitationCreate = Type.Object(
  {
    inviterUma: UmaAddress('UMA address of your customer who invites (`$name@domain`).'),
    firstName: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'First name to show the invitee when they open the invitation.' })),
    amountToSend: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 9_000_000_000_000_000,
        description:
          'Amount to show the invitee, in the smallest unit of the inviter\'s currency. Display only: after INVITATION.CLAIMED your platform sends the payment itself (sender-locked).',
      }),
    ),
    currency: Type.Optional(
      CurrencyCode('Corridor extension: currency of `amountToSend`, one of the inviter\'s currencies (default: the inviter\'s first currency).'),
    ),
    expiresAt: Type.Optional(DateTime('When the invitation expires, on the platform clock; must be in the future. Left out: it never expires.')),
  },
  { additionalProperties: false },
);
export type InvitationCreate = Static<typeof InvitationCreate>;

export const InvitationClaim = Type.Object(
  { inviteeUma: UmaAddress('UMA address of the customer of your platform who accepts the invitation.') },
  { additionalProperties: false },
);
export type InvitationClaim = Static<typeof InvitationClaim>;

export const InvitationView = Type.Object(
  {
    code: Type.String({ description: 'The invitation code: random and unguessable; whoever has it can read and claim the invitation.' }),
    createdAt: DateTime('When the invitation was created.'),
    claimedAt: Type.Optional(DateTime('When it was claimed.')),
    url: Type.String({ description: 'Where the invitation can be read and claimed (this API\'s resource for it).' }),
    expiresAt: Type.Optional(DateTime('When it expires, if it does.')),
    inviterUma: Type.String({ description: 'UMA address of the inviter.' }),
    inviteeUma: Type.Optional(Type.String({ description: 'UMA address of the invitee, once claimed.' })),
    status: StringEnum(INVITATION_STATUSES, { description: 'PENDING until claimed, cancelled or expired.' }),
    firstName: Type.Optional(Type.String({ description: 'Inviter\'s first name, shown to the invitee.' })),
    amountToSend: Type.Optional(CurrencyAmount),
  },
  { title: 'UmaInvitation' },
);
export type InvitationView = Static<typeof InvitationView>;

export const InvitationCode = Type.Object({
  invitationCode: Type.String({ minLength: 1, maxLength: 100, description: 'The invitation code.' }),
});
