/**
 * The PostgreSQL driver: node-postgres (`pg`) under Kysely's own PostgresDialect, imported by
 * openStorage only when DATABASE_URL is set.
 *
 * What a dropped connection costs (a restart, a failover, an administrator, a network cut): the
 * queries it carried fail (with an error storageOutageCode recognizes), nothing else. The pool
 * removes a client whose socket closed, whether idle or checked out, and the next query connects
 * afresh; neither the pool nor its clients may emit an 'error' nothing listens to (which would end the
 * process), so both get a listener here (test/storage/postgres-outage.test.ts).
 */
import { type Dialect, PostgresDialect, type PostgresPool } from "kysely";
import pg from "pg";

/** Connections the pool opens at most. */
const POOL_SIZE = 10;
/**
 * How long a query waits to connect, or for a free connection of a full pool, before it fails:
 * postgres.js's default connect timeout, which the venue ran on before.
 */
const CONNECT_TIMEOUT_MS = 30_000;
/** An idle connection is closed after this long (the pool opens one again when a query needs it). */
const IDLE_TIMEOUT_MS = 60_000;
/** TCP keepalive on every connection, so a peer gone without a word is noticed. */
const KEEPALIVE_DELAY_MS = 60_000;
/** How long closing waits for queries still running before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;

/** A pg pool of ten connections to `url`, as a Kysely dialect, and how to close it. */
export function postgresPool(url: string): { dialect: Dialect; close(): Promise<void> } {
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
  });
  const clients = new Set<pg.PoolClient>();
  // An idle client whose connection failed: the pool has already removed it.
  pool.on("error", () => {});
  pool.on("connect", (client) => {
    clients.add(client);
    // A checked-out client emits 'error' too (its queries fail with it); the pool removes it when it
    // is released, as it is no longer queryable.
    client.on("error", () => {});
  });
  pool.on("remove", (client) => clients.delete(client));

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const ended = pool.end();
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), CLOSE_GRACE_MS);
      });
      try {
        if ((await Promise.race([ended, grace])) === "late") {
          // Queries still running (or a connection still opening) after the grace: cut them; each
          // fails, is released, and the pool ends.
          for (const client of clients) void client.end().catch(() => {});
          await ended;
        }
      } finally {
        clearTimeout(timer);
      }
    })();
    return closing;
  };
  // Kysely ends the pool when the Kysely instance is destroyed: the same close.
  const kyselyPool: PostgresPool = {
    connect: () => pool.connect(),
    end: close,
  };
  return { dialect: new PostgresDialect({ pool: kyselyPool }), close };
}
