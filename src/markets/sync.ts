/**
 * Sync: reads every series and event (markets nested) from the upstream exchange, maps them to our
 * records, and writes what changed in one transaction. Nothing is written until the whole upstream
 * catalogue has been read and validated, and nothing is ever deleted, so a failing or misbehaving
 * upstream can leave the catalogue stale but never emptied or half-updated. One page of the upstream
 * is held at a time, compared with the stored records of just its tickers; only what changed is kept.
 */
import type { Kysely } from "kysely";
import {
  CATALOGUE_FORMAT,
  type CatalogueEvent,
  type CatalogueFile,
  type MarketRecord,
  type Series,
} from "../contract/markets.js";
import type { Tables } from "../storage/database.js";
import { answerJson, type Upstream } from "../upstream/client.js";
import type { TokenizePolicy } from "./import/kalshi.js";
import { KalshiPages } from "./import/parse.js";
import { type LifecycleRefusal, movesBackward, readRecordsByTicker, saveCatalogue } from "./store.js";

/** Kalshi's largest page of events. */
const EVENTS_PAGE = 200;
/** A guard against an upstream whose cursor never ends. */
const MAX_PAGES = 100_000;

export interface SyncOptions {
  db: Kysely<Tables>;
  venueSeed: string;
  upstream: Upstream;
  /** Which markets new to us get outcome tokens; markets we already have keep theirs. */
  tokenize: TokenizePolicy;
  /** Called after each page read and once more before writing. */
  onProgress?: (progress: SyncProgress) => void;
  /** Hears what this sync stored, as stored (the markets storage refused to move back left out). */
  onStored?: (stored: Pick<CatalogueFile, "series" | "events">) => void;
}

export interface SyncProgress {
  phase: "reading" | "writing";
  events: number;
  markets: number;
}

export interface SyncResult {
  /** What the upstream listed. */
  upstream: { series: number; events: number; markets: number };
  /** What was new or different and got written. */
  changed: { series: number; events: number; markets: number };
  /**
   * Markets the upstream would have turned back from determined or finalized (to active, say): their
   * stored records were kept. The caller logs and counts them.
   */
  refused: LifecycleRefusal[];
}

/** Reads the whole upstream catalogue and stores what changed; returns the counts. */
export async function syncFromUpstream(options: SyncOptions): Promise<SyncResult> {
  const { db, upstream, onProgress = () => {} } = options;
  const series = (await readJson(upstream, "series", new URLSearchParams())).series;
  // Each page is validated and compared as it comes: only the records that changed are kept.
  const pages = new KalshiPages(Array.isArray(series) ? series : [], { tokenize: options.tokenize });
  const changedEvents: CatalogueEvent[] = [];
  const refused: LifecycleRefusal[] = [];
  let events = 0;
  let markets = 0;
  let cursor = "";
  for (let pageNumber = 0; ; pageNumber++) {
    if (pageNumber === MAX_PAGES)
      throw new Error(`the upstream listed more than ${MAX_PAGES} pages of events`);
    const query = new URLSearchParams({ limit: String(EVENTS_PAGE), with_nested_markets: "true" });
    if (cursor) query.set("cursor", cursor);
    const body = await readJson(upstream, "events", query);
    if (!Array.isArray(body.events)) throw new Error("the upstream's events page has no events list");
    const read = await pages.page(body.events);
    events += read.length;
    for (const event of read) markets += event.markets.length;
    changedEvents.push(...(await changedEventsOf(db, read, refused)));
    onProgress({ phase: "reading", events, markets });
    cursor = typeof body.cursor === "string" ? body.cursor : "";
    if (!cursor || body.events.length === 0) break;
  }

  const allSeries = pages.allSeries();
  const changes: CatalogueFile = {
    format: CATALOGUE_FORMAT,
    series: await changedSeriesOf(db, allSeries),
    events: changedEvents,
  };
  onProgress({ phase: "writing", events, markets });
  let refusedOnWrite = 0;
  if (changes.series.length > 0 || changes.events.length > 0) {
    // A settlement stored since the pages were compared is refused here, inside the writing transaction.
    const saved = await saveCatalogue(db, options.venueSeed, changes);
    refused.push(...saved.refused);
    refusedOnWrite = saved.refused.length;
    options.onStored?.(storedPart(changes, saved.refused));
  }
  return {
    upstream: { series: allSeries.length, events, markets },
    changed: {
      series: changes.series.length,
      events: changes.events.length,
      markets: changes.events.reduce((sum, e) => sum + e.markets.length, 0) - refusedOnWrite,
    },
    refused,
  };
}

/**
 * What of one upstream page differs from storage: each page's events and markets are looked up by
 * ticker, so a sync reads and holds no more of storage than the upstream lists. A market the page
 * would move back from determined or finalized keeps its stored record and is added to `refused`.
 */
async function changedEventsOf(
  db: Kysely<Tables>,
  page: readonly CatalogueEvent[],
  refused: LifecycleRefusal[],
): Promise<CatalogueEvent[]> {
  const stored = await readRecordsByTicker(db, {
    events: page.map((event) => event.ticker),
    markets: page.flatMap((event) => event.markets.map((market) => market.ticker)),
  });
  const changed: CatalogueEvent[] = [];
  for (const { markets, ...event } of page) {
    const storedEvent = stored.events.get(event.ticker);
    let differs = storedEvent === undefined || !sameJson(storedEvent, event);
    const kept = markets.map((market): MarketRecord => {
      const previous = stored.markets.get(market.ticker);
      if (!previous) {
        differs = true;
        return market;
      }
      if (movesBackward(previous, market)) {
        refused.push({ ticker: market.ticker, stored: previous.status, offered: market.status });
        return previous;
      }
      // Tokenization is this venue's decision, made once; the upstream knows nothing of it.
      const record = { ...market, tokenized: previous.tokenized };
      if (!sameJson(previous, record)) differs = true;
      return record;
    });
    if (differs) changed.push({ ...event, markets: kept });
  }
  return changed;
}

/** The series that are new or differ from storage's. */
async function changedSeriesOf(db: Kysely<Tables>, series: readonly Series[]): Promise<Series[]> {
  const stored = (await readRecordsByTicker(db, { series: series.map((s) => s.ticker) })).series;
  return series.filter((s) => {
    const previous = stored.get(s.ticker);
    return previous === undefined || !sameJson(previous, s);
  });
}

/**
 * Whether two records are the same as JSON, whichever code wrote their fields first: objects compare
 * by their members in any order, a member holding undefined as absent (JSON.stringify leaves it out).
 * Compared in place: sorting every object into canonical JSON text cost a sync of the demo ~2 µs a
 * field, twice a market.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameJson(item, b[index]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  let members = 0;
  for (const key in left) {
    if (left[key] === undefined) continue;
    if (!Object.hasOwn(right, key) || !sameJson(left[key], right[key])) return false;
    members++;
  }
  for (const key in right) if (right[key] !== undefined) members--;
  return members === 0;
}

async function readJson(
  upstream: Upstream,
  path: string,
  query: URLSearchParams,
): Promise<Record<string, unknown>> {
  const answer = await upstream.get(path, query);
  if (answer.status !== 200) {
    throw new Error(
      `the upstream answered ${answer.status} to GET ${path}: ${answer.body.toString("utf8").slice(0, 200)}`,
    );
  }
  const body = answerJson(answer);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Error(`the upstream's answer to GET ${path} is not a JSON object`);
  }
  return body as Record<string, unknown>;
}

/** The changes as storage kept them: without the market records it refused to write. */
function storedPart(
  changes: CatalogueFile,
  refused: readonly LifecycleRefusal[],
): Pick<CatalogueFile, "series" | "events"> {
  if (refused.length === 0) return changes;
  const kept = new Set(refused.map((refusal) => refusal.ticker));
  return {
    series: changes.series,
    events: changes.events.map((event) => ({
      ...event,
      markets: event.markets.filter((market) => !kept.has(market.ticker)),
    })),
  };
}
