/**
 * What the `oddsgate pools`, `quote` and `trade` commands (declared in trading.ts) do. Pools are
 * created on the chain the CLI is pointed at (the local sandbox by default) with the venue's keys
 * from DATA_DIR, and stored in the venue's database, where a running server picks them up within a
 * few slots. Quotes and trades go through the venue's HTTP API like any client's.
 */
import type { Address } from "@solana/kit";
import type { Chain } from "../chain/chain.js";
import { readKeypairFile } from "../chain/keypair-file.js";
import { uiAmountString } from "../chain/ui-amount.js";
import { loadVenueKeys, venueSigners } from "../chain/venue-keys.js";
import { parseUiAmount, resolveMint, walletBalance } from "../chain/wallet.js";
import { signOrderTransaction, TradeClient } from "../client/trade.js";
import type { Storage } from "../storage/database.js";
import { PoolAuthorities } from "../trading/pools/authority.js";
import { createPool } from "../trading/pools/create.js";
import { listPools, type PoolRecord, removePool } from "../trading/pools/store.js";

/** What a pools command works on: the venue's keys and storage, its seed and the chain. */
export interface CommandContext {
  dataDir: string;
  storage: Storage;
  venueSeed: string;
  chain: Chain;
}

/** Creates a pool from `amountA` of `tokenA` and `amountB` of `tokenB` (whole-token decimal amounts). */
export async function createPoolCommand(
  context: CommandContext,
  spec: { tokenA: string; amountA: string; tokenB: string; amountB: string; feeBps: number },
): Promise<PoolRecord> {
  const { chain } = context;
  const mintA = resolveMint(context.venueSeed, spec.tokenA);
  const mintB = resolveMint(context.venueSeed, spec.tokenB);
  const [infoA, infoB] = await Promise.all([chain.getMint(mintA), chain.getMint(mintB)]);
  if (!infoA) throw new Error(`${spec.tokenA} (${mintA}) is not a mint on this chain`);
  if (!infoB) throw new Error(`${spec.tokenB} (${mintB}) is not a mint on this chain`);
  return createPool(
    {
      db: context.storage.db,
      chain,
      signers: await venueSigners(loadVenueKeys(context.dataDir)),
      authorities: PoolAuthorities.load(context.dataDir),
    },
    {
      mintA,
      mintB,
      amountA: parseUiAmount(spec.amountA, infoA.decimals),
      amountB: parseUiAmount(spec.amountB, infoB.decimals),
      feeBps: spec.feeBps,
    },
  );
}

/** One line per pool in service: address, fee and both reserves as the chain holds them. */
export async function listPoolsCommand(context: CommandContext): Promise<string[]> {
  const lines: string[] = [];
  for (const pool of await listPools(context.storage.db)) {
    const balance = await walletBalance(context.chain, pool.address);
    const reserve = (mint: Address) => {
      const holding = balance.tokens.find((token) => token.mint === mint);
      return `${holding?.uiAmount ?? "0"} of ${mint}`;
    };
    lines.push(
      `${pool.address}  ${pool.venue} ${pool.feeBps} bps  ${reserve(pool.mintA)} / ${reserve(pool.mintB)}`,
    );
  }
  return lines;
}

/** Takes a pool out of service. */
export async function removePoolCommand(
  context: Pick<CommandContext, "storage">,
  address: string,
): Promise<void> {
  if (!(await removePool(context.storage.db, address))) throw new Error(`no pool ${address} in service`);
}

export interface TradeRequest {
  venueUrl: string;
  apiKey?: string;
  venueSeed: string;
  input: string;
  output: string;
  /** Whole-token decimal amount of the input. */
  amount: string;
  slippageBps?: number;
}

/** Quotes a trade through the venue's API; returns the lines to print. */
export async function quoteCommand(request: TradeRequest): Promise<string[]> {
  const { order, decimals } = await quote(request);
  return describeOrder(order, decimals);
}

/**
 * Quotes for `wallet` (a keypair file), signs the venue's transaction, sends it to the chain, waits
 * until it has landed and returns the lines to print, ending with the wallet's balances.
 */
export async function tradeCommand(
  request: TradeRequest & { walletFile: string; chain: Chain },
): Promise<string[]> {
  const user = readKeypairFile(request.walletFile);
  const { order, decimals } = await quote(request, user.address);
  if (!order.transaction) throw new Error("the venue returned no transaction");
  const signature = await request.chain.sendTransaction(signOrderTransaction(order.transaction, user));
  const balance = await walletBalance(request.chain, user.address);
  return [
    ...describeOrder(order, decimals),
    `landed: ${signature}`,
    `${user.address}: ${balance.sol} SOL`,
    ...balance.tokens.map((token) => `  ${token.uiAmount} of ${token.mint}`),
  ];
}

async function quote(request: TradeRequest, userPublicKey?: string) {
  const client = new TradeClient({
    baseUrl: request.venueUrl,
    ...(request.apiKey ? { apiKey: request.apiKey } : {}),
  });
  const decimals = new Map(await client.tokensWithDecimals());
  const inputMint = resolveMint(request.venueSeed, request.input);
  const outputMint = resolveMint(request.venueSeed, request.output);
  const inputDecimals = decimals.get(inputMint);
  if (inputDecimals === undefined)
    throw new Error(`the venue does not trade ${request.input} (${inputMint})`);
  const order = await client.order({
    inputMint,
    outputMint,
    amount: parseUiAmount(request.amount, inputDecimals),
    ...(request.slippageBps !== undefined ? { slippageBps: request.slippageBps } : {}),
    ...(userPublicKey ? { userPublicKey } : {}),
  });
  return { order, decimals };
}

function describeOrder(
  order: Awaited<ReturnType<TradeClient["order"]>>,
  decimals: Map<string, number>,
): string[] {
  const ui = (amount: string, mint: string) => `${uiAmountString(BigInt(amount), decimals.get(mint) ?? 0)}`;
  return [
    `${ui(order.inAmount, order.inputMint)} ${order.inputMint} -> ${ui(order.outAmount, order.outputMint)} ${order.outputMint}`,
    `  at least ${ui(order.otherAmountThreshold, order.outputMint)} (slippage ${order.slippageBps} bps), price impact ${(Number(order.priceImpactPct) * 100).toFixed(4)}%`,
    ...order.routePlan.map(
      (leg) =>
        `  via ${leg.venue} ${leg.marketKey}: ${ui(leg.inAmount, leg.inputMint)} ${leg.inputMint} -> ${ui(leg.outAmount, leg.outputMint)} ${leg.outputMint}`,
    ),
  ];
}
