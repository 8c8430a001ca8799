/**
 * The catalogue of a replay, as it was at each moment of the recorded window: storage starts from the
 * last whole-catalogue snapshot the archive holds before the window and the changes recorded after
 * it, and every change is stored again when the replay's clock reaches the moment it was first
 * stored. Stored through `saveCatalogue`, so the venue reloads it as it reloads a sync, and a market
 * never moves back from determined.
 */
import type { Kysely } from "kysely";
import type { ArchiveReader } from "../archive/archive-reader.js";
import type { ReplayClock } from "../archive/replay/clock.js";
import type { ArchiveRow } from "../archive/tables.js";
import {
  CATALOGUE_FORMAT,
  type CatalogueFile,
  type EventRecord,
  type MarketRecord,
  type Series,
} from "../contract/markets.js";
import type { Tables } from "../storage/database.js";
import { saveCatalogue } from "./store.js";

/** The archive holds no whole catalogue at or before the window's start: there is nothing to replay from. */
export class NoCatalogueSnapshotError extends Error {
  override name = "NoCatalogueSnapshotError";
}

type CatalogueRow = ArchiveRow<"catalogue">;

export class ReplayCatalogue {
  /** The recorded time up to which changes are stored. */
  private appliedUpTo: number;

  constructor(
    private readonly reader: ArchiveReader,
    private readonly clock: ReplayClock,
    private readonly venueSeed: string,
  ) {
    this.appliedUpTo = clock.from;
  }

  /** Stores the catalogue as it was at the window's start. */
  async seed(db: Kysely<Tables>): Promise<void> {
    const [latest] = await this.reader.rows("catalogue", {
      to: this.clock.from + 1,
      equals: { change: "snapshot" },
      orderBy: "ts",
      descending: true,
      limit: 1,
    });
    if (!latest) {
      throw new NoCatalogueSnapshotError(
        "the archive holds no catalogue snapshot at or before the window's start (the venue records one when it starts and daily): start the window later",
      );
    }
    const snapshot = await this.reader.rows("catalogue", {
      from: latest.ts,
      to: latest.ts + 1,
      equals: { change: "snapshot" },
    });
    await saveCatalogue(db, this.venueSeed, catalogueOf(snapshot));
    this.appliedUpTo = latest.ts + 1;
    await this.catchUp(db, this.clock.from);
  }

  /** Stores the changes recorded up to the replay's current moment. */
  catchUp(db: Kysely<Tables>, until = this.clock.now()): Promise<void> {
    return this.applyChanges(db, until);
  }

  private async applyChanges(db: Kysely<Tables>, until: number): Promise<void> {
    if (until < this.appliedUpTo) return;
    const changes = await this.reader.rows("catalogue", {
      from: this.appliedUpTo,
      to: until + 1,
      equals: { change: "stored" },
      orderBy: "ts",
    });
    // Each sync's changes were recorded at one moment: stored again together, in the order they were.
    const byMoment = new Map<number, CatalogueRow[]>();
    for (const row of changes) byMoment.set(row.ts, [...(byMoment.get(row.ts) ?? []), row]);
    for (const rows of byMoment.values()) await saveCatalogue(db, this.venueSeed, catalogueOf(rows));
    this.appliedUpTo = until + 1;
  }
}

/** Catalogue rows as a catalogue file: each event with its markets, in the order recorded. */
function catalogueOf(rows: readonly CatalogueRow[]): CatalogueFile {
  const series: Series[] = [];
  const events = new Map<string, EventRecord & { markets: MarketRecord[] }>();
  const markets: MarketRecord[] = [];
  for (const row of rows) {
    if (row.kind === "series") series.push(JSON.parse(row.record) as Series);
    else if (row.kind === "event")
      events.set(row.ticker, { ...(JSON.parse(row.record) as EventRecord), markets: [] });
    else if (row.kind === "market") markets.push(JSON.parse(row.record) as MarketRecord);
  }
  for (const market of markets) events.get(market.eventTicker)?.markets.push(market);
  return { format: CATALOGUE_FORMAT, series, events: [...events.values()] };
}
