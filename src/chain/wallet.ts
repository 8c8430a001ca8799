/**
 * What `oddsgate wallet new|balance|airdrop|faucet` does, as functions over the chain interface;
 * the CLI only parses arguments and prints. Wallets are solana-keygen files (mode 0600) under
 * `DATA_DIR/wallets/`, so `solana` and web3.js tools can use them too.
 */
import fs from "node:fs";
import path from "node:path";
import { type Address, address, isAddress } from "@solana/kit";
import { CASH_MINT, USDC_MINT } from "../contract/markets.js";
import type { Chain } from "./chain.js";
import { demoTokens } from "./demo-tokens.js";
import { generateKeypair } from "./ed25519.js";
import { type FaucetGrant, faucet } from "./faucet.js";
import { readKeypairFile, writeKeypairFile } from "./keypair-file.js";
import { LAMPORTS_PER_SOL, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, WRAPPED_SOL_MINT } from "./programs.js";
import { uiAmountString } from "./ui-amount.js";
import type { VenueSigners } from "./venue-keys.js";

const WALLET_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The keypair file of the wallet called `name` in DATA_DIR. */
export function walletFile(dataDir: string, name = "default"): string {
  if (!WALLET_NAME.test(name))
    throw new Error(`wallet name must be 1-64 letters, digits, _ or -, got ${name}`);
  return path.join(dataDir, "wallets", `${name}.json`);
}

/** Creates a new wallet keypair file (refusing to overwrite one); returns its address. */
export function createWallet(file: string): Address {
  if (fs.existsSync(file)) throw new Error(`${file} already exists; choose another wallet name`);
  const keypair = generateKeypair();
  writeKeypairFile(file, keypair);
  return keypair.address;
}

/** The address a wallet argument names: a base58 address, or the name of a wallet in DATA_DIR. */
export function resolveWallet(dataDir: string, nameOrAddress: string): Address {
  if (isAddress(nameOrAddress)) return nameOrAddress;
  const file = walletFile(dataDir, nameOrAddress);
  if (!fs.existsSync(file))
    throw new Error(`no wallet named ${nameOrAddress} (expected ${file}); run: oddsgate wallet new`);
  return readKeypairFile(file).address;
}

/** The mint a token argument names: an address, `USDC`, `CASH`, `SOL`/`wSOL`, or a demo token's symbol. */
export function resolveMint(venueSeed: string, symbolOrAddress: string): Address {
  if (isAddress(symbolOrAddress)) return symbolOrAddress;
  const symbol = symbolOrAddress.toUpperCase();
  if (symbol === "USDC") return USDC_MINT;
  if (symbol === "CASH") return CASH_MINT;
  if (symbol === "SOL" || symbol === "WSOL") return WRAPPED_SOL_MINT;
  const demo = demoTokens(venueSeed).find((token) => token.symbol.toUpperCase() === symbol);
  if (demo) return address(demo.address);
  const known = ["USDC", "CASH", "SOL", ...demoTokens(venueSeed).map((token) => token.symbol)].join(", ");
  throw new Error(`unknown token ${symbolOrAddress}; use a mint address or one of ${known}`);
}

/** Parses a decimal amount such as `12.5` into base units of a token with `decimals`. */
export function parseUiAmount(text: string, decimals: number): bigint {
  const match = /^([0-9]+)(?:\.([0-9]+))?$/.exec(text.trim());
  if (!match) throw new Error(`amount must be a positive decimal number, got ${text}`);
  const fraction = match[2] ?? "";
  if (fraction.length > decimals) throw new Error(`amount ${text} has more than ${decimals} decimals`);
  const units = BigInt(`${match[1]}${fraction.padEnd(decimals, "0")}`);
  if (units <= 0n) throw new Error(`amount must be positive, got ${text}`);
  return units;
}

export interface TokenHolding {
  mint: Address;
  tokenAccount: Address;
  amount: bigint;
  decimals: number;
  /** `amount` scaled by `decimals`, as Solana's uiAmountString. */
  uiAmount: string;
}

export interface WalletBalance {
  address: Address;
  lamports: bigint;
  sol: string;
  tokens: TokenHolding[];
}

/** SOL and every SPL Token and Token-2022 holding of `owner`. */
export async function walletBalance(chain: Chain, owner: Address): Promise<WalletBalance> {
  const [lamports, classic, token2022] = await Promise.all([
    chain.getBalance(owner),
    chain.getTokenAccountsByOwner(owner, { programId: TOKEN_PROGRAM }),
    chain.getTokenAccountsByOwner(owner, { programId: TOKEN_2022_PROGRAM }),
  ]);
  const accounts = [...classic, ...token2022];
  const mintAddresses = [...new Set(accounts.map((account) => account.mint))];
  const mints = await Promise.all(mintAddresses.map((mint) => chain.getMint(mint)));
  const decimalsByMint = new Map(mintAddresses.map((mint, i) => [mint, mints[i]?.decimals ?? 0]));
  const tokens = accounts.map((account) => {
    const decimals = decimalsByMint.get(account.mint) ?? 0;
    return {
      mint: account.mint,
      tokenAccount: account.address,
      amount: account.amount,
      decimals,
      uiAmount: uiAmountString(account.amount, decimals),
    };
  });
  return { address: owner, lamports, sol: uiAmountString(lamports, 9), tokens };
}

/** Airdrops `sol` (a decimal number of SOL) to `owner`; resolves once it has landed. */
export function airdropSol(chain: Chain, owner: Address, sol: string): Promise<string> {
  const lamports = parseUiAmount(sol, 9);
  if (lamports > 1_000n * LAMPORTS_PER_SOL) throw new Error("an airdrop is at most 1000 SOL");
  return chain.requestAirdrop(owner, lamports);
}

/** Grants `owner` a decimal `amount` of `mint` from the venue's faucet; resolves once it has landed. */
export async function faucetTokens(
  chain: Chain,
  signers: VenueSigners,
  owner: Address,
  mint: Address,
  amount: string,
): Promise<FaucetGrant & { amount: bigint }> {
  const info = await chain.getMint(mint);
  if (!info) throw new Error(`${mint} is not a token mint on this chain`);
  const units = parseUiAmount(amount, info.decimals);
  return { ...(await faucet(chain, signers, owner, mint, units)), amount: units };
}
