/**
 * A venue started on storage whose market rows lack the CASH rail (rows from before migration 0011,
 * or written by an older release) stores it before loading, and serves the same accounts as ever.
 */
import { afterAll, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { CASH_MINT } from "../../src/contract/markets.js";
import { deriveCashRail } from "../../src/markets/accounts.js";
import { openStorage } from "../../src/storage/database.js";
import { miniCatalogue } from "../support/fixtures.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer | undefined;
afterAll(async () => {
  await t?.stop();
});

it("stores the CASH rail of markets stored without it at start, and serves their accounts on both rails", async () => {
  t = await startTestServer({
    catalogue: miniCatalogue(),
    beforeStart: async (db) => {
      await db
        .updateTable("markets")
        .set({ cash_market_ledger: null, cash_yes_mint: null, cash_no_mint: null })
        .execute();
    },
  });
  const storage = await openStorage(loadConfig({}, t.settings));
  try {
    const rows = await storage.db.selectFrom("markets").selectAll().execute();
    expect(rows).toHaveLength(5);
    for (const row of rows) {
      const cash = deriveCashRail({ marketLedger: row.market_ledger });
      expect([row.cash_market_ledger, row.cash_yes_mint, row.cash_no_mint]).toEqual([
        cash.marketLedger,
        cash.yesMint,
        cash.noMint,
      ]);
      const served = await t.client.getMarket(row.ticker);
      expect(served.accounts[CASH_MINT]).toMatchObject(cash);
    }
  } finally {
    await storage.close();
  }
});
