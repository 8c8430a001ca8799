/** Change counters in the `meta` table: a writer bumps one in its transaction, readers poll it. */
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
