/**
 * An upstream whose order book is not one: `GET /api/v1/orderbook/{ticker}` (through the app, in
 * process) answers 502 upstream_unavailable for a body nested 100,000 deep, whatever is nested,
 * and for any body without Kalshi's `orderbook` or `orderbook_fp` object, instead of a 200 empty
 * book (or a 500 from a stack overflow); a book Kalshi sends empty is still an empty book.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import type { ZodApp } from "../../src/http/types.js";
import { resolveVenueSeed } from "../../src/markets/accounts.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { saveCatalogue } from "../../src/markets/store.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { MarketRelay } from "../../src/upstream/relay.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { miniCatalogue } from "../support/fixtures.js";

const TICKER = "KXHIGHNY-26NOV23-B47.5";
const DEEP = 100_000;
const deepArrays = `${"[".repeat(DEEP)}${"]".repeat(DEEP)}`;
const deepObjects = `${'{"a":'.repeat(DEEP)}1${"}".repeat(DEEP)}`;

const dir = tempDir();
let storage: Storage;
let server: http.Server;
let app: ZodApp;
let client: UpstreamClient;
/** What the upstream answers for the order book next. */
let book = "";

beforeAll(async () => {
  storage = await openStorage({ DATA_DIR: dir.dir });
  await saveCatalogue(storage.db, await resolveVenueSeed(storage.db, undefined), miniCatalogue());
  const catalog = new CatalogHolder();
  await catalog.load(storage.db);
  server = http.createServer((_request, response) =>
    response.writeHead(200, { "content-type": "application/json" }).end(book),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new UpstreamClient({ baseUrl: `http://127.0.0.1:${port}/trade-api/v2`, timeoutMs: 10_000 });
  app = await buildApp({
    config: QUIET_DEVELOPMENT,
    catalog,
    access: openAccess(),
    relay: new MarketRelay(client),
  });
});
afterAll(async () => {
  await app?.close();
  await client?.close();
  server?.close();
  await storage?.close();
  await dir.cleanup();
});

async function orderbook(body: string) {
  book = body;
  const response = await app.inject({ method: "GET", url: `/api/v1/orderbook/${TICKER}` });
  return { status: response.statusCode, body: response.json() as Record<string, unknown> };
}

describe("an order book that is not one", () => {
  for (const [name, body] of [
    ["100,000 nested arrays", deepArrays],
    ["100,000 nested objects", deepObjects],
    ["100,000 nested arrays as the yes side's level", `{"orderbook":{"yes":[${deepArrays}]}}`],
    ["100,000 nested arrays as a level's price", `{"orderbook_fp":{"yes_dollars":[[${deepArrays},"1"]]}}`],
    ["an object without orderbook", '{"markets":[]}'],
    ["null", "null"],
    ["a number", "42"],
    ["an orderbook that is a list", '{"orderbook":[]}'],
    ["a side that is not a list", '{"orderbook_fp":{"yes_dollars":{"0.5":"1"}}}'],
    ["a level that is not [price, size]", '{"orderbook_fp":{"yes_dollars":[{"price":"0.5","size":"1"}]}}'],
  ] as const) {
    it(`answers 502 upstream_unavailable for ${name}`, async () => {
      const answer = await orderbook(body);
      expect(answer.status, JSON.stringify(answer.body).slice(0, 300)).toBe(502);
      expect(answer.body.code).toBe("upstream_unavailable");
    });
  }

  it("still reads Kalshi's empty and non-empty books", async () => {
    const empty = await orderbook(
      '{"orderbook":{"yes":null,"no":null,"yes_dollars":null,"no_dollars":null}}',
    );
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ yes_bids: {}, no_bids: {} });
    const full = await orderbook(
      '{"orderbook_fp":{"yes_dollars":[["0.4200","10.00"]],"no_dollars":[]},"orderbook":{"no":[[55,3]]}}',
    );
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ yes_bids: { "0.4200": 10 }, no_bids: {} });
    const legacy = await orderbook('{"orderbook":{"yes":[[42,10]],"no":[[55,3]]}}');
    expect(legacy.body).toMatchObject({ yes_bids: { "0.4200": 10 }, no_bids: { "0.5500": 3 } });
    // Kalshi's REST book has no sequence: one nested 100,000 deep is not read (nor overflows the stack).
    const deepSequence = await orderbook(`{"orderbook_fp":{"yes_dollars":[]},"sequence":${deepArrays}}`);
    expect(deepSequence.status).toBe(200);
    expect(typeof deepSequence.body.sequence).toBe("number");
  });
});
