/**
 * The sandbox chain's history as stored: a wallet's transactions newest first (through the history
 * index, written in the same commit as the transactions: `chain_recent_history` for the newest, then
 * `chain_address_transactions`), the transactions of one slot in the order they executed, and
 * transaction counts per slot window. Every read is bounded by an index: the history's primary key
 * (address id, slot, position), chain_transactions' (slot, position), or the recent rows, at most
 * HISTORY_MERGE_EVERY transactions (commit-batch.ts).
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import { dialectOf, type Tables } from "../../storage/database.js";
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
  // Whether a recent row's addresses (a JSON array of base58 strings) name the address: they hold it
  // in quotes, and base58 has no quote, so a match is the whole address.
  private readonly names: (addresses: RawBuilder<unknown>, quoted: string) => RawBuilder<unknown>;

  constructor(private readonly db: Kysely<Tables>) {
    this.names =
      dialectOf(db) === "postgres"
        ? (addresses, quoted) => sql`strpos(${addresses}, ${quoted}) > 0`
        : (addresses, quoted) => sql`instr(${addresses}, ${quoted}) > 0`;
  }

  /**
   * `address`'s transactions, newest first, between the query's bounds: the newest from the recent
   * rows, the rest from the address-ordered index, read in one statement so that a merge between
   * two reads can neither hide nor double a row.
   */
  async forAddress(address: string, query: AddressHistoryQuery): Promise<AddressHistoryEntry[]> {
    const { before, until, limit } = query;
    // The query's bounds on the rows of the table aliased `table`, as (slot, position) pairs.
    const bounded = (table: string) => {
      const slot = sql.ref(`${table}.slot`);
      const position = sql.ref(`${table}.position`);
      const bounds = [];
      if (before) {
        const [s, p] = [Number(before.slot), Number(before.position)];
        bounds.push(sql`and (${slot} < ${s} or (${slot} = ${s} and ${position} < ${p}))`);
      }
      if (until) {
        const [s, p] = [Number(until.slot), Number(until.position)];
        bounds.push(sql`and (${slot} > ${s} or (${slot} = ${s} and ${position} > ${p}))`);
      }
      return sql.join(bounds, sql` `);
    };
    const { rows } = await sql<{
      signature: string;
      slot: number | string | bigint;
      err: string | null;
      block_time: number | string | bigint;
      wire: string;
    }>`
      select "t"."signature", "h"."slot", "t"."err", "t"."block_time", "t"."wire" from (
        select * from (
          select "r"."slot", "r"."position" from "chain_recent_history" as "r"
          where ${this.names(sql.ref("r.addresses"), JSON.stringify(address))} ${bounded("r")}
          order by "r"."position" desc limit ${limit}
        ) as "recent"
        union all
        select * from (
          select "m"."slot", "m"."position" from "chain_addresses" as "a"
          join "chain_address_transactions" as "m" on "m"."address_id" = "a"."id"
          where "a"."address" = ${address} ${bounded("m")}
          order by "m"."slot" desc, "m"."position" desc limit ${limit}
        ) as "merged"
      ) as "h"
      join "chain_transactions" as "t" on "t"."slot" = "h"."slot" and "t"."position" = "h"."position"
      order by "h"."slot" desc, "h"."position" desc limit ${limit}`.execute(this.db);
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
