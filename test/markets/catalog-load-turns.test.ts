/**
 * Loading a large catalogue takes seconds of CPU and SQLite answers synchronously: the load hands
 * the event loop turns as it goes, so requests (liveness probes above all) are answered meanwhile,
 * and reads from a snapshot connection of its own, so that other queries are answered too; and it
 * still builds the whole catalogue.
 */
import { setImmediate } from "node:timers/promises";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { saveCatalogue } from "../../src/markets/store.js";
import { forEachInSlices } from "../../src/slices.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { tempDir } from "../support/backends.js";

/** Counts the turns the event loop gets (timers that fire) until the returned function is called. */
function countTurns(): () => number {
  let turns = 0;
  let timer = setTimeout(function tick() {
    turns += 1;
    timer = setTimeout(tick, 0);
  }, 0);
  return () => {
    clearTimeout(timer);
    return turns;
  };
}

describe("a catalogue load", () => {
  const home = tempDir();
  let storage: Storage;
  let markets = 0;

  beforeAll(async () => {
    storage = await openStorage(loadConfig({}, { DATA_DIR: home.dir, LOG_LEVEL: "silent" }));
    const file = generateDemoCatalogue({ anchor: 1_790_000_000 });
    markets = file.events.reduce((n, event) => n + event.markets.length, 0);
    await saveCatalogue(storage.db, await resolveVenueSeed(storage.db, undefined), file);
  }, 60_000);
  afterAll(async () => {
    await storage?.close();
    await home.cleanup();
  });

  it("lets timers run while it reads and builds, and loads every market", async () => {
    const holder = new CatalogHolder();
    const stop = countTurns();
    const catalog = await holder.load(storage.db);
    const turns = stop();
    expect(catalog.markets.length).toBe(markets);
    // One turn at least per 500-row chunk read; without them, none at all.
    expect(turns).toBeGreaterThanOrEqual(Math.floor(markets / 500));
  });

  it("reads from its own snapshot, so queries on the main connection are answered meanwhile", async () => {
    const holder = new CatalogHolder();
    let loaded = false;
    let answeredDuringLoad = 0;
    const loading = holder.load(storage.snapshots).then(() => {
      loaded = true;
    });
    // Ask once the load has started reading: each answer that comes before it ends counts.
    while (!loaded) {
      await sql`select 1`.execute(storage.db);
      if (!loaded) answeredDuringLoad += 1;
      // SQLite answers synchronously: give the load its turn.
      await setImmediate();
    }
    await loading;
    expect(holder.require().markets.length).toBe(markets);
    expect(answeredDuringLoad).toBeGreaterThanOrEqual(2);
  });
});

describe("forEachInSlices", () => {
  it("visits every item once, in order, with its index", async () => {
    const seen: [string, number][] = [];
    await forEachInSlices(["a", "b", "c"], (item, index) => seen.push([item, index]));
    expect(seen).toEqual([
      ["a", 0],
      ["b", 1],
      ["c", 2],
    ]);
  });

  it("hands the event loop a turn while the work goes on", async () => {
    const items = Array.from({ length: 2_000 }, (_, n) => n);
    const stop = countTurns();
    let sum = 0;
    await forEachInSlices(items, (n) => {
      // About 20 µs of work an item: 40 ms in all, four slices at least.
      const until = performance.now() + 0.02;
      while (performance.now() < until) sum += n;
    });
    expect(stop()).toBeGreaterThanOrEqual(2);
    expect(sum).toBeGreaterThan(0);
  });
});
