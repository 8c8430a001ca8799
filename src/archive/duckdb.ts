/** The one way the archive opens DuckDB: in memory, offline, and giving back what a query freed. */
import type { DuckDBInstance } from "@duckdb/node-api";

/**
 * An in-memory DuckDB, loaded on first use: a venue that never touches the archive pays neither the
 * load nor the memory. DuckDB's allocator keeps up to 128 MB a query freed for reuse; its background
 * thread hands that back to the system within seconds instead (measured on a write of 20,000 rows of
 * 1 KB: 150 MB kept resident by default, 10 MB this way, at the same speed).
 */
export async function openDuckDb(options: { threads?: number } = {}): Promise<DuckDBInstance> {
  const { DuckDBInstance } = await import("@duckdb/node-api");
  return DuckDBInstance.create(":memory:", {
    ...(options.threads === undefined ? {} : { threads: String(options.threads) }),
    autoinstall_known_extensions: "false",
    allocator_flush_threshold: "8MB",
    allocator_bulk_deallocation_flush_threshold: "8MB",
    allocator_background_threads: "true",
  });
}
