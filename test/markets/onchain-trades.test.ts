/**
 * On-chain trades (`/api/v1/onchain-trades`, reference §3.4) end to end: buys and a sale of outcome
 * tokens through `/order`, signed and sent with kit as a wallet does, appear with their wallet,
 * settling signature, amounts, builder fee and market; the wallet, size, market and event filters,
 * the three sorts and the trade-id cursor read exactly what was traded; bad parameters are refused
 * with 400 and unknown markets and events with 404. The rows live in the database: the same after
 * a restart, and the same on a second instance sharing PostgreSQL.
 */
import type { Address, KeyPairSigner, Signature } from "@solana/kit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/app/start-server.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { loadConfig } from "../../src/config.js";
import { type Market, USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import type { OnchainTrade } from "../../src/markets/onchain-trades.js";
import { OnchainTradePageSchema } from "../../src/markets/routes/list-onchain-trades.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { BACKENDS, type Backend } from "../support/backends.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { postgresAvailable } from "../support/services.js";

const TRADE_FIELDS = [
  "contracts",
  "createdAt",
  "feeAmount",
  "feeMint",
  "id",
  "inputAmount",
  "inputMint",
  "marketTicker",
  "orderAccount",
  "outputAmount",
  "outputMint",
  "side",
  "transactionSignature",
  "usdPricePerContract",
  "wallet",
];

interface Page {
  trades: OnchainTrade[];
  cursor: string | null;
}

/** `GET /api/v1{path}?{query}` on the server at `url`: the status and the JSON body. */
async function get(url: string, path: string, query: Record<string, string> = {}) {
  const search = new URLSearchParams(query).toString();
  const response = await fetch(`${url}/api/v1${path}${search ? `?${search}` : ""}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A 200 page of on-chain trades, checked against the route's own response schema. */
async function page(url: string, path: string, query: Record<string, string> = {}): Promise<Page> {
  const { status, body } = await get(url, path, query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(OnchainTradePageSchema.safeParse(body).success).toBe(true);
  for (const trade of body.trades as OnchainTrade[]) expect(Object.keys(trade).sort()).toEqual(TRADE_FIELDS);
  return body as unknown as Page;
}

/** Every trade `path` lists for `query`, walking the cursor `limit` trades at a time. */
async function walk(url: string, path: string, query: Record<string, string>, limit: number) {
  const seen: OnchainTrade[] = [];
  let cursor: string | null | undefined;
  for (let pages = 0; pages < 50; pages++) {
    const next = await page(url, path, { ...query, limit: String(limit), ...(cursor ? { cursor } : {}) });
    expect(next.trades.length).toBeLessThanOrEqual(limit);
    seen.push(...next.trades);
    if (next.cursor === null) return seen;
    expect(next.trades).toHaveLength(limit);
    cursor = next.cursor;
  }
  throw new Error("the cursor never reached the end");
}

const sigs = (trades: readonly OnchainTrade[]) => trades.map((trade) => trade.transactionSignature);

/** The yes or no mint of a market's USDC rail. */
const mintOf = (market: Market, side: "yes" | "no") =>
  (side === "yes" ? market.accounts[USDC_MINT]?.yesMint : market.accounts[USDC_MINT]?.noMint) as Address;

/** Whether the venue quotes a buy of `amount` micro-USDC of `mint` now. */
async function quotes(url: string, mint: Address, amount: bigint): Promise<boolean> {
  const query = new URLSearchParams({
    inputMint: USDC_MINT,
    outputMint: mint,
    amount: amount.toString(),
    priceImpactTolerancePct: "100",
  });
  return (await fetch(`${url}/order?${query}`)).status === 200;
}

/**
 * Two active markets of one event whose yes (first) and no (second) tokens the venue sells for a few
 * USDC, and a third of another event whose yes token it sells.
 */
async function pickMarkets(t: TestServer): Promise<[Market, Market, Market]> {
  const { markets } = await t.client.listMarkets({ status: "active", isInitialized: true, limit: 200 });
  const byEvent = new Map<string, Market[]>();
  for (const market of markets)
    byEvent.set(market.eventTicker, [...(byEvent.get(market.eventTicker) ?? []), market]);
  let pair: [Market, Market] | undefined;
  let other: Market | undefined;
  for (const siblings of byEvent.values()) {
    if (!pair && siblings.length >= 2) {
      const yes = [];
      for (const m of siblings) if (await quotes(t.url, mintOf(m, "yes"), 5_000_000n)) yes.push(m);
      const first = yes[0];
      for (const m of siblings) {
        if (first && m !== first && (await quotes(t.url, mintOf(m, "no"), 3_000_000n))) {
          pair = [first, m];
          break;
        }
      }
      if (pair) continue;
    }
    if (!other) {
      for (const m of siblings) {
        if (await quotes(t.url, mintOf(m, "yes"), 2_000_000n)) {
          other = m;
          break;
        }
      }
    }
    if (pair && other) return [pair[0], pair[1], other];
  }
  throw new Error("no two tradable markets of one event and a third of another");
}

/** What a venue's tests trade with. */
interface Venue {
  url: string;
  rpcUrl: string;
  chain: RpcChain;
}

const venueOf = (server: RunningServer): Venue => ({
  url: server.url,
  rpcUrl: server.chain.rpcUrl,
  chain: new RpcChain({ url: server.chain.rpcUrl }),
});

/** A wallet with SOL for fees and 100 USDC. */
const fundedWallet = (venue: Venue) =>
  newFundedWallet(venue.url, venue.chain, 2_000_000_000n, [[USDC_MINT, 100_000_000n]]);

async function balanceOf(venue: Venue, owner: Address, mint: Address): Promise<bigint> {
  return (await venue.chain.getTokenAccountsByOwner(owner, { mint })).reduce((sum, a) => sum + a.amount, 0n);
}

type Fill = NonNullable<OrderStatusResponse["fills"]>[number];

/**
 * Issues an async order through `/order` on `orderVenue`, signs and sends it as `wallet`, and waits
 * until it is settled; returns its one fill.
 */
async function trade(
  orderVenue: Venue,
  wallet: KeyPairSigner,
  inputMint: Address,
  outputMint: Address,
  amount: bigint,
  extra: Record<string, string> = {},
): Promise<Fill> {
  const query = new URLSearchParams({
    inputMint,
    outputMint,
    amount: amount.toString(),
    userPublicKey: wallet.address,
    priceImpactTolerancePct: "100",
    // These tests are about listing trades: a fill the simulator's moving price took past the default 50 bps
    // while a loaded machine settled it would be refunded, and list nothing.
    slippageBps: "2000",
    ...extra,
  });
  const response = await fetch(`${orderVenue.url}/order?${query}`);
  const order = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(order)).toBe(200);
  expect(order.executionMode).toBe("async");
  const signature = await signAndSendWithKit(
    orderVenue.rpcUrl,
    orderVenue.chain,
    wallet,
    order.transaction as string,
  );
  const settled = await settledOrder(orderVenue.url, signature);
  expect(settled.status, JSON.stringify(settled)).toBe("closed");
  expect(settled.fills, JSON.stringify(settled)).toHaveLength(1);
  return (settled.fills ?? [])[0] as Fill;
}

describe("on-chain trades on SQLite", () => {
  let t: TestServer;
  let venue: Venue;
  let marketA: Market;
  let marketB: Market;
  let marketC: Market;
  let alice: KeyPairSigner;
  let bob: KeyPairSigner;
  let carol: KeyPairSigner;
  let started: number;
  let finished: number;
  /** The fills as /order-status reported them, and the builder fees the fee account received. */
  const fills = {} as Record<"aliceBuy" | "aliceSale" | "bobBuy" | "carolBuy", Fill>;
  let buyFee = 0n;
  let saleFee = 0n;

  beforeAll(async () => {
    t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED: "onchain-trades-test" } });
    venue = venueOf(t.server);
    [marketA, marketB, marketC] = await pickMarkets(t);
    [alice, bob, carol] = await Promise.all([fundedWallet(venue), fundedWallet(venue), fundedWallet(venue)]);
    const builder = await newFundedWallet(venue.url, venue.chain, 100_000_000n, [[USDC_MINT, 1n]]);
    const feeAccount = associatedTokenAddress(builder.address, USDC_MINT, TOKEN_PROGRAM);
    const builderUsdc = () => balanceOf(venue, builder.address, USDC_MINT);

    started = Math.floor(Date.now() / 1000);
    const yesA = mintOf(marketA, "yes");
    fills.aliceBuy = await trade(venue, alice, USDC_MINT, yesA, 5_000_000n, {
      platformFeeScale: "50",
      feeAccount,
    });
    buyFee = (await builderUsdc()) - 1n;
    fills.aliceSale = await trade(venue, alice, yesA, USDC_MINT, 1_000_000n, {
      platformFeeScale: "120",
      feeAccount,
    });
    saleFee = (await builderUsdc()) - 1n - buyFee;
    [fills.bobBuy, fills.carolBuy] = await Promise.all([
      trade(venue, bob, USDC_MINT, mintOf(marketB, "no"), 3_000_000n),
      trade(venue, carol, USDC_MINT, mintOf(marketC, "yes"), 2_000_000n),
    ]);
    finished = Math.ceil(Date.now() / 1000);
  }, 180_000);
  afterAll(async () => t?.stop());

  const bySignature = (trades: readonly OnchainTrade[], signature: string) =>
    trades.find((trade) => trade.transactionSignature === signature);

  it("lists a buy with its wallet, settling signature, amounts, builder fee and market", async () => {
    const { trades, cursor } = await page(t.url, "/onchain-trades");
    expect(trades).toHaveLength(4);
    expect(cursor).toBeNull();
    const fill = fills.aliceBuy;
    const buy = bySignature(trades, fill.signature);
    const contracts = Number(fill.outAmount) / 1_000_000;
    expect(buyFee).toBeGreaterThan(0n);
    expect(buy).toEqual({
      id: expect.any(Number),
      wallet: alice.address,
      transactionSignature: fill.signature,
      inputMint: USDC_MINT,
      outputMint: mintOf(marketA, "yes"),
      inputAmount: Number(fill.inAmount),
      outputAmount: Number(fill.outAmount),
      createdAt: expect.any(Number),
      marketTicker: marketA.ticker,
      side: "yes",
      contracts,
      usdPricePerContract: (Number(fill.inAmount) - Number(buyFee)) / Number(fill.outAmount),
      feeAmount: Number(buyFee),
      feeMint: USDC_MINT,
      orderAccount: expect.any(String),
    });
    expect(Number.isInteger(contracts) && contracts >= 1).toBe(true);
    expect(buy?.createdAt).toBeGreaterThanOrEqual(started);
    expect(buy?.createdAt).toBeLessThanOrEqual(finished);
    // The signature is the settling transaction's, which the chain holds.
    const [status] = await venue.chain.getSignatureStatuses([fill.signature as Signature]);
    expect(status?.err ?? null).toBeNull();
  });

  it("lists a sale with the proceeds, the fee taken from them and the contracts burnt", async () => {
    const { trades } = await page(t.url, "/onchain-trades");
    const fill = fills.aliceSale;
    expect(saleFee).toBeGreaterThan(0n);
    expect(bySignature(trades, fill.signature)).toMatchObject({
      wallet: alice.address,
      inputMint: mintOf(marketA, "yes"),
      outputMint: USDC_MINT,
      inputAmount: 1_000_000,
      outputAmount: Number(fill.outAmount),
      marketTicker: marketA.ticker,
      side: "yes",
      contracts: 1,
      usdPricePerContract: (Number(fill.outAmount) + Number(saleFee)) / 1_000_000,
      feeAmount: Number(saleFee),
      feeMint: USDC_MINT,
    });
    expect(bySignature(trades, fills.bobBuy.signature)).toMatchObject({
      wallet: bob.address,
      outputMint: mintOf(marketB, "no"),
      marketTicker: marketB.ticker,
      side: "no",
      feeAmount: 0,
    });
    // One escrow per order.
    expect(new Set(trades.map((trade) => trade.orderAccount)).size).toBe(4);
  });

  it("sorts newest first by default, ties by id, and oldest first with sortOrder=asc", async () => {
    const desc = (await page(t.url, "/onchain-trades")).trades;
    expect(desc).toHaveLength(4);
    const key = (trade: OnchainTrade) => [trade.createdAt, trade.id] as const;
    for (let i = 1; i < desc.length; i++) {
      const [a, b] = [key(desc[i - 1] as OnchainTrade), key(desc[i] as OnchainTrade)];
      expect(a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])).toBe(true);
    }
    const asc = (await page(t.url, "/onchain-trades", { sortOrder: "asc", sortBy: "createdAt" })).trades;
    expect(sigs(asc)).toEqual(sigs(desc).reverse());
    // Settled one after the other, alice's buy before her sale.
    expect(desc.findIndex((x) => x.transactionSignature === fills.aliceSale.signature)).toBeLessThan(
      desc.findIndex((x) => x.transactionSignature === fills.aliceBuy.signature),
    );
  });

  it("sorts by amount (contracts × price) and by contracts", async () => {
    const all = (await page(t.url, "/onchain-trades")).trades;
    const amount = (trade: OnchainTrade) => Math.round(trade.contracts * trade.usdPricePerContract * 1e6);
    const byAmount = (await page(t.url, "/onchain-trades", { sortBy: "amount", sortOrder: "asc" })).trades;
    expect(byAmount.map(amount)).toEqual(all.map(amount).sort((a, b) => a - b));
    const byContracts = (await page(t.url, "/onchain-trades", { sortBy: "contracts" })).trades;
    expect(byContracts.map((trade) => trade.contracts)).toEqual(
      all.map((trade) => trade.contracts).sort((a, b) => b - a),
    );
  });

  it("filters by wallet and by the least amount", async () => {
    const mine = (await page(t.url, "/onchain-trades", { wallet: alice.address })).trades;
    expect(sigs(mine).sort()).toEqual([fills.aliceBuy.signature, fills.aliceSale.signature].sort());
    const stranger = (await newFundedWallet(venue.url, venue.chain, 1_000_000n)).address;
    expect(await page(t.url, "/onchain-trades", { wallet: stranger })).toEqual({ trades: [], cursor: null });

    const all = (await page(t.url, "/onchain-trades")).trades;
    const amounts = all.map((trade) => Math.round(trade.contracts * trade.usdPricePerContract * 1e6));
    const threshold = [...amounts].sort((a, b) => a - b)[2] as number;
    const large = (await page(t.url, "/onchain-trades", { minAmount: String(threshold) })).trades;
    expect(sigs(large).sort()).toEqual(
      sigs(all.filter((_, i) => (amounts[i] as number) >= threshold)).sort(),
    );
    expect(large.length).toBeGreaterThan(0);
    expect(large.length).toBeLessThan(4);
    expect((await page(t.url, "/onchain-trades", { minAmount: "0" })).trades).toHaveLength(4);
  });

  it("narrows to one market's trades and to one event's markets'", async () => {
    const inA = (await page(t.url, `/onchain-trades/by-market/${marketA.ticker}`)).trades;
    expect(sigs(inA).sort()).toEqual([fills.aliceBuy.signature, fills.aliceSale.signature].sort());
    const inB = (await page(t.url, `/onchain-trades/by-market/${marketB.ticker}`)).trades;
    expect(sigs(inB)).toEqual([fills.bobBuy.signature]);
    const inEvent = (await page(t.url, `/onchain-trades/by-event/${marketA.eventTicker}`)).trades;
    expect(sigs(inEvent).sort()).toEqual(
      [fills.aliceBuy.signature, fills.aliceSale.signature, fills.bobBuy.signature].sort(),
    );
    const other = (await page(t.url, `/onchain-trades/by-event/${marketC.eventTicker}`)).trades;
    expect(sigs(other)).toEqual([fills.carolBuy.signature]);
    // The filters apply within a market too.
    const bobInA = await page(t.url, `/onchain-trades/by-market/${marketA.ticker}`, { wallet: bob.address });
    expect(bobInA).toEqual({ trades: [], cursor: null });
    // A market nobody traded has no trades.
    const { markets } = await t.client.listMarkets({ eventTicker: marketC.eventTicker });
    const quiet = markets.find((m) => m.ticker !== marketC.ticker);
    expect(quiet).toBeDefined();
    expect((await page(t.url, `/onchain-trades/by-market/${quiet?.ticker}`)).trades).toEqual([]);
  });

  it("pages by trade-id cursor, each trade once, in every sort", async () => {
    const queries: Record<string, string>[] = [
      {},
      { sortOrder: "asc" },
      { sortBy: "amount" },
      { sortBy: "contracts", sortOrder: "asc" },
    ];
    for (const query of queries) {
      const whole = (await page(t.url, "/onchain-trades", query)).trades;
      for (const limit of [1, 3])
        expect(sigs(await walk(t.url, "/onchain-trades", query, limit))).toEqual(sigs(whole));
    }
    const first = await page(t.url, "/onchain-trades", { limit: "1" });
    const second = await page(t.url, "/onchain-trades", { limit: "1", cursor: first.cursor as string });
    // The cursor is the id of the trade the next page starts with.
    expect(second.trades[0]?.id).toBe(Number(first.cursor));
    const event = `/onchain-trades/by-event/${marketA.eventTicker}`;
    expect(sigs(await walk(t.url, event, { sortOrder: "asc" }, 2))).toEqual(
      sigs((await page(t.url, event, { sortOrder: "asc" })).trades),
    );
  });

  it("refuses bad filters with 400 and names the parameter", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ limit: "0" }, "limit"],
      [{ limit: "251" }, "limit"],
      [{ limit: "ten" }, "limit"],
      [{ cursor: "abc" }, "cursor"],
      [{ cursor: "-1" }, "cursor"],
      [{ cursor: "1".repeat(40) }, "cursor"],
      [{ cursor: "999999999" }, "cursor"],
      [{ wallet: "not-a-wallet" }, "wallet"],
      [{ wallet: "1".repeat(31) }, "wallet"],
      [{ wallet: "x".repeat(5_000) }, "wallet"],
      [{ minAmount: "-1" }, "minAmount"],
      [{ minAmount: "1.5" }, "minAmount"],
      [{ minAmount: "9".repeat(30) }, "minAmount"],
      [{ sortBy: "price" }, "sortBy"],
      [{ sortBy: "created_at" }, "sortBy"],
      [{ sortOrder: "up" }, "sortOrder"],
    ];
    for (const path of ["/onchain-trades", `/onchain-trades/by-market/${marketA.ticker}`]) {
      for (const [query, name] of cases) {
        const { status, body } = await get(t.url, path, query);
        expect(status, `${path} ${JSON.stringify(query)}`).toBe(400);
        expect(Object.keys(body).sort()).toEqual(["code", "msg"]);
        expect(body.code).toBe("bad_request");
        expect(body.msg).toContain(name);
      }
    }
    // A repeated parameter is not one value.
    const repeated = await fetch(`${t.url}/api/v1/onchain-trades?limit=1&limit=2`);
    expect(repeated.status).toBe(400);
  });

  it("answers 404 with the catalogue's codes for an unknown market or event", async () => {
    const market = await get(t.url, "/onchain-trades/by-market/NO-SUCH-MARKET");
    expect(market).toEqual({
      status: 404,
      body: { code: "market_not_found", msg: "market NO-SUCH-MARKET not found" },
    });
    const event = await get(t.url, "/onchain-trades/by-event/NO-SUCH-EVENT");
    expect(event).toEqual({
      status: 404,
      body: { code: "event_not_found", msg: "event NO-SUCH-EVENT not found" },
    });
    // A market's ticker is no event's, and bounded paths are refused before any lookup.
    expect((await get(t.url, `/onchain-trades/by-event/${marketA.ticker}`)).status).toBe(404);
    expect((await get(t.url, `/onchain-trades/by-market/${"M".repeat(200)}`)).body.code).toBe("bad_request");
    expect((await get(t.url, `/onchain-trades/by-event/${"E".repeat(300)}`)).status).toBe(414);
  });

  it("declares the three operations in the OpenAPI document", async () => {
    const document = (await (await fetch(`${t.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, { get?: { operationId?: string; parameters?: { name: string }[] } }>;
    };
    const operations = {
      "/api/v1/onchain-trades": "onchain_trades",
      "/api/v1/onchain-trades/by-market/{market_ticker}": "onchain_trades_by_market",
      "/api/v1/onchain-trades/by-event/{event_ticker}": "onchain_trades_by_event",
    };
    for (const [path, operationId] of Object.entries(operations)) {
      const operation = document.paths[path]?.get;
      expect(operation?.operationId, path).toBe(operationId);
      expect(operation?.parameters?.map((p) => p.name)).toEqual(
        expect.arrayContaining(["limit", "cursor", "wallet", "minAmount", "sortBy", "sortOrder"]),
      );
    }
  });

  it("never answers a 5xx, whatever the parameters", async () => {
    const names = ["limit", "cursor", "wallet", "minAmount", "sortBy", "sortOrder", "x"];
    const value = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.integer({ min: -10, max: 2 ** 40 }).map(String),
      fc.constantFrom("asc", "desc", "createdAt", "amount", "contracts", alice.address, "1e3", "0x10", ""),
    );
    const segment = fc.oneof(
      fc.constantFrom(marketA.ticker, marketA.eventTicker),
      fc.string({ minLength: 1, maxLength: 80 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("", "/by-market/", "/by-event/"),
        segment,
        fc.array(fc.tuple(fc.constantFrom(...names), value), { maxLength: 5 }),
        async (kind, ticker, params) => {
          const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
          const path = kind ? `${kind}${encodeURIComponent(ticker)}` : "";
          const response = await fetch(`${t.url}/api/v1/onchain-trades${path}?${query}`);
          const body = (await response.json()) as Record<string, unknown>;
          expect(response.status, `${path}?${query}`).toBeLessThan(500);
          if (response.status >= 400) expect(Object.keys(body).sort()).toEqual(["code", "msg"]);
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);

  it("answers the same after a restart of the server", async () => {
    const paths = [
      "/onchain-trades",
      `/onchain-trades/by-market/${marketA.ticker}`,
      `/onchain-trades/by-event/${marketA.eventTicker}`,
    ];
    const before = await Promise.all(paths.map((path) => page(t.url, path, { limit: "2" })));
    await t.server.close();
    const restarted = await startServer(loadConfig({}, t.settings));
    try {
      const after = await Promise.all(paths.map((path) => page(restarted.url, path, { limit: "2" })));
      expect(after).toEqual(before);
      expect(await walk(restarted.url, "/onchain-trades", {}, 1)).toHaveLength(4);
    } finally {
      await restarted.close();
    }
  }, 60_000);
});

describe.skipIf(!postgresAvailable)("on-chain trades on two instances sharing PostgreSQL", () => {
  const postgres = BACKENDS.find((backend) => backend.name === "postgres") as Backend;
  /** Runs the chain and fills the orders. */
  let first: TestServer;
  /** Uses the first's chain and upstream; orders issued through it are filled by the first. */
  let second: RunningServer;

  beforeAll(async () => {
    first = await startTestServer({
      backend: postgres,
      settings: { DEMO_CATALOGUE: "true", VENUE_SEED: "onchain-trades-pg" },
    });
    // One upstream for both, as a deployment has: an order is settled on the book it was quoted on.
    second = await startServer(
      loadConfig(
        {},
        {
          ...first.settings,
          PORT: "0",
          SOLANA_RPC_URL: first.server.chain.rpcUrl,
          UPSTREAM_URL: first.server.upstream.url,
        },
      ),
    );
  }, 180_000);
  afterAll(async () => {
    await second?.close();
    await first?.stop();
  });

  it("lists every instance's trades alike, whichever instance issued them", async () => {
    const [market] = await pickMarkets(first);
    const yes = mintOf(market, "yes");
    const one = venueOf(first.server);
    const two = { ...venueOf(second), rpcUrl: first.server.chain.rpcUrl, chain: one.chain };
    const wallet = await fundedWallet(one);
    const bought = await trade(two, wallet, USDC_MINT, yes, 5_000_000n);
    const sold = await trade(one, wallet, yes, USDC_MINT, 1_000_000n);

    const onFirst = await page(first.url, "/onchain-trades", { wallet: wallet.address });
    expect(sigs(onFirst.trades)).toEqual([sold.signature, bought.signature]);
    expect(onFirst.trades[1]).toMatchObject({
      wallet: wallet.address,
      inputMint: USDC_MINT,
      outputMint: yes,
      inputAmount: Number(bought.inAmount),
      outputAmount: Number(bought.outAmount),
      marketTicker: market.ticker,
      side: "yes",
    });
    expect(onFirst.trades[0]).toMatchObject({ inputMint: yes, inputAmount: 1_000_000, contracts: 1 });
    for (const path of [
      "/onchain-trades",
      `/onchain-trades/by-market/${market.ticker}`,
      `/onchain-trades/by-event/${market.eventTicker}`,
    ]) {
      const [a, b] = await Promise.all([page(first.url, path), page(second.url, path)]);
      expect(b, path).toEqual(a);
      expect(sigs(a.trades), path).toEqual([sold.signature, bought.signature]);
    }
    const large = await page(second.url, "/onchain-trades", {
      minAmount: "1",
      sortBy: "amount",
      sortOrder: "asc",
    });
    expect(sigs(large.trades).sort()).toEqual([sold.signature, bought.signature].sort());
    expect(await walk(second.url, "/onchain-trades", { sortOrder: "asc" }, 1)).toEqual(
      (await page(first.url, "/onchain-trades", { sortOrder: "asc" })).trades,
    );
  }, 120_000);
});
