/** The PostgreSQL driver (postgres.js under Kysely), imported by openStorage only when DATABASE_URL is set. */
import type { Dialect } from "kysely";
import { PostgresJSDialect } from "kysely-postgres-js";
import postgres from "postgres";

/** A Kysely dialect over a postgres.js pool of ten connections to `url`. */
export function postgresDialect(url: string): Dialect {
  return new PostgresJSDialect({ postgres: postgres(url, { max: 10, onnotice: () => {} }) });
}
