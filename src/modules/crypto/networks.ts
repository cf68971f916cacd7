import type { Problem } from '../external-accounts/validators/problem.js';
import {
  checkEvmAddress,
  checkLightningAddress,
  checkLightningInvoice,
  checkSolanaAddress,
  checkSparkAddress,
} from '../external-accounts/validators/crypto.js';

export const CRYPTO_NETWORKS = [
  'SOLANA_MAINNET',
  'SOLANA_DEVNET',
  'ETHEREUM_MAINNET',
  'ETHEREUM_TESTNET',
  'BASE_MAINNET',
  'BASE_TESTNET',
  'SPARK_MAINNET',
  'SPARK_TESTNET',
  'LIGHTNING_MAINNET',
  'LIGHTNING_REGTEST',
] as const;
export type CryptoNetwork = (typeof CRYPTO_NETWORKS)[number];

export interface NetworkProfile {
  /** Asset the network's fee is paid in. */
  feeAsset: 'SOL' | 'ETH' | 'BTC';
  /** Assets that can be withdrawn on it. */
  assets: string[];
  /** Typical fee of one withdrawal, in the smallest unit of feeAsset. */
  networkFee: (asset: string) => number;
  checkAddress: (address: string) => Problem | undefined;
}

const GWEI = 1_000_000_000;

const solana: NetworkProfile = {
  feeAsset: 'SOL',
  assets: ['SOL', 'USDC', 'USDT'],
  // Base signature fee plus a priority fee; token transfers may also fund the recipient's
  // token account, which the estimate leaves out (it is refundable rent, not a fee).
  networkFee: () => 5_000 + 10_000,
  checkAddress: checkSolanaAddress,
};

const ethereum: NetworkProfile = {
  feeAsset: 'ETH',
  assets: ['ETH', 'USDC', 'USDT'],
  // 21,000 gas for ether, ~65,000 for an ERC-20 transfer, at 20 gwei.
  networkFee: (asset) => (asset === 'ETH' ? 21_000 : 65_000) * 20 * GWEI,
  checkAddress: checkEvmAddress,
};

const base: NetworkProfile = {
  feeAsset: 'ETH',
  assets: ['ETH', 'USDC'],
  // The same gas at 0.01 gwei (an L2), plus a small L1 data fee.
  networkFee: (asset) => (asset === 'ETH' ? 21_000 : 65_000) * GWEI / 100 + 20 * GWEI,
  checkAddress: checkEvmAddress,
};

const spark: NetworkProfile = {
  feeAsset: 'BTC',
  assets: ['BTC', 'USDC'],
  // Transfers between Spark addresses carry no on-chain fee.
  networkFee: () => 0,
  checkAddress: checkSparkAddress,
};

const lightning: NetworkProfile = {
  feeAsset: 'BTC',
  assets: ['BTC'],
  // A typical routing fee budget, in satoshis.
  networkFee: () => 10,
  checkAddress: (address) => (address.includes('@') ? checkLightningAddress(address) : checkLightningInvoice(address)),
};

export const NETWORKS: Record<CryptoNetwork, NetworkProfile> = {
  SOLANA_MAINNET: solana,
  SOLANA_DEVNET: solana,
  ETHEREUM_MAINNET: ethereum,
  ETHEREUM_TESTNET: ethereum,
  BASE_MAINNET: base,
  BASE_TESTNET: base,
  SPARK_MAINNET: spark,
  SPARK_TESTNET: spark,
  LIGHTNING_MAINNET: lightning,
  LIGHTNING_REGTEST: lightning,
};
