import type { FastifyInstance } from 'fastify';
import { errors } from '../../http/common-schemas.js';
import { installMultipart, multipartBody } from '../../http/multipart.js';
import type { Api } from '../../http/types.js';
import type { Services } from '../../services.js';
import { CsvUploadForm, ImportAccepted, ImportJobView, JobIdParam } from './schemas.js';

const TAGS = ['Customers'];

/** Bulk customer import; registered in its own scope, which parses multipart bodies. */
export async function customerImportRoutes(app: Api, { customerImport }: Services): Promise<void> {
  await installMultipart(app as unknown as FastifyInstance);

  app.post(
    '/customers/bulk/csv',
    {
      schema: {
        summary: 'Import customers from a CSV file',
        description:
          'multipart/form-data with the CSV in `file` (UTF-8, header row first; columns in the verification guide). The file is checked as a whole ' +
          '(size BULK_IMPORT_MAX_BYTES, rows BULK_IMPORT_MAX_ROWS, known columns), then imported in the background: 202 with the job id. ' +
          'Each row is created like POST /customers; a refused row is listed in the job\'s errors and never stops the others. BULK_UPLOAD.COMPLETED ' +
          'or BULK_UPLOAD.FAILED (no row imported) follows.',
        tags: TAGS,
        consumes: ['multipart/form-data'],
        body: CsvUploadForm,
        response: { 202: ImportAccepted, ...errors(415) },
      },
      preValidation: multipartBody({ maxFileBytes: customerImport.maxBytes }),
    },
    async (request, reply) => reply.code(202).send(await customerImport.accept(request.ctx, request.upload)),
  );

  app.get(
    '/customers/bulk/jobs/:jobId',
    {
      schema: {
        summary: 'Get a bulk import job',
        description: 'Status, progress counts and the refused rows of a CSV import.',
        tags: TAGS,
        params: JobIdParam,
        response: { 200: ImportJobView, ...errors(404) },
      },
    },
    async (request) => customerImport.get(request.ctx, request.params.jobId),
  );
}
