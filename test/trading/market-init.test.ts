/**
 * Markets initialized on first trade, and `GET /prediction-market-init`, end to end: real HTTP on
 * loopback, transactions signed with `@solana/kit` and executed by the sandbox chain. A buy of a
 * market not yet initialized pays its accounts' exact rent (here from a separate init payer who
 * signs too); the keeper creates the accounts, marks the market tokenized, fills the order, and the
 * market reads `isInitialized: true` everywhere; the contracts then sell back.
 */
import {
  type Address,
  type Base64EncodedWireTransaction,
  createNoopSigner,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAddress } from "../../src/chain/base58.js";
import { MARKET_LEDGER_SIZE } from "../../src/chain/market-ledger.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { MINT_SIZE } from "../../src/chain/token-layout.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { MIN_FEE_BUDGET } from "../../src/trading/prediction/escrow.js";
import type { TokenRecord } from "../../src/trading/spot/pools/store.js";
import { createAssociatedTokenIdempotent, tokenTransfer } from "../../src/trading/tx/instructions.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { compileMessage, signedTransaction } from "../../src/trading/tx/transaction.js";
import { newFundedWallet } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";

let t: TestServer;
let chain: RpcChain;
let initCost: bigint;
/** Active markets not yet initialized whose book sells yes contracts, by ticker, with their yes mint. */
const fresh: { ticker: string; yesMint: Address }[] = [];

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED: "market-init-test" } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  // Both settlement rails' ledgers and outcome mints are created together.
  initCost =
    2n *
    (2n * (await chain.getMinimumBalanceForRentExemption(MINT_SIZE)) +
      (await chain.getMinimumBalanceForRentExemption(MARKET_LEDGER_SIZE)));
  const page = await t.client.listMarkets({ status: "active", isInitialized: false, limit: 40 });
  for (const market of page.markets) {
    const yesMint = Object.values(market.accounts)[0]?.yesMint as Address;
    const quote = await fetch(
      `${t.url}/order?inputMint=${USDC_MINT}&outputMint=${yesMint}&amount=5000000&priceImpactTolerancePct=100`,
    );
    if (quote.status === 200) fresh.push({ ticker: market.ticker, yesMint });
    if (fresh.length === 7) break;
  }
  expect(fresh.length).toBe(7);
}, 120_000);
afterAll(async () => t?.stop());

/** Signs a base64 transaction with every one of `wallets`. */
async function signAll(transaction: string, wallets: KeyPairSigner[]): Promise<Base64EncodedWireTransaction> {
  const decoded = getTransactionDecoder().decode(Buffer.from(transaction, "base64"));
  return getBase64EncodedWireTransaction(
    await partiallySignTransaction(
      wallets.map((w) => w.keyPair),
      decoded,
    ),
  );
}

async function send(transaction: string, wallets: KeyPairSigner[]): Promise<string> {
  const signature = await createSolanaRpc(t.server.chain.rpcUrl)
    .sendTransaction(await signAll(transaction, wallets), { encoding: "base64" })
    .send();
  const [status] = await chain.getSignatureStatuses([signature]);
  expect(status?.err ?? null).toBeNull();
  return signature;
}

/** Polls until `check` holds (the catalogue reloads within a couple of seconds). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  await expect.poll(check, { timeout: 15_000, interval: 50 }).toBe(true);
}

async function isInitialized(ticker: string): Promise<boolean> {
  const market = await t.client.getMarket(ticker);
  return Object.values(market.accounts)[0]?.isInitialized === true;
}

async function balanceOf(owner: Address, mint: Address): Promise<bigint> {
  return (await chain.getTokenAccountsByOwner(owner, { mint })).reduce((sum, a) => sum + a.amount, 0n);
}

describe("a market initialized by its first buy", () => {
  it("buys, initializes with a separate payer who signs, shows initialized everywhere, and sells back", async () => {
    const market = fresh[0] as { ticker: string; yesMint: Address };
    const user = await newFundedWallet(t.url, chain, 2_000_000_000n, [[USDC_MINT, 50_000_000n]]);
    const payer = await newFundedWallet(t.url, chain, 1_000_000_000n);
    const response = await fetch(
      `${t.url}/order?inputMint=${USDC_MINT}&outputMint=${market.yesMint}&amount=5000000&userPublicKey=${user.address}&predictionMarketInitPayer=${payer.address}&priceImpactTolerancePct=100&slippageBps=2000`,
    );
    const order = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(order)).toBe(200);
    expect(validateAgainstReference("OrderResponse", order)).toEqual([]);
    expect(order).toMatchObject({
      executionMode: "async",
      initPredictionMarketCost: Number(initCost),
      predictionMarketInitPayerMustSign: true,
      isNativePredictionMarketOutput: true,
      revertMint: USDC_MINT,
    });
    const [userBefore, payerBefore] = await Promise.all([
      chain.getBalance(user.address),
      chain.getBalance(payer.address),
    ]);
    const signature = await send(order.transaction as string, [user, payer]);
    const status = await settledOrder(t.url, signature);
    expect(status.status).toBe("closed");
    const contracts = BigInt(status.fills?.[0]?.outAmount ?? 0);
    expect(contracts).toBeGreaterThan(0n);
    expect(await balanceOf(user.address, market.yesMint)).toBe(contracts);
    // The payer paid exactly the accounts' rent; the user only fees and its own outcome account's rent.
    expect(payerBefore - (await chain.getBalance(payer.address))).toBe(initCost);
    const outcomeAccount = await chain.getTokenAccountsByOwner(user.address, { mint: market.yesMint });
    const outcomeRent = (await chain.getAccountInfo(outcomeAccount[0]?.address as Address))?.lamports ?? 0n;
    const priority = BigInt(order.prioritizationFeeLamports as number);
    expect(userBefore - (await chain.getBalance(user.address))).toBe(
      10_000n + priority + 10_000n + outcomeRent,
    );

    await eventually(() => isInitialized(market.ticker));
    const tokens = (await (await fetch(`${t.url}/tokens-with-decimals`)).json()) as [string, number][];
    expect(tokens).toContainEqual([market.yesMint, 6]);
    expect((await t.client.outcomeMints()).mints).toContain(market.yesMint);
    const event = (await t.client.getMarket(market.ticker)).eventTicker;
    const events = await t.client.listEvents({ isInitialized: true, limit: 200, withNestedMarkets: false });
    expect(events.events.map((e) => e.ticker)).toContain(event);

    // A second buy pays no initialization any more.
    const again = (await (
      await fetch(
        `${t.url}/order?inputMint=${USDC_MINT}&outputMint=${market.yesMint}&amount=5000000&userPublicKey=${user.address}&predictionMarketInitPayer=${payer.address}&priceImpactTolerancePct=100&slippageBps=2000`,
      )
    ).json()) as Record<string, unknown>;
    expect(again.initPredictionMarketCost).toBeUndefined();
    expect(again.predictionMarketInitPayerMustSign).toBeUndefined();

    const sale = await fetch(
      `${t.url}/order?inputMint=${market.yesMint}&outputMint=${USDC_MINT}&amount=${contracts}&userPublicKey=${user.address}&priceImpactTolerancePct=100&slippageBps=2000`,
    );
    const saleOrder = (await sale.json()) as Record<string, unknown>;
    expect(sale.status, JSON.stringify(saleOrder)).toBe(200);
    expect(validateAgainstReference("OrderResponse", saleOrder)).toEqual([]);
    expect(saleOrder.isNativePredictionMarketOutput).toBe(false);
    const sold = await settledOrder(t.url, await send(saleOrder.transaction as string, [user]));
    expect(sold.status).toBe("closed");
    expect(await balanceOf(user.address, market.yesMint)).toBe(0n);
  }, 60_000);
});

describe("an escrow funded otherwise than by its open transaction", () => {
  it("opens nothing and initializes nothing on the input tokens alone, without the fee budget and the initialization's cost", async () => {
    const market = fresh[6] as { ticker: string; yesMint: Address };
    const attacker = await newFundedWallet(t.url, chain, 2_000_000_000n, [[USDC_MINT, 50_000_000n]]);
    const amount = 5_000_000n;
    const response = await fetch(
      `${t.url}/order?inputMint=${USDC_MINT}&outputMint=${market.yesMint}&amount=${amount}&userPublicKey=${attacker.address}&priceImpactTolerancePct=100`,
    );
    const order = (await response.json()) as Record<string, unknown>;
    expect(response.status, JSON.stringify(order)).toBe(200);
    expect(order.initPredictionMarketCost).toBe(Number(initCost));
    const { id, escrow } = await t.server.storage.db
      .selectFrom("orders")
      .select(["id", "escrow"])
      .where("user_key", "=", attacker.address)
      .executeTakeFirstOrThrow();

    // Instead of the open transaction: the escrow's input and a fee budget, but not the initialization's cost.
    const usdc = t.server.trading.book.token(USDC_MINT) as TokenRecord;
    const escrowAccount = associatedTokenAddress(parseAddress(escrow), USDC_MINT, usdc.program);
    const from = associatedTokenAddress(attacker.address, USDC_MINT, usdc.program);
    const { blockhash } = await chain.getLatestBlockhash();
    const deposit = compileMessage(
      attacker.address,
      [
        createAssociatedTokenIdempotent({
          payer: attacker.address,
          ata: escrowAccount,
          owner: parseAddress(escrow),
          mint: USDC_MINT,
          tokenProgram: usdc.program,
        }),
        tokenTransfer(usdc, from, escrowAccount, attacker.address, amount),
        getTransferSolInstruction({
          source: createNoopSigner(attacker.address),
          destination: parseAddress(escrow),
          amount: MIN_FEE_BUDGET,
        }),
      ],
      blockhash,
    );
    await send(Buffer.from(signedTransaction(deposit, [])).toString("base64"), [attacker]);

    for (let pass = 0; pass < 5; pass++) await t.server.trading.keeper.nextPass();
    const stored = await t.server.storage.db
      .selectFrom("orders")
      .select("status")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(stored.status).toBe("pending");
    expect(await isInitialized(market.ticker)).toBe(false);
    expect(await chain.getAccountInfo(market.yesMint)).toBeNull();
  }, 60_000);
});

describe("GET /prediction-market-init", () => {
  const init = (payer: string, outcomeMint: string) =>
    fetch(`${t.url}/prediction-market-init?payer=${payer}&outcomeMint=${outcomeMint}`);

  it("initializes a market with the payer's exact payment", async () => {
    const market = fresh[1] as { ticker: string; yesMint: Address };
    const payer = await newFundedWallet(t.url, chain, 1_000_000_000n);
    const response = await init(payer.address, market.yesMint);
    const body = (await response.json()) as { transaction: string };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(validateAgainstReference("PredictionMarketInitResponse", body)).toEqual([]);
    const before = await chain.getBalance(payer.address);
    await send(body.transaction, [payer]);
    await eventually(() => isInitialized(market.ticker));
    // The cost, the fee of its transaction and of the keeper's settling one.
    await eventually(async () => before - (await chain.getBalance(payer.address)) === initCost + 10_000n);
    const tokens = (await (await fetch(`${t.url}/tokens-with-decimals`)).json()) as [string, number][];
    expect(tokens).toContainEqual([market.yesMint, 6]);
    const again = await init(payer.address, market.yesMint);
    const refusal = await again.json();
    expect(again.status).toBe(400);
    expect(refusal).toMatchObject({ code: "prediction_market_already_initialized" });
    expect(validateAgainstReference("PredictionMarketInitBadRequestResponse", refusal)).toEqual([]);
  }, 60_000);

  it("charges once when the same market is initialized through two requests", async () => {
    const market = fresh[2] as { ticker: string; yesMint: Address };
    const payer = await newFundedWallet(t.url, chain, 1_000_000_000n);
    const first = (await (await init(payer.address, market.yesMint)).json()) as { transaction: string };
    const second = (await (await init(payer.address, market.yesMint)).json()) as { transaction: string };
    const before = await chain.getBalance(payer.address);
    await send(first.transaction, [payer]);
    await send(second.transaction, [payer]);
    await eventually(() => isInitialized(market.ticker));
    // Two transactions and two settlements paid fees; the cost was paid once, the second came back.
    await eventually(async () => before - (await chain.getBalance(payer.address)) === initCost + 20_000n);
  }, 60_000);

  it("counts each request against the client's firm-quote bounds: a payer's ninth unpaid one is refused", async () => {
    const market = fresh[5] as { ticker: string; yesMint: Address };
    const payer = await newFundedWallet(t.url, chain, 1_000_000_000n);
    for (let i = 0; i < 8; i++) expect((await init(payer.address, market.yesMint)).status).toBe(200);
    const ninth = await init(payer.address, market.yesMint);
    expect(ninth.status).toBe(400);
    expect(await ninth.json()).toMatchObject({ code: "invalid_payer", reason: "too_many_firm_quotes" });
    // Another payer, asked for by the same client, is counted on its own.
    const other = await newFundedWallet(t.url, chain, 1_000_000_000n);
    expect((await init(other.address, market.yesMint)).status).toBe(200);
  }, 30_000);

  it("initializes nothing for a caller who never pays", async () => {
    const market = fresh[3] as { ticker: string; yesMint: Address };
    const payer = await newFundedWallet(t.url, chain, 1_000_000_000n);
    expect((await init(payer.address, market.yesMint)).status).toBe(200);
    // Several keeper passes later, the market is still not initialized.
    for (let pass = 0; pass < 5; pass++) await t.server.trading.keeper.nextPass();
    expect(await isInitialized(market.ticker)).toBe(false);
    expect(await chain.getAccountInfo(market.yesMint)).toBeNull();
  }, 30_000);

  it("refuses bad payers and mints with the reference's codes", async () => {
    const market = fresh[4] as { ticker: string; yesMint: Address };
    const venueKeys = t.server.chain.sandbox?.venueKeys;
    const cases: [string, string, number, string][] = [
      ["not-a-key", market.yesMint, 400, "invalid_payer"],
      ["", market.yesMint, 400, "invalid_payer"],
      [venueKeys?.treasury.address ?? "", market.yesMint, 400, "invalid_payer"],
      [venueKeys?.mintAuthority.address ?? "", market.yesMint, 400, "invalid_payer"],
      // A payer who could never pay the initialization's cost is refused before anything is recorded.
      [(await generateKeyPairSigner()).address, market.yesMint, 400, "invalid_payer"],
      [USDC_MINT, "0OIl", 400, "invalid_outcome_mint"],
      [USDC_MINT, USDC_MINT, 400, "unknown_outcome_mint"],
    ];
    for (const [payer, mint, status, code] of cases) {
      const response = await init(payer, mint);
      const body = await response.json();
      expect(response.status, `${payer} ${mint}`).toBe(status);
      expect(body).toMatchObject({ code });
      expect(validateAgainstReference("PredictionMarketInitBadRequestResponse", body)).toEqual([]);
    }
  });
});
