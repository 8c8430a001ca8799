/**
 * Reading an import file: our own catalogue format or Kalshi trade-api v2 JSON, detected from its shape.
 * Every problem is reported as an ImportFormatError that names the record (by position and ticker) and
 * the field, so that an operator can find it in a file of thousands of markets.
 */
import { setImmediate } from "node:timers/promises";
import type { z } from "zod";
import { CATALOGUE_FORMAT, type CatalogueEvent, CatalogueFile, type Series } from "../../contract/markets.js";
import {
  type KalshiEvent,
  KalshiFile,
  type KalshiImportOptions,
  type KalshiMarket,
  kalshiEventToRecord,
  kalshiMarketToRecord,
  kalshiSeriesToRecord,
  seriesForKalshiEvent,
} from "./kalshi.js";

/** An import file that cannot be read; the message names the record and field at fault. */
export class ImportFormatError extends Error {
  override name = "ImportFormatError";

  constructor(
    /** Where in the input, e.g. `events[3].markets[2].close_time` ("" for the whole input). */
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const EXPECTED_INPUT =
  `expected our catalogue ({"format": "${CATALOGUE_FORMAT}", "series": [...], "events": [...]}) ` +
  `or Kalshi trade-api v2 JSON ({"events": [...]} or {"event": {...}, "markets": [...]})`;

export type ParseCatalogueOptions = KalshiImportOptions;

/** Reads an import file (parsed JSON) in our catalogue format or Kalshi's, and validates it whole. */
export function parseCatalogueInput(json: unknown, options: ParseCatalogueOptions = {}): CatalogueFile {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new ImportFormatError("", `${EXPECTED_INPUT}, got ${describeValue(json)}`);
  }
  if ("format" in json) return parseOwnCatalogue(json);
  if ("events" in json || "event" in json) return parseKalshiExport(json, options);
  const keys = Object.keys(json).map((key) => JSON.stringify(key));
  throw new ImportFormatError(
    "",
    `${EXPECTED_INPUT}, got an object with ${keys.length ? `keys ${keys.join(", ")}` : "no keys"}`,
  );
}

// ---------------------------------------------------------------------------------------------------
// The two formats.

function parseOwnCatalogue(json: object): CatalogueFile {
  const catalogue = validate(CatalogueFile, json);
  const events = catalogue.events.map((event, i) => ({ path: ["events", i], ticker: event.ticker }));
  const markets = catalogue.events.flatMap((event, i) =>
    event.markets.map((market, j) => {
      const path = ["events", i, "markets", j];
      if (market.eventTicker !== event.ticker) {
        throw wrongParent(json, [...path, "eventTicker"], market.eventTicker, event.ticker);
      }
      return { path, ticker: market.ticker };
    }),
  );
  const series = catalogue.series.map((s, i) => ({ path: ["series", i], ticker: s.ticker }));
  rejectDuplicates(json, series, "series", "ticker");
  rejectDuplicates(json, events, "event", "ticker");
  rejectDuplicates(json, markets, "market", "ticker");
  return catalogue;
}

function parseKalshiExport(json: object, options: KalshiImportOptions): CatalogueFile {
  const file = validate(KalshiFile, json);
  const events = kalshiEventsWithMarkets(json, file);
  const series = new KalshiSeriesIndex(json, file);
  const catalogueEvents = events.map((event) => series.eventRecord(event, options));
  return { format: CATALOGUE_FORMAT, series: series.all(), events: catalogueEvents };
}

/**
 * Kalshi's series: those a file (or the upstream's series list) declares, and one made for each event
 * whose series it does not declare.
 */
class KalshiSeriesIndex {
  private readonly declared: Map<string, Series>;
  private readonly synthesized = new Map<string, Series>();

  constructor(json: object, file: KalshiFile) {
    const declared = (file.series ?? []).map(kalshiSeriesToRecord);
    rejectDuplicates(
      json,
      declared.map((s, i) => ({ path: ["series", i], ticker: s.ticker })),
      "series",
      "ticker",
    );
    this.declared = new Map(declared.map((s) => [s.ticker, s]));
  }

  /** The event's record with its markets, noting its series when the file does not declare it. */
  eventRecord(event: KalshiEvent, options: KalshiImportOptions): CatalogueEvent {
    const declared = this.declared.get(event.series_ticker);
    if (!declared && !this.synthesized.has(event.series_ticker)) {
      this.synthesized.set(event.series_ticker, seriesForKalshiEvent(event));
    }
    const record = kalshiEventToRecord(event);
    return {
      ...record,
      // Kalshi keeps settlement sources on the series; the event shows its series' when it has none.
      settlementSources: record.settlementSources ?? declared?.settlementSources ?? null,
      markets: (event.markets ?? []).map((m) => kalshiMarketToRecord(m, options)),
    };
  }

  all(): Series[] {
    return [...this.declared.values(), ...this.synthesized.values()];
  }
}

/**
 * A Kalshi catalogue read page by page, as a sync reads the upstream: the series list once, then each
 * page of events validated and mapped as it comes, so that only one page is ever held whole. Tickers
 * must be unique across pages as within one; an error names the page.
 */
export class KalshiPages {
  private readonly series: KalshiSeriesIndex;
  private readonly eventTickers = new Set<string>();
  private readonly marketTickers = new Set<string>();
  private pages = 0;

  constructor(
    series: unknown,
    private readonly options: KalshiImportOptions,
  ) {
    const json = { series };
    this.series = new KalshiSeriesIndex(json, validate(KalshiFile, json));
  }

  /** One page of events (an events list), validated and mapped. */
  async page(events: unknown): Promise<CatalogueEvent[]> {
    this.pages += 1;
    const json = { events };
    try {
      const records = kalshiEventsWithMarkets(json, await validatedInSlices(json)).map((event) =>
        this.series.eventRecord(event, this.options),
      );
      for (const [i, event] of records.entries()) {
        this.firstSighting(this.eventTickers, event.ticker, ["events", i], "event");
        for (const [j, market] of event.markets.entries())
          this.firstSighting(this.marketTickers, market.ticker, ["events", i, "markets", j], "market");
      }
      return records;
    } catch (error) {
      if (!(error instanceof ImportFormatError)) throw error;
      throw new ImportFormatError(
        `page ${this.pages}: ${error.path}`,
        `page ${this.pages}: ${error.message}`,
      );
    }
  }

  /** Every series: the declared ones, then one for each event read so far whose series was not declared. */
  allSeries(): Series[] {
    return this.series.all();
  }

  private firstSighting(seen: Set<string>, ticker: string, path: Path, kind: string): void {
    if (seen.has(ticker)) {
      throw new ImportFormatError(
        formatPath(path),
        `${formatPath(path)}: ${kind} ${JSON.stringify(ticker)} is on an earlier page too`,
      );
    }
    seen.add(ticker);
  }
}

interface Located<T> {
  value: T;
  path: Path;
}

/**
 * The file's events, each with all its markets: those nested in it and those listed at the top level
 * (GetEvent's `markets`, or a GetMarkets page). Rejects duplicate tickers and markets filed under the
 * wrong event.
 */
function kalshiEventsWithMarkets(json: object, file: KalshiFile): KalshiEvent[] {
  const events: Located<KalshiEvent>[] = [
    ...(file.events ?? []).map((value, i) => ({ value, path: ["events", i] })),
    ...(file.event ? [{ value: file.event, path: ["event"] }] : []),
  ];
  rejectDuplicates(
    json,
    events.map(({ value, path }) => ({ path, ticker: value.event_ticker })),
    "event",
    "event_ticker",
  );

  const marketsByEvent = new Map<string, Located<KalshiMarket>[]>();
  /** Event ticker of each nested market: GetEvent repeats its nested markets at the top level. */
  const nestedIn = new Map<string, string>();
  for (const event of events) {
    const markets = (event.value.markets ?? []).map((value, j) => ({
      value,
      path: [...event.path, "markets", j],
    }));
    for (const market of markets) {
      if (market.value.event_ticker !== event.value.event_ticker) {
        throw wrongParent(
          json,
          [...market.path, "event_ticker"],
          market.value.event_ticker,
          event.value.event_ticker,
        );
      }
      nestedIn.set(market.value.ticker, market.value.event_ticker);
    }
    marketsByEvent.set(event.value.event_ticker, markets);
  }
  for (const [j, value] of (file.markets ?? []).entries()) {
    const siblings = marketsByEvent.get(value.event_ticker);
    if (!siblings) {
      const detail = `no event ${JSON.stringify(value.event_ticker)} in this file`;
      throw importError(json, ["markets", j, "event_ticker"], detail);
    }
    if (nestedIn.get(value.ticker) !== value.event_ticker) siblings.push({ value, path: ["markets", j] });
  }
  const allMarkets = [...marketsByEvent.values()].flat();
  rejectDuplicates(
    json,
    allMarkets.map(({ value, path }) => ({ path, ticker: value.ticker })),
    "market",
    "ticker",
  );
  return events.map(({ value }) => ({
    ...value,
    markets: (marketsByEvent.get(value.event_ticker) ?? []).map((m) => m.value),
  }));
}

// ---------------------------------------------------------------------------------------------------
// Cross-record checks.

function rejectDuplicates(
  root: unknown,
  records: { path: Path; ticker: string }[],
  kind: string,
  field: string,
) {
  const firstSeen = new Map<string, Path>();
  for (const { path, ticker } of records) {
    const earlier = firstSeen.get(ticker);
    if (earlier) {
      throw importError(
        root,
        [...path, field],
        `duplicate ${kind} ticker ${JSON.stringify(ticker)}, first seen at ${locate(root, earlier).record}`,
      );
    }
    firstSeen.set(ticker, path);
  }
}

function wrongParent(
  root: unknown,
  path: Path,
  eventTicker: string,
  parentTicker: string,
): ImportFormatError {
  return importError(
    root,
    path,
    `${JSON.stringify(eventTicker)} differs from its event's ticker ${JSON.stringify(parentTicker)}`,
  );
}

// ---------------------------------------------------------------------------------------------------
// Error messages.

type Path = readonly PropertyKey[];

/** Collections whose elements are records, labelled with their ticker in messages. */
const RECORD_LISTS = new Set<PropertyKey>(["events", "markets", "series"]);

/** Events of a page validated at once, between two turns of the event loop. */
const EVENTS_VALIDATED_AT_ONCE = 20;

/**
 * A page's events validated a few at a time, with a turn of the event loop between: a page of a large
 * upstream (700 markets) was ~200 ms of zod in one task, while the venue answered nothing else. A
 * page that fails is validated again whole, so that its error names the path the whole page's would.
 */
async function validatedInSlices(json: { events: unknown }): Promise<KalshiFile> {
  const { events } = json;
  if (!Array.isArray(events) || events.length <= EVENTS_VALIDATED_AT_ONCE) return validate(KalshiFile, json);
  const valid: NonNullable<KalshiFile["events"]> = [];
  for (let start = 0; start < events.length; start += EVENTS_VALIDATED_AT_ONCE) {
    if (start > 0) await setImmediate();
    const slice = KalshiFile.safeParse({ events: events.slice(start, start + EVENTS_VALIDATED_AT_ONCE) });
    if (!slice.success) return validate(KalshiFile, json);
    valid.push(...(slice.data.events ?? []));
  }
  return { events: valid };
}

/** Parses with `schema`, or throws the first problem (and how many others there are). */
function validate<S extends z.ZodType>(schema: S, json: object): z.output<S> {
  const parsed = schema.safeParse(json, { reportInput: true });
  if (parsed.success) return parsed.data;
  const [first, ...others] = parsed.error.issues;
  if (!first) throw new ImportFormatError("", "invalid input");
  const more = others.length ? ` (and ${others.length} more problem${others.length === 1 ? "" : "s"})` : "";
  throw importError(json, first.path, describeIssue(first) + more);
}

function importError(root: unknown, path: Path, detail: string): ImportFormatError {
  const { record, field } = locate(root, path);
  const where = [record, field].filter(Boolean).join(": ");
  return new ImportFormatError(formatPath(path), where ? `${where}: ${detail}` : detail);
}

/**
 * Splits a path into the records it passes through, labelled like
 * `events[3] (KXHIGHNY-26NOV23) markets[2] (KXHIGHNY-26NOV23-B47.5)`, and the field path after them.
 */
function locate(root: unknown, path: Path): { record: string; field: string } {
  const records: string[] = [];
  let node = root;
  let i = 0;
  for (; i < path.length; i++) {
    const key = path[i];
    const index = path[i + 1];
    if (key !== undefined && RECORD_LISTS.has(key) && typeof index === "number") {
      node = childOf(childOf(node, key), index);
      records.push(withTicker(`${String(key)}[${index}]`, node, key));
      i++;
    } else if (key === "event" && i === 0) {
      node = childOf(node, key);
      records.push(withTicker("event", node, key));
    } else {
      break;
    }
  }
  return { record: records.join(" "), field: formatPath(path.slice(i)) };
}

function childOf(node: unknown, key: PropertyKey): unknown {
  return typeof node === "object" && node !== null ? (node as Record<PropertyKey, unknown>)[key] : undefined;
}

/** Appends the record's ticker when it has one: `ticker`, or a Kalshi event's `event_ticker`. */
function withTicker(label: string, record: unknown, list: PropertyKey): string {
  // A Kalshi market's `event_ticker` is its parent's, so only events fall back to it.
  const isEvent = list === "events" || list === "event";
  const ticker = childOf(record, "ticker") ?? (isEvent ? childOf(record, "event_ticker") : undefined);
  return typeof ticker === "string" && ticker !== "" ? `${label} (${ticker})` : label;
}

/** `["settlementSources", 0, "url"]` → `settlementSources[0].url`. */
function formatPath(path: Path): string {
  return path.reduce<string>(
    (text, key) =>
      typeof key === "number" ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key),
    "",
  );
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const expectation =
    issue.code === "invalid_type"
      ? `expected ${issue.expected}`
      : issue.code === "invalid_value"
        ? `expected ${issue.values.map((v) => JSON.stringify(v)).join(" or ")}`
        : issue.message.charAt(0).toLowerCase() + issue.message.slice(1);
  return issue.input === undefined
    ? `missing (${expectation})`
    : `${expectation}, got ${describeValue(issue.input)}`;
}

const MAX_SHOWN_LENGTH = 60;

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  const json = JSON.stringify(value);
  return json.length > MAX_SHOWN_LENGTH ? `${json.slice(0, MAX_SHOWN_LENGTH - 4)}..."` : json;
}
