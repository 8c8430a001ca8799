/** One set of schema migrations for SQLite and PostgreSQL, applied in order at start. */
import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit";
import { type Kysely, type Migration, Migrator, PostgresAdapter, sql } from "kysely";

const migrations: Record<string, Migration> = {
  "0001_catalogue": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("meta")
        .addColumn("key", "varchar(64)", (c) => c.primaryKey())
        .addColumn("value", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("series")
        .addColumn("ticker", "varchar(128)", (c) => c.primaryKey())
        .addColumn("data", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("events")
        .addColumn("ticker", "varchar(128)", (c) => c.primaryKey())
        .addColumn("series_ticker", "varchar(128)", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("markets")
        .addColumn("ticker", "varchar(160)", (c) => c.primaryKey())
        .addColumn("event_ticker", "varchar(128)", (c) => c.notNull())
        .addColumn("market_ledger", "varchar(44)", (c) => c.notNull())
        .addColumn("yes_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("no_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("markets_event_ticker").on("markets").column("event_ticker").execute();
      await db.schema.createIndex("events_series_ticker").on("events").column("series_ticker").execute();
    },
  },
  "0002_api_keys": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("api_keys")
        .addColumn("id", "varchar(32)", (c) => c.primaryKey())
        .addColumn("name", "varchar(128)", (c) => c.notNull())
        .addColumn("tier", "varchar(16)", (c) => c.notNull())
        .addColumn("streams", "integer", (c) => c.notNull())
        .addColumn("secret_prefix", "varchar(16)", (c) => c.notNull())
        .addColumn("hash", "varchar(64)", (c) => c.notNull().unique())
        .addColumn("previous_hash", "varchar(64)")
        .addColumn("previous_valid_until", "varchar(32)")
        .addColumn("created_at", "varchar(32)", (c) => c.notNull())
        .addColumn("revoked_at", "varchar(32)")
        .addColumn("last_used_at", "varchar(32)")
        .execute();
      await db.schema.createIndex("api_keys_previous_hash").on("api_keys").column("previous_hash").execute();
    },
  },
  "0003_chain": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // Every account the sandbox chain holds, as of its last committed transaction.
      await db.schema
        .createTable("chain_accounts")
        .addColumn("address", "varchar(44)", (c) => c.primaryKey())
        .addColumn("lamports", "varchar(20)", (c) => c.notNull())
        .addColumn("owner", "varchar(44)", (c) => c.notNull())
        .addColumn("executable", "integer", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .execute();
      // Every landed transaction (succeeded, or failed with its fee charged), keyed by first signature.
      await db.schema
        .createTable("chain_transactions")
        .addColumn("signature", "varchar(88)", (c) => c.primaryKey())
        .addColumn("slot", "bigint", (c) => c.notNull())
        .addColumn("block_time", "bigint", (c) => c.notNull())
        .addColumn("err", "text")
        .addColumn("fee", "varchar(20)", (c) => c.notNull())
        .addColumn("compute_units", "varchar(20)", (c) => c.notNull())
        .addColumn("logs", "text", (c) => c.notNull())
        .addColumn("balances", "text", (c) => c.notNull())
        .addColumn("wire", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("chain_transactions_slot")
        .on("chain_transactions")
        .column("slot")
        .execute();
    },
  },
  "0004_trading": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // Every mint that ever had a pool; rows are never deleted (contract §6, /tokens-with-decimals).
      await db.schema
        .createTable("trading_tokens")
        .addColumn("mint", "varchar(44)", (c) => c.primaryKey())
        .addColumn("decimals", "integer", (c) => c.notNull())
        .addColumn("program", "varchar(44)", (c) => c.notNull())
        .addColumn("listed_at", "bigint", (c) => c.notNull())
        .execute();
      // Constant-product pools; the address is the pool authority, owner of the two vaults.
      await db.schema
        .createTable("pools")
        .addColumn("address", "varchar(44)", (c) => c.primaryKey())
        .addColumn("venue", "varchar(32)", (c) => c.notNull())
        .addColumn("key_id", "varchar(32)", (c) => c.notNull())
        .addColumn("mint_a", "varchar(44)", (c) => c.notNull())
        .addColumn("mint_b", "varchar(44)", (c) => c.notNull())
        .addColumn("fee_bps", "integer", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("removed_at", "bigint")
        .execute();
    },
  },
  "0005_orders": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // Escrowed orders (intents and async prediction-market orders) and their settlement.
      await db.schema
        .createTable("orders")
        .addColumn("id", "varchar(32)", (c) => c.primaryKey())
        .addColumn("kind", "varchar(16)", (c) => c.notNull())
        .addColumn("status", "varchar(16)", (c) => c.notNull())
        .addColumn("user_key", "varchar(44)", (c) => c.notNull())
        .addColumn("input_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("output_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("in_amount", "varchar(20)", (c) => c.notNull())
        .addColumn("threshold", "varchar(20)", (c) => c.notNull())
        .addColumn("escrow", "varchar(44)", (c) => c.notNull())
        .addColumn("open_signature", "varchar(88)", (c) => c.unique())
        .addColumn("open_wire", "text")
        .addColumn("open_valid_height", "bigint", (c) => c.notNull())
        .addColumn("open_slot", "bigint")
        .addColumn("expiry_slots", "integer", (c) => c.notNull())
        .addColumn("fee_budget", "varchar(20)", (c) => c.notNull())
        .addColumn("answer", "text")
        .addColumn("close_signature", "varchar(88)")
        .addColumn("close_wire", "text")
        .addColumn("close_valid_height", "bigint")
        .addColumn("close_plan", "text")
        .addColumn("fills", "text", (c) => c.notNull())
        .addColumn("reverts", "text", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .addColumn("updated_at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("orders_status").on("orders").column("status").execute();
    },
  },
  "0006_chain_lease": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // One row (id 1): the process that runs the sandbox chain of this database (see
      // chain/sandbox/lease.ts). `epoch` grows on every takeover; `expires_at` is in milliseconds
      // since 1970 by the database's clock, so hosts whose clocks differ still agree on it.
      await db.schema
        .createTable("chain_lease")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("holder", "varchar(128)", (c) => c.notNull())
        .addColumn("host", "varchar(255)", (c) => c.notNull())
        .addColumn("pid", "integer", (c) => c.notNull())
        .addColumn("rpc_url", "varchar(255)")
        .addColumn("epoch", "bigint", (c) => c.notNull())
        .addColumn("expires_at", "bigint", (c) => c.notNull())
        .execute();
    },
  },
  "0007_order_terms": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // What an async order or a market initialization settles with beyond the common columns (JSON).
      await db.schema.alterTable("orders").addColumn("terms", "text").execute();
    },
  },
  "0008_verified_wallets": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // The wallets the operator verified (the reference's Proof check), when and why. Every instance
      // polls the `verified_wallets_version` counter in `meta` and rereads this table when it moves.
      await db.schema
        .createTable("verified_wallets")
        .addColumn("address", "varchar(44)", (c) => c.primaryKey())
        .addColumn("note", "text")
        .addColumn("verified_at", "varchar(32)", (c) => c.notNull())
        .execute();
    },
  },
  "0009_onchain_trades": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // The prediction-market fills this venue settled on its chain, one per settling transaction
      // (see markets/onchain-trades.ts). The id is the reference's integer trade id and paging cursor:
      // each dialect spells an ascending key its own way.
      const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
      await db.schema
        .createTable("onchain_trades")
        .addColumn("id", postgres ? "bigint" : "integer", (c) =>
          postgres ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement(),
        )
        .addColumn("transaction_signature", "varchar(88)", (c) => c.notNull().unique())
        .addColumn("order_id", "varchar(32)", (c) => c.notNull())
        .addColumn("wallet", "varchar(44)", (c) => c.notNull())
        .addColumn("order_account", "varchar(44)", (c) => c.notNull())
        .addColumn("input_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("input_amount", "bigint", (c) => c.notNull())
        .addColumn("output_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("output_amount", "bigint", (c) => c.notNull())
        .addColumn("outcome_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("settlement_mint", "varchar(44)", (c) => c.notNull())
        .addColumn("contracts", "bigint", (c) => c.notNull())
        .addColumn("notional", "bigint", (c) => c.notNull())
        .addColumn("fee_amount", "bigint", (c) => c.notNull())
        .addColumn("created_at", "bigint", (c) => c.notNull())
        .execute();
      for (const column of ["wallet", "outcome_mint", "created_at"]) {
        await db.schema.createIndex(`onchain_trades_${column}`).on("onchain_trades").column(column).execute();
      }
    },
  },
  "0010_market_versions": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // The catalogue version that last wrote each market: a reload reads only the rows written since
      // the version it holds (see markets/store.ts). Rows from before are 0, read by every full load.
      await db.schema
        .alterTable("markets")
        .addColumn("changed_version", "integer", (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex("markets_changed_version")
        .on("markets")
        .column("changed_version")
        .execute();
    },
  },
  "0011_cash_rail": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // The CASH rail's addresses, derived from the USDC ledger when the row is written: deriving them
      // at every load was 1.9 s of a 250,000-market start. Rows stored without them are filled at
      // start (markets/store.ts, fillCashRails), found through the partial index.
      for (const column of ["cash_market_ledger", "cash_yes_mint", "cash_no_mint"])
        await db.schema.alterTable("markets").addColumn(column, "varchar(44)").execute();
      await db.schema
        .createIndex("markets_without_cash_rail")
        .on("markets")
        .column("ticker")
        .where(sql.ref("cash_market_ledger"), "is", null)
        .execute();
    },
  },
  "0012_message_hash": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // Each landed transaction's message hash, so that a restarted chain refuses a re-signed copy
      // of a message it executed (chain/sandbox/signature-statuses.ts). Rows from before are hashed
      // from their wire when loaded.
      await db.schema.alterTable("chain_transactions").addColumn("message_hash", "varchar(44)").execute();
    },
  },
  "0013_signatures_by_address": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // Every account key of every landed transaction (getSignaturesForAddress): read newest first
      // by (address, slot, position) through the primary key, never by a scan. `position` numbers
      // landed transactions in the order they executed, so it orders a slot's transactions.
      // On SQLite the rows live in the key's own B-tree (WITHOUT ROWID): one write per row instead
      // of a table row and an index entry, on the chain's commit path.
      const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
      await db.schema
        .createTable("chain_address_signatures")
        .addColumn("address", "varchar(44)", (c) => c.notNull())
        .addColumn("slot", "bigint", (c) => c.notNull())
        .addColumn("position", "bigint", (c) => c.notNull())
        .addColumn("signature", "varchar(88)", (c) => c.notNull())
        .addPrimaryKeyConstraint("chain_address_signatures_key", ["address", "slot", "position"])
        .$call((table) => (postgres ? table : table.modifyEnd(sql`without rowid`)))
        .execute();
      await indexLandedTransactions(db);
    },
  },
  "0014_transaction_meta": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // What execution alone knows of each landed transaction (chain/sandbox/transaction-meta.ts):
      // token balances, inner instructions, return data, loaded addresses, as JSON. Rows from
      // before hold null and answer with empty arrays.
      await db.schema.alterTable("chain_transactions").addColumn("meta", "text").execute();
    },
  },
  "0015_address_ids": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // The address index keyed by small integers: each address is stored once (chain_addresses),
      // and a history row is (address id, slot, position), a tenth of 0013's row with the address
      // and signature as text. Every commit writes a row per account key on the leaf of that key's
      // history, so the rows' size is most of what a commit writes. A transaction's signature is
      // found through its (slot, position), which now sits in chain_transactions.
      const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
      await db.schema
        .createTable("chain_addresses")
        .addColumn("id", postgres ? "bigserial" : "integer", (c) => c.primaryKey())
        .addColumn("address", "varchar(44)", (c) => c.notNull().unique())
        .execute();
      await db.schema
        .createTable("chain_address_transactions")
        .addColumn("address_id", "bigint", (c) => c.notNull())
        .addColumn("slot", "bigint", (c) => c.notNull())
        .addColumn("position", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("chain_address_transactions_key", ["address_id", "slot", "position"])
        .$call((table) => (postgres ? table : table.modifyEnd(sql`without rowid`)))
        .execute();
      await db.schema.alterTable("chain_transactions").addColumn("position", "bigint").execute();
      await db.schema
        .createIndex("chain_address_signatures_signature")
        .on("chain_address_signatures")
        .column("signature")
        .execute();
      await sql`update "chain_transactions" set "position" = (select min("s"."position") from "chain_address_signatures" as "s" where "s"."signature" = "chain_transactions"."signature")`.execute(
        db,
      );
      await sql`insert into "chain_addresses" ("address") select "address" from "chain_address_signatures" group by "address" order by min("position")`.execute(
        db,
      );
      await sql`insert into "chain_address_transactions" ("address_id", "slot", "position") select "a"."id", "s"."slot", "s"."position" from "chain_address_signatures" as "s" join "chain_addresses" as "a" on "a"."address" = "s"."address"`.execute(
        db,
      );
      await db.schema.dropTable("chain_address_signatures").execute();
      // A slot's transactions in the order they executed, and a history row's transaction.
      await db.schema.dropIndex("chain_transactions_slot").execute();
      await db.schema
        .createIndex("chain_transactions_position")
        .on("chain_transactions")
        .columns(["slot", "position"])
        .execute();
    },
  },
  "0016_escrow_sweep": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // An intent's escrow stays open after it settles, for its client to read from /submit-intent's
      // orderAddress, until the keeper sweeps it back to its user after this time (ms since the
      // epoch); null once swept, and for every other order. Only the unswept few are indexed.
      await db.schema.alterTable("orders").addColumn("sweep_after", "bigint").execute();
      await sql`create index "orders_sweep_after" on "orders" ("sweep_after") where "sweep_after" is not null`.execute(
        db,
      );
    },
  },
  "0017_upstream_fills": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // A prediction-market order's fill on the upstream exchange: its ticket, written before the
      // order is placed (so a restart places it again under the same client order id, never a second
      // one), then what it filled, which the order's settlement follows.
      await db.schema.alterTable("orders").addColumn("upstream", "text").execute();
    },
  },
  "0018_recent_history": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // The history index's newest rows in the order they land (commit-batch.ts, HISTORY_MERGE_EVERY):
      // a commit appends here, and every so many transactions they move to chain_address_transactions.
      const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
      await db.schema
        .createTable("chain_recent_history")
        .addColumn("position", "bigint", (c) => c.notNull())
        .addColumn("address", "varchar(44)", (c) => c.notNull())
        .addColumn("slot", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("chain_recent_history_key", ["position", "address"])
        .$call((table) => (postgres ? table : table.modifyEnd(sql`without rowid`)))
        .execute();
    },
  },
  "0019_recent_history_per_transaction": {
    // biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
    async up(db: Kysely<any>) {
      // The newest history as one row per transaction, its addresses a JSON array: a commit appends
      // one row for each transaction instead of one for each address it names. The rows of 0018's
      // shape move to the address-ordered index first, as a merge would move them.
      const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
      await sql`insert into "chain_addresses" ("address") select distinct "address" from "chain_recent_history" where true on conflict ("address") do nothing`.execute(
        db,
      );
      await sql`insert into "chain_address_transactions" ("address_id", "slot", "position") select "a"."id", "r"."slot", "r"."position" from "chain_recent_history" as "r" join "chain_addresses" as "a" on "a"."address" = "r"."address" order by "a"."id", "r"."slot", "r"."position"`.execute(
        db,
      );
      await db.schema.dropTable("chain_recent_history").execute();
      await db.schema
        .createTable("chain_recent_history")
        .addColumn("position", "bigint", (c) => c.primaryKey())
        .addColumn("addresses", "text", (c) => c.notNull())
        .addColumn("slot", "bigint", (c) => c.notNull())
        .$call((table) => (postgres ? table : table.modifyEnd(sql`without rowid`)))
        .execute();
    },
  },
};

// Transactions read per backfill step, and index rows per insert (4 columns: well under both bounds).
const BACKFILL_TRANSACTIONS = 500;
const BACKFILL_ROWS_PER_INSERT = 400;

// Indexes the transactions stored before 0013, oldest first, in bounded steps (keyset paging on
// slot and signature). Their static account keys only: a lookup table's contents when they ran are
// not stored, and the sandbox chain stored no v0 transactions with lookups before this.
// biome-ignore lint/suspicious/noExplicitAny: migrations see the schema as it was then
async function indexLandedTransactions(db: Kysely<any>): Promise<void> {
  let after: { slot: number; signature: string } | null = null;
  let position = 0;
  for (;;) {
    let query = db
      .selectFrom("chain_transactions")
      .select(["signature", "slot", "wire"])
      .orderBy("slot")
      .orderBy("signature")
      .limit(BACKFILL_TRANSACTIONS);
    const from = after;
    if (from) {
      query = query.where((eb) =>
        eb.or([
          eb("slot", ">", from.slot),
          eb.and([eb("slot", "=", from.slot), eb("signature", ">", from.signature)]),
        ]),
      );
    }
    const rows: { signature: string; slot: number | string; wire: string }[] = await query.execute();
    const entries = rows.flatMap((row, i) =>
      staticAccountKeys(row.wire).map((address) => ({
        address,
        slot: Number(row.slot),
        position: position + i,
        signature: row.signature,
      })),
    );
    for (let i = 0; i < entries.length; i += BACKFILL_ROWS_PER_INSERT) {
      await db
        .insertInto("chain_address_signatures")
        .values(entries.slice(i, i + BACKFILL_ROWS_PER_INSERT))
        .execute();
    }
    position += rows.length;
    const last = rows.at(-1);
    if (!last || rows.length < BACKFILL_TRANSACTIONS) return;
    after = { slot: Number(last.slot), signature: last.signature };
  }
}

// The distinct static account keys of a base64 wire transaction (a key appears once per message).
function staticAccountKeys(wire: string): string[] {
  const { messageBytes } = getTransactionDecoder().decode(Buffer.from(wire, "base64"));
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  return [...new Set(message.staticAccounts.map((key) => String(key)))];
}

/** Applies every pending migration; throws with the failing migration's name. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before the typed schema exists
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`database migration ${failed} failed: ${(error as Error).message ?? String(error)}`);
  }
}
