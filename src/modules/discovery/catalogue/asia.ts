// Format: see americas.ts.
export const ASIA = `
IN INR
UPI | UPI (any UPI address)
IMPS | IMPS (any Indian bank account)
State Bank of India
HDFC Bank
ICICI Bank
Axis Bank
Kotak Mahindra Bank
Punjab National Bank
Bank of Baroda

PK PKR
HBL | Habib Bank Limited
MCB Bank
UBL | United Bank Limited
Meezan Bank
Allied Bank
JazzCash
Easypaisa

BD BDT
Sonali Bank
Dutch-Bangla Bank
BRAC Bank
Islami Bank Bangladesh
bKash
Nagad

SG SGD
DBS Bank Ltd
OCBC Bank | Oversea-Chinese Banking Corporation
UOB | United Overseas Bank
Standard Chartered Singapore

HK HKD
HSBC Hong Kong | The Hongkong and Shanghai Banking Corporation
Bank of China (Hong Kong)
Hang Seng Bank
Standard Chartered Hong Kong
Bank of East Asia | The Bank of East Asia

ID IDR
Bank Central Asia
Bank Mandiri
BRI | Bank Rakyat Indonesia
BNI | Bank Negara Indonesia
CIMB Niaga
GoPay
OVO
DANA

MY MYR
Maybank | Malayan Banking Berhad
CIMB Bank
Public Bank
RHB Bank
Hong Leong Bank

PH PHP
BDO Unibank
BPI | Bank of the Philippine Islands
Metrobank | Metropolitan Bank and Trust Company
Landbank | Land Bank of the Philippines
Security Bank
UnionBank | Union Bank of the Philippines
GCash
Maya

TH THB
Bangkok Bank
Kasikornbank
SCB | Siam Commercial Bank
Krungthai Bank
Krungsri | Bank of Ayudhya (Krungsri)

VN VND
Vietcombank
VietinBank
BIDV | Bank for Investment and Development of Vietnam
Techcombank
VPBank
MB Bank | Military Commercial Joint Stock Bank

AE AED
Emirates NBD
First Abu Dhabi Bank
ADCB | Abu Dhabi Commercial Bank
Dubai Islamic Bank
Mashreq | Mashreq Bank
`;
