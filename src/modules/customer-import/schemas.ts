import { Type, type Static } from 'typebox';
import { DateTime, StringEnum } from '../../http/common-schemas.js';

const STATUSES = ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;

export const CsvUploadForm = Type.Object(
  { file: Type.String({ format: 'binary', description: 'The CSV file (UTF-8; columns in docs/api/verification.md and the reference).' }) },
  { additionalProperties: false, description: 'multipart/form-data with the CSV in `file`.' },
);

export const ImportAccepted = Type.Object(
  {
    jobId: Type.String({ description: 'The import job (`Job:…`); follow it with GET /customers/bulk/jobs/{jobId}.' }),
    status: StringEnum(['PENDING', 'PROCESSING'] as const, { description: 'Always PENDING when accepted.' }),
  },
  { title: 'BulkCustomerImportJobAccepted' },
);
export type ImportAccepted = Static<typeof ImportAccepted>;

const ImportError = Type.Object(
  {
    correlationId: Type.String({ description: 'The row\'s platformCustomerId, or `row N` when it has none.' }),
    code: Type.String({ description: 'Error code, as POST /customers would answer (INVALID_INPUT, PLATFORM_CUSTOMER_ID_EXISTS, …).' }),
    message: Type.String({ description: 'What is wrong.' }),
    details: Type.Object(
      {
        row: Type.Integer({ description: 'Data row number, 1-based (the header is row 0).' }),
        field: Type.Optional(Type.String({ description: 'The CSV column at fault, when one is.' })),
      },
      { additionalProperties: true, description: 'Row number, column, and `errors[]` per column.' },
    ),
  },
  { description: 'Why one row was not imported.' },
);

export const ImportJobView = Type.Object(
  {
    id: Type.String({ description: 'The import job (`Job:…`).' }),
    status: StringEnum(STATUSES, { description: 'PENDING, PROCESSING, then COMPLETED (at least one customer created) or FAILED (none).' }),
    progress: Type.Object(
      {
        total: Type.Integer({ description: 'Data rows in the file.' }),
        processed: Type.Integer({ description: 'Rows handled so far.' }),
        successful: Type.Integer({ description: 'Customers created.' }),
        failed: Type.Integer({ description: 'Rows refused (see `errors`).' }),
      },
      { description: 'Counts so far.' },
    ),
    errors: Type.Array(ImportError, { description: 'One entry per refused row, in file order.' }),
    completedAt: Type.Optional(DateTime('When the import finished.')),
  },
  { title: 'BulkCustomerImportJob' },
);
export type ImportJobView = Static<typeof ImportJobView>;

export const JobIdParam = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 200, description: 'The import job (`Job:…`).' }) });
