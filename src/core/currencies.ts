/** A currency as the API shows it: ISO 4217 code (or a crypto ticker), name, symbol, minor-unit decimals. */
export interface Currency {
  code: string;
  name: string;
  symbol: string;
  decimals: number;
}

// code|decimals|symbol|name — ISO 4217 active codes plus the crypto assets the API moves.
const TABLE = `
AED|2|د.إ|UAE Dirham
AFN|2|؋|Afghan Afghani
ALL|2|L|Albanian Lek
AMD|2|֏|Armenian Dram
ANG|2|ƒ|Netherlands Antillean Guilder
AOA|2|Kz|Angolan Kwanza
ARS|2|$|Argentine Peso
AUD|2|A$|Australian Dollar
AWG|2|ƒ|Aruban Florin
AZN|2|₼|Azerbaijani Manat
BAM|2|KM|Bosnia-Herzegovina Convertible Mark
BBD|2|$|Barbadian Dollar
BDT|2|৳|Bangladeshi Taka
BGN|2|лв|Bulgarian Lev
BHD|3|.د.ب|Bahraini Dinar
BIF|0|FBu|Burundian Franc
BMD|2|$|Bermudian Dollar
BND|2|$|Brunei Dollar
BOB|2|Bs.|Bolivian Boliviano
BRL|2|R$|Brazilian Real
BSD|2|$|Bahamian Dollar
BTN|2|Nu.|Bhutanese Ngultrum
BWP|2|P|Botswana Pula
BYN|2|Br|Belarusian Ruble
BZD|2|$|Belize Dollar
CAD|2|C$|Canadian Dollar
CDF|2|FC|Congolese Franc
CHF|2|CHF|Swiss Franc
CLP|0|$|Chilean Peso
CNY|2|¥|Chinese Yuan
COP|2|$|Colombian Peso
CRC|2|₡|Costa Rican Colón
CUP|2|$|Cuban Peso
CVE|2|$|Cape Verdean Escudo
CZK|2|Kč|Czech Koruna
DJF|0|Fdj|Djiboutian Franc
DKK|2|kr|Danish Krone
DOP|2|RD$|Dominican Peso
DZD|2|دج|Algerian Dinar
EGP|2|E£|Egyptian Pound
ERN|2|Nfk|Eritrean Nakfa
ETB|2|Br|Ethiopian Birr
EUR|2|€|Euro
FJD|2|$|Fijian Dollar
FKP|2|£|Falkland Islands Pound
GBP|2|£|British Pound
GEL|2|₾|Georgian Lari
GHS|2|GH₵|Ghanaian Cedi
GIP|2|£|Gibraltar Pound
GMD|2|D|Gambian Dalasi
GNF|0|FG|Guinean Franc
GTQ|2|Q|Guatemalan Quetzal
GYD|2|$|Guyanese Dollar
HKD|2|HK$|Hong Kong Dollar
HNL|2|L|Honduran Lempira
HTG|2|G|Haitian Gourde
HUF|2|Ft|Hungarian Forint
IDR|2|Rp|Indonesian Rupiah
ILS|2|₪|Israeli New Shekel
INR|2|₹|Indian Rupee
IQD|3|ع.د|Iraqi Dinar
IRR|2|﷼|Iranian Rial
ISK|0|kr|Icelandic Króna
JMD|2|J$|Jamaican Dollar
JOD|3|د.ا|Jordanian Dinar
JPY|0|¥|Japanese Yen
KES|2|KSh|Kenyan Shilling
KGS|2|с|Kyrgyzstani Som
KHR|2|៛|Cambodian Riel
KMF|0|CF|Comorian Franc
KPW|2|₩|North Korean Won
KRW|0|₩|South Korean Won
KWD|3|د.ك|Kuwaiti Dinar
KYD|2|$|Cayman Islands Dollar
KZT|2|₸|Kazakhstani Tenge
LAK|2|₭|Lao Kip
LBP|2|ل.ل|Lebanese Pound
LKR|2|Rs|Sri Lankan Rupee
LRD|2|$|Liberian Dollar
LSL|2|L|Lesotho Loti
LYD|3|ل.د|Libyan Dinar
MAD|2|د.م.|Moroccan Dirham
MDL|2|L|Moldovan Leu
MGA|2|Ar|Malagasy Ariary
MKD|2|ден|Macedonian Denar
MMK|2|K|Myanmar Kyat
MNT|2|₮|Mongolian Tögrög
MOP|2|MOP$|Macanese Pataca
MRU|2|UM|Mauritanian Ouguiya
MUR|2|₨|Mauritian Rupee
MVR|2|Rf|Maldivian Rufiyaa
MWK|2|MK|Malawian Kwacha
MXN|2|$|Mexican Peso
MYR|2|RM|Malaysian Ringgit
MZN|2|MT|Mozambican Metical
NAD|2|$|Namibian Dollar
NGN|2|₦|Nigerian Naira
NIO|2|C$|Nicaraguan Córdoba
NOK|2|kr|Norwegian Krone
NPR|2|Rs|Nepalese Rupee
NZD|2|NZ$|New Zealand Dollar
OMR|3|ر.ع.|Omani Rial
PAB|2|B/.|Panamanian Balboa
PEN|2|S/|Peruvian Sol
PGK|2|K|Papua New Guinean Kina
PHP|2|₱|Philippine Peso
PKR|2|₨|Pakistani Rupee
PLN|2|zł|Polish Złoty
PYG|0|₲|Paraguayan Guaraní
QAR|2|ر.ق|Qatari Riyal
RON|2|lei|Romanian Leu
RSD|2|дин|Serbian Dinar
RUB|2|₽|Russian Ruble
RWF|0|FRw|Rwandan Franc
SAR|2|﷼|Saudi Riyal
SBD|2|$|Solomon Islands Dollar
SCR|2|₨|Seychellois Rupee
SDG|2|ج.س.|Sudanese Pound
SEK|2|kr|Swedish Krona
SGD|2|S$|Singapore Dollar
SHP|2|£|Saint Helena Pound
SLE|2|Le|Sierra Leonean Leone
SOS|2|Sh|Somali Shilling
SRD|2|$|Surinamese Dollar
SSP|2|£|South Sudanese Pound
STN|2|Db|São Tomé and Príncipe Dobra
SVC|2|₡|Salvadoran Colón
SYP|2|£|Syrian Pound
SZL|2|E|Swazi Lilangeni
THB|2|฿|Thai Baht
TJS|2|SM|Tajikistani Somoni
TMT|2|m|Turkmenistani Manat
TND|3|د.ت|Tunisian Dinar
TOP|2|T$|Tongan Paʻanga
TRY|2|₺|Turkish Lira
TTD|2|TT$|Trinidad and Tobago Dollar
TWD|2|NT$|New Taiwan Dollar
TZS|2|TSh|Tanzanian Shilling
UAH|2|₴|Ukrainian Hryvnia
UGX|0|USh|Ugandan Shilling
USD|2|$|United States Dollar
UYU|2|$U|Uruguayan Peso
UZS|2|soʻm|Uzbekistani Som
VES|2|Bs.|Venezuelan Bolívar
VND|0|₫|Vietnamese Đồng
VUV|0|VT|Vanuatu Vatu
WST|2|T|Samoan Tālā
XAF|0|FCFA|Central African CFA Franc
XCD|2|EC$|East Caribbean Dollar
XOF|0|CFA|West African CFA Franc
XPF|0|₣|CFP Franc
YER|2|﷼|Yemeni Rial
ZAR|2|R|South African Rand
ZMW|2|ZK|Zambian Kwacha
ZWL|2|Z$|Zimbabwean Dollar
BTC|8|₿|Bitcoin
ETH|18|Ξ|Ether
SOL|9|SOL|Solana
USDC|6|USDC|USD Coin
USDT|6|USDT|Tether USD
`;

const CURRENCIES: ReadonlyMap<string, Currency> = new Map(
  TABLE.trim()
    .split('\n')
    .map((line) => {
      const [code, decimals, symbol, name] = line.split('|');
      return [code, Object.freeze({ code, name, symbol, decimals: Number(decimals) })] as const;
    }),
);

export function findCurrency(code: string): Currency | undefined {
  return CURRENCIES.get(code);
}

/** The Currency object for a code the caller has already validated; throws on an unknown code (a bug). */
export function currency(code: string): Currency {
  const found = CURRENCIES.get(code);
  if (!found) throw new Error(`unknown currency ${code}`);
  return found;
}

export function isCurrencyCode(code: string): boolean {
  return CURRENCIES.has(code);
}

export function allCurrencies(): Currency[] {
  return [...CURRENCIES.values()];
}
