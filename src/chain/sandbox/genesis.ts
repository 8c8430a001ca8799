/**
 * The sandbox chain's genesis: USDC and CASH at their mainnet addresses, wrapped SOL, the demo tokens,
 * the funded venue accounts, and each tokenized market's ledgers and Token-2022 outcome mints (one
 * ledger and pair of mints per settlement rail, deferred until first used: deferred-accounts.ts).
 * Applying it is idempotent: accounts that already exist are left alone, so markets tokenized later
 * are added by applying it again with the longer list.
 */
import type { Address } from "@solana/kit";
import { CASH_MINT, USDC_MINT } from "../../contract/markets.js";
import { forEachInSlices } from "../../slices.js";
import { parseAddress, parseAddressUncached } from "../base58.js";
import { demoTokens } from "../demo-tokens.js";
import type { GenesisMarket } from "../market-ledger.js";
import {
  LAMPORTS_PER_SOL,
  SYSTEM_PROGRAM,
  TOKEN_PROGRAM,
  USDC_DECIMALS,
  WRAPPED_SOL_MINT,
} from "../programs.js";
import { encodeMint } from "../token-layout.js";
import type { VenueKeys } from "../venue-keys.js";
import type { StoredAccount } from "./commit-batch.js";
import { DEFERRED_ACCOUNT_SIZES } from "./deferred-accounts.js";
import type { SandboxChain } from "./sandbox-chain.js";

/** What the treasury starts with: enough for airdrops and fees for the life of a sandbox. */
export const TREASURY_LAMPORTS = 500_000_000n * LAMPORTS_PER_SOL;
const MINT_AUTHORITY_LAMPORTS = 1_000n * LAMPORTS_PER_SOL;

/**
 * Creates whatever venue accounts are missing and defers each market rail's accounts (see
 * deferred-accounts.ts); returns how many accounts it created or deferred.
 */
export async function applyGenesis(
  chain: SandboxChain,
  options: { venueSeed: string; keys: VenueKeys; markets: readonly GenesisMarket[] },
): Promise<number> {
  const authority = options.keys.mintAuthority.address;
  const mintLamports = await chain.getMinimumBalanceForRentExemption(DEFERRED_ACCOUNT_SIZES.mint);
  const mintAccount = (mint: Address, program: Address, decimals: number, withAuthority = true) => ({
    address: mint,
    lamports: mintLamports,
    owner: program,
    executable: false,
    data: encodeMint({
      mintAuthority: withAuthority ? authority : null,
      supply: 0n,
      decimals,
      freezeAuthority: null,
    }),
  });
  const venue: GenesisAccount[] = [
    mintAccount(USDC_MINT, TOKEN_PROGRAM, USDC_DECIMALS),
    // CASH is a 6-decimal SPL token like USDC; here the venue mints it.
    mintAccount(CASH_MINT, TOKEN_PROGRAM, USDC_DECIMALS),
    mintAccount(WRAPPED_SOL_MINT, TOKEN_PROGRAM, 9, false),
    {
      address: options.keys.treasury.address,
      lamports: TREASURY_LAMPORTS,
      owner: SYSTEM_PROGRAM,
      executable: false,
      data: new Uint8Array(0),
    },
    {
      address: authority,
      lamports: MINT_AUTHORITY_LAMPORTS,
      owner: SYSTEM_PROGRAM,
      executable: false,
      data: new Uint8Array(0),
    },
    ...demoTokens(options.venueSeed).map((token) =>
      mintAccount(token.address, TOKEN_PROGRAM, token.decimals),
    ),
  ];
  let created = await installMissing(chain, venue);
  chain.deferredAccounts.setTerms({
    mintAuthority: authority,
    mintLamports,
    ledgerLamports: await chain.getMinimumBalanceForRentExemption(DEFERRED_ACCOUNT_SIZES.ledger),
  });
  const deferred = chain.deferredAccounts;
  // A start adds every rail at once; a reload, none or a few.
  if (deferred.size === 0) deferred.reserve(options.markets.reduce((n, m) => n + (m.rails?.length ?? 1), 0));
  // In slices: a start adds half a million rails at 250,000 markets, seconds of work.
  await forEachInSlices(options.markets, (market) => {
    for (const rail of market.rails ?? [market]) {
      // A rail named again (a market whose rails changed, a chain shared by instances) adds nothing.
      if (deferred.holdsAll(rail)) continue;
      // The catalogue's addresses are checked here, where they enter the chain; the settlement mints
      // are a handful, so theirs are remembered.
      created += deferred.add({
        marketLedger: parseAddressUncached(rail.marketLedger),
        yesMint: parseAddressUncached(rail.yesMint),
        noMint: parseAddressUncached(rail.noMint),
        settlementMint: rail.settlementMint === undefined ? USDC_MINT : parseAddress(rail.settlementMint),
      });
    }
  });
  return created;
}

type GenesisAccount = StoredAccount & { address: Address };

/** Installs those of `wanted` the chain does not hold yet; returns how many. */
async function installMissing(chain: SandboxChain, wanted: readonly GenesisAccount[]): Promise<number> {
  chain.recordGenesis(wanted);
  const existing = await chain.getMultipleAccounts(wanted.map((account) => account.address));
  const missing = wanted.filter((_, i) => existing[i] === null);
  if (missing.length > 0) await chain.installAccounts(missing);
  return missing.length;
}
