/**
 * Re-quoting UIs (issue 44, item 2): a trading UI asks `/order` again every few seconds. Each firm
 * quote of one client for one wallet and pair joins the family of the ones before it, whose
 * transactions all open the same ticket account, so only one of them can land; the family holds its
 * largest live quote once. Checked through the venue's HTTP API and its chain, with transactions
 * signed and sent by kit as a wallet would.
 */
import type { Address, KeyPairSigner } from "@solana/kit";
import { createSolanaRpc } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { TICKET_LAMPORTS } from "../../src/trading/quotes/quote-ticket.js";
import type { CpmmPool } from "../../src/trading/spot/venues/cpmm-pool.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { newFundedWallet, signAndSendWithKit, signWithKit } from "../support/kit.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ticketOf } from "../support/tickets.js";
import { timeTravel } from "../support/time-travel.js";

const VENUE_SEED = "re-quoting-test";
let t: TestServer;
let chain: RpcChain;
let dETH: Address;
let pool: CpmmPool;
/** A hundredth of the pool's USDC: enough to move its price visibly. */
let amount: bigint;

interface OrderBody {
  code?: string;
  msg?: string;
  outAmount?: string;
  transaction?: string;
  lastValidBlockHeight?: number;
}

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
  const probe = await order({ amount: 1_000_000n });
  const key = (probe.body as { routePlan?: { marketKey: string }[] }).routePlan?.[0]?.marketKey;
  pool = t.server.trading.book.poolOf(key ?? "") as CpmmPool;
  amount = pool.balance(pool.sideOf(USDC_MINT)) / 100n;
}, 120_000);
afterAll(async () => t?.stop());

/** `/order` for USDC to dETH over the one direct pool, for `user` when given. */
async function order(query: { amount: bigint; user?: KeyPairSigner }) {
  const params = new URLSearchParams({
    inputMint: USDC_MINT,
    outputMint: dETH,
    amount: String(query.amount),
    onlyDirectRoutes: "true",
    ...(query.user ? { userPublicKey: query.user.address } : {}),
  });
  const response = await fetch(`${t.url}/order?${params}`);
  return { status: response.status, body: (await response.json()) as OrderBody };
}

/** Moves the chain's clock on by `slots` (2 s is five) and lets the venue read it, as it does every slot. */
async function advance(slots: number): Promise<void> {
  const slot = await chain.getSlot();
  await timeTravel(t.server.chain.rpcUrl, { absoluteSlot: Number(slot) + slots });
  await t.server.trading.book.refresh();
}

async function tokenBalance(owner: Address, mint: Address): Promise<bigint> {
  const token = t.server.trading.book.token(mint);
  if (!token) throw new Error("unlisted");
  return (await chain.getTokenAccountBalance(associatedTokenAddress(owner, mint, token.program))) ?? 0n;
}

/** Sends a signed transaction with kit, as a wallet would; resolves to the error, or null once it landed. */
async function send(user: KeyPairSigner, transaction: string): Promise<unknown> {
  try {
    await createSolanaRpc(t.server.chain.rpcUrl)
      .sendTransaction(await signWithKit(user, transaction), { encoding: "base64" })
      .send();
    return null;
  } catch (error) {
    return error;
  }
}

describe("re-quoting a firm quote", () => {
  it("re-quotes one pair for one wallet every 2 s for two minutes, never refused, while another caller's price moves by one quote only", async () => {
    // The wallet holds exactly one quote's input: every re-quote is backed by the same funds.
    const trader = await newFundedWallet(t.url, chain, 1_000_000_000n, [[USDC_MINT, amount]]);
    const fresh = await order({ amount });
    const first = await order({ amount, user: trader });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.outAmount).toBe(fresh.body.outAmount);
    // Another caller now prices the pool past one quote's hold.
    const moved = await order({ amount });
    expect(BigInt(moved.body.outAmount ?? 0)).toBeLessThan(BigInt(fresh.body.outAmount ?? 0));
    const ticket = ticketOf(first.body.transaction as string);
    const outSide = pool.sideOf(dETH);
    for (let i = 0; i < 60; i++) {
      await advance(5);
      const again = await order({ amount, user: trader });
      expect(again.status, `re-quote ${i}: ${JSON.stringify(again.body)}`).toBe(200);
      // Priced as if its own earlier quotes were not there, and opening the same ticket.
      expect(again.body.outAmount).toBe(first.body.outAmount);
      expect(ticketOf(again.body.transaction as string)).toBe(ticket);
      const other = await order({ amount });
      expect(other.body.outAmount).toBe(moved.body.outAmount);
    }
    // Two minutes of re-quotes hold one quote's output.
    expect(pool.balance(outSide) - pool.available(outSide)).toBe(BigInt(first.body.outAmount ?? 0));
  });

  it("lands one transaction of a family, whichever is sent first; the next quote starts a family of its own", async () => {
    const trader = await newFundedWallet(t.url, chain, 1_000_000_000n, [[USDC_MINT, amount * 4n]]);
    const usdcBefore = await tokenBalance(trader.address, USDC_MINT);
    // The newer one sent first.
    const older = await order({ amount, user: trader });
    const newer = await order({ amount: amount + 1n, user: trader });
    expect([older.status, newer.status]).toEqual([200, 200]);
    expect(ticketOf(newer.body.transaction as string)).toBe(ticketOf(older.body.transaction as string));
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, trader, newer.body.transaction as string);
    // Its ticket exists now: the System Program refuses to open it again, and nothing else moves.
    expect(await send(trader, older.body.transaction as string)).not.toBeNull();
    expect(await tokenBalance(trader.address, USDC_MINT)).toBe(usdcBefore - amount - 1n);
    expect(await tokenBalance(trader.address, dETH)).toBe(BigInt(newer.body.outAmount ?? 0));
    // The older one sent first: the newer then fails.
    const third = await order({ amount, user: trader });
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    expect(ticketOf(third.body.transaction as string)).not.toBe(ticketOf(older.body.transaction as string));
    const fourth = await order({ amount: amount + 1n, user: trader });
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, trader, third.body.transaction as string);
    expect(await send(trader, fourth.body.transaction as string)).not.toBeNull();
    expect(await tokenBalance(trader.address, USDC_MINT)).toBe(usdcBefore - 2n * amount - 1n);
    expect(await tokenBalance(trader.address, dETH)).toBe(
      BigInt(newer.body.outAmount ?? 0) + BigInt(third.body.outAmount ?? 0),
    );
  });

  it("gives a landed ticket's rent back to its pool once no transaction of its family can land", async () => {
    const trader = await newFundedWallet(t.url, chain, 1_000_000_000n, [[USDC_MINT, amount]]);
    const quote = await order({ amount, user: trader });
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    const ticket = ticketOf(quote.body.transaction as string) as Address;
    const funded = await chain.getBalance(pool.key);
    await signAndSendWithKit(t.server.chain.rpcUrl, chain, trader, quote.body.transaction as string);
    expect(await chain.getBalance(ticket)).toBe(TICKET_LAMPORTS);
    expect(await chain.getBalance(pool.key)).toBe(funded - TICKET_LAMPORTS);
    // Not before its quotes expire: closed now, the ticket could be opened again by one of them.
    await t.server.trading.book.refresh();
    await t.server.trading.tickets.sweep();
    expect(await chain.getBalance(ticket)).toBe(TICKET_LAMPORTS);
    await advance(Number(BigInt(quote.body.lastValidBlockHeight ?? 0) - (await chain.getBlockHeight())) + 1);
    // The venue sweeps every 2 s as well: whichever pass takes the ticket closes it.
    await vi.waitFor(async () => {
      await t.server.trading.tickets.sweep();
      expect(await chain.getBalance(ticket)).toBe(0n);
    });
    // Back to the pool, less the fee of the transaction that closed it (earlier tests' tickets come back too).
    expect(await chain.getBalance(pool.key)).toBeGreaterThanOrEqual(funded - 10_000n);
  });
});
