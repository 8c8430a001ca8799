/**
 * The trading venue's live state: pools and listed tokens from storage, vault balances and the chain's
 * clock (slot, block height, blockhash) refreshed every slot, and the market graph the router searches.
 * Quotes read only this in-memory state, so pricing never waits on storage or the chain; none is read
 * while the chain says its state is not current (`Chain.unhealthy`), when the clock answers
 * `TradingNotReady("chain")` instead.
 */
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import type { AccountInfo, Chain, LatestBlockhash } from "../../chain/chain.js";
import { decodeTokenAccount } from "../../chain/token-layout.js";
import { every, type Repeating } from "../../every.js";
import type { Catalog } from "../../markets/catalog.js";
import type { Tables } from "../../storage/database.js";
import { TradingNotReady } from "../errors.js";
import { associatedTokenAddress } from "../tx/token-accounts.js";
import type { ExecutionMode, VenueMarket } from "./market.js";
import type { PoolAuthorities } from "./pools/authority.js";
import {
  listPools,
  listTokens,
  listTokensWithoutPool,
  type TokenRecord,
  tradingVersion,
} from "./pools/store.js";
import { MarketGraph } from "./router.js";
import { CPMM_VENUE, CpmmPool } from "./venues/cpmm-pool.js";
import { OUTCOME_DECIMALS, PREDICTION_VENUE, type PredictionVenue } from "./venues/prediction.js";

/** Solana's slot time: balances and the blockhash are refreshed this often. */
export const SLOT_MS = 400;
/** getMultipleAccounts takes at most 100 addresses per call on real RPC nodes. */
const ACCOUNTS_PER_CALL = 100;
/** Storage is checked for new pools every this many slots. */
const RELOAD_EVERY_SLOTS = 5;
/** How long an escrow this instance stored is kept without storage listing it (a read in flight may predate it). */
const RECENT_ESCROW_MS = 5_000;

export interface ChainClock {
  slot: bigint;
  blockHeight: bigint;
  latest: LatestBlockhash;
}

export interface BookLogger {
  error(object: object, message: string): void;
  info(object: object, message: string): void;
}

export interface TradingBookOptions {
  db: Kysely<Tables>;
  chain: Chain;
  authorities: PoolAuthorities;
  /** Outcome tokens against USDC; without it only pools trade. */
  prediction?: PredictionVenue;
  /** Keys of the venue's own that are not pools' (the sandbox's treasury and mint authority). */
  venueKeys?: readonly string[];
  logger?: BookLogger;
}

/** The venue's pools, tokens, markets and chain clock, held in memory and kept fresh every slot. */
export class TradingBook {
  private pools = new Map<Address, CpmmPool>();
  /** Each pool by its authority and by its vaults: the accounts the venue signs for. */
  private poolsByAccount = new Map<string, CpmmPool>();
  private tokens = new Map<Address, TokenRecord>();
  private version = -1;
  private refreshing: Repeating | undefined;
  private ticks = 0;
  private clockState: ChainClock | undefined;
  graph = new MarketGraph<VenueMarket>([]);
  /** `GET /tokens` and `GET /tokens-with-decimals` bodies, serialized when first asked after a change. */
  private tokenBodies: { mints: string; withDecimals: string } | undefined;
  /** The stored tokens in listing order. */
  private tokenRecords: readonly TokenRecord[] = [];

  private readonly venueKeys: ReadonlySet<string>;
  /**
   * The escrow authorities of orders not yet closed, which the keeper signs for, with when this
   * instance stored each (0 for those read from storage).
   */
  private orderEscrows = new Map<string, number>();

  constructor(private readonly options: TradingBookOptions) {
    this.venueKeys = new Set(options.venueKeys);
  }

  /** Whether the token registry has been loaded from storage. */
  get loaded(): boolean {
    return this.version >= 0;
  }

  /**
   * The chain's clock as of the last refresh; `TradingNotReady` before the first, and while the chain's
   * state cannot be trusted (see `checkChain`). Every quote reads it first.
   */
  get clock(): ChainClock {
    this.checkChain();
    if (!this.clockState) throw new TradingNotReady("clock", "the chain's latest blockhash is not known yet");
    return this.clockState;
  }

  /**
   * Throws `TradingNotReady("chain")` while the chain says its state is not current (a sandbox that
   * lost its lease to another instance): the balances held here are then no one's to quote or sign
   * from. Checked by every read of the clock, and again just before the venue signs.
   */
  checkChain(): void {
    const unhealthy = this.options.chain.unhealthy?.();
    if (unhealthy) throw new TradingNotReady("chain", unhealthy.message);
  }

  /** Venue names, as `GET /venues` lists them. */
  venues(): string[] {
    return this.options.prediction ? [CPMM_VENUE, PREDICTION_VENUE] : [CPMM_VENUE];
  }

  /** How a venue's markets execute: pools in the order's transaction, prediction markets later. */
  executionModeOf(venue: string): ExecutionMode {
    return venue === PREDICTION_VENUE ? "async" : "sync";
  }

  get prediction(): PredictionVenue | undefined {
    return this.options.prediction;
  }

  /**
   * Follows the catalog: its active markets trade and its determined ones redeem; the outcome mints
   * of the tokenized ones join the registry.
   */
  async updatePredictionMarkets(catalog: Catalog): Promise<void> {
    const { prediction } = this.options;
    if (!prediction) return;
    const unlisted = prediction.update(catalog, (mint) => this.tokens.has(mint as Address));
    if (unlisted.length > 0) await listTokensWithoutPool(this.options.db, unlisted);
    if (await this.reload()) return;
    this.publishTokens();
    this.rebuildGraph();
  }

  /**
   * A token's decimals and program: a listed one, or an outcome mint the prediction venue trades or
   * redeems without listing it (a determined market's, or one not yet initialized); else undefined.
   */
  token(mint: Address): TokenRecord | undefined {
    return this.tokens.get(mint) ?? this.options.prediction?.tokenOf(mint);
  }

  /** The pool with this address. */
  pool(address: Address): CpmmPool | undefined {
    return this.pools.get(address);
  }

  /** The pool whose authority or vault `address` is, if any. */
  poolOf(address: string): CpmmPool | undefined {
    return this.poolsByAccount.get(address);
  }

  /**
   * Whether `address` is one of the venue's own keys or accounts: a pool authority or vault, the
   * treasury, a mint authority, or the escrow authority of an order not yet closed.
   */
  isVenueAccount(address: string): boolean {
    return this.poolsByAccount.has(address) || this.venueKeys.has(address) || this.orderEscrows.has(address);
  }

  /** Counts an order's escrow authority among the venue's keys from now on (the order was just stored). */
  addOrderEscrow(escrow: string): void {
    this.orderEscrows.set(escrow, Date.now());
  }

  /**
   * Replaces the escrows of open orders with what storage holds (`activeEscrows`, read every slot);
   * escrows this instance stored in the last few seconds stay, in case the read began before them.
   */
  followOrderEscrows(stored: readonly string[]): void {
    const recent = Date.now() - RECENT_ESCROW_MS;
    const escrows = new Map(stored.map((escrow): [string, number] => [escrow, 0]));
    for (const [escrow, added] of this.orderEscrows) if (added > recent) escrows.set(escrow, added);
    this.orderEscrows = escrows;
  }

  allPools(): CpmmPool[] {
    return [...this.pools.values()];
  }

  /** Loads pools and tokens, then the balances and the clock; then keeps them fresh every slot. */
  async start(): Promise<void> {
    await this.reload();
    await this.refresh();
    this.refreshing = every(
      SLOT_MS,
      async () => {
        this.ticks += 1;
        if (this.ticks % RELOAD_EVERY_SLOTS === 0) await this.reload();
        await this.refresh();
      },
      { onError: (error) => this.options.logger?.error({ err: error }, "trading state refresh failed") },
    );
  }

  /** Stops the refreshes; one in progress finishes. */
  stop(): void {
    this.refreshing?.stop();
    this.refreshing = undefined;
  }

  /** `GET /tokens`'s body. */
  get tokensJson(): string {
    return this.serializedTokens().mints;
  }

  /** `GET /tokens-with-decimals`' body. */
  get tokensWithDecimalsJson(): string {
    return this.serializedTokens().withDecimals;
  }

  /** The token registry changed: its bodies are serialized again when next asked. */
  private publishTokens(): void {
    this.tokenBodies = undefined;
  }

  /**
   * The token registry serialized: the stored tokens in listing order, then the outcome mints of
   * determined markets that redeem, which the catalog holds instead of storage. Done when asked, not
   * at every catalog reload: at 36,000 markets the registry holds ~140,000 mints, and serializing
   * them was ~250 ms of the event loop after each sync, whether or not anyone listed the tokens.
   */
  private serializedTokens(): { mints: string; withDecimals: string } {
    if (this.tokenBodies) return this.tokenBodies;
    const mints: string[] = this.tokenRecords.map((token) => token.mint);
    const withDecimals: [string, number][] = this.tokenRecords.map((token) => [token.mint, token.decimals]);
    for (const mint of this.options.prediction?.redeemOnlyMints ?? []) {
      if (this.tokens.has(mint as Address)) continue;
      mints.push(mint);
      withDecimals.push([mint, OUTCOME_DECIMALS]);
    }
    this.tokenBodies = { mints: JSON.stringify(mints), withDecimals: JSON.stringify(withDecimals) };
    return this.tokenBodies;
  }

  /** Re-reads pools and tokens when storage has changed; returns whether anything did. */
  async reload(): Promise<boolean> {
    const { db, authorities } = this.options;
    const version = await tradingVersion(db);
    if (version === this.version) return false;
    const [poolRecords, tokenRecords] = await Promise.all([listPools(db), listTokens(db)]);
    const tokens = new Map(tokenRecords.map((token) => [token.mint, token]));
    const pools = new Map<Address, CpmmPool>();
    for (const record of poolRecords) {
      const kept = this.pools.get(record.address);
      if (kept) {
        pools.set(record.address, kept);
        continue;
      }
      const tokenA = tokens.get(record.mintA);
      const tokenB = tokens.get(record.mintB);
      if (!tokenA || !tokenB) continue;
      const authority = authorities.authority(record.keyId);
      const vaults = [
        associatedTokenAddress(authority.address, tokenA.mint, tokenA.program),
        associatedTokenAddress(authority.address, tokenB.mint, tokenB.program),
      ] as const;
      pools.set(record.address, new CpmmPool(record, [tokenA, tokenB], vaults, authority));
    }
    this.pools = pools;
    this.poolsByAccount = new Map();
    for (const pool of pools.values()) {
      this.poolsByAccount.set(pool.authority.address, pool);
      for (const vault of pool.vaults) this.poolsByAccount.set(vault, pool);
    }
    this.tokens = tokens;
    this.tokenRecords = tokenRecords;
    this.publishTokens();
    this.rebuildGraph();
    const first = this.version < 0;
    this.version = version;
    if (!first)
      this.options.logger?.info({ pools: pools.size, tokens: tokens.size }, "trading pools reloaded");
    return true;
  }

  /**
   * Reads every vault balance and the chain's clock, and releases lapsed reservations; reads nothing
   * while the chain's state cannot be trusted (the clock refuses quotes meanwhile).
   */
  async refresh(): Promise<void> {
    const { chain } = this.options;
    if (chain.unhealthy?.()) return;
    const [latest, slot, blockHeight] = await Promise.all([
      chain.getLatestBlockhash(),
      chain.getSlot(),
      chain.getBlockHeight(),
    ]);
    const pools = [...this.pools.values()];
    const accounts = await this.readAccounts(pools.flatMap((pool) => pool.vaults));
    pools.forEach((pool, index) => {
      for (const side of [0, 1] as const) {
        const account = accounts[index * 2 + side];
        const decoded = account ? decodeTokenAccount(pool.vaults[side], account.owner, account.data) : null;
        pool.observeBalance(side, decoded?.amount ?? 0n);
      }
    });
    // Where output left a vault, the tickets that now exist tell which families' transactions landed.
    const tickets = [...new Set(pools.flatMap((pool) => pool.ticketsToCheck()))];
    const landed = new Set<string>();
    if (tickets.length > 0)
      (await this.readAccounts(tickets)).forEach((account, index) => {
        if (account) landed.add(tickets[index] as string);
      });
    for (const pool of pools) {
      pool.settleTickets(landed);
      pool.expireReservations(blockHeight);
    }
    this.clockState = { slot, blockHeight, latest };
  }

  /** Reads accounts in calls of at most `ACCOUNTS_PER_CALL`. */
  private async readAccounts(addresses: readonly Address[]): Promise<(AccountInfo | null)[]> {
    const accounts: (AccountInfo | null)[] = [];
    for (let start = 0; start < addresses.length; start += ACCOUNTS_PER_CALL)
      accounts.push(
        ...(await this.options.chain.getMultipleAccounts(addresses.slice(start, start + ACCOUNTS_PER_CALL))),
      );
    return accounts;
  }

  private rebuildGraph(): void {
    const { prediction } = this.options;
    this.graph = new MarketGraph<VenueMarket>(
      [...this.pools.values()],
      prediction && { venue: PREDICTION_VENUE, find: (mint) => prediction.marketsOf(mint) },
    );
  }
}
