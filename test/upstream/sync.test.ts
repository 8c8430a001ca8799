/** Sync from the simulator into storage, on both databases: first load, lifecycle changes, failures. */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import type { CatalogueFile } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import { loadCatalogue, readCatalogVersion, saveCatalogue } from "../../src/markets/store.js";
import { syncFromUpstream } from "../../src/markets/sync.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { type Upstream, UpstreamClient } from "../../src/upstream/client.js";
import { BACKENDS } from "../support/backends.js";
import { TEST_ANCHOR } from "../support/server.js";

/**
 * The demo at a smaller scale (327 events, 1,900 markets, rather than 736 and 4,900): still two pages of
 * events (200 a page) and every lifecycle, and quicker to sync and store several times on both databases.
 */
const catalogue: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR, scale: 0.05 });
const marketCount = catalogue.events.reduce((n, e) => n + e.markets.length, 0);
/** The catalogue's own moment: noon on the anchor day, when the simulator's prices equal the catalogue's. */
const NOON = TEST_ANCHOR + 12 * 3_600;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(backend: (typeof BACKENDS)[number], now = () => NOON) {
  const created = await backend.create();
  cleanups.push(created.cleanup);
  const storage: Storage = await openStorage(loadConfig({}, created.settings));
  cleanups.push(() => storage.close());
  const simulator: RunningSimulator = await startSimulator({ catalogue, now, port: 0 });
  cleanups.push(() => simulator.close());
  const upstream = new UpstreamClient({ baseUrl: simulator.url, timeoutMs: 30_000 });
  cleanups.push(() => upstream.close());
  const venueSeed = await resolveVenueSeed(storage.db, undefined);
  const sync = (through: Upstream = upstream) =>
    syncFromUpstream({ db: storage.db, venueSeed, upstream: through, tokenize: "tradable" });
  return { storage, simulator, sync, venueSeed, upstream };
}

describe.each(BACKENDS)("sync on $name", (backend) => {
  it("loads the whole upstream catalogue into an empty database, then finds nothing new", async () => {
    const { storage, sync } = await setUp(backend);
    const first = await sync();
    expect(first.upstream.events).toBe(catalogue.events.length);
    expect(first.upstream.markets).toBe(marketCount);
    expect(first.changed.events).toBe(catalogue.events.length);
    const stored = await loadCatalogue(storage.db);
    expect(stored.events.length).toBe(catalogue.events.length);
    expect(stored.markets.length).toBe(marketCount);
    const version = await readCatalogVersion(storage.db);

    const again = await sync();
    expect(again.changed).toEqual({ series: 0, events: 0, markets: 0 });
    expect(await readCatalogVersion(storage.db)).toBe(version);
  });

  it("keeps each market's tokenization and carries lifecycle changes through", async () => {
    const { storage, simulator, sync, venueSeed } = await setUp(backend);
    await saveCatalogue(storage.db, venueSeed, catalogue);
    const active = catalogue.events
      .flatMap((e) => e.markets)
      .find((m) => m.status === "active" && !m.tokenized);
    if (!active) throw new Error("the demo has no untokenized active market");

    const response = await fetch(new URL(`/_sim/markets/${active.ticker}/lifecycle`, simulator.url), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ status: "determined", result: "yes" }),
    });
    expect(response.status).toBeLessThan(300);
    const result = await sync();
    expect(result.changed.events).toBeGreaterThanOrEqual(1);
    const stored = (await loadCatalogue(storage.db)).markets.find((m) => m.record.ticker === active.ticker);
    expect(stored?.record.status).toBe("determined");
    expect(stored?.record.result).toBe("yes");
    // The upstream knows nothing of tokens: the venue's earlier decision stands.
    expect(stored?.record.tokenized).toBe(false);
  });

  it("refuses an upstream that lists an event on two pages, and writes nothing", async () => {
    const { storage, sync, upstream } = await setUp(backend);
    // The second page repeats the first page's first event, as a cursor that moved under a sync would.
    let firstEvent: unknown;
    const repeating: Upstream = {
      async get(path, query, options) {
        const answer = await upstream.get(path, query, options);
        if (path !== "events") return answer;
        const body = JSON.parse(answer.body.toString("utf8")) as { events: unknown[] };
        if (firstEvent === undefined) firstEvent = body.events[0];
        else body.events.push(firstEvent);
        // A new answer of its own: the client's parse of the original body is not this body's.
        return {
          status: answer.status,
          contentType: answer.contentType,
          body: Buffer.from(JSON.stringify(body)),
        };
      },
      close: () => upstream.close(),
    };
    await expect(sync(repeating)).rejects.toThrow(
      /page 2: events\[\d+\]: event ".+" is on an earlier page too/,
    );
    expect((await loadCatalogue(storage.db)).events).toEqual([]);
    // The same upstream, read straight, syncs.
    expect((await sync()).changed.events).toBe(catalogue.events.length);
  });

  it("writes nothing when the upstream fails part way", async () => {
    const { storage, simulator, sync, venueSeed } = await setUp(backend);
    await saveCatalogue(storage.db, venueSeed, catalogue);
    const before = await loadCatalogue(storage.db);
    simulator.faults.set({ kind: "malformed", match: "/events" });
    await expect(sync()).rejects.toThrow();
    simulator.faults.set({ kind: "status", status: 500, match: "/events" });
    await expect(sync()).rejects.toThrow();
    simulator.faults.clear();
    const after = await loadCatalogue(storage.db);
    expect(after.version).toBe(before.version);
    expect(after.events.length).toBe(before.events.length);
    expect(after.markets.length).toBe(before.markets.length);
  });
});
