/**
 * On-chain trades: the prediction-market fills this venue settled on its chain (reference §3.4,
 * `/onchain-trades`). One row per settling transaction, written in the same database transaction that
 * records its order closed (trading/prediction/order-store.ts), so every instance sharing the database reads the
 * same rows, before and after a restart. A row keeps what the chain did: the mints and amounts, which
 * of them the outcome token is (the one the settlement minted or burnt), what the contracts cost and
 * the builder fee. Which market and side an outcome mint belongs to is the catalogue's, read when
 * the rows are.
 */
import type { Kysely, Selectable } from "kysely";
import { addressOf } from "../chain/base58.js";
import { isTokenProgram } from "../chain/programs.js";
import { parseWireTransaction } from "../chain/wire.js";
import type { OnchainTradesTable, Tables } from "../storage/database.js";
import type { Catalog } from "./catalog.js";

/** A trade as the reference serves it (amounts in each mint's smallest unit, times in Unix seconds). */
export interface OnchainTrade {
  id: number;
  wallet: string;
  transactionSignature: string;
  inputMint: string;
  outputMint: string;
  inputAmount: number;
  outputAmount: number;
  createdAt: number;
  /** The market of the outcome mint; null once the catalogue no longer knows the mint. */
  marketTicker: string | null;
  /** Which outcome token traded, `yes` or `no`; null like `marketTicker`. */
  side: "yes" | "no" | null;
  /** Whole and fractional contracts (outcome units / 10^6). */
  contracts: number;
  /** What one contract cost or fetched, in dollars of the settlement mint, the fee aside. */
  usdPricePerContract: number;
  /** The builder fee, in `feeMint`'s smallest unit (0 without one). */
  feeAmount: number;
  /** The settlement mint the fee (and the price) is in. */
  feeMint: string;
  /** The order's escrow authority. */
  orderAccount: string;
}

/** The ways a page may be sorted: by time, by the trade's value in the settlement mint, by its contracts. */
export const ONCHAIN_TRADE_SORTS = ["createdAt", "amount", "contracts"] as const;
export type OnchainTradeSort = (typeof ONCHAIN_TRADE_SORTS)[number];

const SORT_COLUMNS = {
  createdAt: "created_at",
  amount: "notional",
  contracts: "contracts",
} as const satisfies Record<OnchainTradeSort, keyof OnchainTradesTable>;

/** Outcome tokens have 6 decimals: 10^6 units are one contract (contract §7). */
const CONTRACT_UNITS = 1_000_000;

/** A fill as an order's settlement recorded it (see trading/prediction/order-store.ts). */
export interface SettledFill {
  orderId: string;
  wallet: string;
  orderAccount: string;
  signature: string;
  inputMint: string;
  inAmount: string;
  outputMint: string;
  outAmount: string;
  /** The settling transaction that landed, as sent. */
  wire: Uint8Array;
}

export type NewOnchainTrade = Omit<OnchainTradesTable, "id">;

/** A token movement a settling transaction makes; `source` only for transfers. */
interface TokenMove {
  kind: "mint" | "burn" | "transfer";
  mint: string | undefined;
  source: string | undefined;
  amount: bigint;
}

/** The token-program mints, burns and checked transfers of a wire transaction, in order. */
function tokenMoves(wire: Uint8Array): TokenMove[] {
  const tx = parseWireTransaction(wire);
  const key = (index: number | undefined) => {
    const bytes = index === undefined ? undefined : tx.accountKeys[index];
    return bytes ? addressOf(bytes) : undefined;
  };
  const moves: TokenMove[] = [];
  for (const { programIdIndex, accounts, data } of tx.instructions) {
    const program = key(programIdIndex);
    if (!program || !isTokenProgram(program) || data.length < 9) continue;
    const amount = Buffer.from(data.buffer, data.byteOffset, data.byteLength).readBigUInt64LE(1);
    // SPL Token's instruction tags: MintTo 7 / MintToChecked 14 [mint, account, authority], Burn 8 /
    // BurnChecked 15 [account, mint, authority], TransferChecked 12 [source, mint, destination, authority].
    const tag = data[0];
    if (tag === 7 || tag === 14)
      moves.push({ kind: "mint", mint: key(accounts[0]), source: undefined, amount });
    else if (tag === 8 || tag === 15)
      moves.push({ kind: "burn", mint: key(accounts[1]), source: undefined, amount });
    else if (tag === 12)
      moves.push({ kind: "transfer", mint: key(accounts[1]), source: key(accounts[0]), amount });
  }
  return moves;
}

/**
 * The on-chain trade of a prediction-market fill, read off the transaction that settled it: the
 * outcome mint is the fill's mint it minted (a buy) or burnt (a sale or a redemption), the other is
 * the settlement mint. A buy's first transfer of the settlement mint is the price paid to the venue,
 * the rest of its input the builder fee; a sale's payer sends the user its proceeds and the fee, so
 * the fee is what it sent beyond the proceeds. Null when the transaction minted or burnt neither of
 * the fill's mints: then it was no prediction-market fill.
 */
export function onchainTradeOf(fill: SettledFill, createdAt: number): NewOnchainTrade | null {
  let moves: TokenMove[];
  try {
    moves = tokenMoves(fill.wire);
  } catch {
    // The venue built it, so it parses; were it ever not to, the order must still close.
    return null;
  }
  const outcome = moves.find(
    (move) =>
      (move.kind === "mint" && move.mint === fill.outputMint) ||
      (move.kind === "burn" && move.mint === fill.inputMint),
  );
  if (!outcome?.mint) return null;
  const buy = outcome.kind === "mint";
  const settlementMint = buy ? fill.inputMint : fill.outputMint;
  const inAmount = BigInt(fill.inAmount);
  const outAmount = BigInt(fill.outAmount);
  const payments = moves.filter((move) => move.kind === "transfer" && move.mint === settlementMint);
  let notional: bigint;
  if (buy) {
    notional = payments[0]?.amount ?? inAmount;
  } else {
    const payer = payments[0]?.source;
    const paid = payments
      .filter((move) => move.source === payer)
      .reduce((sum, move) => sum + move.amount, 0n);
    notional = paid > outAmount ? paid : outAmount;
  }
  const fee = buy ? inAmount - notional : notional - outAmount;
  return {
    transaction_signature: fill.signature,
    order_id: fill.orderId,
    wallet: fill.wallet,
    order_account: fill.orderAccount,
    input_mint: fill.inputMint,
    input_amount: inAmount.toString(),
    output_mint: fill.outputMint,
    output_amount: outAmount.toString(),
    outcome_mint: outcome.mint,
    settlement_mint: settlementMint,
    contracts: (buy ? outAmount : inAmount).toString(),
    notional: notional.toString(),
    fee_amount: (fee > 0n ? fee : 0n).toString(),
    created_at: createdAt,
  };
}

/**
 * Records trades; one whose transaction is recorded already is kept as it was, so a write run twice
 * records each once. Call it inside the transaction that records the orders closed.
 */
export async function insertOnchainTrades(
  db: Kysely<Tables>,
  trades: readonly NewOnchainTrade[],
): Promise<void> {
  if (trades.length === 0) return;
  await db
    .insertInto("onchain_trades")
    .values([...trades])
    .onConflict((oc) => oc.column("transaction_signature").doNothing())
    .execute();
}

/** A cursor that names no recorded trade. */
export class UnknownTradeCursorError extends Error {
  override name = "UnknownTradeCursorError";

  constructor(readonly cursor: number) {
    super(`cursor ${cursor} is not the id of a recorded trade; pass the cursor an earlier page returned`);
  }
}

export interface OnchainTradeQuery {
  /** Only trades of these outcome mints (a market's or an event's); undefined: every trade. */
  outcomeMints?: readonly string[];
  wallet?: string;
  /** The least `amount` (the trade's value in the settlement mint's smallest unit, the fee aside). */
  minAmount?: number;
  sortBy: OnchainTradeSort;
  sortOrder: "asc" | "desc";
  limit: number;
  /** The id of the trade the page starts with (the `cursor` of the page before). */
  cursor?: number;
}

export interface OnchainTradePage {
  trades: OnchainTrade[];
  /** The id of the next page's first trade; null on the last page. */
  cursor: string | null;
}

/** The recorded on-chain trades, read for the `/onchain-trades` routes. */
export class OnchainTrades {
  constructor(private readonly db: Kysely<Tables>) {}

  /**
   * A page of trades in the order asked for, ties broken by id the same way. The cursor is a trade
   * (never an offset), so a walk through the pages yields every trade recorded before it began
   * exactly once, however many are recorded meanwhile.
   */
  async page(catalog: Catalog, query: OnchainTradeQuery): Promise<OnchainTradePage> {
    const { db } = this;
    if (query.outcomeMints?.length === 0) return { trades: [], cursor: null };
    const column = SORT_COLUMNS[query.sortBy];
    const order = query.sortOrder;
    let select = db.selectFrom("onchain_trades").selectAll();
    if (query.outcomeMints) select = select.where("outcome_mint", "in", [...query.outcomeMints]);
    if (query.wallet !== undefined) select = select.where("wallet", "=", query.wallet);
    if (query.minAmount !== undefined) select = select.where("notional", ">=", query.minAmount);
    if (query.cursor !== undefined) {
      const start = await db
        .selectFrom("onchain_trades")
        .select(["id", column])
        .where("id", "=", query.cursor)
        .executeTakeFirst();
      if (!start) throw new UnknownTradeCursorError(query.cursor);
      const at = Number(start[column]);
      select = select.where((eb) =>
        eb(eb.refTuple(column, "id"), order === "desc" ? "<=" : ">=", eb.tuple(at, query.cursor as number)),
      );
    }
    const rows = await select
      .orderBy(column, order)
      .orderBy("id", order)
      .limit(query.limit + 1)
      .execute();
    const next = rows.length > query.limit ? rows[query.limit] : undefined;
    return {
      trades: rows.slice(0, query.limit).map((row) => toOnchainTrade(catalog, row)),
      cursor: next ? String(next.id) : null,
    };
  }
}

/** Which outcome of its market `mint` is, and the market; nulls when the catalogue does not know it. */
function outcomeOf(catalog: Catalog, mint: string): { ticker: string | null; side: "yes" | "no" | null } {
  const market = catalog.marketByMint(mint);
  const rails = market?.addresses.rails ?? [];
  const side = rails.some((r) => r.yesMint === mint)
    ? "yes"
    : rails.some((r) => r.noMint === mint)
      ? "no"
      : null;
  return { ticker: side && market ? market.record.ticker : null, side };
}

function toOnchainTrade(catalog: Catalog, row: Selectable<OnchainTradesTable>): OnchainTrade {
  const { ticker, side } = outcomeOf(catalog, row.outcome_mint);
  const contracts = Number(row.contracts);
  return {
    id: Number(row.id),
    wallet: row.wallet,
    transactionSignature: row.transaction_signature,
    inputMint: row.input_mint,
    outputMint: row.output_mint,
    inputAmount: Number(row.input_amount),
    outputAmount: Number(row.output_amount),
    createdAt: Number(row.created_at),
    marketTicker: ticker,
    side,
    contracts: contracts / CONTRACT_UNITS,
    // Both mints have 6 decimals, so units over units is dollars per contract.
    usdPricePerContract: contracts > 0 ? Number(row.notional) / contracts : 0,
    feeAmount: Number(row.fee_amount),
    feeMint: row.settlement_mint,
    orderAccount: row.order_account,
  };
}
