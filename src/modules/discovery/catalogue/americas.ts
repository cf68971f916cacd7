// `CC CUR` starts a country block; then one institution per line: `bankName | displayName`
// (displayName defaults to bankName). bankName is the stable key clients send back.
export const AMERICAS = `
US USD
Chase Bank | JPMorgan Chase Bank, N.A.
Bank of America | Bank of America, N.A.
Wells Fargo | Wells Fargo Bank, N.A.
Citibank | Citibank, N.A.
U.S. Bank | U.S. Bank National Association
PNC Bank | PNC Bank, N.A.
Truist Bank
Capital One | Capital One, N.A.
TD Bank | TD Bank, N.A.
Goldman Sachs Bank | Goldman Sachs Bank USA
ACH | ACH network (any US bank account)
Fedwire | Fedwire Funds Service (any US bank account)
RTP | RTP instant payments (participating banks)
FedNow | FedNow instant payments (participating banks)

CA CAD
RBC | Royal Bank of Canada
TD Canada Trust
Scotiabank | The Bank of Nova Scotia
BMO | Bank of Montreal
CIBC | Canadian Imperial Bank of Commerce
National Bank of Canada
Desjardins | Desjardins Group
Tangerine | Tangerine Bank

MX MXN
BBVA Mexico | BBVA México
Banorte | Banco Mercantil del Norte (Banorte)
Santander Mexico | Banco Santander México
Banamex
HSBC Mexico | HSBC México
Scotiabank Mexico | Scotiabank Inverlat
Banco Azteca
BanCoppel
Inbursa | Banco Inbursa
Nu Mexico | Nu México
SPEI | SPEI (any CLABE)

BR BRL
Itau | Itaú Unibanco
Bradesco | Banco Bradesco
Banco do Brasil
Caixa | Caixa Econômica Federal
Santander Brasil | Banco Santander Brasil
Nubank | Nu Pagamentos (Nubank)
Inter | Banco Inter
C6 Bank
PicPay
Mercado Pago
PIX | PIX (any PIX key)

CO COP
Bancolombia
Banco de Bogota | Banco de Bogotá
Davivienda | Banco Davivienda
BBVA Colombia
Banco de Occidente
Nequi
Daviplata

GT GTQ
Banco Industrial
Banrural | Banco de Desarrollo Rural
BAM | Banco Agromercantil de Guatemala
G&T Continental | Banco G&T Continental

JM JMD
NCB | National Commercial Bank Jamaica
Scotiabank Jamaica | The Bank of Nova Scotia Jamaica
JN Bank
Sagicor Bank | Sagicor Bank Jamaica

HT HTG
MonCash | MonCash (Digicel)
NatCash | NatCash (Natcom)
`;
