/**
 * PostgreSQL dropping the venue's connections (a restart, a failover, an administrator) must cost the
 * queries in flight, never the process nor the pool: postgres.js 3.4.9 threw from a timer, handed
 * closed connections back to its pool, and, once the server had refused connections for a while, let
 * requests it had already failed take the connections that came back, until none was left
 * (patches/postgres+3.4.9.patch).
 */
import { sql } from "kysely";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { BACKENDS, type Backend } from "../support/backends.js";
import { POSTGRES_ADMIN_URL, postgresAvailable } from "../support/services.js";
import { CuttableProxy, proxied, targetOf } from "../support/tcp-proxy.js";

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

  it("answers again once a server that refused every connection for seconds is back", async () => {
    const created = await backend.create();
    const url = created.settings.DATABASE_URL as string;
    const proxy = new CuttableProxy(targetOf(url));
    await proxy.open();
    const behind = await openStorage(
      loadConfig({}, { DATA_DIR: "unused", DATABASE_URL: proxied(url, proxy) }),
    );
    const readBehind = () => sql<{ one: number }>`select 1 as one`.execute(behind.db);
    try {
      await Promise.all(Array.from({ length: 20 }, readBehind));
      await proxy.cut();
      // Requests keep coming while the server is away, as an instance's do: each fails or waits.
      const during: Promise<unknown>[] = [];
      for (let tick = 0; tick < 30; tick += 1) {
        during.push(...Array.from({ length: 5 }, () => readBehind().catch(() => "failed")));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await proxy.open();
      await expect
        .poll(
          () =>
            readBehind().then(
              () => "answered",
              () => "failed",
            ),
          { timeout: 15_000, interval: 100 },
        )
        .toBe("answered");
      // Every connection of the pool serves again: twenty reads at once all answer.
      const again = await Promise.all(Array.from({ length: 20 }, readBehind));
      expect(again.map((result) => result.rows[0]?.one)).toEqual(Array(20).fill(1));
      await Promise.all(during);
    } finally {
      await behind.close();
      await proxy.cut();
      await created.cleanup();
    }
  });

  it("survives connections dropped while they fetch the server's types, and then answers", async () => {
    const created = await backend.create();
    const url = created.settings.DATABASE_URL as string;
    // postgres.js reads the array types on each new connection, from a message handler nothing awaits.
    let dropped = 0;
    const proxy = new CuttableProxy(targetOf(url), (fromClient) => {
      if (!fromClient.includes("pg_catalog.pg_type") || dropped === 6) return false;
      dropped += 1;
      return true;
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    await proxy.open();
    const behind = await openStorage(
      loadConfig({}, { DATA_DIR: "unused", DATABASE_URL: proxied(url, proxy) }),
    ).catch((error: Error) => error);
    try {
      expect(behind).not.toBeInstanceOf(Error);
      const storageBehind = behind as Storage;
      const readBehind = () => sql<{ one: number }>`select 1 as one`.execute(storageBehind.db);
      const answers = await Promise.all(Array.from({ length: 10 }, readBehind));
      expect(answers.map((result) => result.rows[0]?.one)).toEqual(Array(10).fill(1));
      expect(dropped).toBeGreaterThan(0);
      // A turn of the event loop lets any rejection nothing handled reach the process.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      if (!(behind instanceof Error)) await behind.close();
      await proxy.cut();
      await created.cleanup();
    }
  });
});
