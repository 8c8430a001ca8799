/**
 * `GET /order` parameters that change who pays, signs and receives, and how the transaction is
 * sized: sponsor (and sponsorExec), destinationTokenAccount, destinationWallet with native SOL,
 * outputCloseAuthority, platformFeeMode=inputMint, platformFeeScale on a spot route,
 * dynamicComputeUnitLimit, maxAccounts / maxTransactionSize and their reserves, and
 * includeAddressLookupTables. Each effect is proved on the settled balances or the decoded
 * transaction; each misuse (a venue key in any role, a sponsor who cannot pay, u64-max amounts) is
 * refused with the reference's code.
 */
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
} from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addressOf } from "../../src/chain/base58.js";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import {
  COMPUTE_BUDGET_PROGRAM,
  LAMPORTS_PER_SIGNATURE,
  WRAPPED_SOL_MINT,
} from "../../src/chain/programs.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { parseWireTransaction } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderResponse } from "../../src/contract/trade.js";
import { newFundedWallet } from "../support/kit.js";
import { validateAgainstReference } from "../support/reference-schema.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { ataOf, tokenBalance as balanceOfToken, demoMint } from "../support/tokens.js";

const VENUE_SEED = "order-accounts-test";
const token = (symbol: string): Address => demoMint(VENUE_SEED, symbol);
const dJUP = token("dJUP");
const SET_COMPUTE_UNIT_LIMIT = 2;
let t: TestServer;
let chain: RpcChain;
let poolAuthority: Address;

beforeAll(async () => {
  t = await startTestServer({ settings: { DEMO_CATALOGUE: "true", VENUE_SEED } });
  chain = new RpcChain({ url: t.server.chain.rpcUrl });
  const quote = await ok({ inputMint: USDC_MINT, outputMint: dJUP, amount: 1_000_000 });
  poolAuthority = quote.routePlan?.[0]?.marketKey as Address;
}, 120_000);
afterAll(async () => t?.stop());

type Query = Record<string, string | number | bigint>;

async function get(query: Query) {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  const response = await fetch(`${t.url}/order?${params}`);
  return { status: response.status, body: (await response.json()) as OrderResponse & { code?: string } };
}

async function ok(query: Query): Promise<OrderResponse> {
  const { status, body } = await get(query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(validateAgainstReference("OrderResponse", body)).toEqual([]);
  return body;
}

async function refused(query: Query, code: string): Promise<string> {
  const { status, body } = await get(query);
  expect(status, JSON.stringify(body)).toBe(400);
  expect(body.code, JSON.stringify(body)).toBe(code);
  expect(validateAgainstReference("OrderBadRequestResponse", body)).toEqual([]);
  return (body as { msg?: string }).msg ?? "";
}

function wallet(grants: [Address, bigint][] = [], lamports = 10_000_000_000n): Promise<KeyPairSigner> {
  return newFundedWallet(t.url, chain, lamports, grants);
}

/** Signs the venue's transaction as each of `signers` with kit, sends it and checks it landed. */
async function signAndSend(transaction: string, signers: readonly KeyPairSigner[]): Promise<void> {
  const decoded = getTransactionDecoder().decode(Buffer.from(transaction, "base64"));
  const signed = await partiallySignTransaction(
    signers.map((signer) => signer.keyPair),
    decoded,
  );
  const signature = await createSolanaRpc(t.server.chain.rpcUrl)
    .sendTransaction(getBase64EncodedWireTransaction(signed), { encoding: "base64" })
    .send();
  const [status] = await chain.getSignatureStatuses([signature]);
  expect(status?.err ?? null).toBeNull();
}

function tokenBalance(owner: Address, mint: Address): Promise<bigint> {
  return balanceOfToken(chain, owner, mint);
}

function decoded(order: OrderResponse) {
  const tx = parseWireTransaction(Buffer.from(order.transaction as string, "base64"));
  const keys = tx.accountKeys.map(addressOf);
  const unsigned = keys
    .slice(0, tx.header.numRequiredSignatures)
    .filter((_, i) => tx.signatures[i]?.every((byte) => byte === 0));
  return { tx, keys, unsigned };
}

describe("sponsor", () => {
  it("makes the sponsor the fee payer who pays fees and rent, so the user's SOL does not move", async () => {
    const user = await wallet([[USDC_MINT, 5_000_000n]]);
    const sponsor = await wallet();
    const quote = await ok({
      inputMint: USDC_MINT,
      outputMint: dJUP,
      amount: 5_000_000,
      userPublicKey: user.address,
      sponsor: sponsor.address,
    });
    const { keys, unsigned } = decoded(quote);
    expect(keys[0]).toBe(sponsor.address);
    expect(unsigned.sort()).toEqual([sponsor.address, user.address].sort());
    const userLamports = await chain.getBalance(user.address);
    const sponsorLamports = await chain.getBalance(sponsor.address);
    await signAndSend(quote.transaction as string, [user, sponsor]);
    expect(await chain.getBalance(user.address)).toBe(userLamports);
    // The sponsor paid the signatures, the priority fee and the rent of the user's new dJUP account.
    const rent = await chain.getMinimumBalanceForRentExemption(165);
    const signatures = BigInt(decoded(quote).tx.header.numRequiredSignatures);
    expect(await chain.getBalance(sponsor.address)).toBe(
      sponsorLamports -
        signatures * LAMPORTS_PER_SIGNATURE -
        BigInt(quote.prioritizationFeeLamports ?? 0) -
        rent,
    );
    expect(await tokenBalance(user.address, dJUP)).toBe(BigInt(quote.outAmount));
    expect(await tokenBalance(user.address, USDC_MINT)).toBe(0n);
  });

  it("builds the same two-signer transaction with sponsorExec=false, the sponsor still account 0", async () => {
    const user = await wallet([[USDC_MINT, 1_000_000n]]);
    const sponsor = await wallet();
    const quote = await ok({
      inputMint: USDC_MINT,
      outputMint: dJUP,
      amount: 1_000_000,
      userPublicKey: user.address,
      sponsor: sponsor.address,
      sponsorExec: "false",
    });
    expect(decoded(quote).keys[0]).toBe(sponsor.address);
    await signAndSend(quote.transaction as string, [user, sponsor]);
  });

  it("refuses a venue key, a sponsor that cannot pay the fee, and a sponsor with an init payer", async () => {
    const user = await wallet([[USDC_MINT, 1_000_000n]]);
    const base = { inputMint: USDC_MINT, outputMint: dJUP, amount: 1_000_000, userPublicKey: user.address };
    await refused({ ...base, sponsor: poolAuthority }, "invalid_sponsor");
    const broke = await generateKeyPairSigner();
    expect(await refused({ ...base, sponsor: broke.address }, "invalid_sponsor")).toContain("lamports");
    await refused({ ...base, sponsor: "not-a-key" }, "invalid_sponsor");
    await refused(
      { ...base, sponsor: user.address, predictionMarketInitPayer: user.address },
      "both_sponsor_and_prediction_market_init_payer_specified",
    );
    // A sponsor does not make an unfunded user's order firm: u64-max input is still refused.
    const sponsor = await wallet();
    const { status, body } = await get({ ...base, amount: 2n ** 64n - 1n, sponsor: sponsor.address });
    expect(status).toBe(400);
    expect(["invalid_user_public_key", "price_impact_too_high", "route_not_found"]).toContain(body.code);
  });
});

describe("destinations", () => {
  it("delivers to an existing destinationTokenAccount of another wallet", async () => {
    const user = await wallet([[USDC_MINT, 2_000_000n]]);
    const friend = await wallet([[dJUP, 1n]]);
    const quote = await ok({
      inputMint: USDC_MINT,
      outputMint: dJUP,
      amount: 2_000_000,
      userPublicKey: user.address,
      destinationTokenAccount: await ataOf(friend.address, dJUP),
    });
    await signAndSend(quote.transaction as string, [user]);
    expect(await tokenBalance(friend.address, dJUP)).toBe(1n + BigInt(quote.outAmount));
    expect(await tokenBalance(user.address, dJUP)).toBe(0n);
  });

  it("refuses a destination account that is missing, of another mint, a venue vault, or named twice", async () => {
    const user = await wallet([[USDC_MINT, 2_000_000n]]);
    const base = { inputMint: USDC_MINT, outputMint: dJUP, amount: 2_000_000, userPublicKey: user.address };
    const stranger = await wallet();
    await refused(
      { ...base, destinationTokenAccount: await ataOf(stranger.address, dJUP) },
      "invalid_destination_token_account",
    );
    await refused(
      { ...base, destinationTokenAccount: await ataOf(user.address, USDC_MINT) },
      "invalid_destination_token_account",
    );
    const vault = await ataOf(poolAuthority, dJUP);
    await refused({ ...base, destinationTokenAccount: vault }, "invalid_destination_token_account");
    await refused({ ...base, destinationTokenAccount: poolAuthority }, "invalid_destination_token_account");
    await refused(
      { ...base, destinationTokenAccount: vault, destinationWallet: stranger.address },
      "both_destination_params_specified",
    );
  });

  it("sends native SOL output to destinationWallet", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const friend = await wallet();
    const before = await chain.getBalance(friend.address);
    const quote = await ok({
      inputMint: USDC_MINT,
      outputMint: WRAPPED_SOL_MINT,
      amount: 10_000_000,
      userPublicKey: user.address,
      destinationWallet: friend.address,
    });
    await signAndSend(quote.transaction as string, [user]);
    expect(await chain.getBalance(friend.address)).toBe(before + BigInt(quote.outAmount));
    expect(await chain.getTokenAccountsByOwner(user.address, { mint: WRAPPED_SOL_MINT })).toEqual([]);
  });

  it("creates the user's output account with outputCloseAuthority, and refuses it where it cannot apply", async () => {
    const user = await wallet([[USDC_MINT, 2_000_000n]]);
    const closer = await wallet();
    const base = { inputMint: USDC_MINT, outputMint: dJUP, amount: 2_000_000, userPublicKey: user.address };
    const quote = await ok({ ...base, outputCloseAuthority: closer.address });
    await signAndSend(quote.transaction as string, [user]);
    const account = await chain.getTokenAccount(await ataOf(user.address, dJUP));
    expect(account?.closeAuthority).toBe(closer.address);
    expect(account?.owner).toBe(user.address);
    await refused({ ...base, outputCloseAuthority: poolAuthority }, "invalid_output_close_authority");
    await refused(
      { ...base, outputCloseAuthority: closer.address, destinationWallet: closer.address },
      "output_close_authority_with_destination_token_account",
    );
    await refused(
      { ...base, outputMint: WRAPPED_SOL_MINT, outputCloseAuthority: closer.address },
      "output_close_authority_with_native_sol_output",
    );
  });
});

describe("fees and sizing", () => {
  it("takes an inputMint platform fee from the input before routing", async () => {
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const integrator = await wallet([[USDC_MINT, 1n]]);
    const quote = await ok({
      inputMint: USDC_MINT,
      outputMint: dJUP,
      amount: 10_000_000,
      userPublicKey: user.address,
      platformFeeBps: 250,
      platformFeeMode: "inputMint",
      feeAccount: await ataOf(integrator.address, USDC_MINT),
    });
    expect(quote.platformFee).toEqual({ amount: "250000", feeBps: 250, mode: "inputMint" });
    expect(quote.inAmount).toBe("10000000");
    expect(quote.routePlan?.[0]?.inAmount).toBe("9750000");
    await signAndSend(quote.transaction as string, [user]);
    expect(await tokenBalance(integrator.address, USDC_MINT)).toBe(1n + 250_000n);
    expect(await tokenBalance(user.address, USDC_MINT)).toBe(0n);
    expect(await tokenBalance(user.address, dJUP)).toBe(BigInt(quote.outAmount));
    // The fee account must hold the mint the fee is taken in.
    await refused(
      {
        inputMint: USDC_MINT,
        outputMint: dJUP,
        amount: 10_000_000,
        platformFeeBps: 250,
        platformFeeMode: "inputMint",
        feeAccount: await ataOf((await wallet([[dJUP, 1n]])).address, dJUP),
      },
      "invalid_fee_account",
    );
    await refused(
      { inputMint: USDC_MINT, outputMint: dJUP, amount: 1, platformFeeMode: "both" },
      "invalid_platform_fee_bps",
    );
  });

  it("refuses platformFeeScale on a spot route", async () => {
    const integrator = await wallet([[USDC_MINT, 1n]]);
    const base = { inputMint: USDC_MINT, outputMint: dJUP, amount: 1_000_000 };
    await refused(
      { ...base, platformFeeScale: 50, feeAccount: await ataOf(integrator.address, USDC_MINT) },
      "invalid_platform_fee_scale",
    );
    await refused(
      { ...base, platformFeeScale: 50 },
      "platform_fee_account_not_specified_for_platform_fee_scale",
    );
    await refused({ ...base, platformFeeScale: 1000 }, "invalid_platform_fee_scale");
  });

  it("sizes the compute-unit limit by simulation with dynamicComputeUnitLimit, and the order still lands", async () => {
    const user = await wallet([[USDC_MINT, 1_000_000n]]);
    const quote = await ok({
      inputMint: USDC_MINT,
      outputMint: dJUP,
      amount: 1_000_000,
      userPublicKey: user.address,
      dynamicComputeUnitLimit: "true",
      prioritizationFeeLamports: 10_000,
    });
    const { tx, keys } = decoded(quote);
    const limits = tx.instructions.filter(
      (instruction) =>
        keys[instruction.programIdIndex] === COMPUTE_BUDGET_PROGRAM &&
        instruction.data[0] === SET_COMPUTE_UNIT_LIMIT,
    );
    expect(limits).toHaveLength(1);
    const limit = Buffer.from(limits[0]?.data ?? []).readUInt32LE(1);
    expect(limit).toBe(quote.computeUnitLimit);
    expect(limit).toBeLessThan(200_000);
    expect(limit).toBeGreaterThan(1_000);
    // The fee asked for in lamports is kept: the price per unit rises as the limit falls.
    expect(quote.prioritizationFeeLamports).toBeGreaterThanOrEqual(9_999);
    expect(quote.prioritizationFeeLamports).toBeLessThanOrEqual(10_000);
    await signAndSend(quote.transaction as string, [user]);
    expect(await tokenBalance(user.address, dJUP)).toBe(BigInt(quote.outAmount));
    // A transaction that cannot run yet (its fee payer holds no SOL) keeps the default limit.
    const unfunded = await generateKeyPairSigner();
    const faucet = await fetch(`${t.url}/dev/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wallet: unfunded.address, mint: USDC_MINT, amount: "1000000" }),
    });
    expect(faucet.status).toBe(200);
    const fallback = await ok({
      inputMint: USDC_MINT,
      outputMint: dJUP,
      amount: 1_000_000,
      userPublicKey: unfunded.address,
      dynamicComputeUnitLimit: "true",
    });
    expect(fallback.computeUnitLimit).toBe(200_000);
  });

  it("builds within maxAccounts and maxTransactionSize, and refuses limits nothing fits under", async () => {
    // Each firm quote holds the wallet's funds: enough for the five issued and the five refused here.
    const user = await wallet([[USDC_MINT, 10_000_000n]]);
    const base = { inputMint: USDC_MINT, outputMint: dJUP, amount: 1_000_000, userPublicKey: user.address };
    const plain = await ok(base);
    const { keys } = decoded(plain);
    const size = Buffer.from(plain.transaction as string, "base64").length;
    await ok({ ...base, maxAccounts: keys.length });
    await ok({ ...base, reserveAccounts: 64 - keys.length });
    await ok({ ...base, maxTransactionSize: size });
    await ok({ ...base, reserveTransactionSize: 1232 - size });
    await refused({ ...base, maxAccounts: keys.length - 1 }, "max_accounts_too_small");
    await refused({ ...base, reserveAccounts: 64 - keys.length + 1 }, "reserve_accounts_too_large");
    await refused({ ...base, maxTransactionSize: size - 1 }, "max_transaction_size_too_small");
    await refused({ ...base, reserveTransactionSize: 1232 - size + 1 }, "reserve_transaction_size_too_large");
    await refused(
      { ...base, maxAccounts: 30, reserveAccounts: 3 },
      "both_max_accounts_and_reserve_accounts_specified",
    );
    await refused({ ...base, reserveAccounts: 65 }, "reserve_accounts_too_large");
  });

  it("falls back to a direct route when a two-leg one exceeds maxAccounts, and refuses when none exists", async () => {
    // Pairs of the demo venue whose best route has two legs: with and without a direct pool besides.
    const mints = [USDC_MINT, ...demoTokens(VENUE_SEED).map((candidate) => candidate.address)];
    let withDirect: Query | undefined;
    let withoutDirect: Query | undefined;
    for (const inputMint of mints) {
      for (const outputMint of mints) {
        if (inputMint === outputMint || (withDirect && withoutDirect)) continue;
        const query = { inputMint, outputMint, amount: 1_000_000 };
        const { status, body } = await get(query);
        if (status !== 200 || body.routePlan?.length !== 2) continue;
        const direct = await get({ ...query, onlyDirectRoutes: "true" });
        if (direct.status === 200) withDirect ??= query;
        else withoutDirect ??= query;
      }
    }
    expect(withDirect, "a demo pair routed over two legs with a direct pool too").toBeDefined();
    expect(withoutDirect, "a demo pair routed over two legs only").toBeDefined();
    for (const query of [withDirect, withoutDirect] as Query[]) {
      const user = await wallet([[query.inputMint as Address, 5_000_000n]]);
      const base = { ...query, userPublicKey: user.address };
      const twoLegs = await ok(base);
      const accounts = decoded(twoLegs).keys.length;
      if (query === withDirect) {
        const direct = await ok({ ...base, onlyDirectRoutes: "true" });
        const directAccounts = decoded(direct).keys.length;
        expect(directAccounts).toBeLessThan(accounts);
        const fitted = await ok({ ...base, maxAccounts: directAccounts });
        expect(fitted.routePlan).toHaveLength(1);
        expect(decoded(fitted).keys.length).toBeLessThanOrEqual(directAccounts);
      } else {
        await refused({ ...base, maxAccounts: accounts - 1 }, "max_accounts_too_small");
      }
    }
  });

  it("returns the lookup tables the transaction uses when asked: none", async () => {
    const user = await wallet([[USDC_MINT, 2_000_000n]]);
    const base = { inputMint: USDC_MINT, outputMint: dJUP, amount: 1_000_000, userPublicKey: user.address };
    const asked = await ok({ ...base, includeAddressLookupTables: "true" });
    expect(asked.addressLookupTables).toEqual([]);
    expect(decoded(asked).tx.lookups).toEqual([]);
    expect((await ok(base)).addressLookupTables).toBeUndefined();
  });
});
