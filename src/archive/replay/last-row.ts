/** The last row of a table by a moment, found without opening every day of the archive. */
import type { ArchiveQuery, ArchiveReader } from "../archive-reader.js";
import type { ArchiveRow, ArchiveTable } from "../tables.js";

/**
 * How far back "the last row by now" is looked for, widening: the reader opens only the days a window
 * covers, and a replay polling books finds the last one within the hour (the last window is unbounded).
 */
const LOOKBACKS_MS = [3_600_000, 86_400_000, Number.POSITIVE_INFINITY];

/** The first value `read` finds within the widening windows that end at `to` (exclusive). */
export async function latest<R>(to: number, read: (from: number | undefined) => Promise<R | undefined>) {
  for (const back of LOOKBACKS_MS) {
    const found = await read(Number.isFinite(back) ? to - back : undefined);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The last row of `table` dated before `to` whose columns hold `equals`, or undefined. */
export function lastRow<T extends ArchiveTable>(
  reader: ArchiveReader,
  table: T,
  equals: ArchiveQuery<T>["equals"],
  to: number,
): Promise<ArchiveRow<T> | undefined> {
  return latest(
    to,
    async (from) => (await reader.rows(table, { from, to, equals, descending: true, limit: 1 }))[0],
  );
}
