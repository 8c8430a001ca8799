/**
 * The sandbox chain's history as stored: a wallet's transactions newest first (through
 * `chain_address_transactions`, written in the same commit as the transactions), the transactions of
 * one slot in the order they executed, and transaction counts per slot window. Every read is bounded
 * by an index: the history's primary key (address id, slot, position) or chain_transactions'
 * (slot, position).
 */
import { type Kysely, sql } from "kysely";
import type { Tables } from "../../storage/database.js";
import type { TransactionError } from "../errors.js";

/** Where a transaction sits in the chain: its slot, then how many transactions landed before it. */
export interface ChainPosition {
  slot: bigint;
  position: bigint;
}

/** One entry of an address's history. */
export interface AddressHistoryEntry {
  signature: string;
  slot: bigint;
  err: TransactionError | null;
  blockTime: number;
  wire: Uint8Array;
}

export interface AddressHistoryQuery {
  /** Only transactions before this one (exclusive). */
  before?: ChainPosition;
  /** Only transactions after this one (exclusive). */
  until?: ChainPosition;
  limit: number;
}

/** Reads of the stored history (see the module comment). */
export class ChainHistory {
  constructor(private readonly db: Kysely<Tables>) {}

  /** `address`'s transactions, newest first, between the query's bounds. */
  async forAddress(address: string, query: AddressHistoryQuery): Promise<AddressHistoryEntry[]> {
    let select = this.db
      .selectFrom("chain_addresses as a")
      .innerJoin("chain_address_transactions as h", "h.address_id", "a.id")
      .innerJoin("chain_transactions as t", (join) =>
        join.onRef("t.slot", "=", "h.slot").onRef("t.position", "=", "h.position"),
      )
      .select(["t.signature", "h.slot", "t.err", "t.block_time", "t.wire"])
      .where("a.address", "=", address)
      .orderBy("h.slot", "desc")
      .orderBy("h.position", "desc")
      .limit(query.limit);
    const { before, until } = query;
    if (before) {
      select = select.where((eb) =>
        eb.or([
          eb("h.slot", "<", Number(before.slot)),
          eb.and([eb("h.slot", "=", Number(before.slot)), eb("h.position", "<", Number(before.position))]),
        ]),
      );
    }
    if (until) {
      select = select.where((eb) =>
        eb.or([
          eb("h.slot", ">", Number(until.slot)),
          eb.and([eb("h.slot", "=", Number(until.slot)), eb("h.position", ">", Number(until.position))]),
        ]),
      );
    }
    const rows = await select.execute();
    return rows.map((row) => ({
      signature: row.signature,
      slot: BigInt(row.slot),
      err: row.err === null ? null : (JSON.parse(row.err) as TransactionError),
      blockTime: Number(row.block_time),
      wire: new Uint8Array(Buffer.from(row.wire, "base64")),
    }));
  }

  /** Where the landed transaction `signature` sits, or null if none landed. */
  async positionOf(signature: string): Promise<ChainPosition | null> {
    const landed = await this.db
      .selectFrom("chain_transactions")
      .select(["slot", "position"])
      .where("signature", "=", signature)
      .executeTakeFirst();
    return landed ? { slot: BigInt(landed.slot), position: BigInt(landed.position) } : null;
  }

  /** The signatures of the transactions that landed in `slot`, in the order they executed. */
  async signaturesInSlot(slot: bigint): Promise<string[]> {
    const landed = await this.db
      .selectFrom("chain_transactions")
      .select("signature")
      .where("slot", "=", Number(slot))
      .orderBy("position")
      .execute();
    return landed.map((row) => row.signature);
  }

  /**
   * How many transactions landed in each window of `windowSlots` slots from `fromSlot` on (window
   * k covers slots k*windowSlots to (k+1)*windowSlots - 1); windows with none are absent.
   */
  async countsPerWindow(fromSlot: bigint, windowSlots: number): Promise<Map<bigint, number>> {
    const rows = await this.db
      .selectFrom("chain_transactions")
      // The width inlined as an integer literal: SQLite binds a JavaScript number as a real, and
      // would divide as reals.
      .select((eb) => [
        sql<number>`"slot" / ${sql.lit(windowSlots)}`.as("slot_window"),
        eb.fn.countAll().as("count"),
      ])
      .where("slot", ">=", Number(fromSlot))
      .groupBy("slot_window")
      .execute();
    return new Map(rows.map((row) => [BigInt(row.slot_window), Number(row.count)]));
  }
}
