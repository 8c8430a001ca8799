/**
 * Escrowed orders in storage. Every state change is a compare-and-set on the current status, so two
 * keepers (two instances, or a keeper and a restart) can never both move an order on.
 */
import type { Address, Signature } from "@solana/kit";
import type { Kysely } from "kysely";
import { parseAddress, parseSignature } from "../../chain/base58.js";
import { insertOnchainTrades, type NewOnchainTrade, onchainTradeOf } from "../../markets/onchain-trades.js";
import type { OrdersTable, Tables } from "../../storage/database.js";
import { batchedWrite } from "../../storage/write-batch.js";
import type { UpstreamTicket } from "../../upstream/portfolio.js";

export type OrderStatus = "pending" | "open" | "pendingClose" | "closed" | "expired" | "failed";

export interface Fill {
  signature: string;
  inputMint: string;
  inAmount: string;
  outputMint: string;
  outAmount: string;
}

export interface Revert {
  signature: string;
  mint: string;
  amount: string;
}

/** What a settling transaction does, recorded before it is sent. */
export interface ClosePlan {
  fill: Omit<Fill, "signature"> | null;
  revert: Omit<Revert, "signature"> | null;
}

/**
 * What an async order (or a market initialization) settles with beyond the common columns, kept in
 * the row's `terms` column.
 */
export interface OrderTerms {
  /** Who receives the revert (the input the order does not use); default the user. */
  revertWallet?: string;
  /** Who receives the output (`destinationWallet`); default the user. */
  receiver?: string;
  /** Who paid the order's lamports (`sponsor`) and gets back what settling leaves; default the user. */
  sponsor?: string;
  /** The market this order initializes on settling, who paid its cost (lamports, held by the escrow authority). */
  init?: {
    ticker: string;
    marketLedger: string;
    yesMint: string;
    noMint: string;
    payer: string;
    cost: string;
    /** Lamports of the fee budget for the user's outcome account, created when the order fills. */
    outcomeAccountRent: string;
  };
  /** The prediction-market builder fee: k = scale/1000, paid in USDC into `account`. */
  builderFee?: { scale: number; account: string };
  /** An intent's platform fee: `bps` of the output a fill pays, into the token account `account`. */
  platformFee?: { bps: number; account: string };
}

export interface OrderRecord {
  id: string;
  /** `intent`, `async` (a prediction-market order) or `init` (a market initialization alone). */
  kind: "intent" | "async" | "init";
  status: OrderStatus;
  user: Address;
  inputMint: Address;
  outputMint: Address;
  inAmount: bigint;
  threshold: bigint;
  escrow: Address;
  openSignature: Signature | null;
  openWire: string | null;
  openValidHeight: bigint;
  openSlot: bigint | null;
  expirySlots: number;
  feeBudget: bigint;
  answer: string | null;
  terms: OrderTerms | null;
  close: { signature: Signature; wire: string; validHeight: bigint; plan: ClosePlan } | null;
  fills: Fill[];
  reverts: Revert[];
  /** Its fill's order on the upstream exchange, when the venue trades there first. */
  upstream: UpstreamFill | null;
}

/** A fill's order on the upstream: the ticket stored before it is placed, then what it filled. */
export interface UpstreamFill {
  ticket: UpstreamTicket;
  /** What the upstream filled (0 contracts, with the reason, when it refused the order), once known. */
  execution: {
    orderId: string;
    filled: number;
    amountMicros: string;
    feesMicros: string;
    refused?: string;
  } | null;
}

export type NewOrder = Omit<
  OrderRecord,
  "openSlot" | "close" | "fills" | "reverts" | "terms" | "upstream"
> & {
  terms?: OrderTerms | null;
};

const now = () => Math.floor(Date.now() / 1000);

function fromRow(row: OrdersTable): OrderRecord {
  return {
    id: row.id,
    kind: row.kind as OrderRecord["kind"],
    status: row.status as OrderStatus,
    user: parseAddress(row.user_key),
    inputMint: parseAddress(row.input_mint),
    outputMint: parseAddress(row.output_mint),
    inAmount: BigInt(row.in_amount),
    threshold: BigInt(row.threshold),
    escrow: parseAddress(row.escrow),
    openSignature: row.open_signature === null ? null : parseSignature(row.open_signature),
    openWire: row.open_wire,
    openValidHeight: BigInt(row.open_valid_height),
    openSlot: row.open_slot === null ? null : BigInt(row.open_slot),
    expirySlots: row.expiry_slots,
    feeBudget: BigInt(row.fee_budget),
    answer: row.answer,
    terms: row.terms === null ? null : (JSON.parse(row.terms) as OrderTerms),
    upstream: row.upstream === null ? null : (JSON.parse(row.upstream) as UpstreamFill),
    close:
      row.close_signature && row.close_wire && row.close_valid_height !== null && row.close_plan
        ? {
            signature: parseSignature(row.close_signature),
            wire: row.close_wire,
            validHeight: BigInt(row.close_valid_height),
            plan: JSON.parse(row.close_plan) as ClosePlan,
          }
        : null,
    fills: JSON.parse(row.fills) as Fill[],
    reverts: JSON.parse(row.reverts) as Revert[],
  };
}

/** The record of an order just stored: not yet opened, settling or settled. */
export function newOrderRecord(order: NewOrder): OrderRecord {
  return {
    ...order,
    terms: order.terms ?? null,
    openSlot: null,
    close: null,
    fills: [],
    reverts: [],
    upstream: null,
  };
}

/**
 * Stores a new order; false when one with its open signature already exists (a resubmission). Like
 * every order write, it commits with the writes issued alongside it (see storage/write-batch.ts).
 */
export async function insertOrder(db: Kysely<Tables>, order: NewOrder): Promise<boolean> {
  const at = now();
  const result = await batchedWrite(db, (db) =>
    db
      .insertInto("orders")
      .values({
        id: order.id,
        kind: order.kind,
        status: order.status,
        user_key: order.user,
        input_mint: order.inputMint,
        output_mint: order.outputMint,
        in_amount: order.inAmount.toString(),
        threshold: order.threshold.toString(),
        escrow: order.escrow,
        open_signature: order.openSignature,
        open_wire: order.openWire,
        open_valid_height: order.openValidHeight.toString(),
        open_slot: null,
        expiry_slots: order.expirySlots,
        fee_budget: order.feeBudget.toString(),
        answer: order.answer,
        terms: order.terms ? JSON.stringify(order.terms) : null,
        close_signature: null,
        close_wire: null,
        close_valid_height: null,
        close_plan: null,
        fills: "[]",
        reverts: "[]",
        created_at: at,
        updated_at: at,
      })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst(),
  );
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** The order whose open transaction has this signature. */
export async function orderBySignature(
  db: Kysely<Tables>,
  signature: string,
): Promise<OrderRecord | undefined> {
  const row = await db
    .selectFrom("orders")
    .selectAll()
    .where("open_signature", "=", signature)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** The order with this id. */
export async function orderById(db: Kysely<Tables>, id: string): Promise<OrderRecord | undefined> {
  const row = await db.selectFrom("orders").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Active orders the keeper reads for one pass at most. */
export const ACTIVE_ORDERS_PER_PASS = 500;

/** Orders not yet in a terminal state, oldest first. */
export async function activeOrders(
  db: Kysely<Tables>,
  limit = ACTIVE_ORDERS_PER_PASS,
): Promise<OrderRecord[]> {
  const rows = await db
    .selectFrom("orders")
    .selectAll()
    .where("status", "in", ["pending", "open", "pendingClose"])
    .orderBy("created_at")
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

/** Settled orders whose escrow is due to be swept back to its user at `nowMs`, the longest due first. */
export async function ordersToSweep(
  db: Kysely<Tables>,
  nowMs: number,
  limit = SWEEPS_PER_PASS,
): Promise<OrderRecord[]> {
  const rows = await db
    .selectFrom("orders")
    .selectAll()
    .where("sweep_after", "is not", null)
    .where("sweep_after", "<=", nowMs)
    .orderBy("sweep_after")
    .limit(limit)
    .execute();
  return rows.map(fromRow);
}

/** Records that an order's escrow was swept (or had nothing left to sweep). */
export async function markSwept(db: Kysely<Tables>, id: string): Promise<void> {
  await batchedWrite(db, (db) =>
    db.updateTable("orders").set({ sweep_after: null }).where("id", "=", id).execute(),
  );
}

/** Escrows swept per keeper pass, at most (the rest on the next passes). */
const SWEEPS_PER_PASS = 64;

/** The escrow authorities of every order not yet in a terminal state: keys the keeper may still sign with. */
export async function activeEscrows(db: Kysely<Tables>): Promise<string[]> {
  const rows = await db
    .selectFrom("orders")
    .select("escrow")
    .where("status", "in", ["pending", "open", "pendingClose"])
    .execute();
  return rows.map((row) => row.escrow);
}

/**
 * Deletes a market initialization still `pending`, unpaid, whose payment can no longer land (the
 * keeper checked both): nothing of it is left to settle or to report. Returns whether it was deleted.
 */
export async function deleteUnpaidInit(db: Kysely<Tables>, id: string): Promise<boolean> {
  const result = await batchedWrite(db, (db) =>
    db
      .deleteFrom("orders")
      .where("id", "=", id)
      .where("kind", "=", "init")
      .where("status", "=", "pending")
      .executeTakeFirst(),
  );
  return result.numDeletedRows > 0n;
}

/** Deletes the unpaid market initializations earlier versions marked `expired` and kept; returns how many. */
export async function deleteExpiredInits(db: Kysely<Tables>): Promise<number> {
  const result = await batchedWrite(db, (db) =>
    db.deleteFrom("orders").where("status", "=", "expired").where("kind", "=", "init").executeTakeFirst(),
  );
  return Number(result.numDeletedRows);
}

/**
 * Records the signature of an async order's open transaction, learnt from the chain (the user sends
 * it); a signature already recorded stays.
 */
export async function recordOpenSignature(
  db: Kysely<Tables>,
  id: string,
  signature: Signature,
): Promise<void> {
  await db
    .updateTable("orders")
    .set({ open_signature: signature })
    .where("id", "=", id)
    .where("open_signature", "is", null)
    .execute();
}

/** Replaces the answer a resubmission of the order's open transaction gets (see IntentDesk). */
export async function recordAnswer(db: Kysely<Tables>, id: string, answer: string): Promise<void> {
  await db.updateTable("orders").set({ answer }).where("id", "=", id).execute();
}

export interface OrderChange {
  status?: OrderStatus;
  /** What a resubmission of the order's open transaction is answered (see IntentDesk). */
  answer?: string;
  openSignature?: Signature;
  /** null: the keeper no longer sends the open transaction (the chain refused it), it only watches for it. */
  openWire?: null;
  openSlot?: bigint;
  close?: OrderRecord["close"];
  fills?: Fill[];
  reverts?: Revert[];
  /** When the keeper may sweep the order's escrow (ms since the epoch); null: swept, or nothing to sweep. */
  sweepAfter?: number | null;
  upstream?: UpstreamFill;
}

/**
 * Applies `change` to `order` if it is still in the status it was read in; returns the order as
 * changed (what a fresh read would give), or undefined when another step moved it first.
 */
export async function advanceOrder(
  db: Kysely<Tables>,
  order: OrderRecord,
  change: OrderChange,
): Promise<OrderRecord | undefined> {
  if (!(await transition(db, order.id, order.status, change, settledTrades(order, change)))) return undefined;
  const { status, answer, openSignature, openSlot, close, fills, reverts, upstream } = change;
  return {
    ...order,
    ...(upstream ? { upstream } : {}),
    ...(status ? { status } : {}),
    ...(answer !== undefined ? { answer } : {}),
    ...(openSignature !== undefined ? { openSignature } : {}),
    ...(openSlot !== undefined ? { openSlot } : {}),
    ...(close !== undefined ? { close } : {}),
    ...(fills ? { fills } : {}),
    ...(reverts ? { reverts } : {}),
  };
}

/**
 * The on-chain trades closing an async (prediction-market) order records: the fills `change` adds,
 * read off the settling transaction that landed.
 */
function settledTrades(order: OrderRecord, change: OrderChange): NewOnchainTrade[] {
  const close = order.close;
  if (order.kind !== "async" || change.status !== "closed" || !close || !change.fills) return [];
  const wire = Buffer.from(close.wire, "base64");
  const at = now();
  return change.fills.slice(order.fills.length).flatMap((fill) => {
    if (fill.signature !== close.signature) return [];
    const trade = onchainTradeOf(
      { ...fill, orderId: order.id, wallet: order.user, orderAccount: order.escrow, wire },
      at,
    );
    return trade ? [trade] : [];
  });
}

/**
 * Applies `change` if the order is still in `from`; returns whether it was. `trades` are recorded
 * with it, in the same transaction, and only if it applied.
 */
export async function transition(
  db: Kysely<Tables>,
  id: string,
  from: OrderStatus,
  change: OrderChange,
  trades: readonly NewOnchainTrade[] = [],
): Promise<boolean> {
  const set: Partial<OrdersTable> = { updated_at: now() };
  if (change.status) set.status = change.status;
  if (change.answer !== undefined) set.answer = change.answer;
  if (change.openSignature !== undefined) set.open_signature = change.openSignature;
  if (change.openWire === null) set.open_wire = null;
  if (change.openSlot !== undefined) set.open_slot = change.openSlot.toString();
  if (change.close !== undefined) {
    set.close_signature = change.close?.signature ?? null;
    set.close_wire = change.close?.wire ?? null;
    set.close_valid_height = change.close ? change.close.validHeight.toString() : null;
    set.close_plan = change.close ? JSON.stringify(change.close.plan) : null;
  }
  if (change.fills) set.fills = JSON.stringify(change.fills);
  if (change.reverts) set.reverts = JSON.stringify(change.reverts);
  if (change.sweepAfter !== undefined) set.sweep_after = change.sweepAfter;
  if (change.upstream) set.upstream = JSON.stringify(change.upstream);
  const update = async (db: Kysely<Tables>) => {
    const result = await db
      .updateTable("orders")
      .set(set)
      .where("id", "=", id)
      .where("status", "=", from)
      .executeTakeFirst();
    if (result.numUpdatedRows > 0n) await insertOnchainTrades(db, trades);
    return result;
  };
  // Inside a group commit the update already runs in a transaction; alone, its trades need one.
  const result = await batchedWrite(db, (db) =>
    trades.length === 0 || db.isTransaction ? update(db) : db.transaction().execute(update),
  );
  return result.numUpdatedRows > 0n;
}
