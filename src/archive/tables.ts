/**
 * What the archive keeps: one table per kind of observation, each a set of day-partitioned Parquet
 * files. A table is declared once here (its columns and their kinds, the column that dates a row);
 * the writer's staging tables, the Parquet schema, the readers' empty views and the row types all
 * derive from that declaration.
 */

/** How a column is stored: times are taken as Unix milliseconds and written as Parquet timestamps. */
export type ColumnKind = "text" | "int" | "float" | "time" | "json";

interface TableDeclaration {
  /** What a row is, for `archive stats` and the docs. */
  readonly about: string;
  readonly columns: Readonly<Record<string, ColumnKind>>;
  /** The time column that dates a row: it names the row's day partition and bounds exports. */
  readonly dated: string;
}

export const ARCHIVE_TABLES = {
  frames: {
    about:
      "every data frame of /api/v1/ws, as live clients received it (message is its JSON without seq and ts)",
    columns: { channel: "text", seq: "int", ts: "time", ticker: "text", message: "json" },
    dated: "ts",
  },
  trades: {
    about: "the upstream's trade tape, each trade once",
    columns: {
      trade_id: "text",
      ticker: "text",
      created_time: "time",
      count: "float",
      yes_price: "float",
      no_price: "float",
      taker_side: "text",
    },
    dated: "created_time",
  },
  orderbooks: {
    about: "order books as the venue read them, each time one changed",
    columns: { ts: "time", ticker: "text", yes_bids: "json", no_bids: "json" },
    dated: "ts",
  },
  forecasts: {
    about: "forecast percentiles of events, each period and percentile once",
    columns: {
      series_ticker: "text",
      event_ticker: "text",
      end_period_ts: "time",
      period_interval: "int",
      percentile: "int",
      raw_numerical_forecast: "float",
      numerical_forecast: "float",
      formatted_forecast: "text",
    },
    dated: "end_period_ts",
  },
  live_data: {
    about: "live data of milestones (scores, readings), each reading once",
    columns: { ts: "time", milestone_id: "text", type: "text", status: "text", details: "json" },
    dated: "ts",
  },
  catalogue: {
    about:
      "the catalogue: each series, event and market a sync stored (change `stored`), and the whole catalogue once a day (`snapshot`)",
    columns: { ts: "time", change: "text", kind: "text", ticker: "text", status: "text", record: "json" },
    dated: "ts",
  },
  fills: {
    about:
      "the venue's own prediction-market fills, settled on its chain (amounts in each mint's smallest unit)",
    columns: {
      id: "int",
      ts: "time",
      signature: "text",
      order_id: "text",
      wallet: "text",
      input_mint: "text",
      input_amount: "int",
      output_mint: "text",
      output_amount: "int",
      outcome_mint: "text",
      settlement_mint: "text",
      contracts: "int",
      notional: "int",
      fee_amount: "int",
    },
    dated: "ts",
  },
} as const satisfies Record<string, TableDeclaration>;

export type ArchiveTable = keyof typeof ARCHIVE_TABLES;
export const ARCHIVE_TABLE_NAMES = Object.keys(ARCHIVE_TABLES) as ArchiveTable[];

type ValueOf<K> = K extends "text" | "json" ? string : number;

/** A row of `table` as the recorder hands it over: times in Unix milliseconds, JSON as its text. */
export type ArchiveRow<T extends ArchiveTable> = {
  -readonly [C in keyof (typeof ARCHIVE_TABLES)[T]["columns"]]: ValueOf<
    (typeof ARCHIVE_TABLES)[T]["columns"][C]
  >;
};

/** Where rows go: the Parquet archive, or nowhere when archiving is off. */
export interface ArchiveSink {
  append<T extends ArchiveTable>(table: T, rows: readonly ArchiveRow<T>[]): void;
}

export function isArchiveTable(name: string): name is ArchiveTable {
  return Object.hasOwn(ARCHIVE_TABLES, name);
}
