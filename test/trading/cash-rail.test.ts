/**
 * The CASH rail (reference §2.3), end to end on the sandbox: every market's `accounts` map holds a USDC
 * rail and a CASH rail (USDC first), each with its own ledger and outcome mints, both created on the
 * chain; by-mint lookups resolve CASH-rail mints; the faucet and the token registry know CASH; a buy
 * of a CASH-rail outcome mint through `/order` settles in CASH and nothing in USDC moves, a sale pays
 * CASH, a redemption of a determined market's CASH-rail tokens pays CASH, and nothing crosses rails; a
 * first buy in CASH initializes both rails; wallet verification and the venue's own accounts are
 * checked on the CASH rail as on the USDC one.
 */
import type { Address, KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeMarketLedger, MARKET_LEDGER_SIZE } from "../../src/chain/market-ledger.js";
import { TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { MINT_SIZE } from "../../src/chain/token-layout.js";
import { CASH_MINT, type Market, type MarketAccount, USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { deriveCashRail, deriveMarketAddresses } from "../../src/markets/accounts.js";
import { verifyWallet } from "../../src/trading/prediction/verified-wallets.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { connectStream } from "../support/pair-streams.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { mintOutcomeTokens } from "../support/tokens.js";

const VENUE_SEED = "cash-rail-test";
/** What each wallet starts with: 100 CASH and 100 USDC. */
const GRANT = 100_000_000n;
let t: TestServer;
let chain: RpcChain;
/** Verified, so that its buys pass WALLET_VERIFICATION (on here). */
let user: KeyPairSigner;
/** An active, tokenized market whose book sells yes contracts for CASH. */
let active: Market;

const usdcRail = (market: Market) => market.accounts[USDC_MINT] as MarketAccount;
const cashRail = (market: Market) => market.accounts[CASH_MINT] as MarketAccount;

beforeAll(async () => {
  t = await startTestServer({
    settings: { DEMO_CATALOGUE: "true", VENUE_SEED, WALLET_VERIFICATION: "true" },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  user = await newFundedWallet(t.url, chain, 2_000_000_000n, [
    [CASH_MINT, GRANT],
    [USDC_MINT, GRANT],
  ]);
  await verifyWallet(t.server.storage.db, user.address);
  await t.server.trading.wallets.refresh();
  const page = await t.client.listMarkets({ status: "active", isInitialized: true, limit: 20 });
  for (const market of page.markets) {
    if ((await order(buy(CASH_MINT, cashRail(market).yesMint, 5_000_000n))).status !== 200) continue;
    active = market;
    break;
  }
  expect(active).toBeDefined();
}, 120_000);
afterAll(async () => t?.stop());

/** `GET /order` with these parameters (a wide slippage: the demo's prices move before a fill); the status and the JSON body. */
async function order(query: Record<string, string>) {
  const response = await fetch(
    `${t.url}/order?${new URLSearchParams({ priceImpactTolerancePct: "100", slippageBps: "2000", ...query })}`,
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The query of an order of `amount` from `inputMint` to `outputMint`, by `wallet` when given. */
function buy(inputMint: string, outputMint: string, amount: bigint, wallet?: Address) {
  return {
    inputMint,
    outputMint,
    amount: amount.toString(),
    ...(wallet ? { userPublicKey: wallet } : {}),
  };
}

/** Issues an async order for `wallet`, signs and sends its open transaction, and waits until it settled. */
async function trade(wallet: KeyPairSigner, query: Record<string, string>): Promise<OrderStatusResponse> {
  const { status, body } = await order(query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
  expect(body).toMatchObject({ executionMode: "async", revertMint: query.inputMint });
  const signature = await signAndSendWithKit(
    t.server.chain.rpcUrl,
    chain,
    wallet,
    body.transaction as string,
  );
  const settled = await settledOrder(t.url, signature);
  expect(settled.status).toBe("closed");
  return settled;
}

async function balanceOf(owner: Address, mint: string): Promise<bigint> {
  return (await chain.getTokenAccountsByOwner(owner, { mint: mint as Address })).reduce(
    (sum, account) => sum + account.amount,
    0n,
  );
}

function treasury(): Address {
  const keys = t.server.chain.sandbox?.venueKeys;
  if (!keys) throw new Error("no sandbox");
  return keys.treasury.address;
}

/** Mints `amount` of an outcome mint to `owner` with the venue's mint authority, as a past buy would have. */
function mintOutcome(owner: Address, mint: Address, amount: bigint): Promise<void> {
  return mintOutcomeTokens(chain, t.server.chain.sandbox?.venueKeys.mintAuthority, owner, mint, amount);
}

describe("the accounts map", () => {
  it("holds a USDC rail and then a CASH rail on every market, with distinct addresses, none moved", async () => {
    const seen = new Set<string>();
    let markets = 0;
    let cursor: number | undefined;
    // Every page of the demo catalogue (about 4,900 markets).
    for (let page = 0; page < 100; page++) {
      const listed = await t.client.listMarkets({ limit: 200, ...(cursor ? { cursor } : {}) });
      for (const market of listed.markets) {
        expect(Object.keys(market.accounts)).toEqual([USDC_MINT, CASH_MINT]);
        const [usdc, cash] = [usdcRail(market), cashRail(market)];
        expect(cash.isInitialized).toBe(usdc.isInitialized);
        expect(cash.redemptionStatus).toBe(usdc.redemptionStatus);
        // The USDC rail is where it always was; the CASH rail is derived from it.
        const stored = deriveMarketAddresses(VENUE_SEED, market.ticker);
        expect({ marketLedger: usdc.marketLedger, yesMint: usdc.yesMint, noMint: usdc.noMint }).toEqual(
          stored,
        );
        expect({ marketLedger: cash.marketLedger, yesMint: cash.yesMint, noMint: cash.noMint }).toEqual(
          deriveCashRail(stored),
        );
        for (const address of [
          usdc.marketLedger,
          usdc.yesMint,
          usdc.noMint,
          cash.marketLedger,
          cash.yesMint,
          cash.noMint,
        ])
          seen.add(address);
        markets += 1;
      }
      if (!listed.cursor) break;
      cursor = listed.cursor;
    }
    expect(markets).toBe(t.server.catalog.require().markets.length);
    expect(seen.size).toBe(6 * markets);
  });

  it("nests both rails in an event's markets", async () => {
    const event = await t.client.getEvent(active.eventTicker, { withNestedMarkets: true });
    const nested = event.markets?.find((m) => m.ticker === active.ticker);
    expect(nested?.accounts).toEqual(active.accounts);
  });

  it("has both rails' ledgers and outcome mints on the chain, and the CASH mint at its address", async () => {
    const authority = t.server.chain.sandbox?.venueKeys.mintAuthority.address;
    const cash = await chain.getMint(CASH_MINT);
    expect(cash).toMatchObject({ decimals: 6, mintAuthority: authority, programId: TOKEN_PROGRAM });
    for (const [settlementMint, rail] of [
      [USDC_MINT, usdcRail(active)],
      [CASH_MINT, cashRail(active)],
    ] as const) {
      const ledger = await chain.getAccountInfo(rail.marketLedger as Address);
      expect(decodeMarketLedger(ledger?.data ?? new Uint8Array())).toEqual({
        yesMint: rail.yesMint,
        noMint: rail.noMint,
        settlementMint,
        authority,
      });
      for (const mint of [rail.yesMint, rail.noMint])
        expect(await chain.getMint(mint as Address)).toMatchObject({
          decimals: 6,
          programId: TOKEN_2022_PROGRAM,
        });
    }
  });
});

describe("by-mint lookups", () => {
  it("resolve every CASH-rail address to its market", async () => {
    const cash = cashRail(active);
    for (const mint of [cash.marketLedger, cash.yesMint, cash.noMint])
      expect((await t.client.getMarketByMint(mint)).ticker).toBe(active.ticker);
    const batch = await t.client.marketsBatch({ mints: [cash.noMint] });
    expect(batch.markets.map((m) => m.ticker)).toEqual([active.ticker]);
    const filtered = await t.client.filterOutcomeMints([
      cash.yesMint,
      cash.marketLedger,
      CASH_MINT,
      cash.noMint,
    ]);
    expect(filtered.outcomeMints).toEqual([cash.yesMint, cash.noMint]);
  });

  it("relay the order book and trades of a CASH-rail mint's market", async () => {
    const cash = cashRail(active);
    const relayed = async (path: string) => {
      const response = await fetch(`${t.url}/api/v1/${path}`);
      expect(response.status, path).toBe(200);
      return JSON.stringify(await response.json());
    };
    // The simulated exchange moves with time: each is asked for until two answers fall together.
    for (const [byTicker, byMint] of [
      [`orderbook/${active.ticker}`, `orderbook/by-mint/${cash.yesMint}`],
      [`trades?ticker=${active.ticker}&limit=5`, `trades/by-mint/${cash.noMint}?limit=5`],
    ]) {
      await expect
        .poll(async () => {
          const [one, other] = await Promise.all([relayed(byTicker as string), relayed(byMint as string)]);
          return one === other;
        })
        .toBe(true);
    }
  });

  it("lists the CASH rail's outcome mints among the outcome mints", async () => {
    const { mints } = await t.client.outcomeMints();
    expect(mints).toContain(cashRail(active).yesMint);
    expect(mints).toContain(usdcRail(active).yesMint);
  });
});

describe("the faucet and the token registry", () => {
  it("pays CASH, and lists CASH with 6 decimals", async () => {
    expect(await balanceOf(user.address, CASH_MINT)).toBe(GRANT);
    const tokens = (await (await fetch(`${t.url}/tokens-with-decimals`)).json()) as [string, number][];
    expect(tokens).toContainEqual([CASH_MINT, 6]);
    expect(tokens).toContainEqual([cashRail(active).yesMint, 6]);
  });
});

describe("trading on the CASH rail", () => {
  it("buys CASH-rail yes contracts with CASH: the CASH goes down, the contracts up, no USDC moves", async () => {
    const yes = cashRail(active).yesMint;
    const [cashBefore, usdcBefore, treasuryBefore] = await Promise.all([
      balanceOf(user.address, CASH_MINT),
      balanceOf(user.address, USDC_MINT),
      balanceOf(treasury(), CASH_MINT),
    ]);
    const treasuryUsdcBefore = await balanceOf(treasury(), USDC_MINT);
    const settled = await trade(user, buy(CASH_MINT, yes, 10_000_000n, user.address));
    const [fill] = settled.fills ?? [];
    expect(fill).toMatchObject({ inputMint: CASH_MINT, outputMint: yes });
    const spent = BigInt(fill?.inAmount ?? 0);
    const contracts = BigInt(fill?.outAmount ?? 0);
    expect(contracts).toBeGreaterThan(0n);
    expect(contracts % 1_000_000n).toBe(0n);
    expect(await balanceOf(user.address, yes)).toBe(contracts);
    expect(await balanceOf(user.address, CASH_MINT)).toBe(cashBefore - spent);
    expect(await balanceOf(treasury(), CASH_MINT)).toBe(treasuryBefore + spent);
    // Nothing of the USDC rail moved.
    expect(await balanceOf(user.address, USDC_MINT)).toBe(usdcBefore);
    expect(await balanceOf(treasury(), USDC_MINT)).toBe(treasuryUsdcBefore);
    expect(await balanceOf(user.address, usdcRail(active).yesMint)).toBe(0n);
  });

  it("sells CASH-rail contracts back for CASH", async () => {
    const yes = cashRail(active).yesMint;
    const [cashBefore, usdcBefore] = await Promise.all([
      balanceOf(user.address, CASH_MINT),
      balanceOf(user.address, USDC_MINT),
    ]);
    const settled = await trade(user, buy(yes, CASH_MINT, 1_000_000n, user.address));
    const [fill] = settled.fills ?? [];
    expect(fill).toMatchObject({ inputMint: yes, outputMint: CASH_MINT, inAmount: "1000000" });
    expect(await balanceOf(user.address, CASH_MINT)).toBe(cashBefore + BigInt(fill?.outAmount ?? 0));
    expect(await balanceOf(user.address, USDC_MINT)).toBe(usdcBefore);
  });

  it("never crosses rails: USDC does not buy a CASH-rail mint, nor CASH a USDC-rail one", async () => {
    for (const query of [
      buy(USDC_MINT, cashRail(active).yesMint, 5_000_000n),
      buy(CASH_MINT, usdcRail(active).yesMint, 5_000_000n),
      buy(cashRail(active).yesMint, USDC_MINT, 1_000_000n),
    ]) {
      const { status, body } = await order(query);
      expect(status, JSON.stringify(query)).toBe(400);
      expect(body.code).toBe("route_not_found");
    }
  });

  it("redeems a determined market's CASH-rail winning contracts for CASH", async () => {
    const page = await t.client.listMarkets({ status: "determined", isInitialized: true, limit: 100 });
    const market = page.markets.find(
      (m) => (m.result === "yes" || m.result === "no") && cashRail(m).redemptionStatus === "open",
    ) as Market;
    expect(market).toBeDefined();
    const winning = (market.result === "yes" ? cashRail(market).yesMint : cashRail(market).noMint) as Address;
    const holder = await newFundedWallet(t.url, chain, 1_000_000_000n);
    await mintOutcome(holder.address, winning, 3_000_000n);
    const settled = await trade(holder, buy(winning, CASH_MINT, 3_000_000n, holder.address));
    expect(settled.fills?.[0]).toMatchObject({
      inputMint: winning,
      outputMint: CASH_MINT,
      outAmount: "3000000",
    });
    expect(await balanceOf(holder.address, CASH_MINT)).toBe(3_000_000n);
    expect(await balanceOf(holder.address, winning)).toBe(0n);
    expect(await balanceOf(holder.address, USDC_MINT)).toBe(0n);
  });

  it("initializes both rails of a market on its first buy in CASH", async () => {
    const page = await t.client.listMarkets({ status: "active", isInitialized: false, limit: 20 });
    let fresh: Market | undefined;
    for (const market of page.markets) {
      if ((await order(buy(CASH_MINT, cashRail(market).yesMint, 5_000_000n))).status !== 200) continue;
      fresh = market;
      break;
    }
    if (!fresh) throw new Error("no uninitialized market sells yes contracts");
    const { yesMint } = cashRail(fresh);
    const { body } = await order(buy(CASH_MINT, yesMint, 5_000_000n, user.address));
    // The rent of both rails' ledgers and mints.
    const mint = await chain.getMinimumBalanceForRentExemption(MINT_SIZE);
    const ledger = await chain.getMinimumBalanceForRentExemption(MARKET_LEDGER_SIZE);
    expect(body.initPredictionMarketCost).toBe(Number(2n * (2n * mint + ledger)));
    const settled = await trade(user, buy(CASH_MINT, yesMint, 5_000_000n, user.address));
    const contracts = BigInt(settled.fills?.[0]?.outAmount ?? 0);
    expect(contracts).toBeGreaterThan(0n);
    expect(await balanceOf(user.address, yesMint)).toBe(contracts);
    for (const rail of [usdcRail(fresh), cashRail(fresh)])
      for (const address of [rail.marketLedger, rail.yesMint, rail.noMint])
        expect(await chain.getAccountInfo(address as Address), address).not.toBeNull();
    const ticker = fresh.ticker;
    await expect
      .poll(async () => cashRail(await t.client.getMarket(ticker)).isInitialized, { timeout: 10_000 })
      .toBe(true);
  });
});

describe("/quote-stream", () => {
  it("quotes a CASH-rail outcome mint in CASH", async () => {
    const yes = cashRail(active).yesMint;
    const client = await connectStream<{ subscribe?: unknown[]; updates: Record<string, string>[] }>(
      `${t.url.replace("http", "ws")}/quote-stream`,
    );
    try {
      client.send({ op: "subscribe", base_mint: yes, quote_mint: CASH_MINT });
      const first = await client.next((frame) => frame.subscribe !== undefined);
      const quote = first.updates.find((update) => update.sb === yes);
      expect(quote?.e).toBeUndefined();
      // A price per contract, in CASH: between 0 and 1, the bid below the ask.
      expect(Number(quote?.b)).toBeGreaterThan(0);
      expect(Number(quote?.a)).toBeGreaterThan(Number(quote?.b));
      expect(Number(quote?.a)).toBeLessThan(1);
    } finally {
      client.socket.close();
    }
  });
});

describe("checks on the CASH rail", () => {
  it("refuses an unverified wallet's CASH buy with unverified_wallet_not_allowed", async () => {
    const stranger = await newFundedWallet(t.url, chain, 1_000_000_000n, [[CASH_MINT, GRANT]]);
    const { status, body } = await order(
      buy(CASH_MINT, cashRail(active).yesMint, 5_000_000n, stranger.address),
    );
    expect(status).toBe(400);
    expect(body.code).toBe("unverified_wallet_not_allowed");
  });

  it("refuses the treasury's CASH account as the builder fee account, and the treasury as the user", async () => {
    const treasuryCash = associatedTokenAddress(treasury(), CASH_MINT, TOKEN_PROGRAM);
    expect(await balanceOf(treasury(), CASH_MINT)).toBeGreaterThan(0n);
    const yes = cashRail(active).yesMint;
    const fee = await order({
      ...buy(CASH_MINT, yes, 5_000_000n, user.address),
      platformFeeScale: "50",
      feeAccount: treasuryCash,
    });
    expect(fee.status).toBe(400);
    expect(fee.body.code).toBe("invalid_fee_account");
    const asUser = await order(buy(CASH_MINT, yes, 5_000_000n, treasury()));
    expect(asUser.status).toBe(400);
    expect(asUser.body.code).toBe("invalid_user_public_key");
  });

  it("takes the builder fee in CASH into a CASH fee account", async () => {
    const collector = await newFundedWallet(t.url, chain, 1_000_000_000n, [[CASH_MINT, 1n]]);
    const feeAccount = associatedTokenAddress(collector.address, CASH_MINT, TOKEN_PROGRAM);
    const yes = cashRail(active).yesMint;
    const usdcFeeAccount = associatedTokenAddress(user.address, USDC_MINT, TOKEN_PROGRAM);
    const wrongMint = await order({
      ...buy(CASH_MINT, yes, 5_000_000n, user.address),
      platformFeeScale: "50",
      feeAccount: usdcFeeAccount,
    });
    expect(wrongMint.status).toBe(400);
    expect(wrongMint.body.code).toBe("invalid_fee_account");
    const settled = await trade(user, {
      ...buy(CASH_MINT, yes, 5_000_000n, user.address),
      platformFeeScale: "50",
      feeAccount,
    });
    expect(settled.fills?.[0]?.inputMint).toBe(CASH_MINT);
    expect(await balanceOf(collector.address, CASH_MINT)).toBeGreaterThan(1n);
  });
});
