import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import {
  deriveCashRail,
  deriveMarketAddresses,
  type MarketAddresses,
  resolveVenueSeed,
} from "../../src/markets/accounts.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import {
  fillCashRails,
  isCatalogueEmpty,
  loadCatalogue,
  readCatalogVersion,
  saveCatalogue,
} from "../../src/markets/store.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { BACKENDS, type BackendSettings } from "../support/backends.js";
import { market, miniCatalogue } from "../support/fixtures.js";

/** A CASH rail as the markets table's columns hold it. */
function cashColumns(rail: MarketAddresses) {
  return { cash_market_ledger: rail.marketLedger, cash_yes_mint: rail.yesMint, cash_no_mint: rail.noMint };
}

describe.each(BACKENDS)("storage on $name", (backend) => {
  let settings: BackendSettings;
  let cleanup: () => Promise<void>;
  let storage: Storage;

  beforeEach(async (context) => {
    if (!backend.available) return context.skip(`${backend.name} is not available here`);
    ({ settings, cleanup } = await backend.create());
    storage = await openStorage(loadConfig({}, settings));
  });
  afterEach(async () => {
    await storage?.close();
    await cleanup?.();
  });

  it("migrates an empty database and reopens an existing one without change", async () => {
    expect(storage.dialect).toBe(backend.name);
    expect(await isCatalogueEmpty(storage.db)).toBe(true);
    await storage.close();
    storage = await openStorage(loadConfig({}, settings));
    expect(await isCatalogueEmpty(storage.db)).toBe(true);
  });

  it("closes while reads are still opening their connections, rather than waiting for them forever", async () => {
    const reads = Array.from({ length: 10 }, () => isCatalogueEmpty(storage.db));
    expect(await reads[0]).toBe(true);
    // postgres.js alone never settles this close; the reads it cut short fail or never answer.
    for (const read of reads) read.catch(() => {});
    await storage.close();
  });

  it("stores a catalogue and reads back exactly what was saved", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    const file = miniCatalogue();
    const counts = await saveCatalogue(storage.db, seed, file);
    expect(counts).toEqual({ series: 2, events: 3, markets: 5, refused: [] });

    const stored = await loadCatalogue(storage.db);
    expect(stored.version).toBe(1);
    expect(stored.series.map((s) => s.ticker).sort()).toEqual(["KXHIGHNY", "KXNBAGAME"]);
    const { markets: _nested, ...firstEvent } = file.events[0]!;
    expect(stored.events.find((e) => e.ticker === firstEvent.ticker)).toEqual(firstEvent);
    const original = file.events[0]!.markets[0]!;
    const back = stored.markets.find((m) => m.record.ticker === original.ticker)!;
    expect(back.record).toEqual(original);
    expect(back.addresses).toEqual(deriveMarketAddresses(seed, original.ticker));
  });

  it("keeps each market's CASH rail beside its USDC rail, and a load serves it as stored", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    await saveCatalogue(storage.db, seed, miniCatalogue());
    const rows = await storage.db.selectFrom("markets").selectAll().execute();
    expect(rows).toHaveLength(5);
    for (const row of rows)
      expect(row).toMatchObject(cashColumns(deriveCashRail({ marketLedger: row.market_ledger })));
    // Storage is what the catalog reads: it does not derive the rail again at every load.
    const [first] = rows;
    const elsewhere = deriveCashRail({ marketLedger: "elsewhere" });
    await storage.db
      .updateTable("markets")
      .set(cashColumns(elsewhere))
      .where("ticker", "=", first!.ticker)
      .execute();
    const catalog = await new CatalogHolder().load(storage.db);
    expect(catalog.market(first!.ticker)?.addresses.rails[1]).toMatchObject(elsewhere);
  });

  it("derives the CASH rail of rows stored without it, as an older release writes them", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    await saveCatalogue(storage.db, seed, miniCatalogue());
    const stored = await new CatalogHolder().load(storage.db);
    await storage.db
      .updateTable("markets")
      .set({ cash_market_ledger: null, cash_yes_mint: null, cash_no_mint: null })
      .execute();
    const derived = await new CatalogHolder().load(storage.db);
    expect(derived.markets.map((m) => m.addresses)).toEqual(stored.markets.map((m) => m.addresses));
    expect(derived.markets[0]?.addresses.rails[1]).toMatchObject(
      deriveCashRail(derived.markets[0]!.addresses),
    );
  });

  it("fills the CASH rail of rows stored without it, past one batch, and only theirs", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    const file = miniCatalogue();
    file.events[0]!.markets.push(
      ...Array.from({ length: 1_200 }, (_, i) => market(`KXHIGHNY-26NOV23-X${i}`, file.events[0]!.ticker)),
    );
    await saveCatalogue(storage.db, seed, file);
    // As rows from before migration 0011 are, or as an older release writes them.
    await storage.db
      .updateTable("markets")
      .set({ cash_market_ledger: null, cash_yes_mint: null, cash_no_mint: null })
      .where("ticker", "like", "KXHIGHNY-26NOV23-X%")
      .execute();
    expect(await fillCashRails(storage.db)).toBe(1_200);
    const rows = await storage.db.selectFrom("markets").selectAll().execute();
    expect(rows).toHaveLength(1_205);
    for (const row of rows)
      expect(row).toMatchObject(cashColumns(deriveCashRail({ marketLedger: row.market_ledger })));
    expect(await fillCashRails(storage.db)).toBe(0);
  });

  it("is idempotent: importing the same file twice leaves the same rows", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    await saveCatalogue(storage.db, seed, miniCatalogue());
    const first = await loadCatalogue(storage.db);
    await saveCatalogue(storage.db, seed, miniCatalogue());
    const second = await loadCatalogue(storage.db);
    expect(second.markets).toEqual(first.markets);
    expect(second.events).toEqual(first.events);
    expect(second.version).toBe(first.version + 1);
  });

  it("updates changed records in place", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    await saveCatalogue(storage.db, seed, miniCatalogue());
    const changed = miniCatalogue();
    changed.events[0]!.markets[0] = market("KXHIGHNY-26NOV23-B47.5", "KXHIGHNY-26NOV23", {
      status: "closed",
      volume: 4321,
    });
    await saveCatalogue(storage.db, seed, changed);
    const stored = await loadCatalogue(storage.db);
    expect(stored.markets).toHaveLength(5);
    const updated = stored.markets.find((m) => m.record.ticker === "KXHIGHNY-26NOV23-B47.5")!;
    expect(updated.record).toMatchObject({ status: "closed", volume: 4321 });
  });

  it("imports nothing when any part fails (one transaction)", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    const failAfterEvents = (done: number) => {
      if (done > 5) throw new Error("disk full");
    };
    await expect(saveCatalogue(storage.db, seed, miniCatalogue(), failAfterEvents)).rejects.toThrow(
      "disk full",
    );
    expect(await isCatalogueEmpty(storage.db)).toBe(true);
    expect(await readCatalogVersion(storage.db)).toBe(0);
    const stored = await loadCatalogue(storage.db);
    expect(stored.series).toHaveLength(0);
  });

  it("fixes the venue seed on first use and refuses a different one later", async () => {
    const seed = await resolveVenueSeed(storage.db, undefined);
    expect(seed).toMatch(/^[0-9a-f]{64}$/);
    expect(await resolveVenueSeed(storage.db, undefined)).toBe(seed);
    expect(await resolveVenueSeed(storage.db, seed)).toBe(seed);
    await expect(resolveVenueSeed(storage.db, "another-venue-seed")).rejects.toThrow(/VENUE_SEED/);
  });
});

describe("market addresses", () => {
  it("are deterministic per seed and ticker, distinct per role, and valid base58 keys", () => {
    const a = deriveMarketAddresses("seed-one-1234", "KXHIGHNY-26NOV23-B47.5");
    expect(deriveMarketAddresses("seed-one-1234", "KXHIGHNY-26NOV23-B47.5")).toEqual(a);
    expect(new Set([a.marketLedger, a.yesMint, a.noMint]).size).toBe(3);
    expect(deriveMarketAddresses("seed-two-1234", "KXHIGHNY-26NOV23-B47.5").yesMint).not.toBe(a.yesMint);
    expect(deriveMarketAddresses("seed-one-1234", "KXHIGHNY-26NOV23-T52").yesMint).not.toBe(a.yesMint);
    for (const address of Object.values(a)) expect(address).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  });

  it("stay where earlier versions put them (a database made by one finds its markets' accounts)", () => {
    const usdc = deriveMarketAddresses("seed-one-1234", "KXHIGHNY-26NOV23-B47.5");
    expect(usdc).toEqual({
      marketLedger: "8CjH9V9GEzsp3SYRRQc6V9Vby7ZJnh9k8cmE3hqkqm4",
      yesMint: "7o7fSeHYZwvneuWjrSyGW9cbQzt34THDud6Zma7bnMnQ",
      noMint: "BvbpdEPNnCbB64LqUasEvZd77kycgkHJupWFPRHAP1gp",
    });
    expect(deriveCashRail(usdc)).toEqual({
      marketLedger: "GpGT8ZjJd2NgZdY1V29kSRkk3hUuyyc74ozzVxAt5rra",
      yesMint: "FbVTnNrWhUjws6JJAPsqUHJdpLEoJ5jTn42wEVT7oSXb",
      noMint: "XNu6YV4wXHupoFDWudNSZhqHVXf9rEfArY96sdFXuJz",
    });
  });
});
