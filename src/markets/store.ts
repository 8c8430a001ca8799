/** Durable catalogue storage: series, events and markets as JSON records with indexed keys. */
import { setImmediate } from "node:timers/promises";
import { type Kysely, sql } from "kysely";
import type { CatalogueFile, EventRecord, MarketRecord, Series } from "../contract/markets.js";
import { forEachInSlices } from "../slices.js";
import { bumpCounter, readCounter, settleMetaValue } from "../storage/counters.js";
import type { Tables } from "../storage/database.js";
import { deriveCashRail, deriveMarketAddresses, type MarketAddresses } from "./accounts.js";

const CATALOG_VERSION_KEY = "catalog_version";
/** Rows per INSERT: well under SQLite's and PostgreSQL's bound-parameter limits. */
const CHUNK_ROWS = 400;

export interface StoredMarket {
  record: MarketRecord;
  addresses: MarketAddresses;
  cashRail?: MarketAddresses;
}

/** A market row as read: its record still JSON text, so a reload parses only the markets that changed. */
export interface StoredMarketRow {
  ticker: string;
  /** The MarketRecord, as stored. */
  data: string;
  addresses: MarketAddresses;
  /** The CASH rail's addresses as stored beside the USDC rail's (absent: to be derived). */
  cashRail?: MarketAddresses;
}

/** Parses a market row's record. */
export function parseMarketRow(row: StoredMarketRow): StoredMarket {
  return {
    record: JSON.parse(row.data) as MarketRecord,
    addresses: row.addresses,
    ...(row.cashRail ? { cashRail: row.cashRail } : {}),
  };
}

export interface StoredCatalogue {
  version: number;
  series: Series[];
  events: EventRecord[];
  markets: StoredMarket[];
}

export interface SaveCounts {
  series: number;
  events: number;
  /** Markets written: those of the file less the refused ones. */
  markets: number;
  /** Markets not written because the file would have moved them back (see `movesBackward`). */
  refused: LifecycleRefusal[];
}

/** A market record refused because it would have turned a settled market back. */
export interface LifecycleRefusal {
  ticker: string;
  /** The status storage keeps. */
  stored: MarketRecord["status"];
  /** The status the refused record had. */
  offered: MarketRecord["status"];
}

/** How far along its lifecycle each status is (active and inactive alternate, so they share a step). */
const LIFECYCLE_STEP: Record<MarketRecord["status"], number> = {
  initialized: 0,
  active: 1,
  inactive: 1,
  closed: 2,
  determined: 3,
  finalized: 4,
};

/** Whether a market has been settled: its result is known, and holders may have redeemed. */
export function isSettled(status: MarketRecord["status"]): boolean {
  return LIFECYCLE_STEP[status] >= LIFECYCLE_STEP.determined;
}

/**
 * Whether writing `offered` over `stored` would move a settled (determined or finalized) market back
 * along its lifecycle, or change the result it was settled with: market state only moves forward,
 * whatever an upstream or a file says, since contracts may already have been redeemed at that result.
 */
export function movesBackward(
  stored: Pick<MarketRecord, "status" | "result" | "scalarOutcomePct">,
  offered: Pick<MarketRecord, "status" | "result" | "scalarOutcomePct">,
): boolean {
  if (!isSettled(stored.status)) return false;
  if (LIFECYCLE_STEP[offered.status] < LIFECYCLE_STEP[stored.status]) return true;
  return offered.result !== stored.result || offered.scalarOutcomePct !== stored.scalarOutcomePct;
}

/**
 * The stored records of these markets that are settled and that `offered` would move back, by
 * ticker. Only rows whose text names a settled status are parsed (then checked properly), so an
 * import of a large catalogue reads little beyond the index.
 */
async function refusalsOf(db: Kysely<Tables>, offered: readonly MarketRecord[]): Promise<LifecycleRefusal[]> {
  const refused: LifecycleRefusal[] = [];
  for (let i = 0; i < offered.length; i += TICKERS_PER_QUERY) {
    const batch = offered.slice(i, i + TICKERS_PER_QUERY);
    const byTicker = new Map(batch.map((market) => [market.ticker, market]));
    const rows = await db
      .selectFrom("markets")
      .select(["ticker", "data"])
      .where("ticker", "in", [...byTicker.keys()])
      .where((eb) =>
        eb.or([eb("data", "like", '%"status":"determined"%'), eb("data", "like", '%"status":"finalized"%')]),
      )
      .execute();
    for (const row of rows) {
      const stored = JSON.parse(row.data) as MarketRecord;
      const market = byTicker.get(row.ticker);
      if (market && movesBackward(stored, market))
        refused.push({ ticker: row.ticker, stored: stored.status, offered: market.status });
    }
  }
  return refused;
}

/**
 * Upserts a whole catalogue in one transaction, so an import either lands completely or not at all,
 * and bumps the catalogue version other instances watch. Re-importing the same file changes nothing.
 * A market the file would move back from determined or finalized (`movesBackward`) keeps its stored
 * record and is returned among the refused.
 */
export async function saveCatalogue(
  db: Kysely<Tables>,
  venueSeed: string,
  file: CatalogueFile,
  onProgress: (done: number, total: number) => void = () => {},
): Promise<SaveCounts> {
  const offered = file.events.flatMap((event) => event.markets);
  const total = file.series.length + file.events.length + offered.length;
  let markets = offered;
  let refused: LifecycleRefusal[] = [];
  let done = 0;
  const advance = (rows: number) => {
    done += rows;
    onProgress(done, total);
  };

  await db.transaction().execute(async (trx) => {
    const version = await nextCatalogVersion(trx);
    // Read inside the transaction that writes: a settlement committed meanwhile is seen, not overwritten.
    // A first load (the demo, a whole catalogue at start) has nothing stored to turn back.
    refused = (await isCatalogueEmpty(trx)) ? [] : await refusalsOf(trx, offered);
    if (refused.length > 0) {
      const skipped = new Set(refused.map((refusal) => refusal.ticker));
      markets = offered.filter((market) => !skipped.has(market.ticker));
      advance(refused.length);
    }
    await inChunks(file.series, advance, (chunk) =>
      trx
        .insertInto("series")
        .values(chunk.map((s) => ({ ticker: s.ticker, data: JSON.stringify(s) })))
        .onConflict((oc) => oc.column("ticker").doUpdateSet((eb) => ({ data: eb.ref("excluded.data") })))
        .execute(),
    );
    await inChunks(file.events, advance, (chunk) =>
      trx
        .insertInto("events")
        .values(
          chunk.map(({ markets: _nested, ...event }) => ({
            ticker: event.ticker,
            series_ticker: event.seriesTicker,
            data: JSON.stringify(event),
          })),
        )
        .onConflict((oc) =>
          oc.column("ticker").doUpdateSet((eb) => ({
            series_ticker: eb.ref("excluded.series_ticker"),
            data: eb.ref("excluded.data"),
          })),
        )
        .execute(),
    );
    await inChunks(markets, advance, (chunk) =>
      trx
        .insertInto("markets")
        .values(
          chunk.map((market) => {
            const addresses = deriveMarketAddresses(venueSeed, market.ticker);
            const cash = deriveCashRail(addresses);
            return {
              ticker: market.ticker,
              event_ticker: market.eventTicker,
              market_ledger: addresses.marketLedger,
              yes_mint: addresses.yesMint,
              no_mint: addresses.noMint,
              cash_market_ledger: cash.marketLedger,
              cash_yes_mint: cash.yesMint,
              cash_no_mint: cash.noMint,
              data: JSON.stringify(market),
              changed_version: version,
            };
          }),
        )
        .onConflict((oc) =>
          oc.column("ticker").doUpdateSet((eb) => ({
            event_ticker: eb.ref("excluded.event_ticker"),
            market_ledger: eb.ref("excluded.market_ledger"),
            yes_mint: eb.ref("excluded.yes_mint"),
            no_mint: eb.ref("excluded.no_mint"),
            cash_market_ledger: eb.ref("excluded.cash_market_ledger"),
            cash_yes_mint: eb.ref("excluded.cash_yes_mint"),
            cash_no_mint: eb.ref("excluded.cash_no_mint"),
            data: eb.ref("excluded.data"),
            changed_version: eb.ref("excluded.changed_version"),
          })),
        )
        .execute(),
    );
  });
  return { series: file.series.length, events: file.events.length, markets: markets.length, refused };
}

/** Market rows `fillCashRails` derives and writes per statement. */
const FILL_ROWS = 500;

/**
 * Derives and stores the CASH rail of market rows stored without it: rows from before migration 0011,
 * or written by an older release during a rolling upgrade. Returns how many it filled. A load derives
 * the rail of such a row itself, so this only saves later loads the work.
 */
export async function fillCashRails(db: Kysely<Tables>): Promise<number> {
  let filled = 0;
  let after = "";
  for (;;) {
    const rows = await db
      .selectFrom("markets")
      .select(["ticker", "market_ledger"])
      .where("cash_market_ledger", "is", null)
      .where("ticker", ">", after)
      .orderBy("ticker")
      .limit(FILL_ROWS)
      .execute();
    const last = rows.at(-1);
    if (!last) return filled;
    const values = rows.map((row) => {
      const cash = deriveCashRail({ marketLedger: row.market_ledger });
      return sql`(${row.ticker}, ${cash.marketLedger}, ${cash.yesMint}, ${cash.noMint})`;
    });
    // One statement per batch, not per row: UPDATE ... FROM works in SQLite and PostgreSQL alike, and
    // both name the columns of VALUES column1, column2, ...
    await sql`UPDATE markets SET cash_market_ledger = v.column2, cash_yes_mint = v.column3,
      cash_no_mint = v.column4 FROM (VALUES ${sql.join(values)}) AS v WHERE markets.ticker = v.column1`.execute(
      db,
    );
    filled += rows.length;
    after = last.ticker;
    // SQLite answers synchronously: the event loop gets a turn between batches.
    await setImmediate();
  }
}

/** Writes `records` a chunk of CHUNK_ROWS at a time, reporting each chunk written. */
async function inChunks<R>(
  records: readonly R[],
  advance: (rows: number) => void,
  write: (chunk: readonly R[]) => Promise<unknown>,
): Promise<void> {
  for (let start = 0; start < records.length; start += CHUNK_ROWS) {
    const chunk = records.slice(start, start + CHUNK_ROWS);
    await write(chunk);
    advance(chunk.length);
  }
}

/**
 * Moves the catalogue version inside a writer's transaction and returns it, to stamp the market rows
 * the writer writes. Moved first, so the counter's row stays locked until the commit: versions then
 * commit in their order, and a reader that sees version V sees every row stamped V or less.
 */
async function nextCatalogVersion(trx: Kysely<Tables>): Promise<number> {
  await bumpCounter(trx, CATALOG_VERSION_KEY);
  return readCatalogVersion(trx);
}

/** The catalogue's change counter: it moves whenever any import or sync commits. */
export function readCatalogVersion(db: Kysely<Tables>): Promise<number> {
  return readCounter(db, CATALOG_VERSION_KEY);
}

/** Markets read per query while loading, bounding the memory a load needs beyond the catalog itself. */
const LOAD_CHUNK_ROWS = 500;

export interface CatalogueHead {
  version: number;
  series: Series[];
  events: EventRecord[];
}

/**
 * Reads the catalogue in one snapshot: series and events at once, markets in chunks handed to
 * `onMarkets` as they arrive, so a large catalogue never sits in memory twice. With `changedAfter`,
 * only the markets written by a later version: what a reload of a catalog at that version needs.
 */
export async function readCatalogue(
  db: Kysely<Tables>,
  onMarkets: (chunk: StoredMarketRow[]) => void,
  options: { changedAfter?: number } = {},
): Promise<CatalogueHead & { marketCount: number }> {
  const { changedAfter } = options;
  // Repeatable read: the version and every chunk come from the same state, even during an import.
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      const version = await readCatalogVersion(trx);
      const series = await trx.selectFrom("series").select("data").execute();
      await setImmediate();
      const eventRows = await trx.selectFrom("events").select("data").execute();
      await setImmediate();
      const events: EventRecord[] = [];
      await forEachInSlices(eventRows, (row) => events.push(JSON.parse(row.data) as EventRecord));
      let after: string | undefined;
      for (;;) {
        let query = trx
          .selectFrom("markets")
          .select([
            "ticker",
            "data",
            "market_ledger",
            "yes_mint",
            "no_mint",
            "cash_market_ledger",
            "cash_yes_mint",
            "cash_no_mint",
          ])
          .orderBy("ticker")
          .limit(LOAD_CHUNK_ROWS);
        if (after !== undefined) query = query.where("ticker", ">", after);
        if (changedAfter !== undefined) query = query.where("changed_version", ">", changedAfter);
        const rows = await query.execute();
        if (rows.length === 0) break;
        onMarkets(
          rows.map((row) => ({
            ticker: row.ticker,
            data: row.data,
            addresses: { marketLedger: row.market_ledger, yesMint: row.yes_mint, noMint: row.no_mint },
            ...(row.cash_market_ledger && row.cash_yes_mint && row.cash_no_mint
              ? {
                  cashRail: {
                    marketLedger: row.cash_market_ledger,
                    yesMint: row.cash_yes_mint,
                    noMint: row.cash_no_mint,
                  },
                }
              : {}),
          })),
        );
        after = rows[rows.length - 1]?.ticker;
        // SQLite answers synchronously: without a turn of the event loop between chunks, a large load
        // (seconds at 250,000 markets) would leave every request unanswered, liveness probes too.
        await setImmediate();
      }
      const counted = await trx
        .selectFrom("markets")
        // How many markets storage holds, whether or not they were read.
        .select((eb) => eb.fn.countAll<number | string>().as("count"))
        .executeTakeFirstOrThrow();
      return {
        version,
        series: series.map((row) => JSON.parse(row.data) as Series),
        events,
        marketCount: Number(counted.count),
      };
    });
}

/** Tickers per `in (...)` list: well inside SQLite's and PostgreSQL's limits on bound parameters. */
const TICKERS_PER_QUERY = 500;

/**
 * The stored records of these series, events and markets (those storage holds), by ticker: what a
 * sync compares the upstream with, a page at a time, so that its reads grow with what the upstream
 * lists, not with the catalogue.
 */
export async function readRecordsByTicker(
  db: Kysely<Tables>,
  tickers: { series?: readonly string[]; events?: readonly string[]; markets?: readonly string[] },
): Promise<{
  series: Map<string, Series>;
  events: Map<string, EventRecord>;
  markets: Map<string, MarketRecord>;
}> {
  return {
    series: await readDataByTicker<Series>(db, "series", tickers.series ?? []),
    events: await readDataByTicker<EventRecord>(db, "events", tickers.events ?? []),
    markets: await readDataByTicker<MarketRecord>(db, "markets", tickers.markets ?? []),
  };
}

/** The parsed `data` of the rows of `table` with these tickers, by ticker. */
async function readDataByTicker<T>(
  db: Kysely<Tables>,
  table: "series" | "events" | "markets",
  tickers: readonly string[],
): Promise<Map<string, T>> {
  const found = new Map<string, T>();
  for (let i = 0; i < tickers.length; i += TICKERS_PER_QUERY) {
    const batch = tickers.slice(i, i + TICKERS_PER_QUERY);
    const rows = await db.selectFrom(table).select(["ticker", "data"]).where("ticker", "in", batch).execute();
    for (const row of rows) found.set(row.ticker, JSON.parse(row.data) as T);
  }
  return found;
}

/** Reads the whole catalogue into arrays (for tools and tests; the server streams with readCatalogue). */
export async function loadCatalogue(db: Kysely<Tables>): Promise<StoredCatalogue> {
  const markets: StoredMarket[] = [];
  const head = await readCatalogue(db, (chunk) => markets.push(...chunk.map(parseMarketRow)));
  return { ...head, markets };
}

/** True when no event has been stored yet (a fresh database). */
export async function isCatalogueEmpty(db: Kysely<Tables>): Promise<boolean> {
  return (await db.selectFrom("events").select("ticker").limit(1).executeTakeFirst()) === undefined;
}

const DEMO_ANCHOR_KEY = "demo_anchor";

/**
 * The day (Unix seconds at 00:00 UTC) the bundled demo catalogue is laid out around, fixed at first
 * start so that a restart, and the simulator serving the demo upstream, see the same events.
 */
export async function resolveDemoAnchor(db: Kysely<Tables>, nowMs = Date.now()): Promise<number> {
  const today = Math.floor(nowMs / 86_400_000) * 86_400;
  return Number(await settleMetaValue(db, DEMO_ANCHOR_KEY, String(today)));
}

/** Who initialized a market on first trade: `meta` key of the order or init request that paid for it. */
const initClaimKey = (ticker: string) => `market_init:${ticker}`;

/**
 * Claims the initialization of a market for `claimant` (an order or init request that paid for it);
 * returns whether the claim is `claimant`'s. The first claim wins and stays, so asking again gives the
 * same answer; a market tokenized by the catalogue itself (never claimed) is no one's to pay for.
 */
export async function claimMarketInitialization(
  db: Kysely<Tables>,
  ticker: string,
  claimant: string,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const key = initClaimKey(ticker);
    const claimed = await trx.selectFrom("meta").select("value").where("key", "=", key).executeTakeFirst();
    if (claimed) return claimed.value === claimant;
    const row = await trx
      .selectFrom("markets")
      .select("data")
      .where("ticker", "=", ticker)
      .executeTakeFirst();
    if (!row || (JSON.parse(row.data) as MarketRecord).tokenized) return false;
    return (await settleMetaValue(trx, key, claimant)) === claimant;
  });
}

/**
 * Marks a market tokenized (its chain accounts exist), bumping the catalogue version so every
 * instance reloads it; returns whether it changed. Sync keeps a stored market's tokenization.
 */
export async function markMarketTokenized(db: Kysely<Tables>, ticker: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom("markets")
      .select("data")
      .where("ticker", "=", ticker)
      .executeTakeFirst();
    if (!row) return false;
    const record = JSON.parse(row.data) as MarketRecord;
    if (record.tokenized) return false;
    const version = await nextCatalogVersion(trx);
    await trx
      .updateTable("markets")
      .set({ data: JSON.stringify({ ...record, tokenized: true }), changed_version: version })
      .where("ticker", "=", ticker)
      .execute();
    return true;
  });
}
