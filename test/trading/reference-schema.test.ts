/**
 * The test-support validator against the vendored reference OpenAPI document, and the venue's error
 * responses of every trade route against the reference's error schemas of that route.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../../src/app/build-app.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { IntentDesk } from "../../src/trading/prediction/intents.js";
import { OrderStatusDesk } from "../../src/trading/routes/get-order-status.js";
import { OrderDesk } from "../../src/trading/spot/desk.js";
import { openAccess, QUIET_DEVELOPMENT } from "../support/app.js";
import { tempDir } from "../support/backends.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { refusingChain, unstartedTradingApi } from "../support/trading-api.js";

const SOL = "So11111111111111111111111111111111111111112";
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/** The live example of dflow-trade-api.md §3.2 (0.01 SOL → USDC with `userPublicKey`), abbreviations expanded. */
function liveOrderResponse(): Record<string, unknown> {
  return {
    inputMint: SOL,
    inAmount: "10000000",
    outputMint: USDC,
    outAmount: "928220",
    otherAmountThreshold: "926364",
    minOutAmount: "926364",
    slippageBps: 20,
    platformFee: null,
    priceImpactPct: "0",
    routePlan: [
      {
        venue: "BisonFi",
        marketKey: "8FnXXUCfGMy8RZkHLXgyZgDPGhvEM9pcbd8556btcGw1",
        inputMint: SOL,
        outputMint: USDC,
        inAmount: "10000000",
        outAmount: "928220",
        inputMintDecimals: 9,
        outputMintDecimals: 6,
      },
    ],
    contextSlot: 440907166,
    executionMode: "sync",
    lastValidBlockHeight: 418956691,
    prioritizationFeeLamports: 27,
    computeUnitLimit: 200000,
    prioritizationType: { computeBudget: { microLamports: 134, estimatedMicroLamports: 134 } },
  };
}

describe("validateAgainstReference", () => {
  it("loads the vendored 3.1 document with the schemas the tests rely on", () => {
    const text = readFileSync(new URL("../support/dflow-trade-openapi.json", import.meta.url), "utf8");
    const document = JSON.parse(text) as {
      openapi: string;
      components: { schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe("3.1.0");
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(["OrderResponse", "RoutePlanLeg", "TokensWithDecimalsDoc"]),
    );
  });

  it("accepts the live OrderResponse example", () => {
    expect(validateAgainstReference("OrderResponse", liveOrderResponse())).toEqual([]);
  });

  it("accepts a quote-only OrderResponse (no userPublicKey fields) and a platform fee object", () => {
    const body = liveOrderResponse();
    for (const key of [
      "lastValidBlockHeight",
      "prioritizationFeeLamports",
      "computeUnitLimit",
      "prioritizationType",
    ]) {
      delete body[key];
    }
    body.platformFee = { amount: "1856", feeBps: 20, mode: "outputMint" };
    expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
  });

  it("rejects inAmount given as a number, naming the path", () => {
    const errors = validateAgainstReference("OrderResponse", { ...liveOrderResponse(), inAmount: 10000000 });
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join("\n")).toContain("$.inAmount");
    expect(errors.join("\n")).toMatch(/must be string/);
  });

  it("rejects a missing executionMode", () => {
    const body = liveOrderResponse();
    delete body.executionMode;
    const errors = validateAgainstReference("OrderResponse", body);
    expect(errors.join("\n")).toMatch(/executionMode/);
  });

  it("rejects an unknown executionMode and a route leg with a numeric amount", () => {
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), executionMode: "later" }),
    ).not.toEqual([]);
    const body = liveOrderResponse();
    (body.routePlan as Record<string, unknown>[])[0]!.outAmount = 928220;
    const errors = validateAgainstReference("OrderResponse", body);
    expect(errors.join("\n")).toContain("$.routePlan.0");
  });

  it("checks int32 ranges and non-negative minimums", () => {
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), computeUnitLimit: 2 ** 31 }),
    ).not.toEqual([]);
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), slippageBps: -1 }),
    ).not.toEqual([]);
    expect(
      validateAgainstReference("OrderResponse", { ...liveOrderResponse(), slippageBps: 2.5 }),
    ).not.toEqual([]);
  });

  it("accepts [[mint, decimals], ...] for TokensWithDecimalsDoc (an array of [string, integer] pairs)", () => {
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL, 9]])).toEqual([]);
    expect(
      validateAgainstReference("TokensWithDecimalsDoc", [
        [SOL, 9],
        [USDC, 6],
      ]),
    ).toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [])).toEqual([]);
  });

  it("rejects malformed TokensWithDecimalsDoc entries", () => {
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL, "9"]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[9, SOL]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", [[SOL, 9, 0]])).not.toEqual([]);
    expect(validateAgainstReference("TokensWithDecimalsDoc", { [SOL]: 9 })).not.toEqual([]);
  });

  it("rejects a route leg carrying `data`: it matches both RoutePlanLeg branches of the oneOf", () => {
    // A quirk of the reference document: SingleMarketRoutePlanLeg does not forbid extra properties, so a
    // DynamicRoutePlanLeg (the same fields plus `data`) satisfies both branches and `oneOf` fails. Only
    // legs without `data` validate; this pins that down so nobody emits `data` expecting it to pass.
    const body = liveOrderResponse();
    (body.routePlan as Record<string, unknown>[])[0]!.data = "AQID";
    const errors = validateAgainstReference("OrderResponse", body);
    expect(errors.join("\n")).toMatch(/\$\.routePlan\.0: must match exactly one schema in oneOf/);
  });

  it("throws for a schema name the document does not have", () => {
    expect(() => validateAgainstReference("NoSuchSchema", {})).toThrow(/NoSuchSchema/);
  });
});

/** A fault a bug would raise, full of internals no answer may show. */
function bug(): never {
  throw new TypeError("Cannot read properties of undefined (reading 'vaults') at /srv/oddsgate/order.ts:42");
}
class FailingOrderDesk extends OrderDesk {
  override async order(): Promise<never> {
    bug();
  }
  override async quote(): Promise<never> {
    bug();
  }
}
class FailingIntentDesk extends IntentDesk {
  override async intent(): Promise<never> {
    bug();
  }
}
class FailingStatusDesk extends OrderStatusDesk {
  override async status(): Promise<never> {
    bug();
  }
}

describe("the venue's error responses, against the reference's error schemas of their route", () => {
  const dir = tempDir();
  let storage: Storage;
  /** Before the pools and the token registry have loaded: every 400 and 404 comes first, then 503. */
  let loading: ZodApp;
  /** Its desks fail as a bug would: 500. */
  let failing: ZodApp;

  beforeAll(async () => {
    storage = await openStorage({ DATA_DIR: dir.dir });
    // A chain that knows no transaction (so an unknown order is not found); nothing else may reach it.
    const chain = refusingChain({ getTransaction: () => Promise.resolve(null) });
    const app = (failures: boolean) =>
      buildApp({
        config: QUIET_DEVELOPMENT,
        catalog: new CatalogHolder(),
        access: openAccess(),
        trading: unstartedTradingApi(
          storage.db,
          chain,
          failures
            ? {
                desk: (book) => new FailingOrderDesk(book, chain),
                intents: (deps) => new FailingIntentDesk(deps),
                status: (deps) => new FailingStatusDesk(deps),
              }
            : {},
        ),
      });
    loading = await app(false);
    failing = await app(true);
  });
  afterAll(async () => {
    await loading?.close();
    await failing?.close();
    await storage?.close();
    await dir.cleanup();
  });

  const pair = `inputMint=${USDC}&outputMint=${SOL}`;
  const quote = {
    inputMint: USDC,
    inAmount: "1000000",
    outputMint: SOL,
    outAmount: "1",
    otherAmountThreshold: "1",
    minOutAmount: "1",
    slippageBps: 50,
    feeBudget: 1_000_000,
    priceImpactPct: "0",
  };
  const swapQuote = {
    inputMint: USDC,
    inAmount: "1000000",
    outputMint: SOL,
    outAmount: "1",
    otherAmountThreshold: "1",
    slippageBps: 50,
    priceImpactPct: "0",
    contextSlot: 1,
    routePlan: [
      {
        venue: "cpmm",
        marketKey: SOL,
        inputMint: USDC,
        outputMint: SOL,
        inAmount: "1000000",
        outAmount: "1",
      },
    ],
  };
  const cases: {
    what: string;
    app: "loading" | "failing";
    url: string;
    body?: Record<string, unknown>;
    status: number;
    schema: string;
  }[] = [
    {
      what: "/order amount 0",
      app: "loading",
      url: `/order?${pair}&amount=0`,
      status: 400,
      schema: "OrderBadRequestResponse",
    },
    {
      what: "/order amount repeated",
      app: "loading",
      url: `/order?${pair}&amount=1&amount=2`,
      status: 400,
      schema: "OrderBadRequestResponse",
    },
    {
      what: "/order outputMint missing",
      app: "loading",
      url: `/order?inputMint=${USDC}&amount=1`,
      status: 400,
      schema: "OrderBadRequestResponse",
    },
    {
      what: "/order loading",
      app: "loading",
      url: `/order?${pair}&amount=1`,
      status: 503,
      schema: "OrderServiceUnavailableResponse",
    },
    {
      what: "/order failing",
      app: "failing",
      url: `/order?${pair}&amount=1`,
      status: 500,
      schema: "OrderInternalServerErrorResponse",
    },
    {
      what: "/intent referralAccount",
      app: "loading",
      url: `/intent?${pair}&amount=1&referralAccount=${SOL}`,
      status: 400,
      schema: "IntentBadRequestResponse",
    },
    {
      what: "/intent feeBudget malformed",
      app: "loading",
      url: `/intent?${pair}&amount=1&feeBudget=lots`,
      status: 400,
      schema: "IntentBadRequestResponse",
    },
    {
      what: "/intent amount missing",
      app: "loading",
      url: `/intent?${pair}`,
      status: 400,
      schema: "IntentBadRequestResponse",
    },
    {
      what: "/intent loading",
      app: "loading",
      url: `/intent?${pair}&amount=1`,
      status: 503,
      schema: "IntentServiceUnavailableResponse",
    },
    {
      what: "/intent failing",
      app: "failing",
      url: `/intent?${pair}&amount=1`,
      status: 500,
      schema: "IntentInternalServerErrorResponse",
    },
    {
      what: "/order-status malformed",
      app: "loading",
      url: "/order-status?signature=abc",
      status: 400,
      schema: "OrderStatusBadRequestResponse",
    },
    {
      what: "/order-status missing",
      app: "loading",
      url: "/order-status",
      status: 400,
      schema: "OrderStatusBadRequestResponse",
    },
    {
      what: "/order-status unknown",
      app: "loading",
      url: `/order-status?signature=${"1".repeat(64)}`,
      status: 404,
      schema: "OrderStatusNotFoundResponse",
    },
    {
      what: "/order-status failing",
      app: "failing",
      url: `/order-status?signature=${"1".repeat(64)}`,
      status: 500,
      schema: "OrderStatusInternalServerErrorResponse",
    },
    {
      what: "/submit-intent empty",
      app: "loading",
      url: "/submit-intent",
      body: {},
      status: 400,
      schema: "SubmitIntentBadRequestResponse",
    },
    {
      what: "/submit-intent quote field",
      app: "loading",
      url: "/submit-intent",
      body: { quoteResponse: { ...quote, inAmount: 1 }, signedOpenTransaction: "AA==" },
      status: 400,
      schema: "SubmitIntentBadRequestResponse",
    },
    {
      what: "/submit-intent not a transaction",
      app: "loading",
      url: "/submit-intent",
      body: { quoteResponse: quote, signedOpenTransaction: "bm90IGEgdHJhbnNhY3Rpb24=" },
      status: 400,
      schema: "SubmitIntentBadRequestResponse",
    },
    {
      what: "/quote amount 0",
      app: "loading",
      url: `/quote?${pair}&amount=0`,
      status: 400,
      schema: "QuoteBadRequestResponse",
    },
    {
      what: "/quote sponsoredSwap repeated",
      app: "loading",
      url: `/quote?${pair}&amount=1&sponsoredSwap=true&sponsoredSwap=false`,
      status: 400,
      schema: "QuoteBadRequestResponse",
    },
    {
      what: "/quote loading",
      app: "loading",
      url: `/quote?${pair}&amount=1`,
      status: 503,
      schema: "QuoteServiceUnavailableResponse",
    },
    {
      what: "/quote failing",
      app: "failing",
      url: `/quote?${pair}&amount=1`,
      status: 500,
      schema: "QuoteInternalServerErrorResponse",
    },
    {
      what: "/swap empty",
      app: "loading",
      url: "/swap",
      body: {},
      status: 400,
      schema: "SwapBadRequestResponse",
    },
    {
      what: "/swap-instructions empty route",
      app: "loading",
      url: "/swap-instructions",
      body: { userPublicKey: SOL, quoteResponse: { ...swapQuote, routePlan: [] } },
      status: 400,
      schema: "SwapBadRequestResponse",
    },
    {
      what: "/swap failing",
      app: "failing",
      url: "/swap",
      body: { userPublicKey: USDC, quoteResponse: swapQuote },
      status: 500,
      schema: "SwapInternalServerErrorResponse",
    },
    {
      what: "/swap-instructions failing",
      app: "failing",
      url: "/swap-instructions",
      body: { userPublicKey: USDC, quoteResponse: swapQuote },
      status: 500,
      schema: "SwapInternalServerErrorResponse",
    },
    {
      what: "/health-check loading",
      app: "loading",
      url: "/health-check",
      status: 503,
      schema: "HealthCheckServiceUnavailableResponse",
    },
    {
      what: "/tokens loading",
      app: "loading",
      url: "/tokens",
      status: 503,
      schema: "TokensServiceUnavailableResponse",
    },
    {
      what: "/tokens-with-decimals loading",
      app: "loading",
      url: "/tokens-with-decimals",
      status: 503,
      schema: "TokensServiceUnavailableResponse",
    },
  ];

  it.each(cases)("$what: $status $schema", async ({ app, url, body, status, schema }) => {
    const response = await (app === "loading" ? loading : failing).inject({
      method: body === undefined ? "GET" : "POST",
      url,
      ...(body === undefined ? {} : { payload: body }),
    });
    expect(response.statusCode, response.body).toBe(status);
    expect(validateAgainstReference(schema, response.json())).toEqual([]);
    // `reason`, where present, is the venue's own exact code behind the reference's broader one.
    expect(Object.keys(response.json()).filter((key) => key !== "reason")).toEqual(["code", "msg"]);
    expect(response.body).not.toMatch(/TypeError|vaults|\/srv\//);
  });
});
