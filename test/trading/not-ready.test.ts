/** Before the token registry and pools have loaded, the trade API says so with the reference's 503 codes. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { refusingChain, unstartedTradingApi } from "../support/trading-api.js";

let app: ZodApp;
let url: string;
let storage: Storage;
const dir = tempDir();

beforeAll(async () => {
  storage = await openStorage({ DATA_DIR: dir.dir });
  // Nothing may touch the chain before the book has started.
  app = await buildApp({
    config: QUIET_DEVELOPMENT,
    catalog: new CatalogHolder(),
    access: openAccess(),
    trading: unstartedTradingApi(storage.db, refusingChain()),
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
