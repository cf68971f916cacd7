import { errors } from '../../http/common-schemas.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { InvitationClaim, InvitationCode, InvitationCreate, InvitationView } from './schemas.js';

const TAGS = ['Invitations'];

export function invitationRoutes(app: Api, { invitations }: Services): void {
  app.post(
    '/invitations',
    {
      schema: {
        summary: 'Create an UMA invitation',
        description:
          'An invitation from one of your customers (`inviterUma`) that someone can claim with their UMA address. `amountToSend` is shown to the invitee only: ' +
          'when INVITATION.CLAIMED arrives, your platform sends the payment itself. Expiry follows the platform clock.',
        tags: TAGS,
        body: InvitationCreate,
        response: { 201: InvitationView, ...errors(404) },
      },
    },
    async (request, reply) => reply.code(201).send(await invitations.create(request.ctx, request.body)),
  );

  app.get(
    '/invitations/:invitationCode',
    {
      schema: {
        summary: 'Get an UMA invitation',
        description: 'Any platform of this Corridor instance that knows the code can read the invitation (the invitee is usually another platform\'s customer).',
        tags: TAGS,
        params: InvitationCode,
        response: { 200: InvitationView, ...errors(404) },
      },
    },
    async (request) => invitations.get(request.ctx, request.params.invitationCode),
  );

  app.post(
    '/invitations/:invitationCode/claim',
    {
      schema: {
        summary: 'Claim an UMA invitation',
        description:
          'Any platform of this instance that knows the code claims it for one of its own customers (`inviteeUma`). The invitation becomes CLAIMED and the ' +
          'inviting platform receives INVITATION.CLAIMED. A claimed, cancelled or expired invitation is refused with 400 INVITATION_ALREADY_CLAIMED, ' +
          'INVITATION_CANCELLED or INVITATION_EXPIRED.',
        tags: TAGS,
        params: InvitationCode,
        body: InvitationClaim,
        response: { 200: InvitationView, ...errors(404) },
      },
    },
    async (request) => invitations.claim(request.ctx, request.params.invitationCode, request.body),
  );

  app.post(
    '/invitations/:invitationCode/cancel',
    {
      schema: {
        summary: 'Cancel an UMA invitation',
        description: 'Only the platform that created the invitation may cancel it (403 for others), and only while it is PENDING.',
        tags: TAGS,
        params: InvitationCode,
        response: { 200: InvitationView, ...errors(403, 404) },
      },
    },
    async (request) => invitations.cancel(request.ctx, request.params.invitationCode),
  );
}
