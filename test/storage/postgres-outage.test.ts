/**
 * PostgreSQL dropping the venue's connections (a restart, a failover, an administrator) must cost the
 * queries in flight, never the process: postgres.js 3.4.9 threw from a timer, and handed closed
 * connections back to its pool, where every later query on them failed (patches/postgres+3.4.9.patch).
 */
import { sql } from "kysely";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { BACKENDS, type Backend } from "../support/backends.js";
import { POSTGRES_ADMIN_URL, postgresAvailable } from "../support/services.js";

const backend = BACKENDS.find((each) => each.name === "postgres") as Backend;

describe.skipIf(!postgresAvailable)("storage on PostgreSQL when the server drops its connections", () => {
  let storage: Storage;
  let cleanup: () => Promise<void>;
  let database: string;
  const admin = postgres(POSTGRES_ADMIN_URL, { max: 1, onnotice: () => {} });

  beforeAll(async () => {
    const created = await backend.create();
    cleanup = created.cleanup;
    database = new URL(created.settings.DATABASE_URL as string).pathname.slice(1);
    storage = await openStorage(loadConfig({}, created.settings));
  });
  afterAll(async () => {
    await storage?.close();
    await cleanup?.();
    await admin.end();
  });

  /** Ends every server process of the test's database, as a restart does. */
  const dropConnections = () =>
    admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${database}`;
  const read = () => sql<{ one: number }>`select 1 as one`.execute(storage.db);

  it("fails only the queries in flight, then answers every query again on fresh connections", async () => {
    for (let round = 0; round < 5; round += 1) {
      // Fill the pool, so that every connection is in use or idle when the server drops it.
      await Promise.allSettled(Array.from({ length: 20 }, read));
      const during = Array.from({ length: 20 }, () =>
        read().then(
          () => "answered",
          () => "failed",
        ),
      );
      await dropConnections();
      const outcomes = await Promise.all(during);
      expect(outcomes.every((outcome) => outcome === "answered" || outcome === "failed")).toBe(true);
      // Each connection that was dropped fails at most the query it carried; the pool then reconnects.
      const after: string[] = [];
      for (let attempt = 0; attempt < 40 && after.filter((o) => o === "answered").length < 20; attempt += 1) {
        after.push(
          await read().then(
            () => "answered",
            (error: Error) => error.message,
          ),
        );
      }
      expect(after.filter((outcome) => outcome !== "answered").length).toBeLessThanOrEqual(10);
      expect(after.slice(-20).every((outcome) => outcome === "answered")).toBe(true);
    }
  });
});
