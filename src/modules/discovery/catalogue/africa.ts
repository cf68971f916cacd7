// Format: see americas.ts.
export const AFRICA = `
NG NGN
Access Bank
Zenith Bank
GTBank | Guaranty Trust Bank
First Bank of Nigeria
UBA | United Bank for Africa
Fidelity Bank
Stanbic IBTC Bank
OPay
Moniepoint | Moniepoint Microfinance Bank
Kuda | Kuda Microfinance Bank

GH GHS
GCB Bank
Ecobank Ghana
Absa Bank Ghana
Stanbic Bank Ghana
MTN MoMo Ghana | MTN Mobile Money (Ghana)
Telecel Cash

KE KES
M-Pesa | Safaricom M-Pesa
Airtel Money Kenya
Equity Bank | Equity Bank Kenya
KCB Bank | KCB Bank Kenya
Co-operative Bank of Kenya

TZ TZS
M-Pesa Tanzania | Vodacom M-Pesa (Tanzania)
Tigo Pesa | Mixx by Yas (Tigo Pesa)
Airtel Money Tanzania
CRDB Bank
NMB Bank

UG UGX
MTN MoMo Uganda | MTN Mobile Money (Uganda)
Airtel Money Uganda
Stanbic Bank Uganda

RW RWF
MTN MoMo Rwanda | MTN Mobile Money (Rwanda)
Airtel Money Rwanda
Bank of Kigali

ZM ZMW
MTN MoMo Zambia | MTN Mobile Money (Zambia)
Airtel Money Zambia
Zanaco | Zambia National Commercial Bank

MW MWK
Airtel Money Malawi
TNM Mpamba
National Bank of Malawi

BW BWP
Orange Money Botswana
MyZaka | Mascom MyZaka
FNB Botswana | First National Bank Botswana

ZA ZAR
Standard Bank
FNB | First National Bank
Absa | Absa Bank
Nedbank
Capitec Bank
Investec

EG EGP
National Bank of Egypt
Banque Misr
CIB | Commercial International Bank
QNB Egypt | QNB Al Ahli

CM XAF
MTN MoMo Cameroon | MTN Mobile Money (Cameroon)
Orange Money Cameroon

CG XAF
MTN MoMo Congo | MTN Mobile Money (Congo)
Airtel Money Congo

SN XOF
Orange Money Senegal
Wave Senegal
Free Money | Free Money (Senegal)

CI XOF
Orange Money Cote d'Ivoire | Orange Money Côte d'Ivoire
MTN MoMo Cote d'Ivoire | MTN Mobile Money (Côte d'Ivoire)
Moov Money Cote d'Ivoire | Moov Money Côte d'Ivoire
Wave Cote d'Ivoire | Wave Côte d'Ivoire

BJ XOF
MTN MoMo Benin | MTN Mobile Money (Bénin)
Moov Money Benin | Moov Money Bénin

TG XOF
Flooz | Moov Africa Flooz (Togo)
T-Money | Togocom T-Money
`;
