import type { FieldError } from '../../core/errors.js';
import { buildValidator, toFieldErrors } from '../../http/validation.js';
import { CustomerCreate } from '../customers/schemas.js';

/** The columns a customer CSV may have (the reference's), in no particular order. */
export const CSV_COLUMNS = [
  'umaAddress',
  'platformCustomerId',
  'customerType',
  'fullName',
  'birthDate',
  'addressLine1',
  'addressLine2',
  'city',
  'state',
  'postalCode',
  'country',
  'platformAccountId',
  'description',
  'email',
  'businessLegalName',
  'businessRegistrationNumber',
  'businessTaxId',
] as const;
type Column = (typeof CSV_COLUMNS)[number];

/** Columns the header must have. */
export const HEADER_REQUIRED: Column[] = ['platformCustomerId', 'customerType'];

const ADDRESS: Column[] = ['addressLine1', 'city', 'state', 'postalCode', 'country'];
const REQUIRED_BY_TYPE: Record<'INDIVIDUAL' | 'BUSINESS', Column[]> = {
  INDIVIDUAL: ['fullName', 'birthDate', ...ADDRESS],
  BUSINESS: ['businessLegalName', ...ADDRESS],
};
const ONLY_FOR: Partial<Record<Column, 'INDIVIDUAL' | 'BUSINESS'>> = {
  fullName: 'INDIVIDUAL',
  birthDate: 'INDIVIDUAL',
  businessLegalName: 'BUSINESS',
  businessRegistrationNumber: 'BUSINESS',
  businessTaxId: 'BUSINESS',
};

/** JSON body paths of POST /customers → the CSV column they come from. */
const COLUMN_OF: Record<string, Column> = {
  'address.line1': 'addressLine1',
  'address.line2': 'addressLine2',
  'address.city': 'city',
  'address.state': 'state',
  'address.postalCode': 'postalCode',
  'address.country': 'country',
  'businessInfo.legalName': 'businessLegalName',
  'businessInfo.registrationNumber': 'businessRegistrationNumber',
  'businessInfo.taxId': 'businessTaxId',
};

/** Names a problem by its CSV column instead of its JSON path. */
export function toColumn(error: FieldError): FieldError {
  return { ...error, field: COLUMN_OF[error.field] ?? error.field };
}

export type Row = Partial<Record<Column, string>>;

/** Pairs a record's values with the header's columns; empty values count as absent. */
export function rowOf(header: string[], values: string[]): Row {
  const row: Row = {};
  header.forEach((column, i) => {
    const value = values[i]?.trim();
    if (value) row[column as Column] = value;
  });
  return row;
}

const validateCreate = buildValidator()({ schema: CustomerCreate, httpPart: 'body', method: 'POST', url: '/customers' } as never) as unknown as {
  (value: unknown): boolean;
  errors?: Parameters<typeof toFieldErrors>[0] | null;
};

function requiredProblems(row: Row, values: string[], header: string[]): FieldError[] {
  const problems: FieldError[] = [];
  if (values.length > header.length) problems.push({ field: 'row', constraint: 'maxItems', message: `the row has ${values.length} values but the header ${header.length} columns` });
  for (const column of HEADER_REQUIRED) if (!row[column]) problems.push({ field: column, constraint: 'required', message: 'is required' });
  const type = row.customerType;
  if (type && type !== 'INDIVIDUAL' && type !== 'BUSINESS') problems.push({ field: 'customerType', constraint: 'enum', message: 'must be INDIVIDUAL or BUSINESS' });
  if (type !== 'INDIVIDUAL' && type !== 'BUSINESS') return problems;
  for (const column of REQUIRED_BY_TYPE[type]) if (!row[column]) problems.push({ field: column, constraint: 'required', message: `is required for ${type} customers` });
  for (const [column, only] of Object.entries(ONLY_FOR)) {
    if (row[column as Column] && only !== type) problems.push({ field: column, constraint: 'customerType', message: `applies to ${only} customers only` });
  }
  return problems;
}

function createBody(row: Row): Record<string, unknown> {
  const address = { line1: row.addressLine1, line2: row.addressLine2, city: row.city, state: row.state, postalCode: row.postalCode, country: row.country };
  const uma = row.umaAddress && (row.umaAddress.startsWith('$') ? row.umaAddress : `$${row.umaAddress}`);
  const common = { customerType: row.customerType, platformCustomerId: row.platformCustomerId, umaAddress: uma, email: row.email, address: defined(address) };
  const specific =
    row.customerType === 'INDIVIDUAL'
      ? { fullName: row.fullName, birthDate: row.birthDate }
      : { businessInfo: defined({ legalName: row.businessLegalName, registrationNumber: row.businessRegistrationNumber, taxId: row.businessTaxId }) };
  return defined({ ...common, ...specific });
}

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * One CSV record as a POST /customers body, checked the way that endpoint checks its JSON body;
 * problems are named by CSV column. `platformAccountId` and `description` are accepted and unused.
 */
export function customerFromRow(header: string[], values: string[]): { body?: CustomerCreate; problems: FieldError[] } {
  const row = rowOf(header, values);
  const problems = requiredProblems(row, values, header);
  if (problems.length > 0) return { problems };
  const body = createBody(row);
  if (!validateCreate(body)) return { problems: toFieldErrors(validateCreate.errors ?? [], 'body').map(toColumn) };
  return { body: body as CustomerCreate, problems: [] };
}
