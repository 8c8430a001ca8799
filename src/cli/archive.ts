/**
 * `oddsgate archive`: what the archive keeps (`stats`), and a window of it written out as Parquet
 * (`export`) that DuckDB, pandas and polars read. Both read the files under ARCHIVE_DIR (default
 * DATA_DIR/archive) and work while the venue runs: it never changes a file it has written.
 */
import type { Command } from "commander";
import type { TableStats } from "../archive/archive-reader.js";
import type { ArchiveTable } from "../archive/tables.js";
import { ARCHIVE_TABLE_NAMES, isArchiveTable } from "../archive/tables.js";
import { archiveDir } from "../config.js";
import { rfc3339Seconds } from "../upstream/relay.js";
import { type Cli, CliError, configFrom, withSettings } from "./support.js";

const ARCHIVE_SETTINGS = ["DATA_DIR", "ARCHIVE_DIR"] as const;

/** Adds `archive stats` and `archive export`. */
export function registerArchiveCommands(program: Command, cli: Cli): void {
  const archive = program
    .command("archive")
    .description("the venue's archive of what it observed and served");

  withSettings(
    archive.command("stats").description("what the archive keeps, per table"),
    ARCHIVE_SETTINGS,
  ).action(async (options) => {
    const dir = archiveDir(configFrom(cli, options));
    const { ArchiveReader } = await import("../archive/archive-reader.js");
    const reader = await ArchiveReader.open(dir);
    try {
      cli.console.log(`archive at ${dir}`);
      for (const table of await reader.stats()) cli.console.log(describeTable(table));
    } finally {
      reader.close();
    }
  });

  withSettings(
    archive
      .command("export")
      .description("write the rows of a window, one Parquet file (zstd) per table")
      .requiredOption("--from <iso>", "start of the window (RFC 3339, or a UTC date: 2026-12-01)")
      .requiredOption("--to <iso>", "end of the window, excluded")
      .requiredOption("--out <dir>", "directory the files are written to (created)")
      .option("--tables <names>", `comma-separated, of: ${ARCHIVE_TABLE_NAMES.join(", ")} (default: all)`),
    ARCHIVE_SETTINGS,
  ).action(async (options) => {
    const from = instant(options.from, "--from");
    const to = instant(options.to, "--to");
    if (to <= from) throw new CliError("--to must be after --from");
    const tables = tablesOf(options.tables);
    const { ArchiveReader } = await import("../archive/archive-reader.js");
    const reader = await ArchiveReader.open(archiveDir(configFrom(cli, options)));
    try {
      const written = await reader.export({ from, to, outDir: options.out, tables });
      for (const { table, file, rows } of written) cli.console.log(`${table}: ${rows} rows → ${file}`);
    } finally {
      reader.close();
    }
  });
}

/** One table's line: rows, files, bytes, the days it spans and what a market's day costs. */
function describeTable(stats: TableStats): string {
  const span = stats.firstDay ? `, ${stats.days} days ${stats.firstDay} to ${stats.lastDay}` : "";
  const perMarketDay =
    stats.bytesPerMarketDay === null ? "" : `, ${formatBytes(stats.bytesPerMarketDay)} per market-day`;
  return `${stats.table.padEnd(10)} ${stats.rows} rows in ${stats.files} files, ${formatBytes(stats.bytes)}${span}${perMarketDay}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Unix milliseconds of an RFC 3339 time or a UTC date. */
export function instant(value: string, flag: string): number {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  if (rfc3339Seconds(date) === undefined)
    throw new CliError(`${flag} ${value} is not an RFC 3339 time or a date (YYYY-MM-DD)`);
  return Date.parse(date.toUpperCase());
}

function tablesOf(list: string | undefined): ArchiveTable[] {
  if (list === undefined) return [...ARCHIVE_TABLE_NAMES];
  const names = list.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !isArchiveTable(name));
  if (unknown.length > 0)
    throw new CliError(
      `no archive table ${unknown.join(", ")}: the tables are ${ARCHIVE_TABLE_NAMES.join(", ")}`,
    );
  return names as ArchiveTable[];
}
