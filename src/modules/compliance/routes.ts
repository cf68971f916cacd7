import { errors, IdParam } from '../../http/common-schemas.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { documentRoutes } from './document-routes.js';
import {
  BeneficialOwnerCreate,
  BeneficialOwnerListQuery,
  BeneficialOwnerUpdate,
  BeneficialOwnerView,
  KycLinkQuery,
  KycLinkView,
  VerificationListQuery,
  VerificationRequest,
  VerificationView,
} from './schemas.js';

const TAGS = ['KYC/KYB Verifications'];
const OwnerId = IdParam('beneficialOwnerId', 'Beneficial owner identifier (`BeneficialOwner:…`).');

function verificationRoutes(app: Api, { compliance }: Services): void {
  app.post(
    '/verifications',
    {
      schema: {
        summary: 'Submit a customer for verification',
        description:
          'Checks that everything verification needs is there (fields, documents, beneficial owners). Missing items: RESOLVE_ERRORS with `errors`; ' +
          'fix them and submit again. Complete: sandbox platforms decide at once by magic values, production platforms wait for the operator ' +
          '(PENDING_MANUAL_REVIEW). A customer already under review gets that verification back.',
        tags: TAGS,
        body: VerificationRequest,
        response: { 200: VerificationView, ...errors(404) },
      },
    },
    async (request) => compliance.verifications.submit(request.ctx, request.body),
  );

  app.get(
    '/verifications',
    {
      schema: { summary: 'List verifications', description: 'Newest first.', tags: TAGS, querystring: VerificationListQuery, response: { 200: PageOf(VerificationView, 'verifications'), ...errors() } },
    },
    async (request) => compliance.verifications.list(request.ctx, request.query),
  );

  app.get(
    '/verifications/:verificationId',
    {
      schema: {
        summary: 'Get a verification',
        tags: TAGS,
        params: IdParam('verificationId', 'Verification identifier (`Verification:…`).'),
        response: { 200: VerificationView, ...errors(404) },
      },
    },
    async (request) => compliance.verifications.get(request.ctx, request.params.verificationId),
  );

  app.get(
    '/customers/kyc-link',
    {
      schema: {
        summary: 'Get a KYC link for a customer',
        description: 'A link to the hosted verification flow (KYC_LINK_URL) for an existing customer, with `redirectUri` passed along.',
        tags: TAGS,
        querystring: KycLinkQuery,
        response: { 200: KycLinkView, ...errors(404) },
      },
    },
    async (request) => compliance.kycLink(request.ctx, request.query),
  );
}

function ownerRoutes(app: Api, { compliance }: Services): void {
  app.post(
    '/beneficial-owners',
    {
      schema: {
        summary: 'Add a beneficial owner',
        description: 'A person who owns or controls a business customer. Their KYC runs at once: in the sandbox the last 3 characters of `lastName` decide it, in production it waits for the operator.',
        tags: TAGS,
        body: BeneficialOwnerCreate,
        response: { 201: BeneficialOwnerView, ...errors(404) },
      },
    },
    async (request, reply) => reply.code(201).send(await compliance.owners.create(request.ctx, request.body)),
  );

  app.get(
    '/beneficial-owners',
    {
      schema: {
        summary: 'List the beneficial owners of a business',
        tags: TAGS,
        querystring: BeneficialOwnerListQuery,
        response: { 200: PageOf(BeneficialOwnerView, 'beneficial owners'), ...errors(404) },
      },
    },
    async (request) => compliance.owners.list(request.ctx, request.query),
  );

  app.get(
    '/beneficial-owners/:beneficialOwnerId',
    { schema: { summary: 'Get a beneficial owner', tags: TAGS, params: OwnerId, response: { 200: BeneficialOwnerView, ...errors(404) } } },
    async (request) => compliance.owners.get(request.ctx, request.params.beneficialOwnerId),
  );

  app.patch(
    '/beneficial-owners/:beneficialOwnerId',
    {
      schema: {
        summary: 'Update a beneficial owner',
        description: 'Changes the fields sent; `personalInfo` is merged field by field. A changed identity is screened again.',
        tags: TAGS,
        params: OwnerId,
        body: BeneficialOwnerUpdate,
        response: { 200: BeneficialOwnerView, ...errors(404) },
      },
    },
    async (request) => compliance.owners.update(request.ctx, request.params.beneficialOwnerId, request.body),
  );
}

export function complianceRoutes(app: Api, services: Services): void {
  verificationRoutes(app, services);
  ownerRoutes(app, services);
  // Documents take multipart bodies: their parser lives in a scope of its own.
  void app.register(async (scope) => documentRoutes(scope as unknown as Api, services));
}
