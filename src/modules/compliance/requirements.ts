import type { Customer } from '../customers/service.js';
import type { DocumentType } from './document-schemas.js';
import type { OwnerRow } from './repository.js';
import type { VerificationErrorType, VerificationErrorView } from './schemas.js';

export const IDENTITY_DOCUMENTS: DocumentType[] = ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'];
export const LEGAL_PRESENCE_DOCUMENTS: DocumentType[] = ['CERTIFICATE_OF_INCORPORATION', 'ARTICLES_OF_INCORPORATION', 'ARTICLES_OF_ASSOCIATION', 'STATE_REGISTRY_EXCERPT'];

export interface HeldDocument {
  holder_id: string;
  document_type: DocumentType;
}

function missingField(resourceId: string, field: string, reason: string): VerificationErrorView {
  return { resourceId, type: 'MISSING_FIELD', field, reason };
}

function missingDocument(resourceId: string, type: VerificationErrorType, accepted: DocumentType[], reason: string): VerificationErrorView {
  return { resourceId, type, acceptedDocumentTypes: accepted, reason };
}

function holds(documents: HeldDocument[], holderId: string, accepted: DocumentType[]): boolean {
  return documents.some((d) => d.holder_id === holderId && accepted.includes(d.document_type));
}

function individualProblems(customer: Customer, documents: HeldDocument[]): VerificationErrorView[] {
  const problems: VerificationErrorView[] = [];
  if (!customer.fullName) problems.push(missingField(customer.id, 'customer.fullName', 'Full name is required'));
  if (!customer.birthDate) problems.push(missingField(customer.id, 'customer.birthDate', 'Date of birth is required'));
  if (!customer.address) problems.push(missingField(customer.id, 'customer.address', 'Residential address is required'));
  if (!holds(documents, customer.id, IDENTITY_DOCUMENTS)) {
    problems.push(missingDocument(customer.id, 'MISSING_IDENTITY_DOCUMENT', IDENTITY_DOCUMENTS, 'An identity document is required'));
  }
  return problems;
}

function businessProblems(customer: Customer, owners: OwnerRow[], documents: HeldDocument[]): VerificationErrorView[] {
  const problems: VerificationErrorView[] = [];
  const info = customer.businessInfo;
  if (!info?.legalName) problems.push(missingField(customer.id, 'customer.businessInfo.legalName', 'Legal name is required'));
  if (!info?.registrationNumber) problems.push(missingField(customer.id, 'customer.businessInfo.registrationNumber', 'Registration number is required'));
  if (!customer.address) problems.push(missingField(customer.id, 'customer.address', 'Registered address is required'));
  if (!holds(documents, customer.id, LEGAL_PRESENCE_DOCUMENTS)) {
    problems.push(missingDocument(customer.id, 'MISSING_LEGAL_PRESENCE_DOCUMENT', LEGAL_PRESENCE_DOCUMENTS, 'A document proving the business exists is required'));
  }
  if (owners.length === 0) {
    problems.push({ resourceId: customer.id, type: 'MISSING_BENEFICIAL_OWNER', reason: 'At least one beneficial owner is required (POST /beneficial-owners)' });
  }
  for (const owner of owners) {
    if (!holds(documents, owner.id, IDENTITY_DOCUMENTS)) {
      problems.push(missingDocument(owner.id, 'MISSING_IDENTITY_DOCUMENT', IDENTITY_DOCUMENTS, 'An identity document of the beneficial owner is required'));
    }
  }
  return problems;
}

/** Everything that must be supplied before the customer can be verified; empty when complete. */
export function missingItems(customer: Customer, owners: OwnerRow[], documents: HeldDocument[]): VerificationErrorView[] {
  return customer.customerType === 'INDIVIDUAL' ? individualProblems(customer, documents) : businessProblems(customer, owners, documents);
}
