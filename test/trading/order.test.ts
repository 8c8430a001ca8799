/**
 * GET /order end to end on the demo venue: quotes and firm quotes whose transactions a separate
 * `@solana/kit` client signs and sends to the sandbox chain's JSON-RPC, with balances checked to the
 * unit; reservations that keep two firm quotes from overdrawing a vault; every error code.
 */
import type { Address, KeyPairSigner } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { LAMPORTS_PER_SIGNATURE, TOKEN_PROGRAM, WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { CASH_MINT, USDC_MINT } from "../../src/contract/markets.js";
import type { OrderResponse } from "../../src/trading/spot/desk.js";
import { cpmmAmountOut } from "../../src/trading/spot/venues/cpmm.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "trading-test";
let t: TestServer;
let chain: RpcChain;
let token: (symbol: string) => Address;

beforeAll(async () => {
  t = await startTestServer({
    // Two quotes below hold most of one vault: these tests are of the holds themselves, not their bounds.
    settings: {
      DEMO_CATALOGUE: "true",
      VENUE_SEED: VENUE_SEED,
      FIRM_QUOTE_POOL_SHARE_BPS: "0",
      FIRM_QUOTE_POOL_HOLD_BPS: "0",
    },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const tokens = demoTokens(VENUE_SEED);
  token = (symbol) => {
    const found = tokens.find((candidate) => candidate.symbol === symbol);
    if (!found) throw new Error(`no demo token ${symbol}`);
    return found.address;
  };
}, 120_000);
afterAll(async () => t?.stop());

async function order(
  query: Record<string, string | number | bigint>,
): Promise<{ status: number; body: OrderResponse & { code?: string; msg?: string } }> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await fetch(`${t.url}/order?${params}`);
  return {
    status: response.status,
    body: (await response.json()) as OrderResponse & { code?: string; msg?: string },
  };
}

async function okOrder(query: Record<string, string | number | bigint>): Promise<OrderResponse> {
  const { status, body } = await order(query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
  return body as OrderResponse;
}

/** A new wallet with 10 SOL and `grants` from the faucet. */
function fundedWallet(grants: [Address, bigint][] = []): Promise<KeyPairSigner> {
  return newFundedWallet(t.url, chain, 10_000_000_000n, grants);
}

/** Signs the order's transaction as the user, with kit, and sends it over JSON-RPC; returns the signature. */
function signAndSend(wallet: KeyPairSigner, transaction: string): Promise<string> {
  return signAndSendWithKit(t.server.chain.rpcUrl, chain, wallet, transaction);
}

async function tokenBalance(owner: Address, mint: Address): Promise<bigint> {
  const accounts = await chain.getTokenAccountsByOwner(owner, { mint });
  return accounts.reduce((sum, account) => sum + account.amount, 0n);
}

describe("quotes", () => {
  it("lists the venue's tokens with their decimals, and its venues", async () => {
    const tokens = (await (await fetch(`${t.url}/tokens-with-decimals`)).json()) as [string, number][];
    expect(validateAgainstReference("TokensWithDecimalsDoc", tokens)).toEqual([]);
    expect(tokens).toContainEqual([USDC_MINT, 6]);
    expect(tokens).toContainEqual([WRAPPED_SOL_MINT, 9]);
    expect(tokens).toContainEqual([token("dBONK"), 5]);
    // Both outcome mints of both rails (USDC, CASH) of every tokenized market that trades on the
    // prediction venue (active) or redeems there (determined, finalized), and CASH with them.
    const active = [];
    for (const status of ["active", "determined", "finalized"] as const)
      for (let cursor: number | null | undefined; cursor !== null; ) {
        const page = await t.client.listMarkets({
          status,
          isInitialized: true,
          limit: 200,
          ...(cursor ? { cursor } : {}),
        });
        active.push(...page.markets);
        cursor = page.cursor;
      }
    const accounts = Object.values(active[0]?.accounts ?? {})[0];
    expect(tokens).toContainEqual([accounts?.yesMint, 6]);
    expect(tokens).toContainEqual([accounts?.noMint, 6]);
    expect(tokens).toContainEqual([CASH_MINT, 6]);
    expect(tokens).toHaveLength(13 + 4 * active.length);
    const mints = (await (await fetch(`${t.url}/tokens`)).json()) as string[];
    expect(mints).toEqual(tokens.map(([mint]) => mint));
    expect(await (await fetch(`${t.url}/venues`)).json()).toEqual(["cpmm", "prediction"]);
  });

  it("quotes a direct route without a transaction when no user is given", async () => {
    const quote = await okOrder({
      inputMint: WRAPPED_SOL_MINT,
      outputMint: USDC_MINT,
      amount: 1_000_000_000n,
    });
    expect(quote.executionMode).toBe("sync");
    expect(quote.routePlan).toHaveLength(1);
    expect(quote.transaction).toBeUndefined();
    // 1 SOL at about 180 USDC, through the 5 bps pool, the better of the two SOL/USDC pools.
    expect(Number(quote.outAmount)).toBeGreaterThan(179_000_000);
    expect(Number(quote.outAmount)).toBeLessThan(180_000_000);
    expect(quote.slippageBps).toBe(50);
    expect(BigInt(quote.otherAmountThreshold)).toBe((BigInt(quote.outAmount) * 9_950n) / 10_000n);
    expect(quote.minOutAmount).toBe(quote.otherAmountThreshold);
    expect(quote.platformFee).toBeNull();
    expect(quote.routePlan[0]).toMatchObject({ inputMintDecimals: 9, outputMintDecimals: 6, venue: "cpmm" });
  });

  it("routes through an intermediate mint when no pool pairs the two, unless only direct routes are allowed", async () => {
    const query = { inputMint: token("dPYTH"), outputMint: token("dORCA"), amount: 1_000_000_000n };
    const quote = await okOrder(query);
    expect(quote.routePlan).toHaveLength(2);
    const [first, second] = quote.routePlan;
    expect(first?.outputMint).toBe(second?.inputMint);
    expect(first?.outAmount).toBe(second?.inAmount);
    expect(second?.outAmount).toBe(quote.outAmount);
    expect((await order({ ...query, onlyDirectRoutes: "true" })).body.code).toBe("route_not_found");
    expect((await order({ ...query, maxRouteLength: 1 })).body.code).toBe("route_not_found");
  });

  it("resolves explicit slippage into the threshold", async () => {
    const quote = await okOrder({
      inputMint: USDC_MINT,
      outputMint: token("dJUP"),
      amount: 5_000_000,
      slippageBps: 300,
    });
    expect(quote.slippageBps).toBe(300);
    expect(BigInt(quote.otherAmountThreshold)).toBe((BigInt(quote.outAmount) * 9_700n) / 10_000n);
  });
});

describe("the prediction venue", () => {
  interface Book {
    yes_bids: Record<string, number>;
    no_bids: Record<string, number>;
  }
  const micros = (price: string) => BigInt(Math.round(Number(price) * 10_000)) * 100n;

  /** An active tokenized market's mints, and its order book as the relay shows it. */
  async function activeMarket() {
    const market = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 5 }))
      .markets[0];
    const accounts = Object.values(market?.accounts ?? {})[0];
    if (!market || !accounts) throw new Error("the demo catalogue has no active tokenized market");
    const book = async () =>
      (await (await fetch(`${t.url}/api/v1/orderbook/${market.ticker}`)).json()) as Book;
    return { market, yesMint: accounts.yesMint as Address, noMint: accounts.noMint as Address, book };
  }

  /** Quotes while the book stays the same (the simulator moves it each minute), with that book. */
  async function quoteWithBook(query: Record<string, string | number | bigint>, book: () => Promise<Book>) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = await book();
      const quote = await okOrder(query);
      const after = await book();
      const same = (side: keyof Book) => JSON.stringify(after[side]) === JSON.stringify(before[side]);
      if (same("yes_bids") && same("no_bids")) return { quote, book: before };
    }
    throw new Error("the order book kept moving");
  }

  it("buys whole yes contracts with USDC up the asks (mirrored no bids), as an async order", async () => {
    const { yesMint, book } = await activeMarket();
    const budget = 25_000_000n;
    const { quote, book: levels } = await quoteWithBook(
      { inputMint: USDC_MINT, outputMint: yesMint, amount: budget, priceImpactTolerancePct: 100 },
      book,
    );
    expect(quote.executionMode).toBe("async");
    expect(quote.revertMint).toBe(USDC_MINT);
    expect(quote.routePlan).toMatchObject([
      { venue: "prediction", inputMintDecimals: 6, outputMintDecimals: 6 },
    ]);
    const asks = Object.entries(levels.no_bids)
      .map(([price, size]) => [1_000_000n - micros(price), BigInt(size)] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    let left = budget;
    let contracts = 0n;
    for (const [price, size] of asks) {
      const taken = left / price < size ? left / price : size;
      contracts += taken;
      left -= taken * price;
      if (taken < size) break;
    }
    expect(BigInt(quote.outAmount)).toBe(contracts * 1_000_000n);
    expect(quote.inAmount).toBe(budget.toString());
  });

  it("sells whole no contracts down the no bids", async () => {
    const { noMint, book } = await activeMarket();
    const { quote, book: levels } = await quoteWithBook(
      { inputMint: noMint, outputMint: USDC_MINT, amount: 3_500_000n, priceImpactTolerancePct: 100 },
      book,
    );
    // 3.5 contracts offered: the 3 whole ones sell, the half is returned.
    expect(quote.inAmount).toBe("3000000");
    expect(quote.revertMint).toBe(noMint);
    const bids = Object.entries(levels.no_bids)
      .map(([price, size]) => [micros(price), BigInt(size)] as const)
      .sort((a, b) => (a[0] > b[0] ? -1 : 1));
    let left = 3n;
    let proceeds = 0n;
    for (const [price, size] of bids) {
      const taken = left < size ? left : size;
      proceeds += taken * price;
      left -= taken;
      if (left === 0n) break;
    }
    expect(BigInt(quote.outAmount)).toBe(proceeds);
  });

  it("trades only active markets, and only directly against USDC", async () => {
    const { yesMint, noMint } = await activeMarket();
    const closed = (await t.client.listMarkets({ status: "determined", isInitialized: true, limit: 5 }))
      .markets;
    const closedMint = Object.values(closed[0]?.accounts ?? {})[0]?.yesMint;
    // A determined market's mint redeems (redemption.test.ts) but is never bought: no route leads to it.
    expect(closedMint).toBeDefined();
    const refused = await order({
      inputMint: USDC_MINT,
      outputMint: closedMint as string,
      amount: 5_000_000,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("route_not_found");
    expect((await order({ inputMint: yesMint, outputMint: noMint, amount: 5_000_000 })).body.code).toBe(
      "route_not_found",
    );
    expect(
      (await order({ inputMint: WRAPPED_SOL_MINT, outputMint: yesMint, amount: 1_000_000_000 })).body.code,
    ).toBe("route_not_found");
    expect(
      (
        await order({
          inputMint: USDC_MINT,
          outputMint: yesMint,
          amount: 5_000_000,
          excludeDexes: "prediction",
        })
      ).body.code,
    ).toBe("route_not_found");
  });
});

describe("firm quotes settle on the chain", () => {
  it("moves exactly inAmount and outAmount when the user signs and sends the transaction", async () => {
    const wallet = await fundedWallet([[USDC_MINT, 50_000_000n]]);
    const quote = await okOrder({
      inputMint: USDC_MINT,
      outputMint: token("dETH"),
      amount: 25_000_000,
      userPublicKey: wallet.address,
    });
    expect(quote.transaction).toEqual(expect.any(String));
    expect(quote.lastValidBlockHeight).toBeGreaterThan(0);
    expect(quote.computeUnitLimit).toBe(200_000);
    await signAndSend(wallet, quote.transaction as string);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(50_000_000n - BigInt(quote.inAmount));
    const received = await tokenBalance(wallet.address, token("dETH"));
    expect(received).toBe(BigInt(quote.outAmount));
    expect(received).toBeGreaterThanOrEqual(BigInt(quote.otherAmountThreshold));
  });

  it("settles a two-leg route the same way", async () => {
    const wallet = await fundedWallet([[token("dPYTH"), 2_000_000_000n]]);
    const quote = await okOrder({
      inputMint: token("dPYTH"),
      outputMint: token("dORCA"),
      amount: 1_500_000_000n,
      userPublicKey: wallet.address,
    });
    expect(quote.routePlan).toHaveLength(2);
    await signAndSend(wallet, quote.transaction as string);
    expect(await tokenBalance(wallet.address, token("dPYTH"))).toBe(500_000_000n);
    expect(await tokenBalance(wallet.address, token("dORCA"))).toBe(BigInt(quote.outAmount));
  });

  it("wraps native SOL in and unwraps it out, leaving no wrapped SOL account behind", async () => {
    const wallet = await fundedWallet();
    const lamportsBefore = await chain.getBalance(wallet.address);
    const sell = await okOrder({
      inputMint: WRAPPED_SOL_MINT,
      outputMint: USDC_MINT,
      amount: 2_000_000_000n,
      userPublicKey: wallet.address,
    });
    await signAndSend(wallet, sell.transaction as string);
    const [usdcAccount] = await findAssociatedTokenPda({
      owner: wallet.address,
      mint: USDC_MINT,
      tokenProgram: TOKEN_PROGRAM,
    });
    const rent = (await chain.getAccountInfo(usdcAccount))?.lamports ?? 0n;
    const fee = 2n * LAMPORTS_PER_SIGNATURE + BigInt(sell.prioritizationFeeLamports ?? 0);
    expect(await chain.getBalance(wallet.address)).toBe(lamportsBefore - 2_000_000_000n - fee - rent);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(BigInt(sell.outAmount));
    expect(await chain.getTokenAccountsByOwner(wallet.address, { mint: WRAPPED_SOL_MINT })).toEqual([]);

    const lamportsBeforeBuy = await chain.getBalance(wallet.address);
    const buy = await okOrder({
      inputMint: USDC_MINT,
      outputMint: WRAPPED_SOL_MINT,
      amount: sell.outAmount,
      userPublicKey: wallet.address,
    });
    await signAndSend(wallet, buy.transaction as string);
    const buyFee = 2n * LAMPORTS_PER_SIGNATURE + BigInt(buy.prioritizationFeeLamports ?? 0);
    expect(await chain.getBalance(wallet.address)).toBe(lamportsBeforeBuy + BigInt(buy.outAmount) - buyFee);
    expect(await tokenBalance(wallet.address, USDC_MINT)).toBe(0n);
  });

  it("pays the platform fee into the fee account and the rest to the user", async () => {
    const wallet = await fundedWallet([[USDC_MINT, 10_000_000n]]);
    const integrator = await fundedWallet([[token("dJUP"), 1n]]);
    const [feeAccount] = await findAssociatedTokenPda({
      owner: integrator.address,
      mint: token("dJUP"),
      tokenProgram: TOKEN_PROGRAM,
    });
    const quote = await okOrder({
      inputMint: USDC_MINT,
      outputMint: token("dJUP"),
      amount: 10_000_000,
      platformFeeBps: 100,
      feeAccount,
      userPublicKey: wallet.address,
    });
    const fee = BigInt(quote.platformFee?.amount ?? "0");
    expect(quote.platformFee).toEqual({ amount: expect.any(String), feeBps: 100, mode: "outputMint" });
    expect(fee).toBe(((BigInt(quote.outAmount) + fee) * 100n) / 10_000n);
    await signAndSend(wallet, quote.transaction as string);
    expect(await tokenBalance(integrator.address, token("dJUP"))).toBe(1n + fee);
    expect(await tokenBalance(wallet.address, token("dJUP"))).toBe(BigInt(quote.outAmount));
  });

  it("reserves what a firm quote promises, so two firm quotes never overdraw a vault", async () => {
    const amount = 90_000_000_000n; // 90,000 dRAY against a pool holding 30,000 dRAY and 36,000 dORCA
    const wallets = [
      await fundedWallet([[token("dRAY"), amount]]),
      await fundedWallet([[token("dRAY"), amount]]),
    ];
    const query = {
      inputMint: token("dRAY"),
      outputMint: token("dORCA"),
      amount,
      onlyDirectRoutes: "true",
      priceImpactTolerancePct: 100,
    };
    const first = await okOrder({ ...query, userPublicKey: wallets[0]?.address as string });
    const second = await okOrder({ ...query, userPublicKey: wallets[1]?.address as string });
    // Priced on what the first left: far less, and the two together fit in the vault.
    expect(BigInt(second.outAmount)).toBeLessThan(BigInt(first.outAmount) / 2n);
    const poolKey = first.routePlan[0]?.marketKey as Address;
    const vaultBalance = await tokenBalance(poolKey, token("dORCA"));
    expect(BigInt(first.outAmount) + BigInt(second.outAmount)).toBeLessThan(vaultBalance);
    await signAndSend(wallets[1] as KeyPairSigner, second.transaction as string);
    await signAndSend(wallets[0] as KeyPairSigner, first.transaction as string);
    expect(await tokenBalance(wallets[0]?.address as Address, token("dORCA"))).toBe(BigInt(first.outAmount));
    expect(await tokenBalance(wallets[1]?.address as Address, token("dORCA"))).toBe(BigInt(second.outAmount));

    // Delivered promises are released as soon as the vault balances show them: the next quote prices
    // on the pool's real reserves, not on reserves less output already paid.
    const small = 1_000_000_000n;
    const expected = async () =>
      cpmmAmountOut(
        await tokenBalance(poolKey, token("dRAY")),
        await tokenBalance(poolKey, token("dORCA")),
        small,
        30,
      );
    // The book reads the pools again at its next refresh.
    await vi.waitFor(
      async () =>
        expect(BigInt((await okOrder({ ...query, amount: small })).outAmount)).toBe(await expected()),
      { timeout: 15_000, interval: 50 },
    );
  });
});

describe("concurrent firm quotes", () => {
  it("prices them one after another on one pool, as if each landed before the next: never twice on the same reserves", async () => {
    const jto = demoTokens(VENUE_SEED).find((candidate) => candidate.symbol === "dJTO");
    const amount = 1_000n * 10n ** BigInt(jto?.decimals ?? 0);
    const wallets = await Promise.all(
      Array.from({ length: 4 }, () => fundedWallet([[token("dJTO"), amount]])),
    );
    const query = { inputMint: token("dJTO"), outputMint: token("dmSOL"), amount, onlyDirectRoutes: "true" };
    const pool = (await okOrder(query)).routePlan[0]?.marketKey as Address;
    const reserves = [await tokenBalance(pool, token("dJTO")), await tokenBalance(pool, token("dmSOL"))];

    const quotes = await Promise.all(
      wallets.map((wallet) => okOrder({ ...query, userPublicKey: wallet.address })),
    );
    let [reserveIn, reserveOut] = reserves as [bigint, bigint];
    const sequential: bigint[] = [];
    for (const _ of quotes) {
      const out = cpmmAmountOut(reserveIn, reserveOut, amount, 30);
      sequential.push(out);
      reserveIn += amount;
      reserveOut -= out;
    }
    const outs = quotes.map((quote) => BigInt(quote.outAmount)).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    expect(outs).toEqual(sequential);

    // Every transaction lands and pays exactly its quote; the vault pays what sequential trades would.
    await Promise.all(
      quotes.map((quote, index) => signAndSend(wallets[index] as KeyPairSigner, quote.transaction as string)),
    );
    for (const [index, quote] of quotes.entries())
      expect(await tokenBalance(wallets[index]?.address as Address, token("dmSOL"))).toBe(
        BigInt(quote.outAmount),
      );
    expect(await tokenBalance(pool, token("dmSOL"))).toBe(reserveOut);
  });
});

describe("refusals", () => {
  const bad = async (query: Record<string, string | number | bigint>, code: string, status = 400) => {
    const response = await order(query);
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    expect(response.body.code).toBe(code);
    expect(Object.keys(response.body).sort()).toEqual(["code", "msg"]);
    expect(validateAgainstReference("OrderBadRequestResponse", response.body)).toEqual([]);
    return response.body.msg as string;
  };
  const valid = () => ({ inputMint: USDC_MINT, outputMint: WRAPPED_SOL_MINT, amount: 1_000_000 });

  it("names each invalid parameter with the reference's code", async () => {
    expect(await bad({ ...valid(), inputMint: "not-a-mint" }, "invalid_input_mint")).toContain("inputMint");
    expect(
      await bad({ ...valid(), inputMint: token("dBTC").replace(/.$/, "1") }, "invalid_input_mint"),
    ).toContain("inputMint");
    await bad({ ...valid(), outputMint: "0OIl" }, "invalid_output_mint");
    await bad({ ...valid(), outputMint: USDC_MINT }, "same_input_and_output_mint");
    await bad({ ...valid(), amount: 0 }, "requested_input_amount_is_zero");
    // A malformed amount has no code of its own: the reference's code for the amount is the one.
    expect(await bad({ ...valid(), amount: "1.5" }, "requested_input_amount_is_zero")).toContain("amount");
    await bad({ ...valid(), amount: "18446744073709551616" }, "requested_input_amount_is_zero");
    await bad({ ...valid(), slippageBps: 10_001 }, "invalid_slippage_bps");
    await bad({ ...valid(), slippageBps: "-1" }, "invalid_slippage_bps");
    await bad(
      { ...valid(), slippageBps: 100, predictionMarketSlippageBps: 50 },
      "prediction_slippage_bps_below_routing_slippage",
    );
    await bad({ ...valid(), priceImpactTolerancePct: 101 }, "invalid_price_impact_tolerance_pct");
    expect(await bad({ ...valid(), dexes: "cpmm,Raydium" }, "invalid_dex")).toContain("Raydium");
    await bad({ ...valid(), excludeDexes: "nope" }, "invalid_dex");
    await bad({ ...valid(), userPublicKey: "abc" }, "invalid_user_public_key");
    await bad({ ...valid(), platformFeeBps: 10_001, feeAccount: USDC_MINT }, "invalid_platform_fee_bps");
    await bad({ ...valid(), platformFeeBps: 50 }, "platform_fee_account_not_specified");
    await bad({ ...valid(), platformFeeBps: 50, feeAccount: USDC_MINT }, "invalid_fee_account");
    await bad({ ...valid(), onlyDirectRoutes: "yes" }, "invalid_dex");
    expect(await bad({ outputMint: USDC_MINT, amount: 1 }, "invalid_input_mint")).toContain("inputMint");
  });

  it("refuses routes the venue cannot fill", async () => {
    await bad({ ...valid(), excludeDexes: "cpmm" }, "route_not_found");
    await bad({ ...valid(), amount: 1_000_000_000_000_000n }, "price_impact_too_high");
    await bad(
      { ...valid(), amount: 1, platformFeeBps: 10_000, feeAccount: await solAccountOf() },
      "zero_out_amount",
    );
  });
});

/** A wrapped-SOL token account (of a fresh wallet), valid as a fee account for SOL output. */
async function solAccountOf(): Promise<Address> {
  const wallet = await fundedWallet([[WRAPPED_SOL_MINT, 1_000n]]);
  const [account] = await findAssociatedTokenPda({
    owner: wallet.address,
    mint: WRAPPED_SOL_MINT,
    tokenProgram: TOKEN_PROGRAM,
  });
  return account;
}
