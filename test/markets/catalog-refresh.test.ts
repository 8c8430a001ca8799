import { describe, expect, it } from "vitest";
import { startServer } from "../../src/app/start-server.js";
import { MarketsClient } from "../../src/client/markets.js";
import { loadConfig } from "../../src/config.js";
import { CATALOGUE_FORMAT } from "../../src/contract/markets.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import { saveCatalogue } from "../../src/markets/store.js";
import { openStorage } from "../../src/storage/database.js";
import { BACKENDS } from "../support/backends.js";
import { event, market, miniCatalogue, series } from "../support/fixtures.js";
import { startTestServer } from "../support/server.js";

describe.each(BACKENDS)("catalog on $name", (backend) => {
  it.skipIf(!backend.available)(
    "picks up an import another process committed, on every instance sharing the database",
    async () => {
      const first = await startTestServer({ backend, catalogue: miniCatalogue() });
      // A second instance over the same storage (PostgreSQL: another server; SQLite: same file).
      // One instance runs the sandbox chain of a database; the second uses it.
      const second = await startServer(
        loadConfig({}, { ...first.settings, PORT: "0", SOLANA_RPC_URL: first.server.chain.rpcUrl }),
      );
      try {
        const secondClient = new MarketsClient({ baseUrl: second.url });
        expect((await secondClient.listEvents()).events).toHaveLength(3);
        const a = await first.client.getMarket("KXHIGHNY-26NOV23-B47.5");
        const b = await secondClient.getMarket("KXHIGHNY-26NOV23-B47.5");
        expect(b.accounts).toEqual(a.accounts);

        const storage = await openStorage(loadConfig({}, first.settings));
        try {
          const seed = await resolveVenueSeed(storage.db, undefined);
          await saveCatalogue(storage.db, seed, {
            format: CATALOGUE_FORMAT,
            series: [series("KXCPI", { category: "Economics", tags: ["Inflation"] })],
            events: [event("KXCPI-26DEC", "KXCPI", [market("KXCPI-26DEC-T0.3", "KXCPI-26DEC")])],
          });
        } finally {
          await storage.close();
        }
        for (const client of [first.client, secondClient]) {
          // Each instance polls storage for a new catalogue version and reloads.
          await expect
            .poll(async () => (await client.listEvents()).events.map((e) => e.ticker), {
              timeout: 15_000,
              interval: 50,
            })
            .toHaveLength(4);
          const page = await client.listEvents();
          expect(page.events.map((e) => e.ticker)).toContain("KXCPI-26DEC");
        }
      } finally {
        await second.close();
        await first.stop();
      }
    },
  );
});
