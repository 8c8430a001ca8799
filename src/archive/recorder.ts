/**
 * Turns what the venue observes and serves into archive rows: every fresh upstream answer it reads
 * (order books, the trade tape, forecast percentiles, live data), every data frame of `/api/v1/ws`,
 * and every catalogue change a sync stores. Only the deployment's leader (the instance that polls the
 * upstream for all) records, so each observation is written by one writer; the same observation read
 * again (a book that did not change, a trade on two pages, a forecast period asked for twice) is
 * appended once.
 */
import { LRUCache } from "lru-cache";
import type { CatalogueFile, EventRecord, MarketRecord, Series } from "../contract/markets.js";
import { toReferenceBook, toReferenceTrades, tradeTimeMs } from "../upstream/relay.js";
import type { ArchiveRow, ArchiveSink } from "./tables.js";

/** A data frame of the market stream as the feed published it: the message is its JSON without seq and ts. */
export interface RecordedFrame {
  seq: number;
  ts: number;
  ticker: string;
  message: string;
}

/** Records one snapshot of the catalogue, in parts as storage reads them. */
export interface CatalogueSnapshotRecorder {
  markets(markets: readonly { ticker: string; data: string }[]): void;
  head(series: readonly Series[], events: readonly EventRecord[]): void;
}

export interface RecorderOptions {
  /** Whether this instance writes the archive now: the feed's leader. */
  leading: () => boolean;
  now?: () => number;
  /** Observation keys remembered per kind, to append each once (bounded: an old key may be appended again). */
  remembered?: number;
}

const FORECAST_PATH = /^series\/([^/?]+)\/events\/([^/?]+)\/forecast_percentile_history(?:\?|$)/;
const ORDERBOOK_PATH = /^markets\/([^/?]+)\/orderbook(?:\?|$)/;
const TRADES_PATH = /^markets\/trades(?:\?|$)/;
const LIVE_DATA_PATH = /^live_data\/(?:batch|milestone\/[^/?]+|[^/?]+\/milestone\/[^/?]+)(?:\?|$)/;

export class ArchiveRecorder {
  private readonly now: () => number;
  private readonly seen: LRUCache<string, true>;
  /** The last recorded book per market, so a poll that finds it unchanged records nothing. */
  private readonly books: LRUCache<string, string>;

  constructor(
    private readonly sink: ArchiveSink,
    private readonly options: RecorderOptions,
  ) {
    this.now = options.now ?? Date.now;
    // Counted through maxSize: `max` would allocate all its slots at start, ~80 ms of every boot for
    // these two (see base58.ts's cache).
    const remembered = options.remembered ?? 500_000;
    this.seen = new LRUCache({ maxSize: remembered, sizeCalculation: () => 1 });
    this.books = new LRUCache({ maxSize: remembered, sizeCalculation: () => 1 });
  }

  /**
   * Data frames this instance published on `channel`, numbered (a trade tape's restart marks carry
   * none): only the instance that published a frame records it, so leadership moving mid-way loses
   * or repeats none.
   */
  frames(channel: string, entries: readonly RecordedFrame[]): void {
    const rows: ArchiveRow<"frames">[] = [];
    for (const { seq, ts, ticker, message } of entries) {
      if (message !== "") rows.push({ channel, seq, ts, ticker, message });
    }
    if (rows.length > 0) this.sink.append("frames", rows);
  }

  /**
   * A fresh answer of the upstream (never a cached one): `path` is relative to its base URL, with the
   * query, and `json` its body as the client parsed it. Answers the archive does not keep, and bodies
   * not of the shape it reads, are passed over.
   */
  upstreamAnswer(path: string, json: unknown): void {
    if (!this.options.leading()) return;
    try {
      const forecast = FORECAST_PATH.exec(path);
      const book = forecast ? null : ORDERBOOK_PATH.exec(path);
      // A body of another shape (null, say) throws below and is passed over.
      const body = json as Record<string, unknown>;
      if (forecast) this.forecasts(decodeURIComponent(forecast[1] as string), body);
      else if (book) this.book(decodeURIComponent(book[1] as string), body);
      else if (TRADES_PATH.test(path)) this.trades(body);
      else if (LIVE_DATA_PATH.test(path)) this.liveData(body);
    } catch {
      // The relay tells the caller what was wrong with the answer; the archive keeps only what it can read.
    }
  }

  /** The series, events and markets a sync stored as changed, as they were stored. */
  catalogueChanges(changes: Pick<CatalogueFile, "series" | "events">): void {
    const markets = changes.events.flatMap((event) => event.markets);
    const events = changes.events.map(({ markets: _nested, ...event }) => event);
    this.catalogue("stored", changes.series, events, markets);
  }

  /**
   * Starts recording the whole catalogue as stored now (where a replay starts), all of it under one
   * time: the markets chunk by chunk as storage reads them (their records as stored, JSON text), and
   * the series and events. Undefined when this instance does not lead.
   */
  catalogueSnapshot(): CatalogueSnapshotRecorder | undefined {
    if (!this.options.leading()) return undefined;
    const ts = this.now();
    return {
      markets: (markets) => {
        const rows = markets.map(({ ticker, data }) => ({
          ts,
          change: "snapshot",
          kind: "market",
          ticker,
          status: (JSON.parse(data) as Pick<MarketRecord, "status">).status,
          record: data,
        }));
        if (rows.length > 0) this.sink.append("catalogue", rows);
      },
      head: (series, events) => this.catalogue("snapshot", series, events, [], ts),
    };
  }

  /** Every instance records the changes it stored: a change is stored by one instance, which alone sees it as changed. */
  private catalogue(
    change: "stored" | "snapshot",
    series: readonly Series[],
    events: readonly EventRecord[],
    markets: readonly MarketRecord[],
    ts = this.now(),
  ): void {
    const row = (kind: string, ticker: string, status: string, record: object): ArchiveRow<"catalogue"> => ({
      ts,
      change,
      kind,
      ticker,
      status,
      record: JSON.stringify(record),
    });
    const rows = [
      ...series.map((s) => row("series", s.ticker, "", s)),
      ...events.map((e) => row("event", e.ticker, "", e)),
      ...markets.map((m) => row("market", m.ticker, m.status, m)),
    ];
    if (rows.length > 0) this.sink.append("catalogue", rows);
  }

  private forecasts(seriesTicker: string, body: { forecast_history?: unknown }): void {
    if (!Array.isArray(body.forecast_history)) return;
    const rows: ArchiveRow<"forecasts">[] = [];
    for (const period of body.forecast_history as ForecastPeriod[]) {
      if (typeof period?.event_ticker !== "string" || !Array.isArray(period.percentile_points)) continue;
      const end = Number(period.end_period_ts);
      const interval = Number(period.period_interval);
      if (!Number.isSafeInteger(end) || !Number.isSafeInteger(interval)) continue;
      for (const point of period.percentile_points) {
        const percentile = Number(point?.percentile);
        const key = `f|${period.event_ticker}|${interval}|${end}|${percentile}`;
        if (!Number.isSafeInteger(percentile) || this.once(key)) continue;
        rows.push({
          series_ticker: seriesTicker,
          event_ticker: period.event_ticker,
          end_period_ts: end * 1000,
          period_interval: interval,
          percentile,
          raw_numerical_forecast: Number(point.raw_numerical_forecast),
          numerical_forecast: Number(point.numerical_forecast),
          formatted_forecast: String(point.formatted_forecast ?? ""),
        });
      }
    }
    if (rows.length > 0) this.sink.append("forecasts", rows);
  }

  private book(ticker: string, body: unknown): void {
    const { yes_bids, no_bids } = toReferenceBook(body);
    const book = { yes_bids: JSON.stringify(yes_bids), no_bids: JSON.stringify(no_bids) };
    const fingerprint = `${book.yes_bids}|${book.no_bids}`;
    if (this.books.get(ticker) === fingerprint) return;
    this.books.set(ticker, fingerprint);
    this.sink.append("orderbooks", [{ ts: this.now(), ticker, ...book }]);
  }

  private trades(body: { trades?: unknown }): void {
    const page = toReferenceTrades(body);
    const raw = body.trades as { created_time?: unknown }[];
    const rows: ArchiveRow<"trades">[] = [];
    page.trades.forEach((trade, index) => {
      const t = trade as ReferenceTradeShape;
      if (this.once(`t|${t.tradeId}`)) return;
      rows.push({
        trade_id: t.tradeId,
        ticker: t.ticker,
        created_time: tradeTimeMs(raw[index]?.created_time, t.createdTime),
        count: Number(t.countFp),
        yes_price: Number(t.yesPriceDollars),
        no_price: Number(t.noPriceDollars),
        taker_side: t.takerSide,
      });
    });
    if (rows.length > 0) this.sink.append("trades", rows);
  }

  private liveData(body: { live_datas?: unknown; live_data?: unknown }): void {
    const items = Array.isArray(body.live_datas) ? body.live_datas : body.live_data ? [body.live_data] : [];
    const ts = this.now();
    const rows: ArchiveRow<"live_data">[] = [];
    for (const item of items as LiveDataShape[]) {
      if (typeof item?.milestone_id !== "string") continue;
      const details = JSON.stringify(item.details ?? null);
      if (this.once(`l|${item.milestone_id}|${details}`)) continue;
      const status = typeof item.details?.status === "string" ? item.details.status : "";
      const type = typeof item.type === "string" ? item.type : "";
      rows.push({ ts, milestone_id: item.milestone_id, type, status, details });
    }
    if (rows.length > 0) this.sink.append("live_data", rows);
  }

  /** True when `key` was recorded already; remembers it otherwise. */
  private once(key: string): boolean {
    if (this.seen.has(key)) return true;
    this.seen.set(key, true);
    return false;
  }
}

interface ForecastPeriod {
  event_ticker?: unknown;
  end_period_ts?: unknown;
  period_interval?: unknown;
  percentile_points?: {
    percentile?: unknown;
    raw_numerical_forecast?: unknown;
    numerical_forecast?: unknown;
    formatted_forecast?: unknown;
  }[];
}

interface ReferenceTradeShape {
  tradeId: string;
  ticker: string;
  countFp: string;
  yesPriceDollars: string;
  noPriceDollars: string;
  takerSide: string;
  createdTime: number;
}

interface LiveDataShape {
  milestone_id?: unknown;
  type?: unknown;
  details?: { status?: unknown } | null;
}
