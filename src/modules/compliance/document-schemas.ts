import { Type, type Static } from 'typebox';
import { DateTime, StringEnum } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';

export const DOCUMENT_TYPES = [
  'PASSPORT',
  'DRIVERS_LICENSE',
  'NATIONAL_ID',
  'PROOF_OF_ADDRESS',
  'BANK_STATEMENT',
  'TAX_RETURN',
  'CERTIFICATE_OF_INCORPORATION',
  'ARTICLES_OF_INCORPORATION',
  'ARTICLES_OF_ASSOCIATION',
  'STATE_REGISTRY_EXCERPT',
  'GOOD_STANDING_CERTIFICATE',
  'INFORMATION_STATEMENT',
  'INCUMBENCY_CERTIFICATE',
  'BUSINESS_LICENSE',
  'SHAREHOLDER_REGISTER',
  'POWER_OF_ATTORNEY',
  'UTILITY_BILL',
  'SELFIE',
  'OTHER',
] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** File types accepted, recognised by their first bytes (the declared type must agree). */
export const DOCUMENT_CONTENT_TYPES = ['application/pdf', 'image/jpeg', 'image/png'] as const;
export type DocumentContentType = (typeof DOCUMENT_CONTENT_TYPES)[number];

const SIDES = ['FRONT', 'BACK'] as const;

const formFields = {
  file: Type.String({ format: 'binary', description: 'The file: PDF, JPEG or PNG, at most DOCUMENT_MAX_BYTES (10 MiB by default).' }),
  documentType: StringEnum(DOCUMENT_TYPES, { description: 'Kind of document.' }),
  side: Type.Optional(StringEnum(SIDES, { description: 'Side of a two-sided document (driver\'s license, national id).' })),
  country: Type.String({ pattern: '^[A-Z]{2}$', description: 'Country that issued the document (ISO 3166-1 alpha-2).' }),
  documentNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Number of the document (passport number, …).' })),
};

export const DocumentUploadForm = Type.Object(
  {
    ...formFields,
    documentHolder: Type.String({ minLength: 1, maxLength: 200, description: 'Who the document belongs to: a `Customer:…` or `BeneficialOwner:…` id.' }),
  },
  { additionalProperties: false, description: 'multipart/form-data: the file in `file`, the other fields as text.' },
);
export type DocumentUploadForm = Static<typeof DocumentUploadForm>;

export const DocumentReplaceForm = Type.Object(formFields, {
  additionalProperties: false,
  description: 'multipart/form-data: the new file in `file` and the document\'s metadata, which replace the old ones.',
});
export type DocumentReplaceForm = Static<typeof DocumentReplaceForm>;

export const DocumentView = Type.Object(
  {
    id: Type.String({ description: 'Document identifier (`Document:…`).' }),
    documentHolder: Type.String({ description: 'The Customer or BeneficialOwner the document belongs to.' }),
    documentType: StringEnum(DOCUMENT_TYPES, { description: 'Kind of document.' }),
    side: Type.Optional(StringEnum(SIDES, { description: 'Side of a two-sided document.' })),
    country: Type.String({ description: 'Issuing country (ISO 3166-1 alpha-2).' }),
    documentNumber: Type.Optional(Type.String({ description: 'Number of the document.' })),
    fileName: Type.String({ description: 'File name as uploaded.' }),
    contentType: StringEnum(DOCUMENT_CONTENT_TYPES, { description: 'Corridor extension: the file\'s type, as recognised from its content.' }),
    sizeBytes: Type.Integer({ description: 'Corridor extension: size of the file in bytes.' }),
    createdAt: DateTime('When the document was uploaded.'),
    updatedAt: DateTime('When it was last replaced.'),
  },
  { title: 'Document' },
);
export type DocumentView = Static<typeof DocumentView>;

export const DocumentListQuery = Type.Object({
  documentHolder: Type.Optional(Type.String({ maxLength: 200, description: 'Only documents of this Customer or BeneficialOwner.' })),
  ...PageQuery,
});
export type DocumentListQuery = Static<typeof DocumentListQuery>;
