/**
 * What goes wrong writing or reading the archive, in the archive's own terms. Whoever asks (a history
 * route, the CLI) decides what a failure means to them: a route maps a bad table or column to a 400,
 * the server logs a failed flush and tries again.
 */
import type { ArchiveTable } from "./tables.js";

/** A table name the archive does not declare (src/archive/tables.ts). */
export class UnknownArchiveTableError extends Error {
  override name = "UnknownArchiveTableError";

  constructor(readonly table: string) {
    super(`the archive has no table "${table}"`);
  }
}

/** A column name a query filtered or sorted on that its table does not declare. */
export class UnknownArchiveColumnError extends Error {
  override name = "UnknownArchiveColumnError";

  constructor(
    readonly table: ArchiveTable,
    readonly column: string,
  ) {
    super(`the archive table "${table}" has no column "${column}"`);
  }
}

/** A query bound the archive cannot use: a time that is no number, a limit that is no count. */
export class InvalidArchiveQueryError extends Error {
  override name = "InvalidArchiveQueryError";
}

/** A trade cursor of the archive's (`a:`) that is not one the venue handed out. */
export class InvalidTradeCursorError extends InvalidArchiveQueryError {
  override name = "InvalidTradeCursorError";

  constructor() {
    super("cursor is not one this venue handed out");
  }
}

/** Rows of one table and day that a flush could not write; they stay buffered for the next flush. */
export interface FailedWrite {
  table: ArchiveTable;
  day: string;
  rows: number;
  cause: unknown;
}

/** A flush left rows unwritten (a full disk, a directory it may not write to). */
export class ArchiveFlushError extends Error {
  override name = "ArchiveFlushError";

  constructor(readonly failures: readonly FailedWrite[]) {
    const rows = failures.reduce((sum, failure) => sum + failure.rows, 0);
    const where = failures.map((failure) => `${failure.table}/${failure.day}`).join(", ");
    super(`the archive could not write ${rows} row(s) (${where}); they are kept for the next flush`, {
      cause: failures[0]?.cause,
    });
  }
}
