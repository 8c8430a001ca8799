/**
 * A reload takes over the entries of markets whose stored rows did not change and rebuilds the rest:
 * what every read shows must be exactly what a fresh load of the same rows shows.
 */
import v8 from "node:v8";
import vm from "node:vm";
import type { Kysely } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { CatalogueFile } from "../../src/contract/markets.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import { type Catalog, eventMentions } from "../../src/markets/catalog.js";
import { CatalogHolder, WHOLE_READ_EVERY } from "../../src/markets/catalog-holder.js";
import { markMarketTokenized, saveCatalogue } from "../../src/markets/store.js";
import { openStorage, type Storage, type Tables } from "../../src/storage/database.js";
import { BACKENDS } from "../support/backends.js";
import { miniCatalogue, withLongRules } from "../support/fixtures.js";
import { waitUntil } from "../support/pair-streams.js";
import { startTestServer } from "../support/server.js";

const CHANGED = "KXHIGHNY-26NOV23-B47.5";
const UNCHANGED = "KXHIGHNY-26NOV23-T52";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function storage(backend = BACKENDS[0] as (typeof BACKENDS)[number]): Promise<Storage> {
  const created = await backend.create();
  cleanups.push(created.cleanup);
  const opened = await openStorage(loadConfig({}, created.settings));
  cleanups.push(() => opened.close());
  return opened;
}

/** Storage holding the mini catalogue, and a holder to load it: where each reload test starts. */
async function storedMiniCatalogue() {
  const { db } = await storage();
  const seed = await resolveVenueSeed(db, undefined);
  const file = withLongRules(miniCatalogue());
  await saveCatalogue(db, seed, file);
  return { db, seed, file, holder: new CatalogHolder() };
}

/** The catalogue with one market retitled and repriced. */
function withChangedMarket(): CatalogueFile {
  const file = withLongRules(miniCatalogue());
  for (const event of file.events) {
    for (const market of event.markets) {
      if (market.ticker !== CHANGED) continue;
      market.title = "Retitled: a warmer day in New York?";
      market.yesBid = "0.6100";
      market.volume += 1_000;
    }
  }
  return file;
}

/** A fresh load of the same rows is the reference for every byte a reloaded catalog serves. */
async function expectAsFreshLoad(db: Kysely<Tables>, after: Catalog): Promise<void> {
  const fresh = await new CatalogHolder().load(db);
  expect(after.markets.map((m) => m.record.ticker)).toEqual(fresh.markets.map((m) => m.record.ticker));
  for (const market of fresh.markets) {
    const reloaded = after.market(market.record.ticker);
    expect(after.marketJson(reloaded!).equals(fresh.marketJson(market)), market.record.ticker).toBe(true);
    expect(reloaded?.jsonTail).toBe(after.sharedTails.get(market.jsonTail.toString()));
    expect(reloaded?.searchText).toBe(market.searchText);
    expect(reloaded?.sortKeys).toEqual(market.sortKeys);
    expect(reloaded?.addresses).toEqual(market.addresses);
  }
  for (const event of fresh.events) {
    const reloaded = after.event(event.record.ticker);
    expect(reloaded?.searchText).toBe(event.searchText);
    expect(after.eventJson(reloaded!, true).equals(fresh.eventJson(event, true))).toBe(true);
  }
}

/** Whether two views share their memory (compared here: a failing expect would print 32 MiB chunks). */
const sameMemory = (a: Buffer, b: Buffer) => a.buffer === b.buffer;

const wire = (json: Buffer) => JSON.parse(json.toString("utf8")) as Record<string, unknown>;

describe("catalog reload", () => {
  it("shows a changed market's new record, keeps unchanged ones, and leaves the replaced catalog as it was", async () => {
    const { db } = await storage();
    const seed = await resolveVenueSeed(db, undefined);
    await saveCatalogue(db, seed, withLongRules(miniCatalogue()));
    const holder = new CatalogHolder();
    const before = await holder.load(db);
    // Served once, so that the old catalog's JSON cache holds it: the new catalog must not keep that.
    before.marketJson(before.market(UNCHANGED)!);
    await saveCatalogue(db, seed, withChangedMarket());
    expect(await holder.refreshIfChanged(db)).toBe(true);
    const after = holder.require();

    await expectAsFreshLoad(db, after);

    expect(wire(after.marketJson(after.market(CHANGED)!)).title).toBe("Retitled: a warmer day in New York?");
    expect(eventMentions(after.event("KXHIGHNY-26NOV23")!, "retitled:")).toBe(true);
    // The unchanged market's record and addresses are the old catalog's, not copies of them.
    expect(after.market(UNCHANGED)!.record).toBe(before.market(UNCHANGED)!.record);
    expect(after.market(UNCHANGED)!.addresses).toBe(before.market(UNCHANGED)!.addresses);
    // Its JSON stays in the old catalog's memory: most of that chunk is still live.
    expect(sameMemory(after.market(UNCHANGED)!.json, before.market(UNCHANGED)!.json)).toBe(true);
    expect(sameMemory(after.market(CHANGED)!.json, before.market(CHANGED)!.json)).toBe(false);
    // The replaced catalog still answers as it did (readers holding it see no half-update).
    expect(wire(before.marketJson(before.market(CHANGED)!)).title).not.toBe(
      "Retitled: a warmer day in New York?",
    );
    expect(eventMentions(before.event("KXHIGHNY-26NOV23")!, "retitled")).toBe(false);
    // The unchanged market's entry is the old catalog's own, not a copy.
    expect(after.market(UNCHANGED)).toBe(before.market(UNCHANGED));
  });

  it("gives a shared market its event's new series and liquidity, and the replaced catalog its old ones", async () => {
    const { db, seed, file, holder } = await storedMiniCatalogue();
    const before = await holder.load(db);
    const event = file.events.find((e) => e.ticker === "KXHIGHNY-26NOV23")!;
    // Only the event changes: its markets' rows stay as they were.
    event.seriesTicker = "KXNBAGAME";
    event.liquidity = 1_000_000_000;
    await saveCatalogue(db, seed, file);
    expect(await holder.refreshIfChanged(db)).toBe(true);
    const after = holder.require();

    const market = after.market(UNCHANGED)!;
    expect(market).toBe(before.market(UNCHANGED));
    expect(after.seriesTickerOf(market)).toBe("KXNBAGAME");
    expect(before.seriesTickerOf(market)).toBe("KXHIGHNY");
    expect(after.liquidityOf(market)).toBe(1_000_000_000);
    expect(before.liquidityOf(market)).not.toBe(1_000_000_000);
    const mostLiquid = (catalog: typeof after) =>
      catalog.sortedMarkets("liquidity", "desc")[0]!.record.eventTicker;
    expect(mostLiquid(after)).toBe("KXHIGHNY-26NOV23");
    expect(mostLiquid(before)).not.toBe("KXHIGHNY-26NOV23");
  });

  it("copies out what a mostly replaced chunk still holds, so that the chunk can go", async () => {
    const { db, seed, file, holder } = await storedMiniCatalogue();
    // Only a weak reference to the first catalog's memory outlives this block.
    const firstChunk = await (async () => {
      const before = await holder.load(db);
      const survivor = before.market(UNCHANGED)!.json;
      // Every market served once: what the catalog keeps of served JSON must not hold the chunk.
      for (const market of before.markets) before.marketJson(market);
      // Every market but one changes: the first load's chunk is left with one live text.
      for (const event of file.events)
        for (const market of event.markets) if (market.ticker !== UNCHANGED) market.volume += 1_000;
      await saveCatalogue(db, seed, file);
      expect(await holder.refreshIfChanged(db)).toBe(true);
      const moved = holder.require().market(UNCHANGED)!.json;
      expect(sameMemory(moved, survivor)).toBe(false);
      expect(moved.equals(survivor)).toBe(true);
      return new WeakRef(survivor.buffer);
    })();
    for (let attempt = 0; attempt < 20 && firstChunk.deref() !== undefined; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      fullCollection();
    }
    expect(firstChunk.deref() === undefined, "the first load's chunk is still held").toBe(true);
    expect(wire(holder.require().marketJson(holder.require().market(UNCHANGED)!)).ticker).toBe(UNCHANGED);
  });

  it("holds nothing of the replaced catalog once a running venue has reloaded", async () => {
    const t = await startTestServer({ catalogue: miniCatalogue() });
    cleanups.push(() => t.stop());
    const replaced = new WeakRef(t.server.catalog.require());
    const replacedVersion = t.server.catalog.require().version;
    const opened = await openStorage(loadConfig({}, t.settings));
    try {
      await saveCatalogue(opened.db, await resolveVenueSeed(opened.db, undefined), withChangedMarket());
    } finally {
      await opened.close();
    }
    // The venue polls storage for a new version and reloads; then a full collection here (the venue
    // runs in this process) frees the old catalog unless something of the venue still holds it.
    await waitUntil(() => t.server.catalog.require().version !== replacedVersion, 8_000);
    // A WeakRef read keeps its target alive until the current job ends: each read comes after the
    // collection of its own turn, never before it.
    for (let attempt = 0; attempt < 20; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      fullCollection();
      if (replaced.deref() === undefined) break;
    }
    expect(replaced.deref()).toBeUndefined();
    expect((await t.client.getMarket(CHANGED)).title).toBe("Retitled: a warmer day in New York?");
  });
});

/** V8's full collection, taken from a fresh context with --expose-gc set only while it is. */
function fullCollection(): void {
  v8.setFlagsFromString("--expose-gc");
  try {
    (vm.runInNewContext("gc") as () => void)();
  } finally {
    v8.setFlagsFromString("--no-expose-gc");
  }
}

describe.each(BACKENDS)("a reload on $name", (backend) => {
  it("reads only the market rows written since the catalog it replaces, and serves what a whole read does", async () => {
    const db = (await storage(backend)).db;
    const seed = await resolveVenueSeed(db, undefined);
    await saveCatalogue(db, seed, withLongRules(miniCatalogue()));
    let marketRowsRead = 0;
    const counting = db.withPlugin({
      transformQuery: ({ node }) => node,
      transformResult: async ({ result }) => {
        for (const row of result.rows)
          if (row && typeof row === "object" && "market_ledger" in row) marketRowsRead += 1;
        return result;
      },
    });
    const holder = new CatalogHolder();
    const before = await holder.load(counting);
    expect(marketRowsRead).toBe(before.markets.length);

    marketRowsRead = 0;
    expect(await markMarketTokenized(db, UNCHANGED)).toBe(true);
    expect(await holder.refreshIfChanged(counting)).toBe(true);
    expect(marketRowsRead).toBe(1);
    const after = holder.require();
    expect(after.market(UNCHANGED)?.record.tokenized).toBe(true);
    expect(after.market(CHANGED)).toBe(before.market(CHANGED));
    await expectAsFreshLoad(db, after);

    // An import writes every row again: all are read, the unchanged ones still shared.
    marketRowsRead = 0;
    await saveCatalogue(db, seed, withChangedMarket());
    expect(await holder.refreshIfChanged(counting)).toBe(true);
    expect(marketRowsRead).toBe(before.markets.length);
    await expectAsFreshLoad(db, holder.require());
  });
});

describe("a reload after a write without a version stamp", () => {
  it("shows the row at the next whole read, WHOLE_READ_EVERY reloads later at most", async () => {
    const { db, seed, file, holder } = await storedMiniCatalogue();
    await holder.load(db);
    // An older release's write: the row changes and the version moves, but the stamp does not.
    const row = await db
      .selectFrom("markets")
      .select("data")
      .where("ticker", "=", CHANGED)
      .executeTakeFirstOrThrow();
    await db
      .updateTable("markets")
      .set({ data: JSON.stringify({ ...JSON.parse(row.data), title: "Written unstamped" }) })
      .where("ticker", "=", CHANGED)
      .execute();
    const titleNow = () => {
      const current = holder.require();
      return wire(current.marketJson(current.market(CHANGED)!)).title;
    };
    let reloads = 0;
    while (titleNow() !== "Written unstamped" && reloads <= WHOLE_READ_EVERY) {
      // Another change moves the version: the series alone, no market row.
      await saveCatalogue(db, seed, { ...file, events: [] });
      expect(await holder.refreshIfChanged(db)).toBe(true);
      reloads += 1;
    }
    expect(reloads).toBe(WHOLE_READ_EVERY + 1);
    await expectAsFreshLoad(db, holder.require());
  });
});
