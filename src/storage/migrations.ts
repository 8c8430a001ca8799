/** One set of schema migrations for SQLite and PostgreSQL, applied in order at start. */
import { type Kysely, type Migration, Migrator } from "kysely";

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
};

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
