import { describe, expect, it } from 'vitest';
import {
  bankAccountDigits,
  checkAbaRoutingNumber,
  checkCanadianAccountNumber,
  checkCanadianInstitution,
  checkCanadianTransit,
  checkClabe,
  checkUsAccountNumber,
  clabeCheckDigit,
} from './americas.js';
import { checkIfsc, checkVpa } from './asia.js';
import { checkBrazilianTaxId, checkCnpj, checkCpf, checkPixKey } from './brazil.js';
import { checkBirthDate, checkCountryCode, checkE164, checkEmail, checkUuid } from './common.js';
import { checkBic, checkIban, checkSortCode, checkUkAccountNumber, ibanCheckDigits } from './europe.js';
import { checkMobileNumber, exampleMobileNumber, MOBILE_MONEY_COUNTRIES } from './phone.js';

const ok = (p: unknown) => expect(p).toBeUndefined();
const bad = (p: unknown, constraint: string) => expect(p).toMatchObject({ constraint, message: expect.any(String) });

describe('US', () => {
  it('accepts ABA routing numbers with a valid check digit', () => {
    for (const n of ['021000021', '011000015', '121000358', '026009593', '322271627']) ok(checkAbaRoutingNumber(n));
  });
  it('rejects bad routing numbers', () => {
    bad(checkAbaRoutingNumber('021000022'), 'checksum');
    bad(checkAbaRoutingNumber('123456789'), 'checksum');
    bad(checkAbaRoutingNumber('02100002'), 'length');
    bad(checkAbaRoutingNumber('02100002A'), 'format');
    bad(checkAbaRoutingNumber('991000021'), 'format');
  });
  it('account numbers are 4-17 digits', () => {
    ok(checkUsAccountNumber('1234'));
    ok(checkUsAccountNumber('12345678901234567'));
    bad(checkUsAccountNumber('123'), 'length');
    bad(checkUsAccountNumber('123456789012345678'), 'length');
    bad(checkUsAccountNumber('1234-5678'), 'format');
  });
});

describe('Mexico (CLABE)', () => {
  it('accepts CLABEs whose check digit matches', () => {
    ok(checkClabe('032180000118359719'));
    ok(checkClabe('002010077777777771'));
    const first17 = '01218000012345678';
    ok(checkClabe(first17 + clabeCheckDigit(first17)));
  });
  it('rejects a wrong check digit, length or characters', () => {
    bad(checkClabe('032180000118359718'), 'checksum');
    bad(checkClabe('03218000011835971'), 'length');
    bad(checkClabe('03218000011835971X'), 'format');
  });
});

describe('Canada', () => {
  it('institution 3 digits, transit 5 digits, account 7-12 digits', () => {
    ok(checkCanadianInstitution('003'));
    ok(checkCanadianTransit('00012'));
    ok(checkCanadianAccountNumber('1234567'));
    bad(checkCanadianInstitution('03'), 'length');
    bad(checkCanadianTransit('0012A'), 'format');
    bad(checkCanadianAccountNumber('123456'), 'length');
  });
});

describe('Brazil', () => {
  it('CPF and CNPJ check digits', () => {
    ok(checkCpf('52998224725'));
    ok(checkCpf('11144477735'));
    bad(checkCpf('52998224726'), 'checksum');
    bad(checkCpf('11111111111'), 'checksum');
    bad(checkCpf('529.982.247-25'), 'format');
    ok(checkCnpj('11222333000181'));
    bad(checkCnpj('11222333000182'), 'checksum');
    bad(checkCnpj('00000000000000'), 'checksum');
    ok(checkBrazilianTaxId('52998224725'));
    ok(checkBrazilianTaxId('11222333000181'));
    bad(checkBrazilianTaxId('123456789012'), 'length');
  });
  it('PIX keys follow their declared type', () => {
    ok(checkPixKey('52998224725', 'CPF'));
    bad(checkPixKey('52998224726', 'CPF'), 'checksum');
    ok(checkPixKey('11222333000181', 'CNPJ'));
    bad(checkPixKey('52998224725', 'CNPJ'), 'length');
    ok(checkPixKey('maria.silva@example.com.br', 'EMAIL'));
    bad(checkPixKey('maria.silva@', 'EMAIL'), 'format');
    bad(checkPixKey(`${'a'.repeat(70)}@example.com`, 'EMAIL'), 'length');
    ok(checkPixKey('+5511987654321', 'PHONE'));
    ok(checkPixKey('+551133334444', 'PHONE'));
    bad(checkPixKey('+14155550123', 'PHONE'), 'format');
    bad(checkPixKey('11987654321', 'PHONE'), 'format');
    ok(checkPixKey('123e4567-e89b-42d3-a456-426614174000', 'RANDOM'));
    bad(checkPixKey('123e4567e89b42d3a456426614174000', 'RANDOM'), 'format');
  });
});

describe('IBAN', () => {
  it('accepts registry examples', () => {
    for (const iban of [
      'DE89370400440532013000',
      'GB82WEST12345698765432',
      'AE070331234567890123456',
      'DK5000400440116243',
      'EG380019000500000000263180002',
      'PK36SCBL0000001123456702',
      'FR1420041010050500013M02606',
      'NL91ABNA0417164300',
      'BE68539007547034',
    ]) {
      ok(checkIban(iban));
    }
  });
  it('rejects bad check digits, wrong lengths, unknown countries and formatting', () => {
    bad(checkIban('DE89370400440532013001'), 'checksum');
    bad(checkIban('DE8937040044053201300'), 'length');
    bad(checkIban('US89370400440532013000'), 'country');
    bad(checkIban('de89370400440532013000'), 'format');
    bad(checkIban('DE89 3704 0044 0532 0130 00'), 'format');
  });
  it('restricts countries when asked', () => {
    ok(checkIban('DK5000400440116243', ['DK']));
    bad(checkIban('DE89370400440532013000', ['DK']), 'country');
  });
  it('builds check digits that validate', () => {
    const bban = '370400440532013102';
    ok(checkIban(`DE${ibanCheckDigits('DE', bban)}${bban}`));
  });
});

describe('UK', () => {
  it('sort code 6 digits, account 8 digits', () => {
    ok(checkSortCode('401276'));
    ok(checkUkAccountNumber('12345678'));
    bad(checkSortCode('40-12-76'), 'format');
    bad(checkUkAccountNumber('1234567'), 'length');
  });
});

describe('SWIFT/BIC', () => {
  it('accepts 8 and 11 character codes', () => {
    ok(checkBic('DEUTDEFF'));
    ok(checkBic('DEUTDEFF500'));
    ok(checkBic('EBILAEAD', 'AE'));
  });
  it('rejects bad shapes, unknown countries and the wrong country', () => {
    bad(checkBic('DEUTDEF'), 'format');
    bad(checkBic('deutdeff'), 'format');
    bad(checkBic('DEUTXXFF'), 'country');
    bad(checkBic('DEUTDEFF', 'AE'), 'country');
  });
});

describe('India', () => {
  it('IFSC', () => {
    ok(checkIfsc('HDFC0000123'));
    ok(checkIfsc('SBIN0001234'));
    bad(checkIfsc('HDFC1000123'), 'format');
    bad(checkIfsc('hdfc0000123'), 'format');
  });
  it('UPI addresses', () => {
    ok(checkVpa('priya.sharma@okhdfc'));
    ok(checkVpa('9876543210@ybl'));
    bad(checkVpa('user@'), 'format');
    bad(checkVpa('@upi'), 'format');
    bad(checkVpa('user@up-i'), 'format');
  });
});

describe('mobile numbers', () => {
  it('accepts each country example and rejects other countries', () => {
    for (const country of MOBILE_MONEY_COUNTRIES) ok(checkMobileNumber(exampleMobileNumber(country)!, country));
    bad(checkMobileNumber('+255712345678', 'KE'), 'country');
    bad(checkMobileNumber('+25471234567', 'KE'), 'format');
    bad(checkMobileNumber('0712345678', 'KE'), 'format');
    bad(checkMobileNumber('+254212345678', 'KE'), 'format');
  });
  it('E.164 in general', () => {
    ok(checkE164('+14155550123'));
    bad(checkE164('+0123456789'), 'format');
    bad(checkE164('+1 415 555 0123'), 'format');
  });
});

describe('common fields', () => {
  it('emails, UUIDs and country codes', () => {
    ok(checkEmail('ana@example.com'));
    bad(checkEmail('ana@example'), 'format');
    ok(checkUuid('123e4567-e89b-12d3-a456-426614174000'));
    bad(checkUuid('not-a-uuid'), 'format');
    ok(checkCountryCode('BR'));
    bad(checkCountryCode('XX'), 'country');
  });
  it('birth dates must exist and lie between 1900 and today', () => {
    const today = new Date('2025-10-13T00:00:00Z');
    ok(checkBirthDate('1990-01-15', today));
    ok(checkBirthDate('2000-02-29', today));
    bad(checkBirthDate('2001-02-29', today), 'format');
    bad(checkBirthDate('1990-13-01', today), 'format');
    bad(checkBirthDate('15/01/1990', today), 'format');
    bad(checkBirthDate('2030-01-01', today), 'range');
    bad(checkBirthDate('1899-12-31', today), 'range');
  });
  it('generic account digits', () => {
    ok(bankAccountDigits(6, 10)('123456'));
    bad(bankAccountDigits(6, 10)('12345'), 'length');
  });
});

describe('beneficiary', () => {
  const today = new Date('2025-10-13T00:00:00Z');
  it('accepts a complete individual and a business', async () => {
    const { checkBeneficiary } = await import('./beneficiary.js');
    expect(
      checkBeneficiary(
        {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Ana Souza',
          birthDate: '1990-01-15',
          nationality: 'BR',
          countryOfResidence: 'PT',
          phoneNumber: '+351912345678',
          email: 'ana@example.com',
          address: { line1: 'Rua A 1', postalCode: '1000-001', country: 'PT' },
        },
        today,
      ),
    ).toEqual([]);
    expect(checkBeneficiary({ beneficiaryType: 'BUSINESS', legalName: 'Acme Ltda', countryOfResidence: 'BR' }, today)).toEqual([]);
  });
  it('reports each bad field with its path', async () => {
    const { checkBeneficiary } = await import('./beneficiary.js');
    const problems = checkBeneficiary(
      { fullName: 'X', birthDate: '2031-01-01', nationality: 'ZZ', countryOfResidence: 'QQ', address: { country: 'XX' } },
      today,
    );
    expect(problems.map((p) => [p.field, p.constraint])).toEqual([
      ['birthDate', 'range'],
      ['nationality', 'country'],
      ['countryOfResidence', 'country'],
      ['address.country', 'country'],
    ]);
  });
});
