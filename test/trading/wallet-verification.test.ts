/**
 * Wallet verification (the reference's Proof check) end to end on the sandbox: with
 * WALLET_VERIFICATION on, a prediction-market buy to a wallet that is not verified is refused with
 * 400 `unverified_wallet_not_allowed` before anything is recorded, and fills once the wallet is
 * verified; the wallet checked is the receiving one; sales are not checked; `GET /verify/{address}`
 * answers from the list. On PostgreSQL, two instances share the list: a change made through one is
 * seen by the other at its next poll of the list, and an instance with verification off fills every wallet's buy.
 */
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type RunningServer, startServer } from "../../src/app/start-server.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { loadConfig } from "../../src/config.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { unverifyWallet, verifyWallet } from "../../src/trading/prediction/verified-wallets.js";
import { WalletVerification } from "../../src/trading/prediction/wallet-verification.js";
import { BACKENDS, type Backend, tempDir } from "../support/backends.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { postgresAvailable } from "../support/services.js";

/** What a wallet is funded with: SOL for fees and rent, 100 USDC to buy with. */
const LAMPORTS = 2_000_000_000n;
const USDC_GRANT = 100_000_000n;
/** A buy of 5 USDC: several whole contracts at any price the demo books show. */
const BUY_AMOUNT = 5_000_000n;

interface Venue {
  url: string;
  rpcUrl: string;
  chain: RpcChain;
  yesMint: Address;
  storage: Storage;
}

/** The venue of a test server, with the yes mint of an active, tokenized market to trade. */
async function venueOf(t: TestServer): Promise<Venue> {
  const market = (await t.client.listMarkets({ status: "active", isInitialized: true, limit: 5 })).markets[0];
  const yesMint = Object.values(market?.accounts ?? {})[0]?.yesMint as Address;
  expect(yesMint).toBeDefined();
  return {
    url: t.url,
    rpcUrl: t.server.chain.rpcUrl,
    chain: new RpcChain({ url: t.server.chain.rpcUrl }),
    yesMint,
    storage: t.server.storage,
  };
}

function fundedWallet(venue: Venue): Promise<KeyPairSigner> {
  return newFundedWallet(venue.url, venue.chain, LAMPORTS, [[USDC_MINT, USDC_GRANT]]);
}

/** `GET /order` on the server at `url` (a wide slippage: the demo's prices move before a fill); the status and the JSON body. */
async function getOrder(url: string, params: Record<string, string>) {
  const response = await fetch(
    `${url}/order?${new URLSearchParams({ priceImpactTolerancePct: "100", slippageBps: "2000", ...params })}`,
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The query of a buy of yes contracts with USDC by `user` (and `extra` parameters). */
function buyQuery(venue: Venue, user: Address | undefined, extra: Record<string, string> = {}) {
  return {
    inputMint: USDC_MINT,
    outputMint: venue.yesMint,
    amount: BUY_AMOUNT.toString(),
    ...(user ? { userPublicKey: user } : {}),
    ...extra,
  };
}

/** Signs and sends an issued async order's open transaction, and waits until the venue settled it. */
async function settle(venue: Venue, wallet: KeyPairSigner, order: Record<string, unknown>) {
  expect(order.executionMode).toBe("async");
  const signature = await signAndSendWithKit(venue.rpcUrl, venue.chain, wallet, order.transaction as string);
  return settledOrder(venue.url, signature);
}

/** Buys yes contracts with `wallet` on `venue` and expects the buy to fill. */
async function buyAndFill(venue: Venue, wallet: KeyPairSigner): Promise<OrderStatusResponse> {
  const { status, body } = await getOrder(venue.url, buyQuery(venue, wallet.address));
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
  const settled = await settle(venue, wallet, body);
  expect(settled.status).toBe("closed");
  // The whole status when it did not fill: a refund says the order expired (10 slots) unfilled.
  expect(settled.fills?.[0], JSON.stringify(settled)).toMatchObject({
    inputMint: USDC_MINT,
    outputMint: venue.yesMint,
  });
  return settled;
}

/** `GET /verify/{address}` on the server at `url`. */
async function getVerify(url: string, address: string) {
  const response = await fetch(`${url}/verify/${encodeURIComponent(address)}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/**
 * Polls `GET /verify/{address}` of the server at `url` until it answers `verified` (at its next poll of
 * the list, every POLL_MS); every answer on the way is a 200.
 */
async function seen(url: string, address: string, verified: boolean): Promise<void> {
  await vi.waitFor(
    async () => {
      const { status, body } = await getVerify(url, address);
      expect(status).toBe(200);
      expect(body.verified, `${url} verified=${String(body.verified)} for ${address}`).toBe(verified);
    },
    { timeout: 15_000, interval: 20 },
  );
}

/** How many orders storage holds for `user`. */
async function ordersOf(storage: Storage, user: Address): Promise<number> {
  const row = await storage.db
    .selectFrom("orders")
    .select((eb) => eb.fn.countAll().as("count"))
    .where("user_key", "=", user)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function balanceOf(venue: Venue, owner: Address, mint: Address): Promise<bigint> {
  return (await venue.chain.getTokenAccountsByOwner(owner, { mint })).reduce((sum, a) => sum + a.amount, 0n);
}

describe("with WALLET_VERIFICATION on", () => {
  let t: TestServer;
  let venue: Venue;
  /** Verified in the course of the tests; bob never is. */
  let alice: KeyPairSigner;
  let bob: KeyPairSigner;

  beforeAll(async () => {
    t = await startTestServer({
      settings: {
        DEMO_CATALOGUE: "true",
        VENUE_SEED: "wallet-verification-test",
        WALLET_VERIFICATION: "true",
      },
    });
    venue = await venueOf(t);
    [alice, bob] = await Promise.all([fundedWallet(venue), fundedWallet(venue)]);
  }, 120_000);
  afterAll(async () => t?.stop());

  it("refuses an unverified wallet's buy with 400 unverified_wallet_not_allowed, recording nothing", async () => {
    const { status, body } = await getOrder(t.url, buyQuery(venue, bob.address));
    expect(status).toBe(400);
    expect(body.code).toBe("unverified_wallet_not_allowed");
    expect(body.msg).toContain(bob.address);
    expect(validateAgainstReference("OrderBadRequestResponse", body)).toEqual([]);
    expect(await ordersOf(venue.storage, bob.address)).toBe(0);
    expect(await balanceOf(venue, bob.address, USDC_MINT)).toBe(USDC_GRANT);
  });

  it("quotes a buy without userPublicKey for anyone: a price names no wallet to check", async () => {
    const { status, body } = await getOrder(t.url, buyQuery(venue, undefined));
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.transaction).toBeUndefined();
  });

  it("fills the buy once the wallet is verified, and answers GET /verify from the list", async () => {
    expect((await getVerify(t.url, alice.address)).body).toEqual({ verified: false });
    const refused = await getOrder(t.url, buyQuery(venue, alice.address));
    expect(refused.body.code).toBe("unverified_wallet_not_allowed");

    await verifyWallet(venue.storage.db, alice.address, "KYC case 17");
    await seen(t.url, alice.address, true);
    const settled = await buyAndFill(venue, alice);
    expect(BigInt(settled.fills?.[0]?.outAmount ?? 0)).toBeGreaterThan(0n);
    expect(await balanceOf(venue, alice.address, venue.yesMint)).toBe(BigInt(settled.outAmount));
  });

  it("checks destinationWallet, the receiving wallet, rather than the user", async () => {
    // A verified user buying for an unverified wallet: the receiver is what is checked.
    const forBob = await getOrder(t.url, buyQuery(venue, alice.address, { destinationWallet: bob.address }));
    expect(forBob.status).toBe(400);
    expect(forBob.body.code).toBe("unverified_wallet_not_allowed");
    expect(forBob.body.msg).toContain(`destinationWallet ${bob.address}`);
    // Naming the user as its own destination is the user's buy.
    const own = await getOrder(t.url, buyQuery(venue, alice.address, { destinationWallet: alice.address }));
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(await ordersOf(venue.storage, bob.address)).toBe(0);
  });

  it("delivers an unverified payer's buy to the verified destinationWallet, and none of it to the payer", async () => {
    const [aliceBefore, bobUsdc] = [
      await balanceOf(venue, alice.address, venue.yesMint),
      await balanceOf(venue, bob.address, USDC_MINT),
    ];
    const forAlice = await getOrder(
      t.url,
      buyQuery(venue, bob.address, { destinationWallet: alice.address }),
    );
    expect(forAlice.status, JSON.stringify(forAlice.body)).toBe(200);
    expect(validateAgainstReference("OrderResponse", forAlice.body)).toEqual([]);
    const settled = await settle(venue, bob, forAlice.body);
    expect(settled.status).toBe("closed");
    expect(BigInt(settled.outAmount)).toBeGreaterThan(0n);
    expect(await balanceOf(venue, alice.address, venue.yesMint)).toBe(
      aliceBefore + BigInt(settled.outAmount),
    );
    expect(await balanceOf(venue, bob.address, venue.yesMint)).toBe(0n);
    // Bob paid for the contracts, and got back what they did not use.
    expect(await balanceOf(venue, bob.address, USDC_MINT)).toBe(bobUsdc - BigInt(settled.inAmount));
    expect(await ordersOf(venue.storage, bob.address)).toBe(1);
  });

  it("never checks a sale: a wallet unverified after buying sells its contracts", async () => {
    const held = await balanceOf(venue, alice.address, venue.yesMint);
    expect(held).toBeGreaterThanOrEqual(1_000_000n);
    await unverifyWallet(venue.storage.db, alice.address);
    await seen(t.url, alice.address, false);
    expect((await getOrder(t.url, buyQuery(venue, alice.address))).body.code).toBe(
      "unverified_wallet_not_allowed",
    );

    const sale = await getOrder(t.url, {
      inputMint: venue.yesMint,
      outputMint: USDC_MINT,
      amount: "1000000",
      userPublicKey: alice.address,
    });
    expect(sale.status, JSON.stringify(sale.body)).toBe(200);
    const settled = await settle(venue, alice, sale.body);
    expect(settled.status).toBe("closed");
    expect(settled.fills?.[0]).toMatchObject({ inputMint: venue.yesMint, inAmount: "1000000" });
    expect(await balanceOf(venue, alice.address, venue.yesMint)).toBe(held - 1_000_000n);
  });

  it("answers GET /verify with 400 bad_request for what is not a wallet address", async () => {
    for (const text of [
      "not-an-address",
      "1".repeat(31),
      "1".repeat(45),
      "O0Il".repeat(11),
      "x".repeat(200),
    ]) {
      const { status, body } = await getVerify(t.url, text);
      expect(status, text).toBe(400);
      expect(body).toEqual({
        code: "bad_request",
        msg: "address must be a wallet address (base58 of 32 bytes)",
      });
    }
    // Longer than any path parameter the router takes: refused before the route sees it.
    const oversized = await getVerify(t.url, "x".repeat(300));
    expect(oversized.status).toBe(414);
    expect(oversized.body.code).toBe("uri_too_long");
    const fresh = await generateKeyPairSigner();
    expect(await getVerify(t.url, fresh.address)).toEqual({ status: 200, body: { verified: false } });
  });

  it("declares GET /verify/{address} in the trade API's OpenAPI document", async () => {
    const document = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { operationId?: string; responses?: Record<string, unknown> } }>;
    };
    const operation = document.paths["/verify/{address}"]?.get;
    expect(operation?.operationId).toBe("verify_wallet");
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(["200", "400"]));
  });
});

describe("WalletVerification", () => {
  it("knows no wallet before start has read the list, and follows it after", async () => {
    const dir = tempDir();
    const storage = await openStorage({ DATA_DIR: dir.dir });
    const verification = new WalletVerification({ db: storage.db, required: true, pollMs: 20 });
    try {
      const [listed, other] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
      await verifyWallet(storage.db, listed.address);
      expect(verification.isVerified(listed.address)).toBe(false);
      await verification.start();
      expect(verification.required).toBe(true);
      expect(verification.isVerified(listed.address)).toBe(true);
      expect(verification.isVerified(other.address)).toBe(false);
      await verifyWallet(storage.db, other.address);
      await verification.refresh();
      expect(verification.isVerified(other.address)).toBe(true);
    } finally {
      await verification.stop();
      await storage.close();
      await dir.cleanup();
    }
  });
});

describe.skipIf(!postgresAvailable)("two instances on one PostgreSQL database", () => {
  const postgres = BACKENDS.find((backend) => backend.name === "postgres") as Backend;
  /** Runs the chain, with verification off. */
  let first: TestServer;
  let venue: Venue;
  /** Uses the first's chain and upstream, with verification on. */
  let second: RunningServer;

  beforeAll(async () => {
    first = await startTestServer({
      backend: postgres,
      settings: {
        DEMO_CATALOGUE: "true",
        VENUE_SEED: "wallet-verification-pg",
        WALLET_VERIFICATION: "false",
      },
    });
    venue = await venueOf(first);
    second = await startServer(
      loadConfig(
        {},
        {
          ...first.settings,
          PORT: "0",
          SOLANA_RPC_URL: first.server.chain.rpcUrl,
          // One upstream for both, as a deployment has: whichever keeper settles an order prices it
          // on the book the order was quoted on (each embedded simulator's book moves on its own).
          UPSTREAM_URL: first.server.upstream.url,
          WALLET_VERIFICATION: "true",
        },
      ),
    );
  }, 180_000);
  afterAll(async () => {
    await second?.close();
    await first?.stop();
  });

  it("sees a verification made through the other instance at its next poll, and its removal", async () => {
    const wallet = await fundedWallet(venue);
    expect((await getOrder(second.url, buyQuery(venue, wallet.address))).body.code).toBe(
      "unverified_wallet_not_allowed",
    );
    // Through the first instance's storage, as `oddsgate wallets verify` would write it.
    await verifyWallet(first.server.storage.db, wallet.address);
    await Promise.all([seen(second.url, wallet.address, true), seen(first.url, wallet.address, true)]);
    const issued = await getOrder(second.url, buyQuery(venue, wallet.address));
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);

    await unverifyWallet(second.storage.db, wallet.address);
    await seen(first.url, wallet.address, false);
    await seen(second.url, wallet.address, false);
    expect((await getOrder(second.url, buyQuery(venue, wallet.address))).body.code).toBe(
      "unverified_wallet_not_allowed",
    );
  });

  it("fills verified and unverified wallets' buys alike with verification off", async () => {
    const [verified, unverified] = await Promise.all([fundedWallet(venue), fundedWallet(venue)]);
    await verifyWallet(venue.storage.db, verified.address, "verified, though this instance does not ask");
    await seen(first.url, verified.address, true);
    await buyAndFill(venue, unverified);
    await buyAndFill(venue, verified);
  });
});
