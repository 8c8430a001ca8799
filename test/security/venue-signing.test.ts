/**
 * The venue signs only what it means (issue "Security first", item 1): the attacks that drained pools
 * through `GET /order` and `GET /intent`, each refused with its code and nothing moved; the signing
 * guard on transactions built past the parameter checks; and the general rule as a property over
 * `/order`, `/intent` and `/swap`: whatever venue key a request names as the user or in any account
 * parameter, an issued transaction still needs a non-venue signature, and once the user signs it no
 * pool's reserve product falls (no pool pays beyond the curve's price for what it received), also
 * when the attacker re-signs what landed and sends it again.
 */
import type { Address, KeyPairSigner } from "@solana/kit";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressOf } from "../../src/chain/base58.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { WRAPPED_SOL_MINT } from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import {
  newTicketSeed,
  type QuoteTicket,
  quoteTicket,
  TICKET_LAMPORTS,
} from "../../src/trading/quotes/quote-ticket.js";
import type { OrderResponse } from "../../src/trading/spot/desk.js";
import type { CpmmPool } from "../../src/trading/spot/venues/cpmm-pool.js";
import { buildOrderTransaction, ORDER_COMPUTE_UNIT_LIMIT } from "../../src/trading/tx/order-transaction.js";
import {
  checkMessageBeforeSigning,
  checkVenueSignatures,
  UnsafeTransactionError,
} from "../../src/trading/tx/signing-guard.js";
import { associatedTokenAddress } from "../../src/trading/tx/token-accounts.js";
import { rpcSend } from "../chain/harness.js";
import { newFundedWallet, signAndSendWithKit, signWithKit } from "../support/kit.js";
import { newResignableSigner, type ResignableSigner, resign } from "../support/resign.js";
import { startTestServer, type TestServer } from "../support/server.js";

const VENUE_SEED = "venue-signing-test";
const U64_MAX = 2n ** 64n - 1n;
let t: TestServer;
let chain: RpcChain;
let dETH: Address;
let attacker: KeyPairSigner;
/** The attacker's seed too, to re-sign what it signed. */
let attackerKeys: ResignableSigner;

type OrderBody = OrderResponse & { code?: string; msg?: string };

beforeAll(async () => {
  t = await startTestServer({
    settings: { DEMO_CATALOGUE: "true", VENUE_SEED, FIRM_QUOTES_PER_WALLET: "0" },
  });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  dETH = demoTokens(VENUE_SEED).find((token) => token.symbol === "dETH")?.address as Address;
  attackerKeys = await newResignableSigner();
  attacker = await newFundedWallet(
    t.url,
    chain,
    100_000_000_000n,
    [
      [USDC_MINT, 1_000_000_000_000n],
      [dETH, 1_000_000_000_000n],
    ],
    attackerKeys.signer,
  );
}, 120_000);
afterAll(async () => t?.stop());

async function order(
  query: Record<string, string | bigint | number>,
): Promise<{ status: number; body: OrderBody }> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await fetch(`${t.url}/order?${params}`);
  return { status: response.status, body: (await response.json()) as OrderBody };
}

function book() {
  return t.server.trading.book;
}

/** The pool a quote's first leg uses. */
async function poolOf(inputMint: Address, outputMint: Address, amount: bigint): Promise<CpmmPool> {
  const quote = await order({ inputMint, outputMint, amount, onlyDirectRoutes: "true" });
  expect(quote.status, JSON.stringify(quote.body)).toBe(200);
  const pool = book().poolOf(quote.body.routePlan[0]?.marketKey as string);
  if (!pool) throw new Error("no pool behind the quote");
  return pool;
}

/** Every vault balance of every pool, by vault. */
async function vaultBalances(): Promise<Map<string, bigint>> {
  const vaults = book()
    .allPools()
    .flatMap((pool) => pool.vaults);
  const accounts = await chain.getMultipleAccounts(vaults);
  const balances = new Map<string, bigint>();
  for (const [index, vault] of vaults.entries()) {
    const account = accounts[index];
    balances.set(vault, account ? Buffer.from(account.data).readBigUInt64LE(64) : 0n);
  }
  return balances;
}

describe("the pool drain", () => {
  it("refuses a pool's authority as the user, with a fee to the attacker, and moves nothing", async () => {
    const pool = await poolOf(USDC_MINT, WRAPPED_SOL_MINT, 1_000_000n);
    const before = await vaultBalances();
    const usdcVault = pool.vaults[pool.sideOf(USDC_MINT)];
    const attackerSol = associatedTokenAddress(
      attacker.address,
      WRAPPED_SOL_MINT,
      pool.tokens[pool.sideOf(WRAPPED_SOL_MINT)].program,
    );
    const { status, body } = await order({
      inputMint: USDC_MINT,
      outputMint: WRAPPED_SOL_MINT,
      amount: before.get(usdcVault) as bigint,
      userPublicKey: pool.authority.address,
      platformFeeBps: 9999,
      feeAccount: attackerSol,
      priceImpactTolerancePct: 100,
    });
    expect(status).toBe(400);
    expect(body.code).toBe("invalid_user_public_key");
    expect(body.transaction).toBeUndefined();
    expect(await vaultBalances()).toEqual(before);
  });

  it("refuses a pool's authority as the user of a wrapped-SOL output (the vault close)", async () => {
    const pool = await poolOf(USDC_MINT, WRAPPED_SOL_MINT, 1_000_000n);
    const { status, body } = await order({
      inputMint: USDC_MINT,
      outputMint: WRAPPED_SOL_MINT,
      amount: 1_000_000n,
      userPublicKey: pool.authority.address,
      wrapAndUnwrapSol: "true",
    });
    expect(status).toBe(400);
    expect(body.code).toBe("invalid_user_public_key");
  });

  it("refuses a vault, the treasury and the mint authority as the user", async () => {
    const pool = await poolOf(USDC_MINT, dETH, 1_000_000n);
    const { treasury, mintAuthority } = t.server.chain.sandbox?.venueKeys ?? {};
    for (const user of [pool.vaults[0], pool.vaults[1], treasury?.address, mintAuthority?.address]) {
      const { status, body } = await order({
        inputMint: USDC_MINT,
        outputMint: dETH,
        amount: 1_000_000n,
        userPublicKey: user as string,
      });
      expect(status, `${user}`).toBe(400);
      expect(body.code).toBe("invalid_user_public_key");
    }
  });

  it("refuses a pool vault or a treasury account as the fee account", async () => {
    const pool = await poolOf(dETH, USDC_MINT, 1_000_000n);
    const treasury = t.server.chain.sandbox?.venueKeys.treasury.address as Address;
    const treasuryUsdc = associatedTokenAddress(
      treasury,
      USDC_MINT,
      pool.tokens[pool.sideOf(USDC_MINT)].program,
    );
    for (const feeAccount of [pool.vaults[pool.sideOf(USDC_MINT)], treasuryUsdc]) {
      const { status, body } = await order({
        inputMint: dETH,
        outputMint: USDC_MINT,
        amount: 1_000_000n,
        userPublicKey: attacker.address,
        platformFeeBps: 100,
        feeAccount,
      });
      expect(status, feeAccount).toBe(400);
      expect(body.code).toBe("invalid_fee_account");
    }
  });

  it("refuses the escrow authority of an order not yet closed as user, destination, sponsor or fee account", async () => {
    // A market initialization paid for but not yet sent: an order the keeper will settle with its escrow's key.
    const page = await t.client.listMarkets({ status: "active", isInitialized: false, limit: 1 });
    const outcomeMint = Object.values(page.markets[0]?.accounts ?? {})[0]?.yesMint;
    const init = await fetch(
      `${t.url}/prediction-market-init?payer=${attacker.address}&outcomeMint=${outcomeMint}`,
    );
    expect(init.status, await init.text()).toBe(200);
    const { escrow } = await t.server.storage.db
      .selectFrom("orders")
      .select("escrow")
      .where("user_key", "=", attacker.address)
      .where("kind", "=", "init")
      .executeTakeFirstOrThrow();

    const spot = { inputMint: USDC_MINT, outputMint: dETH, amount: 1_000_000n };
    const named: [Record<string, string | number>, string][] = [
      [{ userPublicKey: escrow }, "invalid_user_public_key"],
      [{ userPublicKey: attacker.address, destinationWallet: escrow }, "invalid_destination_wallet"],
      [{ userPublicKey: attacker.address, sponsor: escrow }, "invalid_sponsor"],
      [{ userPublicKey: attacker.address, platformFeeBps: 100, feeAccount: escrow }, "invalid_fee_account"],
    ];
    for (const [query, code] of named) {
      const { status, body } = await order({ ...spot, ...query });
      expect(status, JSON.stringify(query)).toBe(400);
      expect(body.code).toBe(code);
    }
    const intent = await fetch(
      `${t.url}/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=1000000&userPublicKey=${escrow}`,
    );
    expect(intent.status).toBe(400);
    expect(((await intent.json()) as { code: string }).code).toBe("invalid_user_public_key");
  });

  it("refuses a venue account as the user of an intent", async () => {
    const pool = await poolOf(USDC_MINT, dETH, 1_000_000n);
    const response = await fetch(
      `${t.url}/intent?inputMint=${USDC_MINT}&outputMint=${dETH}&amount=1000000&userPublicKey=${pool.authority.address}`,
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe("invalid_user_public_key");
  });
});

describe("the signing guard", () => {
  async function built(
    user: Address,
    overrides: {
      userOut?: bigint;
      checkBeforeSigning?: boolean;
      /** The ticket the transaction opens, and the one the guard expects (default the same). */
      ticket?: QuoteTicket;
      guardTicket?: QuoteTicket | null;
    } = {},
  ) {
    const pool = await poolOf(USDC_MINT, dETH, 1_000_000n);
    const priced = pool.quote(USDC_MINT, 1_000_000n);
    if (!priced) throw new Error("no quote");
    const leg = {
      market: pool,
      inputMint: USDC_MINT,
      outputMint: dETH,
      inAmount: 1_000_000n,
      outAmount: priced.outAmount,
    };
    const input = book().token(USDC_MINT);
    const output = book().token(dETH);
    if (!input || !output) throw new Error("unlisted");
    const guardTicket =
      overrides.guardTicket === null ? undefined : (overrides.guardTicket ?? overrides.ticket);
    const swap = {
      payer: user,
      payerSignedByVenue: false,
      legs: [
        { pool, inputMint: USDC_MINT, inAmount: 1_000_000n, outputMint: dETH, maxOut: priced.outAmount },
      ],
      ...(guardTicket ? { ticket: guardTicket } : {}),
    };
    const wire = await buildOrderTransaction({
      user,
      legs: [leg],
      userOutAmount: overrides.userOut ?? priced.outAmount,
      platformFee: undefined,
      tokens: { input, output, token: (mint) => book().token(mint) ?? input },
      wrapAndUnwrapSol: true,
      computeUnitLimit: ORDER_COMPUTE_UNIT_LIMIT,
      microLamportsPerComputeUnit: 0n,
      lifetime: book().clock.latest,
      ...(overrides.ticket ? { ticket: overrides.ticket } : {}),
      // The check `/order` runs: on the compiled message, before the pools sign it.
      ...(overrides.checkBeforeSigning
        ? {
            beforeSigning: (message, instructions, signers) =>
              checkMessageBeforeSigning(message, instructions, signers, swap, book()),
          }
        : {}),
    });
    return { wire, swap };
  }

  it("checks the compiled message before the pools sign: the venue's own quote passes, a pool's authority as user does not", async () => {
    await expect(built(attacker.address, { checkBeforeSigning: true })).resolves.toBeDefined();
    const pool = await poolOf(USDC_MINT, dETH, 1_000_000n);
    await expect(built(pool.authority.address, { checkBeforeSigning: true })).rejects.toThrow(
      UnsafeTransactionError,
    );
    await expect(built(attacker.address, { userOut: 10n ** 18n, checkBeforeSigning: true })).rejects.toThrow(
      /more than the quoted/,
    );
  });

  it("passes the venue's own firm quote", async () => {
    const { wire, swap } = await built(attacker.address);
    expect(() => checkVenueSignatures(wire, swap, book())).not.toThrow();
  });

  it("refuses a transaction whose user is the pool's authority, built past every parameter check", async () => {
    const pool = await poolOf(USDC_MINT, dETH, 1_000_000n);
    const { wire, swap } = await built(pool.authority.address);
    expect(() => checkVenueSignatures(wire, swap, book())).toThrow(UnsafeTransactionError);
  });

  it("refuses a pool paying out more than it quoted", async () => {
    const { wire, swap } = await built(attacker.address, { userOut: 10n ** 18n });
    expect(() => checkVenueSignatures(wire, swap, book())).toThrow(/more than the quoted/);
  });

  it("refuses a pool paying without the user's inflow", async () => {
    const { wire, swap } = await built(attacker.address);
    const leg = swap.legs[0];
    if (!leg) throw new Error("no leg");
    expect(() =>
      checkVenueSignatures(wire, { ...swap, legs: [{ ...leg, inAmount: 1_000_001n }] }, book()),
    ).toThrow(/less than the quoted/);
  });

  it("lets a pool open its quote family's ticket exactly as the family names it, and no other (issue 44)", async () => {
    const pool = await poolOf(USDC_MINT, dETH, 1_000_000n);
    const ticket = quoteTicket(pool.authority.address, newTicketSeed());
    const own = await built(attacker.address, { ticket });
    expect(() => checkVenueSignatures(own.wire, own.swap, book())).not.toThrow();
    // Another family's ticket (or any with other terms) is the pool taking part in a System instruction.
    const other = await built(attacker.address, {
      ticket: quoteTicket(pool.authority.address, newTicketSeed()),
      guardTicket: ticket,
    });
    expect(() => checkVenueSignatures(other.wire, other.swap, book())).toThrow(/instruction of 1111/);
    const unasked = await built(attacker.address, { ticket, guardTicket: null });
    expect(() => checkVenueSignatures(unasked.wire, unasked.swap, book())).toThrow(UnsafeTransactionError);
    // The rent it moves is the ticket's, to the ticket: exactly the instruction's bytes.
    const bytes = Buffer.from(own.wire);
    const rent = Buffer.alloc(8);
    rent.writeBigUInt64LE(TICKET_LAMPORTS);
    const at = bytes.indexOf(rent);
    expect(at).toBeGreaterThan(0);
    bytes.writeBigUInt64LE(10n ** 12n, at);
    expect(() => checkVenueSignatures(bytes, own.swap, book())).toThrow(UnsafeTransactionError);
  });

  it("refuses a transaction that is complete without the user", async () => {
    const { wire, swap } = await built(attacker.address);
    const signed = Buffer.from(wire);
    // Fill the user's (first) signature slot: nothing may leave the venue already complete.
    signed.fill(7, 1, 65);
    expect(() => checkVenueSignatures(signed, swap, book())).toThrow(UnsafeTransactionError);
  });
});

describe("any venue key named anywhere", () => {
  // The account parameters of each route, and the name /swap gives them.
  const ACCOUNT_PARAMS = [
    "feeAccount",
    "destinationWallet",
    "destinationTokenAccount",
    "sponsor",
    "outputCloseAuthority",
    "revertWallet",
    "positiveSlippageFeeAccount",
  ] as const;

  /** Asks `route` for a transaction; returns the status, the body and the transaction if one was issued. */
  async function issue(
    route: "/order" | "/intent" | "/swap",
    query: Record<string, string | bigint | number>,
    named: { param: (typeof ACCOUNT_PARAMS)[number]; value: string } | null,
  ): Promise<{ status: number; body: Record<string, unknown>; transaction?: string }> {
    if (route !== "/swap") {
      const params = { ...query, ...(named ? { [named.param]: named.value } : {}) };
      const search = new URLSearchParams(
        Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
      );
      const response = await fetch(`${t.url}${route}?${search}`);
      const body = (await response.json()) as Record<string, unknown>;
      const transaction = (route === "/order" ? body.transaction : body.openTransaction) as
        | string
        | undefined;
      return { status: response.status, body, ...(transaction ? { transaction } : {}) };
    }
    const { userPublicKey, wrapAndUnwrapSol, ...quoteQuery } = query;
    const search = new URLSearchParams(
      Object.entries(quoteQuery).map(([k, v]): [string, string] => [k, String(v)]),
    );
    const quote = await fetch(`${t.url}/quote?${search}`);
    const quoteResponse = (await quote.json()) as Record<string, unknown>;
    if (quote.status !== 200) return { status: quote.status, body: quoteResponse };
    const options: Record<string, unknown> = {};
    if (named?.param === "feeAccount" || named?.param === "destinationTokenAccount")
      options[named.param] = named.value;
    if (named?.param === "positiveSlippageFeeAccount")
      options.positiveSlippage = { limitPct: 50, feeAccount: named.value };
    const response = await fetch(`${t.url}/swap`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        quoteResponse,
        userPublicKey,
        wrapAndUnwrapSol: wrapAndUnwrapSol === "true",
        ...options,
      }),
    });
    const body = (await response.json()) as Record<string, unknown>;
    const transaction = body.swapTransaction as string | undefined;
    return { status: response.status, body, ...(transaction ? { transaction } : {}) };
  }

  /** Each pool's reserve product: a trade at the curve's price with its fee never lowers it. */
  function poolProducts(balances: Map<string, bigint>): Map<string, bigint> {
    return new Map(
      book()
        .allPools()
        .map((pool) => [
          pool.key,
          (balances.get(pool.vaults[0]) as bigint) * (balances.get(pool.vaults[1]) as bigint),
        ]),
    );
  }

  it("never yields a transaction complete without a non-venue signature, nor a pool losing value, on /order, /intent or /swap", async () => {
    // The pools the pairs below route through: their authorities and vaults are the keys worth naming.
    const traded = new Set<string>([USDC_MINT, WRAPPED_SOL_MINT, dETH]);
    const pools = book()
      .allPools()
      .filter((pool) => pool.mints.every((mint) => traded.has(mint)));
    expect(pools.length).toBeGreaterThanOrEqual(2);
    const { treasury, mintAuthority } = t.server.chain.sandbox?.venueKeys ?? {};
    const venueKeys = [
      ...pools.flatMap((pool) => [pool.authority.address, ...pool.vaults]),
      treasury?.address as string,
      mintAuthority?.address as string,
    ];
    const attackerUsdc = associatedTokenAddress(
      attacker.address,
      USDC_MINT,
      book().token(USDC_MINT)?.program as Address,
    );
    const attackerEth = associatedTokenAddress(
      attacker.address,
      dETH,
      book().token(dETH)?.program as Address,
    );
    const pairs: [Address, Address][] = [
      [USDC_MINT, dETH],
      [dETH, USDC_MINT],
      [USDC_MINT, WRAPPED_SOL_MINT],
      [WRAPPED_SOL_MINT, USDC_MINT],
    ];
    const issued = { "/order": 0, "/intent": 0, "/swap": 0, sent: 0 };
    // Each request's amount differs a little, so no two issued transactions are the same bytes.
    let nonce = 0n;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          route: fc.constantFrom("/order" as const, "/intent" as const, "/swap" as const),
          pair: fc.constantFrom(...pairs),
          user: fc.oneof(
            { weight: 1, arbitrary: fc.constantFrom(...venueKeys) },
            { weight: 2, arbitrary: fc.constant(attacker.address as string) },
          ),
          named: fc.option(
            fc.record({
              param: fc.constantFrom(...ACCOUNT_PARAMS),
              value: fc.constantFrom(...venueKeys, attacker.address, attackerUsdc, attackerEth),
            }),
            { freq: 2 },
          ),
          amount: fc.constantFrom(1_000n, 1_000_000n, 50_000_000n, U64_MAX),
          platformFeeBps: fc.oneof(
            { weight: 2, arbitrary: fc.constant(0) },
            { weight: 1, arbitrary: fc.constantFrom(50, 9_999, 10_000) },
          ),
          wrap: fc.boolean(),
        }),
        async ({ route, pair, user, named, amount, platformFeeBps, wrap }) => {
          const before = await vaultBalances();
          const { status, body, transaction } = await issue(
            route,
            {
              inputMint: pair[0],
              outputMint: pair[1],
              amount: amount === U64_MAX ? amount : amount + nonce++,
              userPublicKey: user,
              platformFeeBps,
              wrapAndUnwrapSol: String(wrap),
              priceImpactTolerancePct: 100,
              slippageBps: 50,
            },
            named,
          );
          if (status !== 200 || !transaction) {
            expect(status, JSON.stringify(body)).toBeLessThan(500);
            expect(await vaultBalances()).toEqual(before);
            return;
          }
          issued[route] += 1;
          // Nothing the venue issues is complete without a signature only someone else can give.
          const tx = parseWireTransaction(Buffer.from(transaction, "base64"));
          const keys = tx.accountKeys.map(addressOf);
          const missing = keys
            .slice(0, tx.header.numRequiredSignatures)
            .filter((_, i) => tx.signatures[i]?.every((byte) => byte === 0));
          expect(missing.length).toBeGreaterThan(0);
          for (const signer of missing) expect(book().isVenueAccount(signer)).toBe(false);
          expect(book().isVenueAccount(user)).toBe(false);
          // Signed by the attacker where it can be: the pools gain on the curve, never lose.
          if (route === "/intent" || missing.some((signer) => signer !== attacker.address)) return;
          if (body.executionMode === "async") return;
          await signAndSendWithKit(t.server.chain.rpcUrl, chain, attacker, transaction);
          issued.sent += 1;
          // Re-signed and sent again, the same message never executes twice.
          const resent = await rpcSend(
            t.server.chain.rpcUrl,
            resign(await signWithKit(attacker, transaction), attackerKeys),
          );
          expect(resent.error, JSON.stringify(resent)).toMatchObject({ code: -32002 });
          const after = poolProducts(await vaultBalances());
          for (const [pool, product] of poolProducts(before))
            expect(after.get(pool) as bigint, pool).toBeGreaterThanOrEqual(product);
        },
      ),
      { numRuns: 200, seed: 15 },
    );
    // The property saw issued transactions on every route, and landed some, not only refusals.
    expect(issued["/order"]).toBeGreaterThan(0);
    expect(issued["/intent"]).toBeGreaterThan(0);
    expect(issued["/swap"]).toBeGreaterThan(0);
    expect(issued.sent).toBeGreaterThan(0);
  }, 240_000);
});
