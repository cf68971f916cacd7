// The bench's sandbox platform is not a regulated institution, so a customer must pass
// verification before it sends money (docs/api/verification.md). Set-ups that send use these.

/** Address verification needs (with fullName and birthDate, which the bench's customers have). */
export const BENCH_ADDRESS = { line1: '1 Bench Street', city: 'Springfield', state: 'IL', postalCode: '62701', country: 'US' };
const BENCH_PDF = new TextEncoder().encode('%PDF-1.4\n1 0 obj <<>> endobj\n%%EOF\n');

/** Uploads an identity document for the customer and submits it for verification (sandbox: APPROVED). */
export async function verifyCustomer(ctx, customerId) {
  const form = new FormData();
  form.set('documentHolder', customerId);
  form.set('documentType', 'PASSPORT');
  form.set('country', 'US');
  form.set('file', new Blob([BENCH_PDF], { type: 'application/pdf' }), 'passport.pdf');
  const document = await ctx.api.form('POST', '/documents', form);
  if (document.status !== 201) throw new Error(`verification set-up: POST /documents → HTTP ${document.status}: ${JSON.stringify(document.body).slice(0, 300)}`);
  const verification = await ctx.api.request('POST', '/verifications', { customerId });
  if (verification.body?.verificationStatus !== 'APPROVED') {
    throw new Error(`verification set-up: POST /verifications → HTTP ${verification.status}: ${JSON.stringify(verification.body).slice(0, 300)}`);
  }
}
