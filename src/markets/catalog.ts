/**
 * The catalog: the in-memory read model of every series, event and market. It is built once per
 * catalogue version from storage and never mutated; a new version replaces it whole, so readers
 * never see half an update. Response JSON is serialized once here, not per request, but for a
 * market's accounts map, written from its addresses when served (see `marketParts`).
 */

import crypto from "node:crypto";
import { LRUCache } from "lru-cache";
import { AddressIndex } from "../chain/address-index.js";
import type {
  EventRecord,
  Market,
  MarketRecord,
  MarketStatus,
  Series,
  SortKey,
} from "../contract/markets.js";
import { forEachInSlices } from "../slices.js";
import { type MarketAccounts, type MarketAddresses, marketAccounts, SETTLEMENT_MINTS } from "./accounts.js";
import { ChunkUse, JsonArena } from "./json-arena.js";
import { type CatalogueHead, parseMarketRow, type StoredMarket, type StoredMarketRow } from "./store.js";

/** What the catalog keeps of a market besides its JSON: what filters, search and trading read. */
export type MarketFacts = Pick<
  MarketRecord,
  | "ticker"
  | "eventTicker"
  | "status"
  | "result"
  | "tokenized"
  | "scalarOutcomePct"
  | "openTime"
  | "closeTime"
  | "expirationTime"
>;

export interface MarketEntry {
  readonly record: MarketFacts;
  /** A digest of the stored row's record text: an unchanged row is not parsed again on reload. */
  readonly fingerprint: string;
  /** Its ticker, title and subtitles, lower-cased and joined by NUL. */
  readonly searchText: string;
  /** The USDC rail's accounts at the top, every rail (USDC, CASH) in `rails`. */
  readonly addresses: MarketAccounts;
  /**
   * The wire Market serialized as UTF-8 (sent as is, never re-encoded), in three parts: its own bytes
   * without the value of `accounts`, which goes in at byte `accountsAt` (`marketParts`), then its
   * ending (`jsonTail`), which most markets share with others.
   */
  readonly json: Buffer;
  readonly accountsAt: number;
  readonly jsonTail: Buffer;
  /** Its own sort keys; its liquidity is its event's (`Catalog.liquidityOf`). */
  readonly sortKeys: Readonly<Omit<Record<SortKey, number>, "liquidity">>;
}

const EMPTY_ACCOUNTS = Buffer.from("{}");

/**
 * A market's serialized wire Market in parts: its own bytes around its `accounts` map, which is
 * serialized here from the addresses the entry holds anyway (kept as text, it was over a third of
 * every market's bytes: 148 MB at 250,000 markets), or `{}` without accounts; then its ending.
 */
function marketParts(market: MarketEntry, withAccounts: boolean): Buffer[] {
  const { json, accountsAt } = market;
  const accounts = withAccounts
    ? Buffer.from(accountsJson(market.record, market.addresses), "latin1")
    : EMPTY_ACCOUNTS;
  return [json.subarray(0, accountsAt), accounts, json.subarray(accountsAt), market.jsonTail];
}

/**
 * A market's wire `accounts` map as JSON: one entry per rail, USDC first (so a client reading the
 * first entry sees what it always did), each with the market's state. Written out rather than built as
 * an object for `JSON.stringify`: about half the time, and every character is ASCII (base58
 * addresses, fixed words, a number).
 */
function accountsJson(record: MarketFacts, addresses: MarketAccounts): string {
  const determined = record.status === "determined" || record.status === "finalized";
  const redemption = record.tokenized && determined ? '"open"' : "null";
  const state = `"isInitialized":${record.tokenized},"redemptionStatus":${redemption},"scalarOutcomePct":${JSON.stringify(record.scalarOutcomePct)}}`;
  let json = "{";
  for (const rail of addresses.rails) {
    if (json.length > 1) json += ",";
    json += `"${rail.settlementMint}":{"marketLedger":"${rail.marketLedger}","yesMint":"${rail.yesMint}","noMint":"${rail.noMint}",${state}`;
  }
  return `${json}}`;
}

/**
 * Whether a lower-cased search token (never holding NUL, which separates the fields) appears in the
 * event's own fields or in one of its markets'.
 */
export function eventMentions(event: EventEntry, token: string): boolean {
  return event.searchText.includes(token) || event.markets.some((m) => m.searchText.includes(token));
}

/** The outcome mints of a market, every rail's yes and no mint. */
export function outcomeMintsOf(market: MarketEntry): string[] {
  return market.addresses.rails.flatMap((rail) => [rail.yesMint, rail.noMint]);
}

export interface EventEntry {
  readonly record: EventRecord;
  readonly markets: readonly MarketEntry[];
  readonly sortKeys: Record<SortKey, number>;
  readonly statuses: ReadonlySet<MarketStatus>;
  /** True when any of its markets is tokenized. */
  readonly isInitialized: boolean;
  /** Its ticker, series ticker, title and subtitle, lower-cased and joined by NUL (its markets keep theirs). */
  readonly searchText: string;
  /** The wire Event with `markets: null`. */
  readonly json: Buffer;
}

export interface SeriesEntry {
  readonly series: Series;
  readonly json: Buffer;
  readonly isInitialized: boolean;
  readonly statuses: ReadonlySet<MarketStatus>;
}

export type SortOrder = "asc" | "desc";

/**
 * The wire Market of a stored market with the given accounts map (contract §5: every field present,
 * nulls explicit); the catalog serializes it with an empty map (see `marketParts`).
 */
export function toWireMarket(record: MarketRecord, accounts: Market["accounts"]): Market {
  return {
    ticker: record.ticker,
    eventTicker: record.eventTicker,
    marketType: record.marketType,
    title: record.title,
    subtitle: record.subtitle,
    yesSubTitle: record.yesSubTitle,
    noSubTitle: record.noSubTitle,
    openTime: record.openTime,
    closeTime: record.closeTime,
    expirationTime: record.expirationTime,
    status: record.status,
    result: record.result,
    volume: record.volume,
    openInterest: record.openInterest,
    canCloseEarly: record.canCloseEarly,
    fractionalTradingEnabled: record.fractionalTradingEnabled,
    rulesPrimary: record.rulesPrimary,
    accounts,
    yesBid: record.yesBid,
    yesAsk: record.yesAsk,
    noBid: record.noBid,
    noAsk: record.noAsk,
    volumeFp: record.volumeFp,
    volume24hFp: record.volume24hFp,
    openInterestFp: record.openInterestFp,
    // Last, as the shared ending of the serialized market (SHARED_TAIL_KEY).
    earlyCloseCondition: record.earlyCloseCondition,
    rulesSecondary: record.rulesSecondary,
  };
}

/**
 * Where a serialized market's ending starts: its early-close condition and secondary rules, texts a
 * series' markets mostly share (8 distinct among 252,086 generated markets, 330 bytes a market). The
 * catalog keeps one copy of each distinct ending instead of one per market. Inside a JSON string every
 * quote is escaped, so the last match is the key itself, whatever the texts hold.
 */
const SHARED_TAIL_KEY = ',"earlyCloseCondition":';
/** A serialized market's accounts entry as the catalog writes it: empty, then cut out (see `marketParts`). */
const EMPTY_ACCOUNTS_ENTRY = ',"accounts":{}';
const NO_ACCOUNTS: Market["accounts"] = Object.freeze({});
/** Distinct endings the catalog shares at most; a market with a new ending past this keeps it whole. */
const MAX_SHARED_TAILS = 10_000;
const NO_TAIL = Buffer.alloc(0);

function eventHead(record: EventRecord): string {
  const wire = {
    ticker: record.ticker,
    seriesTicker: record.seriesTicker,
    title: record.title,
    subtitle: record.subtitle,
    competition: record.competition,
    competitionScope: record.competitionScope,
    imageUrl: record.imageUrl,
    liquidity: record.liquidity,
    openInterest: record.openInterest,
    openInterestFp: record.openInterestFp,
    settlementSources: record.settlementSources,
    strikeDate: record.strikeDate,
    strikePeriod: record.strikePeriod,
    volume: record.volume,
    volume24h: record.volume24h,
    volume24hFp: record.volume24hFp,
    volumeFp: record.volumeFp,
  };
  return JSON.stringify(wire).slice(0, -1);
}

const COMMA = Buffer.from(",");
const NULL_MARKETS_TEXT = ',"markets":null}';
const NULL_MARKETS = Buffer.from(NULL_MARKETS_TEXT);
const fpToNumber = (fp: string | null) => (fp === null ? 0 : Number.parseFloat(fp));

/**
 * Joins serialized items into `prefix item,item,... suffix` without re-serializing any of them; an
 * item may come in parts (`marketParts`).
 */
export function joinJson(
  prefix: string,
  items: readonly (Buffer | readonly Buffer[])[],
  suffix: string,
): Buffer {
  const parts: Buffer[] = [Buffer.from(prefix)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    if (Buffer.isBuffer(item)) parts.push(item);
    else parts.push(...item);
  });
  parts.push(Buffer.from(suffix));
  return Buffer.concat(parts);
}

/** Bytes of nested-event JSON each of the two caches (with and without market accounts) keeps. */
export const NESTED_EVENT_CACHE_BYTES = 16 * 1024 * 1024;
/** Bytes of whole market JSON kept for the markets last served (about 10,000 markets). */
export const MARKET_JSON_CACHE_BYTES = 16 * 1024 * 1024;

function jsonLru<K extends object>(maxSize: number): LRUCache<K, Buffer> {
  return new LRUCache({ maxSize, sizeCalculation: (json) => json.length + 64 });
}

/**
 * Builds the market entries chunk by chunk as storage streams them, then the catalog. Given the
 * catalog it replaces, it takes over the entries of markets whose stored row did not change (the same
 * record text and addresses) instead of parsing, deriving and serializing them again: a sync that moves
 * a few prices then costs a reload a digest per market, and the new catalog shares the old one's
 * entries (records, address strings, JSON bytes) instead of holding a second copy of them. Unchanged JSON
 * stays in the old chunks, which the new catalog keeps; a chunk left mostly dead (its markets
 * replaced, the old events) has its live texts copied out, so that it can go.
 */
export class CatalogBuilder {
  private readonly markets: MarketEntry[] = [];
  private readonly arena = new JsonArena();
  /** Indexes into `markets` of entries that keep an older catalog's JSON, by its chunk. */
  private readonly kept = new ChunkUse<number>();
  /** The shared endings of serialized markets, by text: the previous catalog's and new ones. */
  private readonly tails: Map<string, Buffer>;

  constructor(private readonly previous?: Catalog) {
    this.tails = new Map(previous?.sharedTails);
  }

  addMarkets(chunk: readonly StoredMarketRow[]): void {
    for (const row of chunk) {
      const fingerprint = crypto.hash("sha1", row.data, "base64");
      const kept = this.previous?.market(row.ticker);
      this.markets.push(
        kept && kept.fingerprint === fingerprint && sameUsdcRail(kept.addresses, row.addresses)
          ? this.carriedOver(kept)
          : this.built(parseMarketRow(row), fingerprint),
      );
    }
  }

  /**
   * Takes over the previous catalog's markets that no row added so far named: after a read of only
   * the rows written since that catalog's version, those are the markets that did not change.
   * Returns how many markets the builder then holds.
   */
  async addUnchanged(): Promise<number> {
    const named = new Set(this.markets.map((entry) => entry.record.ticker));
    await forEachInSlices(this.previous?.markets ?? [], (entry) => {
      if (!named.has(entry.record.ticker)) this.markets.push(this.carriedOver(entry));
    });
    return this.markets.length;
  }

  build(head: CatalogueHead): Promise<Catalog> {
    for (const index of this.kept.sparse()) {
      const entry = this.markets[index] as MarketEntry;
      this.markets[index] = { ...entry, json: this.arena.addBytes(entry.json) };
    }
    // Endings no market uses any more go, so that they leave room for new ones.
    const used = new Set(this.markets.map((m) => m.jsonTail));
    for (const [text, tail] of this.tails) if (!used.has(tail)) this.tails.delete(text);
    return Catalog.assemble(head, this.markets, this.arena, this.tails);
  }

  /**
   * An unchanged market's entry, the old catalog's own: an entry holds nothing a catalog derives from
   * the others (its series and liquidity are its event's), so both catalogs can share it. Its JSON
   * stays where it is (`build` moves it out of a sparse chunk).
   */
  private carriedOver(kept: MarketEntry): MarketEntry {
    this.kept.keep(kept.json, this.markets.length);
    return kept;
  }

  private built({ record, addresses: stored, cashRail }: StoredMarket, fingerprint: string): MarketEntry {
    const addresses = marketAccounts(stored, cashRail);
    return {
      record: {
        ticker: record.ticker,
        eventTicker: record.eventTicker,
        status: record.status,
        result: record.result,
        tokenized: record.tokenized,
        scalarOutcomePct: record.scalarOutcomePct,
        openTime: record.openTime,
        closeTime: record.closeTime,
        expirationTime: record.expirationTime,
      },
      fingerprint,
      searchText: [record.ticker, record.title, record.yesSubTitle, record.noSubTitle]
        .join("\0")
        .toLowerCase(),
      addresses,
      ...this.serialized(toWireMarket(record, NO_ACCOUNTS)),
      sortKeys: {
        volume: record.volume,
        volume24h: fpToNumber(record.volume24hFp),
        openInterest: record.openInterest,
        startDate: record.openTime,
      },
    };
  }

  /**
   * A wire Market's JSON: its own bytes in the arena without its accounts (see `marketParts`), and
   * its ending shared (or kept whole past the cap).
   */
  private serialized(market: Market): { json: Buffer; accountsAt: number; jsonTail: Buffer } {
    // Serialized with an empty accounts map, which is then cut out. The first match is the key:
    // every quote inside a string value before it is escaped.
    const whole = JSON.stringify(market);
    const valueAt = whole.indexOf(EMPTY_ACCOUNTS_ENTRY) + EMPTY_ACCOUNTS_ENTRY.length - 2;
    const text = whole.slice(0, valueAt) + whole.slice(valueAt + 2);
    const accountsAt = Buffer.byteLength(whole.slice(0, valueAt));
    const at = text.lastIndexOf(SHARED_TAIL_KEY);
    const ending = text.slice(at);
    let tail = this.tails.get(ending);
    if (tail === undefined && this.tails.size < MAX_SHARED_TAILS) {
      tail = Buffer.from(ending);
      this.tails.set(ending, tail);
    }
    if (tail === undefined) return { json: this.arena.add(text), accountsAt, jsonTail: NO_TAIL };
    return { json: this.arena.add(text.slice(0, at)), accountsAt, jsonTail: tail };
  }
}

/** A rail's accounts in the order the by-mint index numbers them. */
const RAIL_PARTS = ["marketLedger", "yesMint", "noMint"] as const;
// The by-mint index gives each market 8 slots: room for two rails' three accounts.
if (SETTLEMENT_MINTS.length * RAIL_PARTS.length > 8)
  throw new Error("the by-mint index holds two rails a market");

/** The address the by-mint index stores under `slot` (market index × 8 + rail × 3 + part). */
function railAddress(markets: readonly MarketEntry[], slot: number): string {
  const rail = markets[slot >> 3]?.addresses.rails[Math.floor((slot & 7) / 3)];
  const part = RAIL_PARTS[(slot & 7) % 3];
  return rail && part ? rail[part] : "";
}

/** Ticker order: SQLite's binary collation and PostgreSQL's "C" order, for ASCII tickers. */
function byTicker(a: { ticker: string }, b: { ticker: string }): number {
  return a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0;
}

/** Whether a stored row names the same USDC rail as an entry (the CASH rail is derived from it). */
function sameUsdcRail(entry: MarketAccounts, stored: MarketAddresses): boolean {
  return (
    entry.marketLedger === stored.marketLedger &&
    entry.yesMint === stored.yesMint &&
    entry.noMint === stored.noMint
  );
}

export class Catalog {
  readonly version: number;
  readonly events: readonly EventEntry[];
  readonly markets: readonly MarketEntry[];
  readonly series: readonly SeriesEntry[];
  private readonly eventsByTicker = new Map<string, EventEntry>();
  private readonly marketsByTicker: Map<string, MarketEntry>;
  /** A market's ledger and outcome mints, every rail's: market index × 8 + rail × 3 + part. */
  private readonly marketsByMint: AddressIndex;
  private readonly seriesByTicker = new Map<string, SeriesEntry>();
  private readonly sortedCache = new Map<string, readonly unknown[]>();
  // Events with nested markets, as read: bounded by bytes, so a crawl of every event costs a fixed
  // amount, not a second copy of the catalogue (each entry is rebuilt from its markets' JSON).
  private readonly nestedJsonCache = jsonLru<EventEntry>(NESTED_EVENT_CACHE_BYTES);
  private readonly nestedBareJsonCache = jsonLru<EventEntry>(NESTED_EVENT_CACHE_BYTES);
  /**
   * Whole JSON of the markets last served, by entry. Not passed on by a reload: its keys would keep
   * replaced markets' entries, and through their JSON views the replaced catalog's chunks, alive.
   */
  private readonly marketJsonCache = jsonLru<MarketEntry>(MARKET_JSON_CACHE_BYTES);
  /** The shared endings of its markets' JSON, by text (see SHARED_TAIL_KEY). */
  readonly sharedTails: ReadonlyMap<string, Buffer>;
  /** Serialized `{tagsByCategories}` body. */
  readonly tagsByCategoriesJson: Buffer;
  /** Serialized `{filtersBySports, sportOrdering}` body. */
  readonly filtersBySportsJson: Buffer;

  /**
   * Builds a catalog from its market entries (sorted here), in slices that hand the event loop a
   * turn: indexing 250,000 markets takes seconds.
   */
  static async assemble(
    head: CatalogueHead,
    marketEntries: MarketEntry[],
    arena: JsonArena,
    sharedTails: ReadonlyMap<string, Buffer>,
  ): Promise<Catalog> {
    const markets = marketEntries.sort((a, b) => byTicker(a.record, b.record));
    const marketsByTicker = new Map<string, MarketEntry>();
    const marketsByMint = new AddressIndex(
      (slot) => railAddress(markets, slot),
      markets.length * SETTLEMENT_MINTS.length * RAIL_PARTS.length,
    );
    const marketsOfEvent = new Map<string, MarketEntry[]>();
    await forEachInSlices(markets, (entry, index) => {
      const { record, addresses } = entry;
      marketsByTicker.set(record.ticker, entry);
      addresses.rails.forEach((rail, r) => {
        RAIL_PARTS.forEach((part, p) => {
          marketsByMint.add(rail[part], index * 8 + r * 3 + p);
        });
      });
      const siblings = marketsOfEvent.get(record.eventTicker);
      if (siblings) siblings.push(entry);
      else marketsOfEvent.set(record.eventTicker, [entry]);
    });
    const events: EventEntry[] = [];
    await forEachInSlices([...head.events].sort(byTicker), (record) => {
      const own = marketsOfEvent.get(record.ticker) ?? [];
      events.push({
        record,
        markets: own,
        statuses: new Set(own.map((m) => m.record.status)),
        isInitialized: own.some((m) => m.record.tokenized),
        searchText: [record.ticker, record.seriesTicker, record.title, record.subtitle]
          .join("\0")
          .toLowerCase(),
        json: arena.add(`${eventHead(record)}${NULL_MARKETS_TEXT}`),
        sortKeys: {
          volume: record.volume ?? 0,
          volume24h: record.volume24h ?? 0,
          liquidity: record.liquidity ?? 0,
          openInterest: record.openInterest ?? 0,
          startDate:
            own.length > 0
              ? own.reduce((earliest, m) => Math.min(earliest, m.record.openTime), Number.POSITIVE_INFINITY)
              : (record.strikeDate ?? 0),
        },
      });
    });
    return new Catalog(head, { markets, marketsByTicker, marketsByMint, events }, arena, sharedTails);
  }

  private constructor(
    head: CatalogueHead,
    indexed: {
      markets: readonly MarketEntry[];
      marketsByTicker: Map<string, MarketEntry>;
      marketsByMint: AddressIndex;
      events: readonly EventEntry[];
    },
    arena: JsonArena,
    sharedTails: ReadonlyMap<string, Buffer>,
  ) {
    this.version = head.version;
    this.sharedTails = sharedTails;
    this.markets = indexed.markets;
    this.marketsByTicker = indexed.marketsByTicker;
    this.marketsByMint = indexed.marketsByMint;
    this.events = indexed.events;
    const series: SeriesEntry[] = [];
    const eventsOfSeries = new Map<string, EventEntry[]>();
    for (const event of this.events) {
      this.eventsByTicker.set(event.record.ticker, event);
      const siblings = eventsOfSeries.get(event.record.seriesTicker);
      if (siblings) siblings.push(event);
      else eventsOfSeries.set(event.record.seriesTicker, [event]);
    }
    for (const s of [...head.series].sort(byTicker)) {
      const own = eventsOfSeries.get(s.ticker) ?? [];
      const entry: SeriesEntry = {
        series: s,
        json: arena.add(JSON.stringify(s)),
        isInitialized: own.some((e) => e.isInitialized),
        statuses: new Set(own.flatMap((e) => [...e.statuses])),
      };
      series.push(entry);
      this.seriesByTicker.set(s.ticker, entry);
    }
    this.series = series;
    this.tagsByCategoriesJson = Buffer.from(
      JSON.stringify({ tagsByCategories: tagsByCategories(head.series) }),
    );
    this.filtersBySportsJson = Buffer.from(JSON.stringify(filtersBySports(series, eventsOfSeries)));
  }

  event(ticker: string): EventEntry | undefined {
    return this.eventsByTicker.get(ticker);
  }

  market(ticker: string): MarketEntry | undefined {
    return this.marketsByTicker.get(ticker);
  }

  /** The series of a market's event ("" when the catalogue holds no such event). */
  seriesTickerOf(market: MarketEntry): string {
    return this.eventsByTicker.get(market.record.eventTicker)?.record.seriesTicker ?? "";
  }

  /** A market's liquidity: its event's, as the reference reports liquidity per event only. */
  liquidityOf(market: MarketEntry): number {
    return this.eventsByTicker.get(market.record.eventTicker)?.sortKeys.liquidity ?? 0;
  }

  /** The market owning a mint: the ledger, yes or no mint of any of its rails. */
  marketByMint(mint: string): MarketEntry | undefined {
    const slot = this.marketsByMint.get(mint);
    return slot === undefined ? undefined : this.markets[slot >> 3];
  }

  seriesEntry(ticker: string): SeriesEntry | undefined {
    return this.seriesByTicker.get(ticker);
  }

  /** Whether `address` is a yes or no mint of a tokenized market (read from the by-mint index: no set of its own). */
  isOutcomeMint(address: string): boolean {
    const slot = this.marketsByMint.get(address);
    if (slot === undefined || !this.markets[slot >> 3]?.record.tokenized) return false;
    return RAIL_PARTS[(slot & 7) % 3] !== "marketLedger";
  }

  /** A market's whole serialized wire Market. */
  marketJson(market: MarketEntry): Buffer {
    let json = this.marketJsonCache.get(market);
    if (json === undefined) {
      json = Buffer.concat(marketParts(market, true));
      this.marketJsonCache.set(market, json);
    }
    return json;
  }

  /** Joins markets' JSON into `prefix market,market,... suffix`, with or without their accounts. */
  marketsJson(prefix: string, markets: readonly MarketEntry[], suffix: string, withAccounts = true): Buffer {
    return joinJson(
      prefix,
      markets.map((market) => (withAccounts ? this.marketJson(market) : marketParts(market, false))),
      suffix,
    );
  }

  /**
   * The serialized wire Event, with its markets nested or `markets: null`; nested markets carry an
   * empty `accounts` map when `withMarketAccounts` is false (the field stays, as every field does).
   */
  eventJson(entry: EventEntry, withNestedMarkets: boolean, withMarketAccounts = true): Buffer {
    if (!withNestedMarkets) return entry.json;
    const cache = withMarketAccounts ? this.nestedJsonCache : this.nestedBareJsonCache;
    let json = cache.get(entry);
    if (json === undefined) {
      const head = entry.json.subarray(0, entry.json.length - NULL_MARKETS.length);
      json = Buffer.concat([head, this.marketsJson(',"markets":[', entry.markets, "]}", withMarketAccounts)]);
      cache.set(entry, json);
    }
    return json;
  }

  /**
   * Events in the requested order: by a key, descending unless asked otherwise; else ticker order.
   * Ties fall back to ticker order, keeping paging stable.
   */
  sortedEvents(sort: SortKey | undefined, order?: SortOrder): readonly EventEntry[] {
    return this.sorted(
      "events",
      this.events,
      sort,
      order ?? (sort ? "desc" : "asc"),
      (e, key) => e.sortKeys[key],
    );
  }

  /** Markets in the requested order; by a key, descending unless asked otherwise; else ticker order. */
  sortedMarkets(sort: SortKey | undefined, order?: SortOrder): readonly MarketEntry[] {
    return this.sorted("markets", this.markets, sort, order ?? (sort ? "desc" : "asc"), (m, key) =>
      key === "liquidity" ? this.liquidityOf(m) : m.sortKeys[key],
    );
  }

  private sorted<T>(
    kind: string,
    items: readonly T[],
    sort: SortKey | undefined,
    order: SortOrder,
    keyOf: (item: T, sort: SortKey) => number,
  ): readonly T[] {
    if (sort === undefined)
      return order === "asc" ? items : this.cached(`${kind}:desc`, () => [...items].reverse());
    return this.cached(`${kind}:${sort}:${order}`, () => {
      // Items start in ticker order and Array.prototype.sort is stable, so equal keys keep that order.
      const sign = order === "asc" ? 1 : -1;
      const keyed = items.map((item) => ({ item, key: keyOf(item, sort) }));
      return keyed.sort((a, b) => sign * (a.key - b.key)).map(({ item }) => item);
    });
  }

  private cached<T>(key: string, build: () => readonly T[]): readonly T[] {
    let value = this.sortedCache.get(key) as readonly T[] | undefined;
    if (value === undefined) {
      value = build();
      this.sortedCache.set(key, value);
    }
    return value;
  }
}

function tagsByCategories(series: readonly Series[]): Record<string, string[]> {
  const result = new Map<string, Set<string>>();
  for (const s of series) {
    const tags = result.get(s.category) ?? new Set<string>();
    for (const tag of s.tags) tags.add(tag);
    result.set(s.category, tags);
  }
  return Object.fromEntries([...result.keys()].sort().map((c) => [c, [...(result.get(c) ?? [])].sort()]));
}

/** Sports are the first tag of Sports-category series; their scopes and competitions come from events. */
function filtersBySports(series: readonly SeriesEntry[], eventsOfSeries: Map<string, EventEntry[]>) {
  const sports = new Map<string, { scopes: Set<string>; competitions: Set<string>; volume: number }>();
  for (const { series: s } of series) {
    const sport = s.tags[0];
    if (s.category !== "Sports" || sport === undefined) continue;
    const filters = sports.get(sport) ?? { scopes: new Set(), competitions: new Set(), volume: 0 };
    for (const event of eventsOfSeries.get(s.ticker) ?? []) {
      if (event.record.competitionScope) filters.scopes.add(event.record.competitionScope);
      if (event.record.competition) filters.competitions.add(event.record.competition);
      filters.volume += event.sortKeys.volume;
    }
    sports.set(sport, filters);
  }
  const sportOrdering = [...sports.entries()]
    .sort(([a, x], [b, y]) => y.volume - x.volume || (a < b ? -1 : 1))
    .map(([sport]) => sport);
  const filtersBySports = Object.fromEntries(
    sportOrdering.map((sport) => {
      const f = sports.get(sport);
      return [
        sport,
        { scopes: [...(f?.scopes ?? [])].sort(), competitions: [...(f?.competitions ?? [])].sort() },
      ];
    }),
  );
  return { filtersBySports, sportOrdering };
}
