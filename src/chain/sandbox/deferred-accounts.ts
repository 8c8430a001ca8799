/**
 * The genesis accounts of tokenized markets (each settlement rail's ledger and two outcome mints),
 * held as a promise instead of as accounts: a 50,000-market catalogue names about 220,000 of them,
 * which as LiteSVM accounts (and stored rows) cost ~650 MB and eight seconds at start, though a trade
 * ever touches a few. Each is a pure function of its rail's addresses and the venue's mint authority,
 * so reads answer it from here, and the executor creates it in LiteSVM the first time a transaction
 * names it; what the transaction writes is then committed like any account. One created and never
 * written is not stored, and after a restart it is deferred again, with the same content.
 *
 * No deferred account can be closed (the mints have no close authority, and each ledger is owned by an
 * address that is no program), so one absent from LiteSVM is always still the pristine one.
 */
import type { Address } from "@solana/kit";
import { AddressIndex } from "../address-index.js";
import { encodeMarketLedger, MARKET_LEDGER_SIZE } from "../market-ledger.js";
import { TOKEN_2022_PROGRAM } from "../programs.js";
import { encodeMint, MINT_SIZE } from "../token-layout.js";
import type { StoredAccount } from "./commit-batch.js";

/** Outcome tokens: 1 contract = 1,000,000 units (contract §7). */
export const OUTCOME_MINT_DECIMALS = 6;

/** One settlement rail's accounts, at addresses already checked. */
export interface DeferredRail {
  readonly marketLedger: Address;
  readonly yesMint: Address;
  readonly noMint: Address;
  readonly settlementMint: Address;
}

/** A deferred account as LiteSVM would hold it; its owner is an address checked at genesis. */
export type DeferredAccount = StoredAccount & { owner: Address };

/** What every deferred account shares: who mints outcome tokens, and the rent-exempt balances. */
export interface DeferredAccountTerms {
  readonly mintAuthority: Address;
  readonly mintLamports: bigint;
  readonly ledgerLamports: bigint;
}

const YES = 0;
const NO = 1;
const LEDGER = 2;

/** The deferred genesis accounts of market rails (see the module comment). */
export class DeferredAccounts {
  private terms: DeferredAccountTerms | undefined;
  private readonly rails: DeferredRail[] = [];
  /** Address → rail index × 3 + part. */
  private readonly byAddress = new AddressIndex((slot) => {
    const rail = this.rails[Math.floor(slot / 3)] as DeferredRail;
    const part = slot % 3;
    return part === YES ? rail.yesMint : part === NO ? rail.noMint : rail.marketLedger;
  });

  /** How many accounts are deferred (created or not). */
  get size(): number {
    return this.byAddress.size;
  }

  /** Sets the shared terms; they never change for a chain (the same keys and rent every start). */
  setTerms(terms: DeferredAccountTerms): void {
    this.terms = terms;
  }

  /** Defers `rail`'s three accounts; returns how many of them were not deferred already. */
  add(rail: DeferredRail): number {
    // In place first: the index reads an address back through its rail.
    const index = this.rails.push(rail) - 1;
    let added = 0;
    for (const [part, address] of [
      [YES, rail.yesMint],
      [NO, rail.noMint],
      [LEDGER, rail.marketLedger],
    ] as const) {
      if (this.byAddress.add(address, index * 3 + part)) added++;
    }
    if (added === 0) this.rails.pop();
    return added;
  }

  /** Makes room for `rails` more rails' accounts at once (a catalogue's, at start). */
  reserve(rails: number): void {
    this.byAddress.reserve(this.byAddress.size + rails * 3);
  }

  /** Whether accounts are deferred at all three of a rail's addresses (so adding it would add none). */
  holdsAll(rail: { marketLedger: string; yesMint: string; noMint: string }): boolean {
    return this.has(rail.yesMint) && this.has(rail.noMint) && this.has(rail.marketLedger);
  }

  /** Whether an account is deferred at `address` (created or not). */
  has(address: string): boolean {
    return this.byAddress.has(address);
  }

  /**
   * The deferred addresses whose pristine account `program` owns (outcome mints or ledgers), only
   * those of `dataSize` bytes when it is given: a filter by size then skips them without reading any.
   */
  *ownedBy(program: Address, dataSize?: number): Iterable<Address> {
    const parts =
      program === TOKEN_2022_PROGRAM ? [YES, NO] : program === this.terms?.mintAuthority ? [LEDGER] : [];
    const sized = parts.filter((part) => dataSize === undefined || dataSize === sizeOf(part));
    if (sized.length > 0) yield* this.addressesOf(sized);
  }

  /** The lamports of the pristine account at `address` (0 when none is deferred there), without building it. */
  lamportsAt(address: string): bigint {
    const slot = this.byAddress.get(address);
    if (slot === undefined || !this.terms) return 0n;
    return slot % 3 === LEDGER ? this.terms.ledgerLamports : this.terms.mintLamports;
  }

  /** Every deferred address. */
  all(): Iterable<Address> {
    return this.addressesOf([YES, NO, LEDGER]);
  }

  // Each address once: a rail added after another deferred some of its addresses holds them too.
  private *addressesOf(parts: readonly number[]): Iterable<Address> {
    for (let index = 0; index < this.rails.length; index++) {
      const rail = this.rails[index] as DeferredRail;
      for (const part of parts) {
        const address = part === YES ? rail.yesMint : part === NO ? rail.noMint : rail.marketLedger;
        if (this.byAddress.get(address) === index * 3 + part) yield address;
      }
    }
  }

  /** The pristine account at `address`, if one is deferred there. */
  account(address: string): DeferredAccount | undefined {
    const slot = this.byAddress.get(address);
    if (slot === undefined || !this.terms) return undefined;
    const rail = this.rails[Math.floor(slot / 3)] as DeferredRail;
    const { mintAuthority, mintLamports, ledgerLamports } = this.terms;
    if (slot % 3 === LEDGER) {
      return {
        address,
        lamports: ledgerLamports,
        owner: mintAuthority,
        executable: false,
        data: encodeMarketLedger({ ...rail, authority: mintAuthority }),
      };
    }
    return {
      address,
      lamports: mintLamports,
      owner: TOKEN_2022_PROGRAM,
      executable: false,
      data: encodeMint({
        mintAuthority,
        supply: 0n,
        decimals: OUTCOME_MINT_DECIMALS,
        freezeAuthority: null,
      }),
    };
  }
}

// The data size of a deferred account by its part of the rail.
function sizeOf(part: number): number {
  return part === LEDGER ? MARKET_LEDGER_SIZE : MINT_SIZE;
}

/** The account sizes deferred accounts take, for their rent-exempt balances. */
export const DEFERRED_ACCOUNT_SIZES = { mint: MINT_SIZE, ledger: MARKET_LEDGER_SIZE } as const;
