/**
 * Reading an import file: our own catalogue format or Kalshi trade-api v2 JSON, detected from its shape.
 * Every problem is reported as an ImportFormatError that names the record (by position and ticker) and
 * the field, so that an operator can find it in a file of thousands of markets.
 */
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
  const declaredSeries = (file.series ?? []).map(kalshiSeriesToRecord);
  rejectDuplicates(
    json,
    declaredSeries.map((s, i) => ({ path: ["series", i], ticker: s.ticker })),
    "series",
    "ticker",
  );
  const declaredByTicker = new Map(declaredSeries.map((s) => [s.ticker, s]));
  const synthesized = new Map<string, Series>();
  const catalogueEvents = events.map((event): CatalogueEvent => {
    const declared = declaredByTicker.get(event.series_ticker);
    if (!declared && !synthesized.has(event.series_ticker)) {
      synthesized.set(event.series_ticker, seriesForKalshiEvent(event));
    }
    const record = kalshiEventToRecord(event);
    return {
      ...record,
      // Kalshi keeps settlement sources on the series; the event shows its series' when it has none.
      settlementSources: record.settlementSources ?? declared?.settlementSources ?? null,
      markets: (event.markets ?? []).map((m) => kalshiMarketToRecord(m, options)),
    };
  });
  return {
    format: CATALOGUE_FORMAT,
    series: [...declaredSeries, ...synthesized.values()],
    events: catalogueEvents,
  };
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
