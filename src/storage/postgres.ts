/** The PostgreSQL driver (postgres.js under Kysely), imported by openStorage only when DATABASE_URL is set. */
import type { Dialect } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";

/** How long closing waits for queries still running before it cuts their connections. */
const CLOSE_GRACE_SECONDS = 5;

/** A postgres.js pool of ten connections to `url`, as a Kysely dialect, and how to close it. */
export function postgresPool(url: string): { dialect: Dialect; close(): Promise<void> } {
  const sql = postgres(url, { max: 10, onnotice: () => {} });
  return {
    dialect: new PostgresJSDialect({ postgres: sql }),
    // Without a timeout postgres.js's end() never settles when it meets a query whose connection is
    // still opening (reproduced: a start that fails while its reads are connecting hung 60 s and more).
    close: () => sql.end({ timeout: CLOSE_GRACE_SECONDS }),
  };
}
