/**
 * Sync: reads every series and event (markets nested) from the upstream exchange, maps them to our
 * records, and writes what changed in one transaction. Nothing is written until the whole upstream
 * catalogue has been read and validated, and nothing is ever deleted, so a failing or misbehaving
 * upstream can leave the catalogue stale but never emptied or half-updated.
 */
import type { Kysely } from "kysely";
import {
  CATALOGUE_FORMAT,
  type CatalogueEvent,
  type CatalogueFile,
  type MarketRecord,
} from "../contract/markets.js";
import type { Tables } from "../storage/database.js";
import type { Upstream } from "../upstream/client.js";
import type { TokenizePolicy } from "./import/kalshi.js";
import { parseCatalogueInput } from "./import/parse.js";
import { parseMarketRow, readCatalogue, saveCatalogue } from "./store.js";

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
}

/** Reads the whole upstream catalogue and stores what changed; returns the counts. */
export async function syncFromUpstream(options: SyncOptions): Promise<SyncResult> {
  const { db, upstream, onProgress = () => {} } = options;
  const series = (await readJson(upstream, "series", new URLSearchParams())).series;
  const events: unknown[] = [];
  let markets = 0;
  let cursor = "";
  for (let page = 0; ; page++) {
    if (page === MAX_PAGES) throw new Error(`the upstream listed more than ${MAX_PAGES} pages of events`);
    const query = new URLSearchParams({ limit: String(EVENTS_PAGE), with_nested_markets: "true" });
    if (cursor) query.set("cursor", cursor);
    const body = await readJson(upstream, "events", query);
    if (!Array.isArray(body.events)) throw new Error("the upstream's events page has no events list");
    for (const event of body.events as { markets?: unknown }[]) {
      events.push(event);
      markets += Array.isArray(event?.markets) ? event.markets.length : 0;
    }
    onProgress({ phase: "reading", events: events.length, markets });
    cursor = typeof body.cursor === "string" ? body.cursor : "";
    if (!cursor || body.events.length === 0) break;
  }

  // One validation of the whole upstream catalogue: an error names the record and field at fault.
  const incoming = parseCatalogueInput(
    { series: Array.isArray(series) ? series : [], events },
    { tokenize: options.tokenize },
  );
  onProgress({ phase: "writing", events: events.length, markets });
  const changes = await changesAgainstStorage(db, incoming);
  if (changes.series.length > 0 || changes.events.length > 0) {
    await saveCatalogue(db, options.venueSeed, changes);
  }
  return {
    upstream: { series: incoming.series.length, events: incoming.events.length, markets },
    changed: {
      series: changes.series.length,
      events: changes.events.length,
      markets: changes.events.reduce((sum, e) => sum + e.markets.length, 0),
    },
  };
}

/**
 * The part of `incoming` that differs from storage; markets we already have keep their tokenization.
 * Stored markets are compared chunk by chunk as storage streams them, and only those the upstream
 * lists are parsed: a sync never holds a second parsed copy of a large stored catalogue.
 */
async function changesAgainstStorage(db: Kysely<Tables>, incoming: CatalogueFile): Promise<CatalogueFile> {
  const incomingMarkets = new Map<string, MarketRecord>();
  for (const event of incoming.events)
    for (const market of event.markets) incomingMarkets.set(market.ticker, market);
  // Of the markets the upstream lists that storage holds: their tokenization, and which are unchanged.
  const storedTokenized = new Map<string, boolean>();
  const unchanged = new Set<string>();
  const stored = await readCatalogue(db, (chunk) => {
    for (const row of chunk) {
      const market = incomingMarkets.get(row.ticker);
      if (!market) continue;
      const previous = parseMarketRow(row).record;
      storedTokenized.set(row.ticker, previous.tokenized);
      // Tokenization is this venue's decision, made once; the upstream knows nothing of it.
      if (canonicalJson(previous) === canonicalJson({ ...market, tokenized: previous.tokenized })) {
        unchanged.add(row.ticker);
      }
    }
  });
  const storedSeries = new Map(stored.series.map((s) => [s.ticker, canonicalJson(s)]));
  const storedEvents = new Map(stored.events.map((e) => [e.ticker, canonicalJson(e)]));

  const series = incoming.series.filter((s) => storedSeries.get(s.ticker) !== canonicalJson(s));
  const events: CatalogueEvent[] = [];
  for (const { markets, ...event } of incoming.events) {
    let changed = storedEvents.get(event.ticker) !== canonicalJson(event);
    const kept = markets.map((market): MarketRecord => {
      if (!unchanged.has(market.ticker)) changed = true;
      const tokenized = storedTokenized.get(market.ticker);
      return tokenized === undefined ? market : { ...market, tokenized };
    });
    if (changed) events.push({ ...event, markets: kept });
  }
  return { format: CATALOGUE_FORMAT, series, events };
}

/** JSON with object keys sorted, so records compare equal whichever code wrote their fields first. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
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
  const body = JSON.parse(answer.body.toString("utf8")) as unknown;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new Error(`the upstream's answer to GET ${path} is not a JSON object`);
  }
  return body as Record<string, unknown>;
}
