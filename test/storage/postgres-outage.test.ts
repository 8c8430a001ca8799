/**
 * PostgreSQL dropping the venue's connections (a restart, a failover, an administrator, a network
 * cut) must cost the queries in flight, never the process nor the pool. The driver before pg,
 * postgres.js 3.4.9, threw from a timer, handed closed connections back to its pool, and, once the
 * server had refused connections for a while, let requests it had already failed take the
 * connections that came back, until none was left; it was patched. pg is not: these decide.
 */
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { storageOutageCode } from "../../src/storage/outage.js";
import { BACKENDS, type Backend } from "../support/backends.js";
import { adminQuery, postgresAvailable } from "../support/services.js";
import { CuttableProxy, proxied, targetOf } from "../support/tcp-proxy.js";

const backend = BACKENDS.find((each) => each.name === "postgres") as Backend;

describe.skipIf(!postgresAvailable)("storage on PostgreSQL when the server drops its connections", () => {
  let storage: Storage;
  let cleanup: () => Promise<void>;
  let database: string;

  beforeAll(async () => {
    const created = await backend.create();
    cleanup = created.cleanup;
    database = new URL(created.settings.DATABASE_URL as string).pathname.slice(1);
    storage = await openStorage(loadConfig({}, created.settings));
  });
  afterAll(async () => {
    await storage?.close();
    await cleanup?.();
  });

  /** Ends every server process of the test's database, as a restart does. */
  const dropConnections = () =>
    adminQuery("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", [database]);
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

  /** Opens storage on a fresh database behind `proxy`; the caller closes both. */
  async function behindProxy(dropWhen?: (fromClient: Buffer) => boolean) {
    const created = await backend.create();
    const url = created.settings.DATABASE_URL as string;
    const proxy = new CuttableProxy(targetOf(url), dropWhen);
    await proxy.open();
    const behind = await openStorage(
      loadConfig({}, { DATA_DIR: "unused", DATABASE_URL: proxied(url, proxy) }),
    );
    const done = async () => {
      await behind.close();
      await proxy.cut();
      await created.cleanup();
    };
    return { proxy, behind, done };
  }

  /** Collects what reaches the process unhandled while `body` runs, and a turn of the event loop after. */
  async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      await body();
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
    return unhandled;
  }

  it("fails a query whose socket is cut while the server runs it as an outage, and answers the next", async () => {
    const { proxy, behind, done } = await behindProxy();
    try {
      const unhandled = await unhandledDuring(async () => {
        await Promise.all(Array.from({ length: 10 }, () => sql`select 1`.execute(behind.db)));
        const slow = sql`select pg_sleep(1)`.execute(behind.db).then(
          () => undefined,
          (error: unknown) => error,
        );
        const idleInTransaction = behind.db
          .transaction()
          .execute(async (trx) => {
            await sql`select 1`.execute(trx);
            // The connection is checked out and idle when the cut comes: pg emits 'error' on it.
            await new Promise((resolve) => setTimeout(resolve, 400));
            await sql`select 1`.execute(trx);
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        await new Promise((resolve) => setTimeout(resolve, 200));
        await proxy.cut();
        const [slowError, transactionError] = await Promise.all([slow, idleInTransaction]);
        expect(storageOutageCode(slowError)).toBeDefined();
        expect(storageOutageCode(transactionError)).toBeDefined();
        // While the server is out of reach, a query fails as an outage too (it is refused).
        const refused = await sql`select 1`.execute(behind.db).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(storageOutageCode(refused)).toBeDefined();
        await proxy.open();
        const answers = await Promise.all(
          Array.from({ length: 20 }, () => sql<{ one: number }>`select 1 as one`.execute(behind.db)),
        );
        expect(answers.map((result) => result.rows[0]?.one)).toEqual(Array(20).fill(1));
      });
      expect(unhandled).toEqual([]);
    } finally {
      await done();
    }
  });

  it("fails only the query whose connection drops as it is sent, then answers on fresh connections", async () => {
    let dropped = 0;
    const { behind, done } = await behindProxy((fromClient) => {
      if (!fromClient.includes("cut here") || dropped === 6) return false;
      dropped += 1;
      return true;
    });
    try {
      const unhandled = await unhandledDuring(async () => {
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, () =>
            sql`select 'cut here' as marker`.execute(behind.db).then(
              () => "answered",
              (error: unknown) => storageOutageCode(error) ?? String(error),
            ),
          ),
        );
        expect(dropped).toBe(6);
        // Each dropped connection failed its query as an outage; the rest answered.
        expect(outcomes.filter((outcome) => outcome !== "answered")).toHaveLength(6);
        expect(outcomes.every((outcome) => outcome === "answered" || outcome.startsWith("CONNECTION_"))).toBe(
          true,
        );
        const answers = await Promise.all(
          Array.from({ length: 10 }, () => sql<{ one: number }>`select 1 as one`.execute(behind.db)),
        );
        expect(answers.map((result) => result.rows[0]?.one)).toEqual(Array(10).fill(1));
      });
      expect(unhandled).toEqual([]);
    } finally {
      await done();
    }
  });
});
