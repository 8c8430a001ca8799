/** Values in the `meta` table: change counters (a writer bumps one in its transaction, readers poll it) and settings fixed on first use. */
import { type Kysely, sql } from "kysely";
import type { Tables } from "./database.js";

/** Reads a counter (0 when it was never bumped). */
export async function readCounter(db: Kysely<Tables>, name: string): Promise<number> {
  const row = await db.selectFrom("meta").select("value").where("key", "=", name).executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/** Increments a counter atomically; call it inside the transaction whose change it announces. */
export async function bumpCounter(db: Kysely<Tables>, name: string): Promise<void> {
  await db
    .insertInto("meta")
    .values({ key: name, value: "1" })
    .onConflict((oc) =>
      oc
        .column("key")
        .doUpdateSet({ value: sql<string>`cast(cast(meta.value as integer) + 1 as varchar(20))` }),
    )
    .execute();
}

/** The stored value of a `meta` key, storing `proposed` first if the key is new (first writer wins). */
export async function settleMetaValue(db: Kysely<Tables>, key: string, proposed: string): Promise<string> {
  await db
    .insertInto("meta")
    .values({ key, value: proposed })
    .onConflict((oc) => oc.column("key").doNothing())
    .execute();
  const row = await db.selectFrom("meta").select("value").where("key", "=", key).executeTakeFirstOrThrow();
  return row.value;
}
