/**
 * Market state only moves forward: a sync or an import that would turn a determined or finalized
 * market back (to active, say) is refused for that market, which stays settled; the venue logs the
 * refusal and counts it in /metrics. On both databases.
 */
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { CatalogueFile, MarketRecord } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import { loadCatalogue, readCatalogVersion, saveCatalogue } from "../../src/markets/store.js";
import { syncFromUpstream } from "../../src/markets/sync.js";
import { startSimulator } from "../../src/simulator/index.js";
import { openStorage } from "../../src/storage/database.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { BACKENDS } from "../support/backends.js";
import { startTestServer, TEST_ANCHOR } from "../support/server.js";

/** The demo catalogue, as the venue's embedded simulator serves it. */
const demo: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR });
/**
 * The demo at a smaller scale (about 1,900 markets rather than 4,900), for the tests that store it
 * several times and run their own simulator: the lifecycle rules are per market, storing it is quicker.
 */
const catalogue: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR, scale: 0.05 });
const NOON = TEST_ANCHOR + 12 * 3_600;
const active = catalogue.events.flatMap((e) => e.markets).find((m) => m.status === "active" && m.tokenized);
if (!active) throw new Error("the demo has no tokenized active market");
const TICKER = active.ticker;
if (!demo.events.some((e) => e.markets.some((m) => m.ticker === TICKER && m.status === "active")))
  throw new Error(`${TICKER} is not active in the full demo`);

/** The catalogue `from` (the smaller demo unless said) with TICKER settled as `settled` says. */
function withSettled(settled: Partial<MarketRecord>, from: CatalogueFile = catalogue): CatalogueFile {
  const copy = structuredClone(from);
  for (const event of copy.events)
    for (const [i, market] of event.markets.entries())
      if (market.ticker === TICKER) event.markets[i] = { ...market, ...settled };
  return copy;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openBackend(backend: (typeof BACKENDS)[number]) {
  const created = await backend.create();
  cleanups.push(created.cleanup);
  const storage = await openStorage(loadConfig({}, created.settings));
  cleanups.push(() => storage.close());
  const venueSeed = await resolveVenueSeed(storage.db, undefined);
  const statusOf = async () =>
    (await loadCatalogue(storage.db)).markets.find((m) => m.record.ticker === TICKER)?.record;
  return { storage, venueSeed, statusOf };
}

describe.each(BACKENDS)("the lifecycle only moves forward on $name", (backend) => {
  it.skipIf(!backend.available)(
    "an import keeps a determined market determined, and still moves it on to finalized",
    async () => {
      const { storage, venueSeed, statusOf } = await openBackend(backend);
      await saveCatalogue(storage.db, venueSeed, withSettled({ status: "determined", result: "yes" }));
      // The file lists the market active again (the demo as it was): refused, every other one written.
      const counts = await saveCatalogue(storage.db, venueSeed, catalogue);
      expect(counts.refused).toEqual([{ ticker: TICKER, stored: "determined", offered: "active" }]);
      const all = catalogue.events.reduce((n, e) => n + e.markets.length, 0);
      expect(counts.markets).toBe(all - 1);
      expect(await statusOf()).toMatchObject({ status: "determined", result: "yes" });
      // Nor may a file change the result it was settled with.
      const flipped = await saveCatalogue(
        storage.db,
        venueSeed,
        withSettled({ status: "finalized", result: "no" }),
      );
      expect(flipped.refused.map((r) => r.ticker)).toEqual([TICKER]);
      // Forward is fine: determined -> finalized with the same result.
      const forward = await saveCatalogue(
        storage.db,
        venueSeed,
        withSettled({ status: "finalized", result: "yes" }),
      );
      expect(forward.refused).toEqual([]);
      expect(await statusOf()).toMatchObject({ status: "finalized", result: "yes" });
      expect((await saveCatalogue(storage.db, venueSeed, catalogue)).refused).toEqual([
        { ticker: TICKER, stored: "finalized", offered: "active" },
      ]);
    },
  );

  it.skipIf(!backend.available)(
    "a sync from an upstream that lists a settled market active refuses it each time",
    async () => {
      const { storage, venueSeed, statusOf } = await openBackend(backend);
      const simulator = await startSimulator({ catalogue, now: () => NOON, port: 0 });
      cleanups.push(() => simulator.close());
      const upstream = new UpstreamClient({ baseUrl: simulator.url, timeoutMs: 30_000 });
      cleanups.push(() => upstream.close());
      await saveCatalogue(storage.db, venueSeed, withSettled({ status: "determined", result: "no" }));
      const sync = () => syncFromUpstream({ db: storage.db, venueSeed, upstream, tokenize: "tradable" });

      const first = await sync();
      expect(first.refused).toEqual([{ ticker: TICKER, stored: "determined", offered: "active" }]);
      expect(await statusOf()).toMatchObject({ status: "determined", result: "no", tokenized: true });
      const version = await readCatalogVersion(storage.db);
      // Again: refused again, and nothing written for it.
      const second = await sync();
      expect(second.refused.map((r) => r.ticker)).toEqual([TICKER]);
      expect(await statusOf()).toMatchObject({ status: "determined", result: "no" });
      expect(second.changed.events).toBe(0);
      expect(await readCatalogVersion(storage.db)).toBe(version);
    },
  );
});

describe("the venue's scheduled sync", () => {
  it("logs a refused upstream answer and counts it in /metrics", async () => {
    let heard: (line: Record<string, unknown>) => void = () => {};
    const refusal = new Promise<Record<string, unknown>>((resolve) => {
      heard = (line) => {
        if (Array.isArray(line.refused)) resolve(line);
      };
    });
    const logger = pino({ level: "warn" }, { write: (line: string) => heard(JSON.parse(line)) });
    // The embedded simulator serves the demo, where the market is active; storage has it determined.
    const server = await startTestServer({
      catalogue: withSettled({ status: "determined", result: "yes" }, demo),
      settings: { SYNC_INTERVAL: "3600" },
      logger,
    });
    cleanups.push(() => server.stop());
    const line = await refusal;
    expect(line.msg).toMatch(/refused/);
    expect(line.refused).toEqual([{ ticker: TICKER, stored: "determined", offered: "active" }]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/^oddsgate_lifecycle_refusals_total\{source="sync"\} 1$/m);
    expect((await server.client.getMarket(TICKER)).status).toBe("determined");
  });
});
