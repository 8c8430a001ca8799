/** Before the token registry and pools have loaded, the trade API says so with the reference's 503 codes. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import type { Chain } from "../../src/chain/chain.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { TradingBook } from "../../src/trading/book.js";
import { OrderDesk } from "../../src/trading/order.js";
import { IntentDesk } from "../../src/trading/orders/intents.js";
import { OrderKeeper } from "../../src/trading/orders/keeper.js";
import { PoolAuthorities } from "../../src/trading/pools/authority.js";
import { QuoteStreamHub } from "../../src/trading/quote-stream.js";
import { OrderStatusDesk } from "../../src/trading/routes/get-order-status.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { validateAgainstReference } from "../support/reference-schema.js";

let app: ZodApp;
let url: string;
let storage: Storage;
const dir = tempDir();

beforeAll(async () => {
  storage = await openStorage({ DATA_DIR: dir.dir });
  // Nothing may touch the chain before the book has started.
  const chain = new Proxy({} as Chain, {
    get: (_target, method) => () => Promise.reject(new Error(`chain.${String(method)} called`)),
  });
  const authorities = new PoolAuthorities(new Uint8Array(32));
  const book = new TradingBook({ db: storage.db, chain, authorities });
  const desk = new OrderDesk(book, chain);
  const keeper = new OrderKeeper({ db: storage.db, chain, book, authorities });
  app = await buildApp({
    config: QUIET_DEVELOPMENT,
    catalog: new CatalogHolder(),
    access: openAccess(),
    trading: {
      book,
      desk,
      intents: new IntentDesk({ db: storage.db, chain, book, desk, authorities, keeper }),
      status: new OrderStatusDesk({ db: storage.db, chain }),
      quotes: new QuoteStreamHub(book),
    },
  });
  url = await app.listen({ host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  await app?.close();
  await storage?.close();
  await dir.cleanup();
});

describe("a trade API still loading", () => {
  it("answers the token routes with 503 mint_info_not_initialized", async () => {
    for (const path of ["/tokens-with-decimals", "/tokens"]) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("1");
      const body = await response.json();
      expect(body).toMatchObject({ code: "mint_info_not_initialized" });
      expect(validateAgainstReference("TokensServiceUnavailableResponse", body)).toEqual([]);
    }
  });

  it("answers /order with 503 amm_map_not_initialized", async () => {
    const response = await fetch(
      `${url}/order?inputMint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&outputMint=So11111111111111111111111111111111111111112&amount=1`,
    );
    expect(response.status).toBe(503);
    const body = await response.json();
    expect(body).toMatchObject({ code: "amm_map_not_initialized" });
    expect(validateAgainstReference("OrderServiceUnavailableResponse", body)).toEqual([]);
  });
});
