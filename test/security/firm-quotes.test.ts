/**
 * Reservations need funds (issue "Security first", item 3): a firm quote holds pool output for about
 * a minute, so an unfunded wallet gets none, a funded one cannot promise the same funds twice, and a
 * wallet and a client hold only so many at once. The griefing attack that made SOL/USDC unroutable
 * with four quotes for 2^64−1 lamports is refused and the pair keeps quoting. Issue 36, finding 2: a
 * wallet's funds back its quotes once however many API keys ask, a client naming someone else's
 * wallet keeps its funds from it for one turn at most, and all quotes together hold at most
 * FIRM_QUOTE_POOL_HOLD_BPS of a pool's output, so another trader's price moves no further.
 */
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createKey } from "../../src/api-keys/store.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import type { Keypair } from "../../src/chain/ed25519.js";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { FirmQuoteRefused, FirmQuotes, TURN_GRACE_BLOCKS } from "../../src/trading/quotes/firm-quotes.js";
import { familyKeyOf, pairKeyOf } from "../../src/trading/quotes/quote-family.js";
import type { PoolHold } from "../../src/trading/spot/market.js";
import { CpmmPool } from "../../src/trading/spot/venues/cpmm-pool.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "firm-quotes-test";
const U64_MAX = 2n ** 64n - 1n;
let t: TestServer;
let chain: RpcChain;
let dETH: Address;
let dBTC: Address;
let dUSDT: Address;
let dJUP: Address;

beforeAll(async () => {
  t = await startTestServer({
    settings: {
      DEMO_CATALOGUE: "true",
      VENUE_SEED,
      FIRM_QUOTES_PER_WALLET: "8",
      FIRM_QUOTES_PER_CLIENT: "24",
      FIRM_QUOTE_POOL_HOLD_BPS: "2000",
    },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
  dBTC = demoTokens(VENUE_SEED).find((token) => token.symbol === "dBTC")?.address as Address;
  dUSDT = demoTokens(VENUE_SEED).find((token) => token.symbol === "dUSDT")?.address as Address;
  dJUP = demoTokens(VENUE_SEED).find((token) => token.symbol === "dJUP")?.address as Address;
}, 120_000);
afterAll(async () => t?.stop());

async function order(query: Record<string, string | bigint | number>) {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await fetch(`${t.url}/order?${params}`);
  return {
    status: response.status,
    body: (await response.json()) as {
      code?: string;
      msg?: string;
      transaction?: string;
      outAmount?: string;
    },
  };
}

/** A new wallet with 1 SOL and `usdc` from the faucet. */
function wallet(usdc: bigint): Promise<KeyPairSigner> {
  return newFundedWallet(t.url, chain, 1_000_000_000n, [[USDC_MINT, usdc]]);
}

describe("firm quotes over HTTP", () => {
  it("refuses firm quotes for 2^64-1 lamports from an unfunded wallet, and SOL/USDC keeps routing", async () => {
    const unfunded = await generateKeyPairSigner();
    for (let i = 0; i < 4; i++) {
      const { status, body } = await order({
        inputMint: WRAPPED_SOL_MINT,
        outputMint: USDC_MINT,
        amount: U64_MAX,
        userPublicKey: unfunded.address,
        priceImpactTolerancePct: 100,
      });
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    }
    const quote = await order({ inputMint: WRAPPED_SOL_MINT, outputMint: USDC_MINT, amount: 1_000_000_000n });
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    expect(BigInt(quote.body.outAmount ?? 0)).toBeGreaterThan(0n);
  });

  it("does not let one balance back two firm quotes of different pairs, and lets a re-quote of one pair reuse it", async () => {
    const user = await wallet(10_000_000n);
    const buy = (outputMint: Address, amount: bigint) =>
      order({ inputMint: USDC_MINT, outputMint, amount, userPublicKey: user.address });
    const first = await buy(dETH, 6_000_000n);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.transaction).toBeTypeOf("string");
    const second = await buy(dBTC, 6_000_000n);
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    expect(second.body.msg).toContain("holds 4000000");
    // What is left is still good for a smaller one.
    const third = await buy(dBTC, 4_000_000n);
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    // A re-quote of the first pair replaces it (only one of the two can land): the same funds back it.
    const again = await buy(dETH, 6_000_000n);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
  });

  it("frees a wallet's firm quotes as their trades land", async () => {
    const trader = await wallet(1_000_000_000n);
    // A pool no other test here quotes: a pool frees promises oldest first, whoever made them.
    // Amounts differ, so that no two transactions within one blockhash are the same bytes.
    let amount = 1_000_000n;
    const ask = () =>
      order({
        inputMint: USDC_MINT,
        outputMint: dBTC,
        amount: amount++,
        userPublicKey: trader.address,
        onlyDirectRoutes: "true",
      });
    for (let i = 0; i < 8; i++) {
      const { status, body } = await ask();
      expect(status, JSON.stringify(body)).toBe(200);
      await signAndSendWithKit(t.server.chain.rpcUrl, chain, trader, body.transaction as string);
    }
    // The venue sees the deliveries at its next balance read (every slot): the wallet may quote again.
    await vi.waitFor(
      async () => {
        const next = await ask();
        expect(next.status, JSON.stringify(next.body)).toBe(200);
      },
      { timeout: 15_000, interval: 100 },
    );
  });

  it("bounds the live firm quotes of a wallet, then of a client, counting a pair's re-quotes once", async () => {
    const [a, b] = await Promise.all([wallet(1_000_000_000n), wallet(1_000_000_000n)]);
    // Nine pairs out of USDC: each pair's quotes are one family (a re-quote replaces the last).
    const outputs = ["dBTC", "dETH", "dUSDT", "dJUP", "dBONK", "dJTO", "dPYTH", "dRAY", "dORCA"].map(
      (symbol) => demoTokens(VENUE_SEED).find((token) => token.symbol === symbol)?.address as Address,
    );
    const ask = (user: KeyPairSigner, pair: number) =>
      order({
        inputMint: USDC_MINT,
        outputMint: outputs[pair] as Address,
        amount: 1_000_000n,
        userPublicKey: user.address,
      });
    for (let pair = 0; pair < 8; pair++) {
      const admitted = await ask(a, pair);
      expect(admitted.status, JSON.stringify(admitted.body)).toBe(200);
    }
    // Re-quoting them all again holds no more.
    for (let pair = 0; pair < 8; pair++) expect((await ask(a, pair)).status).toBe(200);
    const ninth = await ask(a, 8);
    expect(ninth.status).toBe(400);
    expect(ninth.body).toMatchObject({ code: "invalid_user_public_key", reason: "too_many_firm_quotes" });
    expect(ninth.body.msg).toContain(a.address);
    // This client holds a's 8 and a few of the tests above: more wallets reach the client's 24 soon.
    const others = await Promise.all([wallet(1_000_000_000n), wallet(1_000_000_000n)]);
    let admitted = 0;
    let over = await ask(b, 0);
    while (over.status === 200) {
      admitted += 1;
      expect(admitted).toBeLessThanOrEqual(24 - 8 - 2);
      over = await ask([b, ...others][Math.floor(admitted / 7)] as KeyPairSigner, admitted % 7);
    }
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ code: "invalid_user_public_key", reason: "too_many_firm_quotes" });
    expect(over.body.msg).toContain("this client already holds 24");
    // Quotes without a user reserve nothing and stay unbounded.
    expect((await order({ inputMint: USDC_MINT, outputMint: dETH, amount: 1_000_000n })).status).toBe(200);
  });
});

describe("firm quotes naming someone else's wallet, or much of a pool", () => {
  // Made before any is used: the server then learns all of them at its first look in storage.
  const keys: Record<"griefer" | "owner" | "hoarder" | "other" | "buyer", string> & { sellers: string[] } = {
    griefer: "",
    owner: "",
    hoarder: "",
    other: "",
    buyer: "",
    sellers: [],
  };
  beforeAll(async () => {
    for (const name of ["griefer", "owner", "hoarder", "other", "buyer"] as const)
      keys[name] = (await createKey(t.server.storage.db, { name })).secret;
    for (let i = 0; i < 8; i++)
      keys.sellers.push((await createKey(t.server.storage.db, { name: `seller ${i}` })).secret);
  });

  /** The pool of `mint`'s direct route to USDC, and its reserves as the venue last read them. */
  async function directPool(mint: Address) {
    const probe = await order({
      inputMint: mint,
      outputMint: USDC_MINT,
      amount: 1_000n,
      onlyDirectRoutes: "true",
    });
    const key = (probe.body as { routePlan?: { marketKey: string }[] }).routePlan?.[0]?.marketKey;
    const pool = t.server.trading.book.poolOf(key ?? "");
    return {
      pool,
      reserveIn: pool?.balance(pool.sideOf(mint)) ?? 0n,
      reserveOut: pool?.balance(pool.sideOf(USDC_MINT)) ?? 0n,
    };
  }

  /** `order` as the client holding `secret`. */
  async function orderAs(secret: string, query: Record<string, string | bigint | number>) {
    const params = new URLSearchParams(
      Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]),
    );
    const response = await fetch(`${t.url}/order?${params}`, { headers: { "x-api-key": secret } });
    return {
      status: response.status,
      body: (await response.json()) as { code?: string; msg?: string; routePlan?: { marketKey: string }[] },
    };
  }

  it("keeps a victim's funds from a griefer who named them first no longer than the griefer's quotes live", async () => {
    const victim = await wallet(10_000_000_000n);
    const ask = (secret: string, amount: bigint) =>
      orderAs(secret, { inputMint: USDC_MINT, outputMint: dETH, amount, userPublicKey: victim.address });
    // The griefer names most of the victim's balance.
    expect((await ask(keys.griefer, 9_000_000_000n)).status).toBe(200);
    // The victim's own client finds the funds promised, and takes the next turn at them.
    const own = await ask(keys.owner, 10_000_000_000n);
    expect(own.status).toBe(400);
    expect(own.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    expect(own.body.msg).toContain("holds 1000000000 of");
    // Meanwhile the griefer renews nothing, not even a quote the rest of the balance would cover.
    const renewed = await ask(keys.griefer, 1_000_000n);
    expect(renewed.status).toBe(400);
    expect(renewed.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    expect(renewed.body.msg).toContain("waits for them first");
  });

  it("backs one wallet's firm quotes with its funds once, however many API keys ask (issue 36)", async () => {
    const { pool, reserveIn } = await directPool(dUSDT);
    expect(pool).toBeDefined();
    // Each sale is 55% of the wallet's dUSDT and about 2% of the pool: neither bound but the funds stops it.
    const amount = reserveIn / 50n;
    const seller = await newFundedWallet(t.url, chain, 1_000_000_000n, [[dUSDT, (amount * 100n) / 55n]]);
    const statuses: number[] = [];
    for (const secret of keys.sellers) {
      const { status, body } = await orderAs(secret, {
        inputMint: dUSDT,
        outputMint: USDC_MINT,
        amount,
        userPublicKey: seller.address,
        onlyDirectRoutes: "true",
      });
      statuses.push(status);
      if (status !== 200)
        expect(body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
    }
    expect(statuses).toEqual([200, 400, 400, 400, 400, 400, 400, 400]);
  });

  it("holds at most FIRM_QUOTE_POOL_HOLD_BPS of a pool's output for all clients together: another trader's price moves no further", async () => {
    const { pool, reserveIn, reserveOut } = await directPool(dJUP);
    if (!pool) throw new Error("no direct dJUP/USDC pool");
    const small = reserveIn / 10_000n;
    const sell = (query: Record<string, string | bigint>, secret?: string) =>
      (secret ? orderAs(secret, query) : order(query)) as Promise<{
        status: number;
        body: { code?: string; reason?: string; outAmount?: string };
      }>;
    const victimQuery = { inputMint: dJUP, outputMint: USDC_MINT, amount: small, onlyDirectRoutes: "true" };
    const before = await sell(victimQuery);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    // Eight funded wallets under eight keys, each holding about 4% of the USDC: within the share of
    // one client, but together past the pool's 20%.
    const amount = reserveIn / 24n;
    const sellers = await Promise.all(
      keys.sellers.map(() => newFundedWallet(t.url, chain, 1_000_000_000n, [[dJUP, amount]])),
    );
    let held = 0n;
    const refusals: (string | undefined)[] = [];
    for (const [index, secret] of keys.sellers.entries()) {
      const { status, body } = await sell(
        {
          ...victimQuery,
          amount,
          userPublicKey: (sellers[index] as KeyPairSigner).address,
          priceImpactTolerancePct: "100",
        },
        secret,
      );
      if (status === 200) held += BigInt(body.outAmount ?? 0);
      else refusals.push(`${body.code} (${body.reason})`);
    }
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.every((code) => code === "invalid_user_public_key (too_many_firm_quotes)")).toBe(true);
    expect(held * 10_000n).toBeLessThanOrEqual(reserveOut * 2_000n);
    // Priced as if every held quote lands first: at most (1 − 20%)² of the price before, less a fee's worth.
    const after = await sell(victimQuery);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(BigInt(after.body.outAmount ?? 0) * 10_000n).toBeGreaterThanOrEqual(
      BigInt(before.body.outAmount ?? 0) * 6_300n,
    );
  });

  it("holds at most FIRM_QUOTE_POOL_SHARE_BPS of a pool's output reserve for one client, and none of another's", async () => {
    const probe = await order({
      inputMint: USDC_MINT,
      outputMint: dBTC,
      amount: 1_000_000n,
      onlyDirectRoutes: "true",
    });
    const pool = t.server.trading.book.poolOf(
      (probe.body as { routePlan: { marketKey: string }[] }).routePlan[0]?.marketKey as string,
    );
    if (!pool) throw new Error("no pool behind the quote");
    const reserveIn = pool.balance(pool.sideOf(USDC_MINT));
    const reserveOut = pool.balance(pool.sideOf(dBTC));
    // Each takes about 4% of the output reserve: two fit under 10%, a third does not. Each is for a
    // wallet of its own: one wallet's re-quotes of one pair hold one quote's worth.
    const amount = reserveIn / 24n;
    const rich = await Promise.all([wallet(amount * 2n), wallet(amount * 2n), wallet(amount * 2n)]);
    let asked = 0;
    const ask = (secret: string) =>
      orderAs(secret, {
        inputMint: USDC_MINT,
        outputMint: dBTC,
        amount,
        userPublicKey: (rich[asked++ % rich.length] as KeyPairSigner).address,
        onlyDirectRoutes: "true",
        priceImpactTolerancePct: 100,
      });
    let held = 0n;
    for (let i = 0; i < 2; i++) {
      const admitted = await ask(keys.hoarder);
      expect(admitted.status, JSON.stringify(admitted.body)).toBe(200);
      const { outAmount } = admitted.body as { outAmount?: string };
      expect(typeof outAmount).toBe("string");
      held += BigInt(outAmount as string);
    }
    expect(held * 10_000n).toBeLessThanOrEqual(reserveOut * 1_000n);
    const third = await ask(keys.hoarder);
    expect(third.status).toBe(400);
    expect(third.body).toMatchObject({ code: "invalid_user_public_key", reason: "too_many_firm_quotes" });
    expect(third.body.msg).toContain("pool reserve");
    // Another client is counted on its own.
    expect((await ask(keys.other)).status).toBe(200);
  });

  it("counts prediction-market orders against the same bounds: a wallet's ninth market from one client is refused, a re-quote never", async () => {
    const page = await t.client.listMarkets({ status: "active", isInitialized: true, limit: 40 });
    const yesMints: string[] = [];
    for (const market of page.markets) {
      const mint = Object.values(market.accounts)[0]?.yesMint;
      const probe = await order({ inputMint: USDC_MINT, outputMint: mint as string, amount: 1_000_000n });
      if (probe.status === 200) yesMints.push(mint as string);
      if (yesMints.length === 9) break;
    }
    expect(yesMints).toHaveLength(9);
    const buyer = await wallet(100_000_000n);
    const ask = (market: number) =>
      orderAs(keys.buyer, {
        inputMint: USDC_MINT,
        outputMint: yesMints[market] as string,
        amount: 1_000_000n,
        userPublicKey: buyer.address,
      });
    for (let market = 0; market < 8; market++) {
      const admitted = await ask(market);
      expect(admitted.status, JSON.stringify(admitted.body)).toBe(200);
    }
    // Each order is stored and watched, but a re-quote of one market replaces the client's last in the count.
    for (let i = 0; i < 10; i++) expect((await ask(0)).status).toBe(200);
    const ninth = await ask(8);
    expect(ninth.status).toBe(400);
    expect(ninth.body).toMatchObject({ code: "invalid_user_public_key", reason: "too_many_firm_quotes" });
  });
});

describe("FirmQuotes", () => {
  const wallet = "Wa11et11111111111111111111111111111111111111" as Address;
  const mint = USDC_MINT;
  /** A pool's hold as `CpmmPool.reserve` gives it; `close` is the pool delivering the output. */
  function hold(): PoolHold & { close(): void } {
    const listeners: (() => void)[] = [];
    const close = () => {
      for (const listener of listeners.splice(0)) listener();
    };
    return {
      release: close,
      onClose: (listener) => listeners.push(listener),
      suspend: () => () => {},
      close,
    };
  }

  it("forgets a quote once its blockhash expires: a caller who never pays holds nothing after that", () => {
    const quotes = new FirmQuotes({ perWallet: 1, perClient: 0 });
    const quote = { wallet, client: "ip:1", inputMint: mint, inAmount: 10n, balance: 10n };
    quotes.admit(quote, 100n, 250n).attach([hold()]);
    expect(() => quotes.check(quote, 250n)).toThrow(FirmQuoteRefused);
    expect(() => quotes.check(quote, 251n)).not.toThrow();
    expect(quotes.liveCount(wallet, "ip:1")).toBe(0);
  });

  it("forgets a quote once every pool delivered its output", () => {
    const quotes = new FirmQuotes({ perWallet: 1, perClient: 0 });
    const quote = { wallet, client: "ip:1", inputMint: mint, inAmount: 10n, balance: 10n };
    const holds = [hold(), hold()];
    quotes.admit(quote, 100n, 250n).attach(holds);
    holds[0]?.close();
    expect(() => quotes.check(quote, 101n)).toThrow(/already holds 1/);
    holds[1]?.close();
    expect(() => quotes.check(quote, 102n)).not.toThrow();
  });

  it("counts a quote from its admission, before it holds anything, and forgets it when cancelled", () => {
    const quotes = new FirmQuotes({ perWallet: 8, perClient: 0 });
    const quote = { wallet, client: "ip:1", inputMint: mint, inAmount: 10n, balance: 10n };
    // Issuing the first takes awaits (building, simulating): the second, meanwhile, sees its funds spent.
    const first = quotes.admit(quote, 100n, 250n);
    expect(() => quotes.admit(quote, 100n, 250n)).toThrow(/not already promised/);
    first.cancel();
    expect(quotes.liveCount(wallet, "ip:1")).toBe(0);
    expect(() => quotes.admit(quote, 100n, 250n)).not.toThrow();
  });

  it("counts a wallet's quotes per client: naming another's wallet uses none of its quotes", () => {
    const quotes = new FirmQuotes({ perWallet: 1, perClient: 0 });
    const quote = { wallet, client: "ip:griefer", inputMint: mint, inAmount: 10n, balance: 20n };
    quotes.admit(quote, 100n, 250n).attach([hold()]);
    expect(() => quotes.check(quote, 101n)).toThrow(/already holds 1/);
    expect(() => quotes.check({ ...quote, client: "key:owner" }, 101n)).not.toThrow();
    expect(quotes.liveCount(wallet, "key:owner")).toBe(0);
  });

  it("backs a wallet's quotes with its funds once, whichever clients ask (issue 36)", () => {
    const quotes = new FirmQuotes({ perWallet: 8, perClient: 0 });
    const sale = (client: string) => ({ wallet, client, inputMint: mint, inAmount: 550n, balance: 1_000n });
    quotes.admit(sale("key:1"), 100n, 250n).attach([hold()]);
    for (let key = 2; key <= 8; key++)
      expect(() => quotes.admit(sale(`key:${key}`), 101n, 250n)).toThrow(
        /holds 450 of .* not already promised/,
      );
  });

  it("gives a wallet's funds to the client refused them next: the holder renews nothing until then, for one turn", () => {
    const quotes = new FirmQuotes({ perWallet: 8, perClient: 0 });
    const ask = (client: string, inAmount: bigint) => ({
      wallet,
      client,
      inputMint: mint,
      inAmount,
      balance: 1_000n,
    });
    // A griefer names the owner's wallet for most of its funds.
    quotes.admit(ask("key:griefer", 900n), 100n, 250n).attach([hold()]);
    // Asking for more than the wallet holds takes no place in line: it could never be served.
    expect(() => quotes.check(ask("key:other", 1_001n), 101n)).toThrow(/not already promised/);
    expect(() => quotes.check(ask("key:griefer", 50n), 101n)).not.toThrow();
    // The owner is refused, and is next: the griefer may not add even what the rest would cover.
    expect(() => quotes.check(ask("key:owner", 1_000n), 101n)).toThrow(/holds 100 of/);
    expect(() => quotes.admit(ask("key:griefer", 50n), 102n, 260n)).toThrow(/waits for them first/);
    // The griefer's quote expires: the funds are the owner's, still not the griefer's.
    expect(() => quotes.admit(ask("key:griefer", 50n), 251n, 400n)).toThrow(/waits for them first/);
    quotes.admit(ask("key:owner", 1_000n), 252n, 400n).attach([hold()]);
    // Served, the owner is out of line: the griefer waits in turn, and the owner renews nothing meanwhile.
    expect(() => quotes.check(ask("key:griefer", 1_000n), 253n)).toThrow(FirmQuoteRefused);
    expect(() => quotes.check(ask("key:owner", 1n), 254n)).toThrow(/not already promised/);
  });

  it("drops a waiting client's place once it does not come back within the grace after the funds free", () => {
    const quotes = new FirmQuotes({ perWallet: 8, perClient: 0 });
    const ask = (client: string, inAmount: bigint) => ({
      wallet,
      client,
      inputMint: mint,
      inAmount,
      balance: 1_000n,
    });
    quotes.admit(ask("key:holder", 1_000n), 100n, 250n).attach([hold()]);
    expect(() => quotes.check(ask("key:waiter", 500n), 101n)).toThrow(FirmQuoteRefused);
    expect(() => quotes.check(ask("key:holder", 500n), 251n + TURN_GRACE_BLOCKS - 1n)).toThrow(
      /waits for them first/,
    );
    expect(() => quotes.check(ask("key:holder", 500n), 251n + TURN_GRACE_BLOCKS)).not.toThrow();
  });

  it("bounds one client's holds on a pool side to its share of the reserve, and frees them as they end", () => {
    const quotes = new FirmQuotes({ perWallet: 0, perClient: 0, poolShareBps: 1_000 });
    const holding = (amount: bigint, client = "key:k1") => ({
      wallet,
      client,
      inputMint: mint,
      inAmount: 1n,
      balance: 100n,
      holds: [{ side: "pool:1", amount, reserve: 1_000n }],
    });
    const held = hold();
    quotes.admit(holding(60n), 100n, 250n).attach([held]);
    expect(() => quotes.check(holding(40n), 100n)).not.toThrow();
    expect(() => quotes.check(holding(41n), 100n)).toThrow(/more than 10%/);
    expect(() => quotes.check(holding(100n, "key:k2"), 100n)).not.toThrow();
    held.close();
    expect(() => quotes.check(holding(100n), 100n)).not.toThrow();
  });

  it("counts a client's quotes across wallets and frees them as they end", () => {
    const quotes = new FirmQuotes({ perWallet: 0, perClient: 2 });
    const other = "Other11111111111111111111111111111111111111" as Address;
    for (const owner of [wallet, other]) {
      const quote = { wallet: owner, client: "key:k1", inputMint: mint, inAmount: 1n, balance: 10n };
      quotes.admit(quote, 100n, 100n + (owner === wallet ? 0n : 50n)).attach([hold()]);
    }
    const third = { wallet, client: "key:k1", inputMint: mint, inAmount: 1n, balance: 10n };
    expect(() => quotes.check(third, 100n)).toThrow(/this client already holds 2/);
    // Another client is counted on its own.
    expect(() => quotes.check({ ...third, client: "key:k2" }, 100n)).not.toThrow();
    expect(() => quotes.check(third, 101n)).not.toThrow();
  });

  it("bounds what all clients' quotes together hold of a pool side, and frees it as they end (issue 36)", () => {
    const quotes = new FirmQuotes({ perWallet: 0, perClient: 0, poolShareBps: 1_000, poolHoldBps: 2_000 });
    const holding = (amount: bigint, client: string) => ({
      wallet: `${client}Wa11et` as Address,
      client,
      inputMint: mint,
      inAmount: 1n,
      balance: 100n,
      holds: [{ side: "pool:1", amount, reserve: 1_000n }],
    });
    const held = hold();
    quotes.admit(holding(100n, "key:k1"), 100n, 250n).attach([held]);
    quotes.admit(holding(100n, "key:k2"), 100n, 250n).attach([hold()]);
    expect(() => quotes.check(holding(1n, "key:k3"), 100n)).toThrow(/more than 20% all together/);
    held.close();
    expect(() => quotes.check(holding(100n, "key:k3"), 100n)).not.toThrow();
  });

  it("moves another trader's price no further than the pool-wide cap, however many clients hold (issue 36)", async () => {
    const quotes = new FirmQuotes({ perWallet: 0, perClient: 0, poolShareBps: 1_000, poolHoldBps: 2_000 });
    const sol = "So11111111111111111111111111111111111111112" as Address;
    const token = (address: Address) => ({ mint: address, decimals: 6, program: address });
    const record = {
      address: "Poo1111111111111111111111111111111111111111" as Address,
      venue: "cpmm",
      keyId: "k",
      mintA: mint,
      mintB: sol,
      feeBps: 30,
    };
    const pool = new CpmmPool(record, [token(mint), token(sol)], [mint, sol], {} as Keypair);
    pool.observeBalance(0, 1_000_000_000n);
    pool.observeBalance(1, 1_000_000_000n);
    const before = pool.quote(mint, 1_000_000n)?.outAmount ?? 0n;
    let refused = 0;
    for (let client = 0; client < 8; client++) {
      const inAmount = 45_000_000n;
      const maxOut = pool.quote(mint, inAmount)?.outAmount ?? 0n;
      const terms = {
        wallet: `Wa11et${client}` as Address,
        client: `key:${client}`,
        inputMint: mint,
        inAmount,
        balance: inAmount,
        holds: [{ side: `${pool.key}:1`, amount: maxOut, reserve: pool.balance(1) }],
      };
      try {
        await quotes.reserve(terms, 100n, 250n, [{ pool, outputMint: sol, maxOut, inAmount }]);
      } catch (error) {
        expect(error).toMatchObject({ reason: "pool_hold" });
        refused += 1;
      }
    }
    expect(refused).toBeGreaterThan(0);
    const after = pool.quote(mint, 1_000_000n)?.outAmount ?? 0n;
    // Priced as if every held quote lands first: (1 − 20%)² of the price before, less a fee's worth.
    expect(after * 10_000n).toBeGreaterThanOrEqual(before * 6_300n);
  });

  describe("quote families (issue 44: re-quoting UIs)", () => {
    const sol = "So11111111111111111111111111111111111111112" as Address;
    const base = "Poo1111111111111111111111111111111111111111" as Address;
    function newPool() {
      const token = (address: Address) => ({ mint: address, decimals: 6, program: address });
      const record = { address: base, venue: "cpmm", keyId: "k", mintA: mint, mintB: sol, feeBps: 30 };
      const pool = new CpmmPool(record, [token(mint), token(sol)], [mint, sol], {} as Keypair);
      pool.observeBalance(0, 1_000_000_000n);
      pool.observeBalance(1, 1_000_000_000n);
      return pool;
    }
    const family = { key: familyKeyOf(pairKeyOf("key:ui", wallet, mint, sol), [base]), base };
    /** A re-quote of `inAmount` as the desk makes it: priced without the family's own holds, then reserved. */
    async function requote(quotes: FirmQuotes, pool: CpmmPool, inAmount: bigint, height: bigint, extra = {}) {
      const pair = pairKeyOf("key:ui", wallet, mint, sol);
      pool.expireReservations(height); // as the trading book does every slot
      const maxOut = quotes.lend(pair, () => pool.quote(mint, inAmount)?.outAmount ?? 0n);
      const terms = {
        wallet,
        client: "key:ui",
        inputMint: mint,
        inAmount,
        balance: 100_000_000n,
        holds: [{ side: `${pool.key}:1`, amount: maxOut, reserve: pool.balance(1) }],
      };
      const reserved = await quotes.reserve(
        terms,
        height,
        height + 150n,
        [{ pool, outputMint: sol, maxOut, inAmount }],
        undefined,
        { ...family, ...extra },
      );
      reserved.attach(reserved.holds);
      return { maxOut, reserved };
    }

    it("counts a family as one quote and holds its largest live member once, however often it re-quotes", async () => {
      const quotes = new FirmQuotes({ perWallet: 2, perClient: 2, poolShareBps: 1_000, poolHoldBps: 2_000 });
      const pool = newPool();
      const alone = pool.quote(mint, 10_000_000n)?.outAmount ?? 0n;
      const first = await requote(quotes, pool, 10_000_000n, 100n);
      expect(first.maxOut).toBe(alone);
      expect(first.reserved.ticket?.base).toBe(base);
      for (let i = 1; i <= 100; i++) {
        const again = await requote(quotes, pool, 10_000_000n, 100n + BigInt(i));
        // Priced as if its own earlier quotes were not there, and opening the same ticket.
        expect(again.maxOut).toBe(alone);
        expect(again.reserved.ticket).toEqual(first.reserved.ticket);
      }
      expect(quotes.liveCount(wallet, "key:ui")).toBe(1);
      expect(pool.balance(1) - pool.available(1)).toBe(alone);
      // A smaller re-quote still holds the larger one's output while that one may land.
      await requote(quotes, pool, 5_000_000n, 201n);
      expect(pool.balance(1) - pool.available(1)).toBe(alone);
      // Once every larger one has expired, the family holds the smaller one's.
      const small = await requote(quotes, pool, 5_000_000n, 400n);
      expect(pool.balance(1) - pool.available(1)).toBe(small.maxOut);
    });

    it("starts a new family with a new ticket once the old ticket exists, and hands the old one to the sweeper after its expiry", async () => {
      const quotes = new FirmQuotes({ perWallet: 1, perClient: 1 });
      const pool = newPool();
      const first = await requote(quotes, pool, 10_000_000n, 100n);
      const seed = first.reserved.ticket?.seed as string;
      const next = await requote(quotes, pool, 10_000_000n, 110n, { landed: seed });
      expect(next.reserved.ticket?.seed).not.toBe(seed);
      expect(quotes.liveCount(wallet, "key:ui")).toBe(1);
      expect(await quotes.takeEndedTickets(250n)).toEqual([]);
      const ended = await quotes.takeEndedTickets(251n);
      expect(ended.map((entry) => entry.ticket)).toEqual([first.reserved.ticket]);
      expect(await quotes.takeEndedTickets(251n)).toEqual([]);
    });

    it("keeps the family's hold when a re-quote is not issued after all: the earlier quotes may still land", async () => {
      const quotes = new FirmQuotes({ perWallet: 1, perClient: 1 });
      const pool = newPool();
      const first = await requote(quotes, pool, 10_000_000n, 100n);
      const pair = pairKeyOf("key:ui", wallet, mint, sol);
      const maxOut = quotes.lend(pair, () => pool.quote(mint, 10_000_000n)?.outAmount ?? 0n);
      const second = await quotes.reserve(
        { wallet, client: "key:ui", inputMint: mint, inAmount: 10_000_000n, balance: 100_000_000n },
        101n,
        251n,
        [{ pool, outputMint: sol, maxOut, inAmount: 10_000_000n }],
        undefined,
        family,
      );
      second.cancel();
      expect(pool.balance(1) - pool.available(1)).toBe(first.maxOut);
      expect(quotes.liveCount(wallet, "key:ui")).toBe(1);
    });
  });
});
