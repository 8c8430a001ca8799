/**
 * What the `oddsgate pools`, `quote` and `trade` commands (declared in trading.ts) do. Pools are
 * created on the chain the CLI is pointed at (the local sandbox by default) with the venue's keys
 * from DATA_DIR, and stored in the venue's database, where a running server picks them up within a
 * few slots. Quotes and trades go through the venue's HTTP API like any client's.
 */
import { type Address, isAddress } from "@solana/kit";
import type { Chain } from "../chain/chain.js";
import { demoTokens } from "../chain/demo-tokens.js";
import { readKeypairFile } from "../chain/keypair-file.js";
import { WRAPPED_SOL_MINT } from "../chain/programs.js";
import { uiAmountString } from "../chain/ui-amount.js";
import { loadVenueKeys, venueSigners } from "../chain/venue-keys.js";
import { parseUiAmount, resolveMint, walletBalance } from "../chain/wallet.js";
import { ApiTransport } from "../client/http.js";
import { MarketsClient } from "../client/markets.js";
import { signOrderTransaction, TradeClient } from "../client/trade.js";
import { CASH_MINT, USDC_MINT } from "../contract/markets.js";
import type { OrderStatusResponse } from "../contract/trade.js";
import type { Storage } from "../storage/database.js";
import { PoolAuthorities } from "../trading/spot/pools/authority.js";
import { createPool } from "../trading/spot/pools/create.js";
import { listPools, type PoolRecord, removePool } from "../trading/spot/pools/store.js";
import { venueFailure } from "./support.js";

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

/** A pool in service with its reserves as the chain holds them, and the line that shows it. */
export interface ListedPool {
  address: string;
  venue: string;
  feeBps: number;
  reserves: { mint: string; symbol: string | null; uiAmount: string }[];
  line: string;
}

/** The pools in service: address, fee and both reserves as the chain holds them. */
export async function listPoolsCommand(context: CommandContext): Promise<ListedPool[]> {
  const symbols = new Map(
    demoTokens(context.venueSeed).map((token) => [token.address as string, token.symbol]),
  );
  symbols.set(USDC_MINT, "USDC").set(CASH_MINT, "CASH").set(WRAPPED_SOL_MINT, "SOL");
  const listed: ListedPool[] = [];
  for (const pool of await listPools(context.storage.db)) {
    const balance = await walletBalance(context.chain, pool.address);
    const reserve = (mint: Address) => ({
      mint,
      symbol: symbols.get(mint) ?? null,
      uiAmount: balance.tokens.find((token) => token.mint === mint)?.uiAmount ?? "0",
    });
    const reserves = [reserve(pool.mintA), reserve(pool.mintB)];
    const shown = reserves.map((r) =>
      r.symbol ? `${r.uiAmount} ${r.symbol} (${r.mint})` : `${r.uiAmount} of ${r.mint}`,
    );
    listed.push({
      address: pool.address,
      venue: pool.venue,
      feeBps: pool.feeBps,
      reserves,
      line: `${pool.address}  ${pool.venue} ${pool.feeBps} bps  ${shown.join(" / ")}`,
    });
  }
  return listed;
}

/** Takes a pool out of service. */
export async function removePoolCommand(
  context: Pick<CommandContext, "storage">,
  address: string,
): Promise<void> {
  if (!(await removePool(context.storage.db, address))) throw new Error(`no pool ${address} in service`);
}

export interface TradeRequest {
  /** The trade API's base URL. */
  venueUrl: string;
  /** The prediction-market API's base URL (outcome mints are named by their market's ticker). */
  marketsUrl: string;
  apiKey?: string;
  venueSeed: string;
  input: string;
  output: string;
  /** Whole-token decimal amount of the input. */
  amount: string;
  /** The input's decimals when the venue lists no such token (a settled market's outcome mint). */
  inputDecimals?: number;
  slippageBps?: number;
}

type Order = Awaited<ReturnType<TradeClient["order"]>>;

/** A quote, with what it takes to show it to a person: each mint's decimals and symbol. */
export interface Quoted {
  order: Order;
  decimals: Map<string, number>;
  symbols: Map<string, string>;
}

/** Quotes a trade through the venue's API. */
export async function quoteCommand(request: TradeRequest): Promise<Quoted> {
  return quote(request);
}

/** A prediction-market order's fill, as /order-status reported it once the order was done. */
export interface OrderFill {
  status: OrderStatusResponse["status"];
  /** What the order used of the input, and what it delivered, in base units. */
  inAmount: bigint;
  outAmount: bigint;
  /** Whole contracts bought or sold. */
  contracts: bigint;
  /** Settlement-mint base units per contract (6 decimals), paid or received; null without a fill. */
  averagePrice: bigint | null;
  /** The fee the order paid, in the settlement mint's base units. */
  fees: bigint;
  /** What came back to the wallet unused, by mint (base units). */
  reverted: { mint: string; amount: bigint }[];
}

export interface TradeOutcome extends Quoted {
  signature: string;
  /** Present for a prediction-market order (executionMode async): its fill, waited for. */
  fill?: OrderFill;
  balance: Awaited<ReturnType<typeof walletBalance>>;
}

/** How long `trade` waits for a prediction-market order to fill before it gives up watching. */
const FILL_WAIT_MS = 120_000;
/** How often it asks /order-status meanwhile: about one slot. */
const FILL_POLL_MS = 400;

/**
 * Quotes for `wallet` (a keypair file), signs the venue's transaction and sends it to the chain; a
 * spot trade is done once it has landed, a prediction-market order once the venue has filled (or
 * reverted) it, which /order-status tells. Ends with the wallet's balances.
 */
export async function tradeCommand(
  request: TradeRequest & { walletFile: string; chain: Chain },
): Promise<TradeOutcome> {
  const user = readKeypairFile(request.walletFile);
  const quoted = await quote(request, user.address);
  const { order } = quoted;
  if (!order.transaction) throw new Error("the venue returned no transaction");
  const signature = await request.chain.sendTransaction(signOrderTransaction(order.transaction, user));
  const fill =
    order.executionMode === "async"
      ? await waitForFill(request, order, signature, order.lastValidBlockHeight)
      : undefined;
  const balance = await walletBalance(request.chain, user.address);
  await nameMints(
    request,
    quoted,
    balance.tokens.map((token) => token.mint),
  );
  return { ...quoted, signature, ...(fill ? { fill } : {}), balance };
}

/** The lines for people that describe a trade's outcome. */
export function describeTrade(outcome: TradeOutcome): string[] {
  const { fill, order, balance } = outcome;
  const name = mintNamer(outcome);
  const ui = (amount: bigint | string, mint: string) =>
    uiAmountString(BigInt(amount), outcome.decimals.get(mint) ?? 0);
  const lines = [...describeOrder(outcome)];
  if (!fill) lines.push(`landed: ${outcome.signature}`);
  else {
    const buying = SETTLEMENT.has(order.inputMint);
    const settlement = buying ? order.inputMint : order.outputMint;
    const outcomeMint = buying ? order.outputMint : order.inputMint;
    const sent = `sent: ${outcome.signature}`;
    if (fill.contracts === 0n) lines.push(sent, `not filled (${fill.status}): nothing traded`);
    else
      lines.push(
        sent,
        `filled (${fill.status}): ${buying ? "bought" : "sold"} ${fill.contracts} ${name(outcomeMint)} contract${fill.contracts === 1n ? "" : "s"} ` +
          `at an average ${ui(fill.averagePrice ?? 0n, settlement)} ${name(settlement)}, ` +
          `${buying ? "paying" : "receiving"} ${ui(buying ? fill.inAmount : fill.outAmount, settlement)} ${name(settlement)}; ` +
          `fees ${ui(fill.fees, settlement)} ${name(settlement)}`,
      );
    for (const revert of fill.reverted)
      lines.push(`  returned unused: ${ui(revert.amount, revert.mint)} ${name(revert.mint)}`);
  }
  lines.push(`${balance.address}: ${balance.sol} SOL`);
  for (const token of balance.tokens) lines.push(`  ${token.uiAmount} ${name(token.mint)}`);
  return lines;
}

/** The quote, for `--json`: the venue's order, with each mint's symbol beside it. */
export function quoteJson(quoted: Quoted): Record<string, unknown> {
  const { transaction: _transaction, ...order } = quoted.order;
  return { ...order, symbols: Object.fromEntries(quoted.symbols) };
}

/** A trade's outcome, for `--json`. */
export function tradeJson(outcome: TradeOutcome): Record<string, unknown> {
  const name = mintNamer(outcome);
  return {
    order: quoteJson(outcome),
    signature: outcome.signature,
    ...(outcome.fill ? { fill: outcome.fill } : {}),
    balance: {
      ...outcome.balance,
      tokens: outcome.balance.tokens.map((token) => ({ ...token, symbol: name(token.mint) })),
    },
  };
}

const SETTLEMENT = new Set<string>([USDC_MINT, CASH_MINT]);

/** Asks /order-status until the order is done (closed, expired or failed) or FILL_WAIT_MS passed. */
async function waitForFill(
  request: TradeRequest,
  order: Order,
  signature: string,
  lastValidBlockHeight: number | undefined,
): Promise<OrderFill> {
  const transport = venueTransport(request);
  const query = {
    signature,
    ...(lastValidBlockHeight !== undefined ? { lastValidBlockHeight } : {}),
  };
  const deadline = Date.now() + FILL_WAIT_MS;
  for (;;) {
    const status = await transport
      .get<OrderStatusResponse>("/order-status", query)
      .catch((error: unknown) => {
        // Recorded when its transaction is seen: until then the venue may not know the signature yet.
        if ((error as { status?: number }).status === 404) return undefined;
        throw venueFailure(request.venueUrl, error, request.apiKey);
      });
    if (status && ["closed", "expired", "failed"].includes(status.status)) return fillOf(order, status);
    if (Date.now() > deadline)
      throw new Error(
        `order ${signature} is still ${status?.status ?? "unknown to the venue"} after ${FILL_WAIT_MS / 1000} s: follow it with GET /order-status?signature=${signature}`,
      );
    await new Promise((resolve) => setTimeout(resolve, FILL_POLL_MS));
  }
}

function fillOf(order: Order, status: OrderStatusResponse): OrderFill {
  const buying = SETTLEMENT.has(order.inputMint);
  const inAmount = BigInt(status.inAmount);
  const outAmount = BigInt(status.outAmount);
  const units = buying ? outAmount : inAmount;
  const contracts = units / CONTRACT_UNITS;
  const value = buying ? inAmount : outAmount;
  const fees = BigInt(order.platformFee?.amount ?? 0);
  return {
    status: status.status,
    inAmount,
    outAmount,
    contracts,
    averagePrice: contracts > 0n ? (value * CONTRACT_UNITS) / units : null,
    fees: contracts > 0n ? fees : 0n,
    reverted: (status.reverts ?? []).map((revert) => ({ mint: revert.mint, amount: BigInt(revert.amount) })),
  };
}

/** Base units per whole contract of an outcome token (6 decimals). */
const CONTRACT_UNITS = 1_000_000n;

function venueTransport(request: Pick<TradeRequest, "venueUrl" | "apiKey">): ApiTransport {
  return new ApiTransport(
    { baseUrl: request.venueUrl, ...(request.apiKey ? { apiKey: request.apiKey } : {}) },
    "",
  );
}

async function quote(request: TradeRequest, userPublicKey?: string): Promise<Quoted> {
  const client = new TradeClient({
    baseUrl: request.venueUrl,
    ...(request.apiKey ? { apiKey: request.apiKey } : {}),
  });
  const failed = (error: unknown) => {
    throw venueFailure(request.venueUrl, error, request.apiKey);
  };
  const decimals = new Map(await client.tokensWithDecimals().catch(failed));
  const inputMint = resolveMint(request.venueSeed, request.input);
  const outputMint = resolveMint(request.venueSeed, request.output);
  const inputDecimals = decimals.get(inputMint) ?? request.inputDecimals;
  if (inputDecimals === undefined)
    throw new Error(`the venue does not trade ${request.input} (${inputMint})`);
  const order = await client
    .order({
      inputMint,
      outputMint,
      amount: parseUiAmount(request.amount, inputDecimals),
      ...(request.slippageBps !== undefined ? { slippageBps: request.slippageBps } : {}),
      ...(userPublicKey ? { userPublicKey } : {}),
    })
    .catch(failed);
  const quoted: Quoted = { order, decimals, symbols: new Map() };
  // What the person typed names its mint (a ticker's outcome is named by nameMints).
  if (!isAddress(request.input)) quoted.symbols.set(inputMint, request.input.toUpperCase());
  if (!isAddress(request.output)) quoted.symbols.set(outputMint, request.output.toUpperCase());
  const legMints = order.routePlan.flatMap((leg) => [leg.inputMint, leg.outputMint]);
  for (const leg of order.routePlan) {
    decimals.set(leg.inputMint, leg.inputMintDecimals);
    decimals.set(leg.outputMint, leg.outputMintDecimals);
  }
  await nameMints(request, quoted, [order.inputMint, order.outputMint, ...legMints]);
  return quoted;
}

/**
 * Finds a name for each of `mints` not yet named: the settlement and demo tokens by symbol, an
 * outcome mint as its market's ticker and side (asked of the prediction-market API; a mint it does
 * not know stays an address).
 */
async function nameMints(request: TradeRequest, quoted: Quoted, mints: readonly string[]): Promise<void> {
  const known = new Map<string, string>([
    [USDC_MINT, "USDC"],
    [CASH_MINT, "CASH"],
    [WRAPPED_SOL_MINT, "SOL"],
    ...demoTokens(request.venueSeed).map((token): [string, string] => [token.address, token.symbol]),
  ]);
  const unnamed = new Set<string>();
  for (const mint of mints) {
    if (quoted.symbols.has(mint)) continue;
    const symbol = known.get(mint);
    if (symbol) quoted.symbols.set(mint, symbol);
    else unnamed.add(mint);
  }
  if (unnamed.size === 0) return;
  const markets = new MarketsClient({
    baseUrl: request.marketsUrl,
    ...(request.apiKey ? { apiKey: request.apiKey } : {}),
  });
  const page = await markets.marketsBatch({ mints: [...unnamed].slice(0, 100) }).catch(() => undefined);
  for (const market of page?.markets ?? []) {
    for (const rail of Object.values(market.accounts)) {
      if (unnamed.has(rail.yesMint)) quoted.symbols.set(rail.yesMint, `${market.ticker} YES`);
      if (unnamed.has(rail.noMint)) quoted.symbols.set(rail.noMint, `${market.ticker} NO`);
    }
  }
}

/** A mint's symbol when known, else its address. */
function mintNamer(quoted: Pick<Quoted, "symbols">): (mint: string) => string {
  return (mint) => quoted.symbols.get(mint) ?? mint;
}

/** The lines for people that describe a quote. */
export function describeOrder(quoted: Quoted): string[] {
  const { order, decimals } = quoted;
  const name = mintNamer(quoted);
  const ui = (amount: string, mint: string) => `${uiAmountString(BigInt(amount), decimals.get(mint) ?? 0)}`;
  return [
    `${ui(order.inAmount, order.inputMint)} ${name(order.inputMint)} -> ${ui(order.outAmount, order.outputMint)} ${name(order.outputMint)}`,
    `  at least ${ui(order.otherAmountThreshold, order.outputMint)} (slippage ${order.slippageBps} bps), price impact ${(Number(order.priceImpactPct) * 100).toFixed(4)}%`,
    ...order.routePlan.map(
      (leg) =>
        `  via ${leg.venue} ${leg.marketKey}: ${ui(leg.inAmount, leg.inputMint)} ${name(leg.inputMint)} -> ${ui(leg.outAmount, leg.outputMint)} ${name(leg.outputMint)}`,
    ),
  ];
}
