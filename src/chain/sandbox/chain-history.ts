/**
 * The sandbox chain's history as stored: a wallet's transactions newest first (through
 * `chain_address_signatures`, written in the same commit as the transactions), the transactions of
 * one slot in the order they executed, and transaction counts per slot window. Every read is bounded
 * by an index: the address table's primary key (address, slot, position) or chain_transactions' slot.
 */
import { type Kysely, sql } from "kysely";
import type { Tables } from "../../storage/database.js";
import { encodeBase58 } from "../base58.js";
import type { TransactionError } from "../errors.js";
import { parseWireTransaction } from "../wire.js";

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
      .selectFrom("chain_address_signatures as a")
      .innerJoin("chain_transactions as t", "t.signature", "a.signature")
      .select(["a.signature", "a.slot", "t.err", "t.block_time", "t.wire"])
      .where("a.address", "=", address)
      .orderBy("a.slot", "desc")
      .orderBy("a.position", "desc")
      .limit(query.limit);
    const { before, until } = query;
    if (before) {
      select = select.where((eb) =>
        eb.or([
          eb("a.slot", "<", Number(before.slot)),
          eb.and([eb("a.slot", "=", Number(before.slot)), eb("a.position", "<", Number(before.position))]),
        ]),
      );
    }
    if (until) {
      select = select.where((eb) =>
        eb.or([
          eb("a.slot", ">", Number(until.slot)),
          eb.and([eb("a.slot", "=", Number(until.slot)), eb("a.position", ">", Number(until.position))]),
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

  /**
   * Where the landed transaction `signature` sits, or null if none landed: found through its fee
   * payer's history, which holds every transaction it paid for.
   */
  async positionOf(signature: string): Promise<ChainPosition | null> {
    const landed = await this.db
      .selectFrom("chain_transactions")
      .select(["slot", "wire"])
      .where("signature", "=", signature)
      .executeTakeFirst();
    if (!landed) return null;
    const row = await this.db
      .selectFrom("chain_address_signatures")
      .select("position")
      .where("address", "=", feePayerOf(landed.wire))
      .where("slot", "=", landed.slot)
      .where("signature", "=", signature)
      .executeTakeFirst();
    return row ? { slot: BigInt(landed.slot), position: BigInt(row.position) } : null;
  }

  /** The signatures of the transactions that landed in `slot`, in the order they executed. */
  async signaturesInSlot(slot: bigint): Promise<string[]> {
    const landed = await this.db
      .selectFrom("chain_transactions")
      .select(["signature", "wire"])
      .where("slot", "=", Number(slot))
      .execute();
    if (landed.length === 0) return [];
    const payers = [...new Set(landed.map((row) => feePayerOf(row.wire)))];
    const positions = await this.db
      .selectFrom("chain_address_signatures")
      .select(["signature", "position"])
      .where("address", "in", payers)
      .where("slot", "=", Number(slot))
      .execute();
    const order = new Map(positions.map((row) => [row.signature, Number(row.position)]));
    return landed.map((row) => row.signature).sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0));
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

// The fee payer (first account key) of a base64 wire transaction.
function feePayerOf(wire: string): string {
  const key = parseWireTransaction(new Uint8Array(Buffer.from(wire, "base64"))).accountKeys[0];
  return key ? encodeBase58(key) : "";
}
