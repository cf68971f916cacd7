import type { FastifyInstance } from 'fastify';
import { errors, IdParam, NoContent } from '../../http/common-schemas.js';
import { installMultipart, multipartBody } from '../../http/multipart.js';
import { PageOf } from '../../http/pagination.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { DocumentListQuery, DocumentReplaceForm, DocumentUploadForm, DocumentView } from './document-schemas.js';

const TAGS = ['Documents'];
const DocumentId = IdParam('documentId', 'Document identifier (`Document:…`).');
const MULTIPART = ['multipart/form-data'];

/** Document routes; registered in their own scope, which parses multipart bodies. */
export async function documentRoutes(app: Api, { compliance }: Services): Promise<void> {
  const { documents } = compliance;
  await installMultipart(app as unknown as FastifyInstance);
  const upload = multipartBody({ maxFileBytes: documents.maxBytes, stagePath: documents.stagePath });

  app.post(
    '/documents',
    {
      schema: {
        summary: 'Upload a verification document',
        description:
          'multipart/form-data with the file in `file` (PDF, JPEG or PNG, recognised by content; at most DOCUMENT_MAX_BYTES, 10 MiB by default) and the metadata as text fields. ' +
          'The file is stored on disk under the documents directory.',
        tags: TAGS,
        consumes: MULTIPART,
        body: DocumentUploadForm,
        response: { 201: DocumentView, ...errors(404, 415) },
      },
      preValidation: upload,
    },
    async (request, reply) => reply.code(201).send(await documents.upload(request.ctx, request.body, request.upload)),
  );

  app.get(
    '/documents',
    { schema: { summary: 'List documents', description: 'Newest first.', tags: TAGS, querystring: DocumentListQuery, response: { 200: PageOf(DocumentView, 'documents'), ...errors() } } },
    async (request) => documents.list(request.ctx, request.query),
  );

  app.get(
    '/documents/:documentId',
    { schema: { summary: 'Get a document', description: 'The document\'s metadata.', tags: TAGS, params: DocumentId, response: { 200: DocumentView, ...errors(404) } } },
    async (request) => documents.get(request.ctx, request.params.documentId),
  );

  app.put(
    '/documents/:documentId',
    {
      schema: {
        summary: 'Replace a document',
        description: 'multipart/form-data like the upload (without `documentHolder`): the new file and metadata replace the old ones, and the old file is deleted.',
        tags: TAGS,
        params: DocumentId,
        consumes: MULTIPART,
        body: DocumentReplaceForm,
        response: { 200: DocumentView, ...errors(404, 415) },
      },
      preValidation: upload,
    },
    async (request) => documents.replace(request.ctx, request.params.documentId, request.body, request.upload),
  );

  app.delete(
    '/documents/:documentId',
    {
      schema: {
        summary: 'Delete a document',
        description: 'Deletes the document and its file. 409 while the customer\'s verification is under review (PENDING_MANUAL_REVIEW).',
        tags: TAGS,
        params: DocumentId,
        response: { 204: NoContent, ...errors(404, 409) },
      },
    },
    async (request, reply) => {
      await documents.remove(request.ctx, request.params.documentId);
      return reply.code(204).send(null);
    },
  );
}
