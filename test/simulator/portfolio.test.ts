/**
 * Kalshi's portfolio API on the simulator, driven by Kalshi's own SDK (`kalshi-typescript`, unmodified,
 * pointed at the simulator by basePath and signing with its own RSA key) and by the venue's signer:
 * orders fill at the book's prices, take the depth they took and move the price, print on the tape,
 * and move the balance (cost + Kalshi's taker fee) and the position exactly; resting orders hold their
 * cost until canceled; client order ids are idempotent; signatures, market states and bounds are
 * refused with Kalshi's bodies; determined markets pay out.
 */
import { createPrivateKey, generateKeyPairSync, randomUUID } from "node:crypto";
import { Configuration, MarketApi, OrdersApi, PortfolioApi } from "kalshi-typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CatalogueFile } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import type { SimulatedTrade } from "../../src/simulator/dynamics.js";
import { makerFee, takerFee } from "../../src/simulator/fees.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { kalshiSignatureHeaders } from "../../src/upstream/signing.js";
import { TEST_ANCHOR } from "../support/server.js";

const catalogue: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR });
const NOW = TEST_ANCHOR + 15 * 3_600;
const KEY_ID = "0b7f4e52-3f7c-4d5e-9a53-6c1f0f5d2a10";
const START_CENTS = 100_000;
const HALF_LIFE = 300;

const rsaPair = () =>
  generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
const keys = rsaPair();

/** The exchange's clock, moved by the refill test. */
let clock = NOW;
let simulator: RunningSimulator;
let orders: OrdersApi;
let portfolio: PortfolioApi;
let markets: MarketApi;
/** Active markets trading through NOW, each test taking its own. */
let unused: string[];
const nextMarket = () => unused.shift() as string;

beforeAll(async () => {
  simulator = await startSimulator({
    catalogue,
    now: () => clock,
    port: 0,
    accounts: { [KEY_ID]: { publicKeyPem: keys.publicKey, balanceCents: START_CENTS } },
    bookRefillHalfLifeSeconds: HALF_LIFE,
  });
  const config = new Configuration({
    basePath: simulator.url,
    apiKey: KEY_ID,
    privateKeyPem: keys.privateKey,
  });
  orders = new OrdersApi(config);
  portfolio = new PortfolioApi(config);
  markets = new MarketApi(config);
  unused = catalogue.events
    .filter((e) => e.seriesTicker.startsWith("KXHIGH"))
    .flatMap((e) => e.markets)
    .filter((m) => m.status === "active" && m.openTime < NOW && m.closeTime > NOW + 3_600)
    .map((m) => m.ticker);
  if (unused.length < 10)
    throw new Error("the demo catalogue has too few temperature markets trading at NOW");
});
afterAll(async () => simulator?.close());

/** Dollar strings in basis points (prices) or centicents (money): both are $0.0001. */
const units = (dollars: string) => Math.round(Number(dollars) * 10_000);
/** Kalshi's taker fee, in centicents: ⌈0.07 × C × P × (1 − P)⌉ to $0.0001. */
const fee = (count: number, price: number) => Math.ceil((7 * count * price * (10_000 - price)) / 1_000_000);
const balance = async () => units((await portfolio.getBalance()).data.balance_dollars);
const book = async (ticker: string) => (await markets.getMarketOrderbook(ticker)).data.orderbook_fp;
/** A level as [price in basis points, contracts]. */
const level = ([price, count]: string[]) => [units(price as string), Number(count)] as const;
const refusal = (error: {
  response?: { status: number; data: { error: { code: string; details?: string } } };
}) => ({
  status: error.response?.status,
  code: error.response?.data.error.code,
  details: error.response?.data.error.details,
});

/** A signed request with the venue's own signer (src/upstream/signing.ts), as the order keeper sends it. */
async function signed(
  method: string,
  path: string,
  body?: unknown,
  { keyId = KEY_ID, privateKeyPem = keys.privateKey } = {},
) {
  const url = new URL(`${simulator.url}${path}`);
  const headers = kalshiSignatureHeaders(
    { keyId, privateKey: createPrivateKey(privateKeyPem) },
    method,
    url.pathname,
  );
  const response = await fetch(url, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: Kalshi bodies, inspected field by field
  return { status: response.status, json: (await response.json()) as any };
}

describe("orders through the published SDK", () => {
  it("a buy fills level by level at the book's prices, takes that depth, moves the price, prints, and costs exactly", async () => {
    const ticker = nextMarket();
    const before = await book(ticker);
    const [best, second] = before.no_dollars.map(level);
    if (!best || !second) throw new Error(`${ticker} has too thin a book`);
    const count = best[1] + 1;
    // A YES buyer lifts the NO bids: the best NO bid at n offers YES at $1 − n.
    const limit = 10_000 - second[0];
    const startBalance = await balance();

    const created = (
      await orders.createOrderV2({
        ticker,
        client_order_id: randomUUID(),
        side: "bid",
        count: `${count}.00`,
        price: (limit / 10_000).toFixed(4),
        time_in_force: "immediate_or_cancel",
        self_trade_prevention_type: "taker_at_cross",
      })
    ).data;
    expect(created).toMatchObject({ fill_count: `${count}.00`, remaining_count: "0.00" });

    const fills = (await portfolio.getFills(ticker)).data.fills;
    expect(fills.map((f) => [units(f.yes_price_dollars), Number(f.count_fp)])).toEqual([
      [10_000 - second[0], 1],
      [10_000 - best[0], best[1]],
    ]);
    for (const f of fills) {
      expect(f).toMatchObject({
        order_id: created.order_id,
        outcome_side: "yes",
        book_side: "bid",
        is_taker: true,
      });
      expect(units(f.fee_cost)).toBe(fee(Number(f.count_fp), units(f.yes_price_dollars)));
    }

    // The next read of the book shows the depth taken, and a worse best price.
    const after = await book(ticker);
    expect(after.no_dollars.map(level).slice(0, 2)).toEqual([
      [second[0], second[1] - 1],
      ...before.no_dollars.slice(2, 3).map(level),
    ]);
    const market = (await markets.getMarket(ticker)).data.market;
    expect(units(market.yes_ask_dollars as string)).toBe(10_000 - second[0]);

    // The tape shows both fills, taken by a YES buyer, at their prices.
    const tape = (await markets.getTrades(10, undefined, ticker)).data.trades;
    for (const f of fills) {
      const trade = tape.find((t) => t.trade_id === f.trade_id);
      expect(trade).toMatchObject({
        taker_outcome_side: "yes",
        count_fp: f.count_fp,
        yes_price_dollars: f.yes_price_dollars,
      });
    }

    const cost = best[1] * (10_000 - best[0]) + (10_000 - second[0]);
    const fees = fills.reduce((sum, f) => sum + units(f.fee_cost), 0);
    expect(await balance()).toBe(startBalance - cost - fees);
    const position = (await portfolio.getPositions(undefined, undefined, undefined, ticker)).data
      .market_positions;
    expect(position).toHaveLength(1);
    expect(position[0]).toMatchObject({ position_fp: `${count}.00`, resting_orders_count: 0 });
    expect(units(position[0]!.market_exposure_dollars)).toBe(cost);
    expect(units(position[0]!.fees_paid_dollars)).toBe(fees);

    const order = (await orders.getOrder(created.order_id)).data.order;
    expect(order).toMatchObject({
      status: "executed",
      fill_count_fp: `${count}.00`,
      ticker,
      book_side: "bid",
    });
    expect(units(order.taker_fill_cost_dollars)).toBe(cost);
    const listed = (await orders.getOrders(ticker)).data.orders.map((o) => o.order_id);
    expect(listed).toEqual([created.order_id]);
  });

  it("a resting order holds its cost, lists as resting, and a cancel gives it back once", async () => {
    const ticker = nextMarket();
    const startBalance = await balance();
    const created = (
      await orders.createOrderV2({
        ticker,
        side: "bid",
        count: "5",
        price: "0.01",
        time_in_force: "good_till_canceled",
        self_trade_prevention_type: "taker_at_cross",
      })
    ).data;
    expect(created).toMatchObject({ fill_count: "0.00", remaining_count: "5.00" });
    expect(await balance()).toBe(startBalance - 5 * 100);
    const resting = (await orders.getOrders(ticker, undefined, undefined, undefined, "resting")).data.orders;
    expect(resting.map((o) => o.order_id)).toEqual([created.order_id]);
    expect((await portfolio.getPortfolioRestingOrderTotalValue()).data.total_resting_order_value).toBe(5);

    const decreased = (await orders.decreaseOrderV2(created.order_id, { reduce_to: "2" })).data;
    expect(decreased.remaining_count).toBe("2.00");
    expect(await balance()).toBe(startBalance - 2 * 100);
    const canceled = (await orders.cancelOrderV2(created.order_id)).data;
    expect(canceled).toMatchObject({ order_id: created.order_id, reduced_by: "2.00" });
    expect(await balance()).toBe(startBalance);
    expect((await orders.getOrder(created.order_id)).data.order.status).toBe("canceled");
    const again = await orders.cancelOrderV2(created.order_id).catch(refusal);
    expect(again).toMatchObject({ status: 404 });
    expect(await balance()).toBe(startBalance);
  });

  it("the same client_order_id twice trades once: Kalshi's 409 order_already_exists", async () => {
    const ticker = nextMarket();
    const clientOrderId = randomUUID();
    const request = {
      ticker,
      client_order_id: clientOrderId,
      side: "bid" as const,
      count: "3.00",
      price: "0.9900",
      time_in_force: "fill_or_kill" as const,
      self_trade_prevention_type: "taker_at_cross" as const,
    };
    const first = (await orders.createOrderV2(request)).data;
    expect(first.fill_count).toBe("3.00");
    const afterFirst = await balance();
    const second = await orders.createOrderV2(request).catch(refusal);
    expect(second).toMatchObject({ status: 409, code: "order_already_exists" });
    expect(await balance()).toBe(afterFirst);
    expect((await portfolio.getFills(ticker)).data.fills).toHaveLength(1);
    const [fill] = (await portfolio.getFills(ticker)).data.fills;
    const tape = (await markets.getTrades(20, undefined, ticker)).data.trades;
    expect(tape.filter((t) => t.trade_id === fill?.trade_id)).toHaveLength(1);
  });

  it("a fill-or-kill the book cannot fill is Kalshi's 409, and nothing trades", async () => {
    const ticker = nextMarket();
    const depth = (await book(ticker)).no_dollars.map(level).reduce((sum, [, size]) => sum + size, 0);
    const startBalance = await balance();
    const killed = await orders
      .createOrderV2({
        ticker,
        side: "bid",
        count: `${depth + 1}`,
        price: "0.9990",
        time_in_force: "fill_or_kill",
        self_trade_prevention_type: "taker_at_cross",
      })
      .catch(refusal);
    expect(killed).toMatchObject({ status: 409, code: "fill_or_kill_insufficient_resting_volume" });
    expect(await balance()).toBe(startBalance);
    expect((await portfolio.getFills(ticker)).data.fills).toEqual([]);
  });

  it("a batch places each order on its own", async () => {
    const ticker = nextMarket();
    const order = {
      ticker,
      side: "bid" as const,
      count: "1",
      price: "0.9900",
      time_in_force: "immediate_or_cancel" as const,
      self_trade_prevention_type: "taker_at_cross" as const,
    };
    const placed = (await orders.batchCreateOrdersV2({ orders: [order, { ...order, ticker: "NOPE" }] })).data
      .orders;
    expect(placed[0]).toMatchObject({ fill_count: "1.00", error: null });
    expect(placed[1]?.error).toMatchObject({ code: "market_not_found" });
  });
});

describe("the legacy order shapes, signed by the venue's own signer", () => {
  it("CreateOrder buys NO at a NO price, CancelOrder cancels a resting one", async () => {
    const ticker = nextMarket();
    const [bestYesBid] = (await book(ticker)).yes_dollars.map(level);
    const created = await signed("POST", "/portfolio/orders", {
      ticker,
      action: "buy",
      side: "no",
      count: 2,
      no_price: 99,
      time_in_force: "fill_or_kill",
      client_order_id: randomUUID(),
    });
    expect(created.status).toBe(201);
    expect(created.json.order).toMatchObject({
      status: "executed",
      action: "buy",
      side: "no",
      book_side: "ask",
      outcome_side: "no",
      fill_count_fp: "2.00",
      no_price_dollars: "0.9900",
    });
    // A NO buyer sells YES into the YES bids, paying $1 − the bid for each NO.
    expect(units(created.json.order.taker_fill_cost_dollars)).toBe(
      2 * (10_000 - (bestYesBid as readonly number[])[0]!),
    );
    const position = (await portfolio.getPositions(undefined, undefined, "position", ticker)).data
      .market_positions;
    expect(position[0]?.position_fp).toBe("-2.00");

    const resting = await signed("POST", "/portfolio/orders", {
      ticker,
      action: "buy",
      side: "yes",
      count: 4,
      yes_price: 1,
      type: "limit",
    });
    expect(resting.json.order).toMatchObject({ status: "resting", remaining_count_fp: "4.00" });
    const canceled = await signed("DELETE", `/portfolio/orders/${resting.json.order.order_id}`);
    expect(canceled.status).toBe(200);
    expect(canceled.json).toMatchObject({
      order: { status: "canceled", remaining_count_fp: "0.00" },
      reduced_by_fp: "4.00",
    });
  });

  it("refuses an inactive market and an unknown one with Kalshi's codes", async () => {
    const ticker = nextMarket();
    const paused = await fetch(
      `${simulator.url.replace("/trade-api/v2", "")}/_sim/markets/${ticker}/lifecycle`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "inactive" }),
      },
    );
    expect(paused.status).toBe(200);
    const order = { action: "buy", side: "yes", count: 1, yes_price: 50 };
    const refused = await signed("POST", "/portfolio/orders", { ticker, ...order });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("market_closed");
    const unknown = await signed("POST", "/portfolio/orders", { ticker: "KXNOPE-1", ...order });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe("market_not_found");
  });

  it("a determined market pays its positions out to the balance", async () => {
    const ticker = nextMarket();
    const bought = await signed("POST", "/portfolio/orders", {
      ticker,
      action: "buy",
      side: "yes",
      count: 7,
      yes_price: 99,
      time_in_force: "immediate_or_cancel",
    });
    expect(bought.json.order.fill_count_fp).toBe("7.00");
    const beforeSettlement = await balance();
    const sim = simulator.url.replace("/trade-api/v2", "");
    const determined = await fetch(`${sim}/_sim/markets/${ticker}/lifecycle`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ status: "determined", result: "yes" }),
    });
    expect(determined.status).toBe(200);
    expect(await balance()).toBe(beforeSettlement + 7 * 10_000);
    const settlements = (await portfolio.getSettlements(10, undefined, ticker)).data.settlements;
    expect(settlements).toHaveLength(1);
    expect(settlements[0]).toMatchObject({
      market_result: "yes",
      yes_count_fp: "7.00",
      revenue: 700,
      value: 100,
    });
    const positions = (await portfolio.getPositions(undefined, undefined, undefined, ticker)).data
      .market_positions;
    expect(positions).toEqual([]);
  });

  it("an account without the money is refused with insufficient_balance", async () => {
    const poor = rsaPair();
    const sim = simulator.url.replace("/trade-api/v2", "");
    const opened = await fetch(`${sim}/_sim/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ keyId: "poor-key", publicKeyPem: poor.publicKey, balanceCents: 1 }),
    });
    expect(opened.status).toBe(201);
    // Signed by fetch: the SDK's signer is a global axios interceptor, so the last key configured signs for every API.
    const ticker = nextMarket();
    const order = {
      ticker,
      action: "buy",
      side: "yes",
      count: 10,
      yes_price: 99,
      time_in_force: "immediate_or_cancel",
    };
    const poorly = { keyId: "poor-key", privateKeyPem: poor.privateKey };
    const refused = await signed("POST", "/portfolio/orders", order, poorly);
    expect(refused.status).toBe(400);
    expect(refused.json.error.code).toBe("insufficient_balance");
    expect((await signed("GET", "/portfolio/balance", undefined, poorly)).json.balance).toBe(1);
    expect((await signed("GET", `/portfolio/fills?ticker=${ticker}`, undefined, poorly)).json.fills).toEqual(
      [],
    );
  });
});

describe("signatures", () => {
  const path = "/portfolio/balance";

  it("refuses an absent, a wrong, an unknown and a stale signature with Kalshi's 401 bodies", async () => {
    const absent = await fetch(`${simulator.url}${path}`);
    expect(absent.status).toBe(401);
    expect(((await absent.json()) as { error: { code: string } }).error.code).toBe(
      "signature_is_missing_from_headers",
    );

    const wrong = await signed("GET", path, undefined, { privateKeyPem: rsaPair().privateKey });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toMatchObject({
      code: "authentication_error",
      details: "INCORRECT_API_KEY_SIGNATURE",
    });

    const headers = kalshiSignatureHeaders(
      { keyId: "no-such-key", privateKey: createPrivateKey(keys.privateKey) },
      "GET",
      new URL(`${simulator.url}${path}`).pathname,
    );
    const unknown = await fetch(`${simulator.url}${path}`, { headers });
    expect(unknown.status).toBe(401);
    expect(((await unknown.json()) as { error: { details: string } }).error.details).toBe("NOT_FOUND");

    const stale = kalshiSignatureHeaders(
      { keyId: KEY_ID, privateKey: createPrivateKey(keys.privateKey) },
      "GET",
      new URL(`${simulator.url}${path}`).pathname,
      Date.now() - 60_000,
    );
    const late = await fetch(`${simulator.url}${path}`, { headers: stale });
    expect(late.status).toBe(401);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe("header_timestamp_expired");

    // A signature over another path does not pass for this one.
    const elsewhere = kalshiSignatureHeaders(
      { keyId: KEY_ID, privateKey: createPrivateKey(keys.privateKey) },
      "GET",
      "/trade-api/v2/portfolio/fills",
    );
    expect((await fetch(`${simulator.url}${path}`, { headers: elsewhere })).status).toBe(401);
    expect((await signed("GET", path)).status).toBe(200);
  });
});

describe("bounds", () => {
  const order = { ticker: "T", action: "buy", side: "yes", yes_price: 50 };

  it.each([
    // Sent as the wire carries it: JSON.parse reads it as 1.8e19, well past any count.
    ["a u64 count", `{"ticker":"T","action":"buy","side":"yes","yes_price":50,"count":18446744073709551615}`],
    ["a fractional count", { ...order, count_fp: "2.50" }],
    ["a ticker of 129 characters", { ...order, ticker: "T".repeat(129), count: 1 }],
    ["a client order id of 129 characters", { ...order, count: 1, client_order_id: "c".repeat(129) }],
    ["a price in cents over 99", { ...order, count: 1, yes_price: 100 }],
    ["a subaccount", { ...order, count: 1, subaccount: 3 }],
    ["malformed JSON", "{"],
  ])("refuses %s with Kalshi's 400 body", async (_what, body) => {
    const { status, json } = await signed("POST", "/portfolio/orders", body);
    expect(status).toBe(400);
    expect(json.error.code).toBe("bad_request");
  });

  it("refuses a price off the book's ticks as invalid_price, and an oversized body", async () => {
    const offTick = await signed("POST", "/portfolio/events/orders", {
      ticker: nextMarket(),
      side: "bid",
      count: "1",
      price: "0.5555",
      time_in_force: "good_till_canceled",
      self_trade_prevention_type: "taker_at_cross",
    });
    expect(offTick.status).toBe(400);
    expect(offTick.json.error.code).toBe("invalid_price");
    const huge = await signed("POST", "/portfolio/orders", {
      ...order,
      count: 1,
      padding: "x".repeat(9_000),
    });
    expect(huge.status).toBe(413);
    expect(huge.json.error.code).toBe("bad_request");
  });

  it.each([
    ["a page of 1001 orders", "/portfolio/orders?limit=1001"],
    ["a cursor it never issued", "/portfolio/fills?cursor=abc"],
    ["a cursor past the end", "/portfolio/orders?cursor=999999"],
    ["an unknown order status", "/portfolio/orders?status=maybe"],
    [
      "eleven event tickers",
      `/portfolio/positions?event_ticker=${Array.from({ length: 11 }, (_, i) => `E${i}`).join(",")}`,
    ],
  ])("refuses %s", async (_what, path) => {
    const { status, json } = await signed("GET", path);
    expect(status).toBe(400);
    expect(json.error.code).toBe("bad_request");
  });
});

describe("refill", () => {
  it("a resting bid fills from the exchange's takers once their YES sales reach its price, as a maker, from what it held", async () => {
    const ticker = nextMarket();
    const market = simulator.exchange.marketsByTicker.get(ticker);
    const bid = market?.dynamics.quoteAt(NOW, "active")?.yesBid;
    if (!market || bid === undefined) throw new Error(`${ticker} has no quote`);
    // The first taker after NOW who sells YES at or below the bid: the order's first fill.
    let taker: SimulatedTrade | null = null;
    for (
      let minute = Math.floor(NOW / 60) + 1;
      !taker && minute < Math.floor(NOW / 60) + 2 * 1_440;
      minute++
    ) {
      const trade = market.dynamics.tradeInMinute(minute);
      if (trade && trade.time > NOW && trade.takerSide === "no" && trade.yesPrice <= bid) taker = trade;
    }
    if (!taker) throw new Error(`no YES seller reaches ${ticker}'s bid within two days`);
    const startBalance = await balance();
    const count = taker.count + 2;
    const created = (
      await orders.createOrderV2({
        ticker,
        side: "bid",
        count: `${count}`,
        price: (bid / 10_000).toFixed(4),
        time_in_force: "good_till_canceled",
        self_trade_prevention_type: "taker_at_cross",
      })
    ).data;
    expect(created).toMatchObject({ fill_count: "0.00", remaining_count: `${count}.00` });
    expect(await balance()).toBe(startBalance - count * bid);
    try {
      clock = taker.time - 1;
      expect((await orders.getOrder(created.order_id)).data.order).toMatchObject({ status: "resting" });
      clock = taker.time;
      const order = (await orders.getOrder(created.order_id)).data.order;
      expect(order).toMatchObject({
        status: "resting",
        fill_count_fp: `${taker.count}.00`,
        remaining_count_fp: "2.00",
        maker_fill_cost_dollars: ((taker.count * bid) / 10_000).toFixed(6),
        maker_fees_dollars: "0.000000",
      });
      const fills = (await portfolio.getFills(ticker)).data.fills;
      expect(
        fills.map((fill) => [fill.order_id, fill.count_fp, units(fill.yes_price_dollars), fill.is_taker]),
      ).toEqual([[created.order_id, `${taker.count}.00`, bid, false]]);
      // The fill was paid from what the order held: the balance moved only when it was placed.
      expect(await balance()).toBe(startBalance - count * bid);
      const position = (await portfolio.getPositions(undefined, undefined, undefined, ticker)).data
        .market_positions;
      expect(position[0]).toMatchObject({ position_fp: `${taker.count}.00`, resting_orders_count: 1 });
      // Asked again at the same moment, the same taker fills nothing more.
      expect((await orders.getOrder(created.order_id)).data.order.fill_count_fp).toBe(`${taker.count}.00`);
      await orders.cancelOrderV2(created.order_id);
      expect(await balance()).toBe(startBalance - taker.count * bid);
    } finally {
      clock = NOW;
    }
  });

  it("taken depth comes back with the half-life, deterministically", async () => {
    const ticker = nextMarket();
    const [best] = (await book(ticker)).no_dollars.map(level);
    if (!best) throw new Error(`${ticker} has no NO bids`);
    await orders.createOrderV2({
      ticker,
      side: "bid",
      count: `${best[1]}`,
      price: ((10_000 - best[0]) / 10_000).toFixed(4),
      time_in_force: "immediate_or_cancel",
      self_trade_prevention_type: "taker_at_cross",
    });
    expect((await book(ticker)).no_dollars.map(level)[0]?.[0]).not.toBe(best[0]);
    try {
      clock = NOW + HALF_LIFE;
      const market = simulator.exchange.marketsByTicker.get(ticker);
      const base = market?.dynamics.bookAt(clock, "active")?.no ?? [];
      // Half of what was taken is back after one half-life; the rest of the book is the dynamics' own.
      const expected = base
        .map(([price, size]) => [price, price === best[0] ? size - Math.round(best[1] / 2) : size])
        .filter(([, size]) => (size as number) > 0);
      expect((await book(ticker)).no_dollars.map(level)).toEqual(expected);
    } finally {
      clock = NOW;
    }
  });
});

describe("Kalshi's fees", () => {
  const series = (feeType: string, feeMultiplier = 1) => ({
    ...(catalogue.series[0] as CatalogueFile["series"][number]),
    feeType,
    feeMultiplier,
  });

  it("charges makers ⌈0.0175 × C × P × (1 − P)⌉ only on series whose fee type charges makers", () => {
    // 100 contracts at $0.50: $0.4375 to a maker, $1.75 to a taker.
    expect(makerFee(series("quadratic_with_maker_fees"), 5_000, 100)).toBe(4_375);
    expect(takerFee(series("quadratic_with_maker_fees"), 5_000, 100)).toBe(17_500);
    expect(makerFee(series("quadratic"), 5_000, 100)).toBe(0);
    // One contract at $0.52 rounds up to the next $0.0001, scaled by the series' multiplier.
    expect(makerFee(series("quadratic_with_maker_fees", 2), 5_200, 1)).toBe(88);
  });
});
