/**
 * Firm quotes issued while others are outstanding: concurrent requests of one wallet cannot back two
 * quotes of different pairs with one balance (the admission counts before issuing awaits anything),
 * concurrent re-quotes of one pair all open one ticket, and quotes stacked on one pool before any
 * lands are priced as if each landed before the next.
 */
import type { Address, KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { newFundedWallet } from "../support/kit.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ticketOf } from "../support/tickets.js";
import { demoMint } from "../support/tokens.js";

const VENUE_SEED = "firm-quote-races-test";
const token = (symbol: string): Address => demoMint(VENUE_SEED, symbol);
const dETH = token("dETH");
const dBTC = token("dBTC");
let t: TestServer;
let chain: RpcChain;

beforeAll(async () => {
  t = await startTestServer({
    settings: {
      DEMO_CATALOGUE: "true",
      VENUE_SEED,
      FIRM_QUOTES_PER_WALLET: "16",
      FIRM_QUOTES_PER_CLIENT: "0",
      // The stacked quotes below hold most of one pool for one client: this tests their prices, not that bound.
      FIRM_QUOTE_POOL_SHARE_BPS: "0",
    },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
}, 120_000);
afterAll(async () => t?.stop());

async function order(query: Record<string, string | bigint | number>) {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await fetch(`${t.url}/order?${params}`);
  return { status: response.status, body: (await response.json()) as { code?: string; outAmount?: string } };
}

/** A new wallet with 1 SOL and `usdc` from the faucet. */
function wallet(usdc: bigint): Promise<KeyPairSigner> {
  return newFundedWallet(t.url, chain, 1_000_000_000n, [[USDC_MINT, usdc]]);
}

describe("firm quotes issued while others are outstanding", () => {
  it("admits one of six concurrent firm quotes of different pairs a wallet can pay only once", async () => {
    const user = await wallet(2_000_000n);
    const outputs = ["dETH", "dBTC", "dUSDT", "dJUP", "dBONK", "dJTO"].map(token);
    // Simulating the transaction (dynamicComputeUnitLimit) and compiling it take awaits after the admission.
    const answers = await Promise.all(
      outputs.map((outputMint) =>
        order({
          inputMint: USDC_MINT,
          outputMint,
          amount: 2_000_000,
          userPublicKey: user.address,
          dynamicComputeUnitLimit: "true",
        }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(1);
    for (const answer of answers.filter((answer) => answer.status !== 200))
      expect(answer.body).toMatchObject({ code: "invalid_user_public_key", reason: "insufficient_funds" });
  });

  it("admits twelve concurrent re-quotes of one pair over /order and /swap, all opening one ticket, so one lands at most", async () => {
    const user = await wallet(2_000_000n);
    const base = { inputMint: USDC_MINT, outputMint: dETH, amount: 2_000_000, userPublicKey: user.address };
    const quote = (await (
      await fetch(`${t.url}/quote?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=2000000`)
    ).json()) as object;
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => order({ ...base, dynamicComputeUnitLimit: "true" })),
      ...Array.from({ length: 6 }, (_, i) =>
        fetch(`${t.url}${i % 2 ? "/swap" : "/swap-instructions"}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            userPublicKey: user.address,
            quoteResponse: quote,
            dynamicComputeUnitLimit: true,
          }),
        }).then(async (response) => ({
          status: response.status,
          body: (await response.json()) as { code?: string; transaction?: string; swapTransaction?: string },
        })),
      ),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    const tickets = new Set(
      answers.flatMap(({ body }) => {
        const wire =
          (body as { transaction?: string; swapTransaction?: string }).transaction ??
          (body as { swapTransaction?: string }).swapTransaction;
        return wire ? [ticketOf(wire)] : [];
      }),
    );
    expect(tickets.size).toBe(1);
  });

  it("prices quotes stacked on one pool as if each landed before the next: together never more than one trade of their sum", async () => {
    const amount = 50_000_000_000n;
    const direct = {
      inputMint: USDC_MINT,
      outputMint: dBTC,
      onlyDirectRoutes: "true",
      priceImpactTolerancePct: 100,
    };
    const whole = await order({ ...direct, amount: amount * 8n });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    // Eight wallets: one wallet's quotes of one pair are re-quotes, of which one lands at most.
    const users = await Promise.all(Array.from({ length: 8 }, () => wallet(amount)));
    let stacked = 0n;
    for (const user of users) {
      const firm = await order({ ...direct, amount, userPublicKey: user.address });
      expect(firm.status, JSON.stringify(firm.body)).toBe(200);
      stacked += BigInt(firm.body.outAmount as string);
    }
    expect(stacked).toBeLessThanOrEqual(BigInt(whole.body.outAmount as string));
    // Within what splitting a trade costs on a constant-product curve, not a different price.
    expect(Number(stacked) / Number(whole.body.outAmount)).toBeGreaterThan(0.99);
  });
});
