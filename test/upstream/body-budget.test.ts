/**
 * A hostile upstream that answers 20 concurrent calls with large bodies at once must not make the
 * relay hold 20 of them: the bodies being read share one byte budget, so at most its capacity is
 * held between them (read from the budget's own accounting), the calls past it fail as 502
 * upstream_unavailable at once, and those within it are served whole. Through the app, in process.
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
import { ByteBudget } from "../../src/upstream/byte-budget.js";
import { UpstreamClient } from "../../src/upstream/client.js";
import { MarketRelay } from "../../src/upstream/relay.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { miniCatalogue } from "../support/fixtures.js";

const TICKER = "KXHIGHNY-26NOV23-B47.5";
const MiB = 1024 * 1024;
/** Every body the upstream sends before it holds the answer open: within the per-body limit. */
const SENT = 3 * MiB;
const CAPACITY = 8 * MiB;
const CALLS = 20;

const dir = tempDir();
let storage: Storage;
let server: http.Server;
let app: ZodApp;
let client: UpstreamClient;
const budget = new ByteBudget(CAPACITY);
/** Answers the upstream holds open, to end once the test says so. */
const held: http.ServerResponse[] = [];

/** SENT bytes of a valid book's beginning: one level repeated; `]}}` ends it. */
const LEVEL = '["0.5000","1.00"],';
const head = `{"orderbook_fp":{"no_dollars":[],"yes_dollars":[${LEVEL.repeat(Math.floor((SENT - 50) / LEVEL.length))}`;
const BEGINNING = Buffer.from(head.padEnd(SENT, " "));
const END = '["0.5000","1.00"]]}}';

beforeAll(async () => {
  storage = await openStorage({ DATA_DIR: dir.dir });
  await saveCatalogue(storage.db, await resolveVenueSeed(storage.db, undefined), miniCatalogue());
  const catalog = new CatalogHolder();
  await catalog.load(storage.db);
  server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.write(BEGINNING);
    held.push(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  client = new UpstreamClient({
    baseUrl: `http://127.0.0.1:${port}/trade-api/v2`,
    timeoutMs: 60_000,
    maxBodyBytes: 4 * MiB,
    bodyBudget: budget,
    // Every refusal here is the budget's: the breaker is not what this tests.
    breaker: { volumeThreshold: 1_000 },
  });
  app = await buildApp({
    config: QUIET_DEVELOPMENT,
    catalog,
    access: openAccess(),
    relay: new MarketRelay(client),
  });
});
afterAll(async () => {
  for (const response of held) response.destroy();
  await app?.close();
  await client?.close();
  server?.close();
  await storage?.close();
  await dir.cleanup();
});

describe("large bodies read at once", () => {
  it(`holds at most the budget's bytes across ${CALLS} concurrent answers, and fails the calls past it`, async () => {
    let settled = 0;
    // A different depth each: identical calls in flight would share one request.
    const answers = Array.from({ length: CALLS }, (_, i) =>
      app.inject({ method: "GET", url: `/api/v1/orderbook/${TICKER}?depth=${i + 1}` }).finally(() => {
        settled += 1;
      }),
    );
    // Every call still reading has read all that was sent: the calls past the budget have failed.
    const calm = () => settled < CALLS && budget.held === (CALLS - settled) * SENT;
    const giveUp = Date.now() + 30_000;
    while (!calm()) {
      if (Date.now() > giveUp) {
        throw new Error(`the budget held ${budget.held} bytes with ${settled} of ${CALLS} calls settled`);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
    const reading = CALLS - settled;
    expect(reading).toBeGreaterThanOrEqual(1);
    expect(reading).toBeLessThanOrEqual(Math.floor(CAPACITY / SENT));
    expect(budget.peak).toBeLessThanOrEqual(CAPACITY);

    for (const response of held) if (!response.destroyed) response.end(END);
    const done = await Promise.all(answers);
    const statuses = done.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 200)).toHaveLength(reading);
    expect(statuses.filter((status) => status === 502)).toHaveLength(CALLS - reading);
    const refused = done.find((answer) => answer.statusCode === 502)?.json() as { code: string; msg: string };
    expect(refused.code).toBe("upstream_unavailable");
    expect(refused.msg).toContain(`${CAPACITY} bytes of bodies read at once`);
    const served = done.find((answer) => answer.statusCode === 200)?.json() as { yes_bids: object };
    expect(served.yes_bids).toEqual({ "0.5000": expect.any(Number) });
    expect(budget.held).toBe(0);
    expect(budget.peak).toBeLessThanOrEqual(CAPACITY);
  }, 60_000);
});
