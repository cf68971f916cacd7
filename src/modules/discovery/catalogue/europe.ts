// Format: see americas.ts.
export const EUROPE = `
GB GBP
Barclays | Barclays Bank UK
HSBC UK | HSBC UK Bank
Lloyds Bank
NatWest | National Westminster Bank
Santander UK
Nationwide | Nationwide Building Society
Monzo | Monzo Bank
Starling Bank
Faster Payments | Faster Payments (any UK account)

DE EUR
Deutsche Bank
Commerzbank
Sparkasse | Sparkassen-Finanzgruppe
ING Germany | ING-DiBa
N26 | N26 Bank

FR EUR
BNP Paribas
Societe Generale | Société Générale
Credit Agricole | Crédit Agricole
La Banque Postale
Credit Mutuel | Crédit Mutuel

ES EUR
Banco Santander
BBVA | Banco Bilbao Vizcaya Argentaria
CaixaBank
Banco Sabadell

IT EUR
Intesa Sanpaolo
UniCredit
Banco BPM
BancoPosta | Poste Italiane BancoPosta

NL EUR
ING Bank | ING Bank N.V.
ABN AMRO
Rabobank
bunq

BE EUR
BNP Paribas Fortis
KBC Bank
Belfius

PT EUR
Caixa Geral de Depositos | Caixa Geral de Depósitos
Millennium bcp | Banco Comercial Português

IE EUR
AIB | Allied Irish Banks
Bank of Ireland

AT EUR
Erste Bank | Erste Bank der oesterreichischen Sparkassen
Raiffeisen Austria | Raiffeisen Bankengruppe Österreich

FI EUR
OP Financial Group
Nordea Finland | Nordea Bank Abp

DK DKK
Danske Bank
Nordea Danmark
Jyske Bank
Nykredit Bank
Sydbank
`;
