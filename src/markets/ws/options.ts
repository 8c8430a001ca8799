/** The market-data stream's settings and dependencies, and what its upstream readers share. */
import type { Upstream } from "../../upstream/client.js";
import type { MarketRelay } from "../../upstream/relay.js";
import type { CatalogHolder } from "../catalog-holder.js";
import type { FeedEntry, MarketChannel, MarketFeed } from "../market-feed.js";

export interface MarketStreamOptions {
  /** How often the upstream is polled (default 1 s). */
  pollMs?: number;
  /** How often the server pings (default 15 s). */
  pingMs?: number;
  /** Silence after which a peer is closed (default 30 s). */
  silenceMs?: number;
  /** Tickers one connection may follow, summed over its channels. */
  maxSubscriptions?: number;
  maxMessagesPerSecond?: number;
  /** Order-book reads in flight at once. */
  bookConcurrency?: number;
  /** Books of subscribed tickers read per period; more subscribed tickers are read in turn. */
  booksPerPeriod?: number;
  /** Books of other active markets read per period for `all` subscribers, cycling through the catalog. */
  allBooksPerPeriod?: number;
  /** Markets per page of the upstream's markets list. */
  marketsPageSize?: number;
  /** Trades per page of the upstream's tape; a full page is followed by at most `maxTradePages - 1` more. */
  tradesPageSize?: number;
  maxTradePages?: number;
  /** Seconds of the tape read again each period, so trades the upstream records late are not missed. */
  tradeOverlapSeconds?: number;
  /** Bytes queued on a socket beyond which it is behind; messages are held back and coalesced. */
  maxBufferedBytes?: number;
  /** Periods a consumer may stay behind before it is closed. */
  maxPeriodsBehind?: number;
  /** Held-back messages beyond which a consumer is closed at once. */
  maxPendingMessages?: number;
  /** How long the upstream may give a followed channel nothing before its subscribers hear `stale` (default 5 s); also how often it is repeated. */
  staleMs?: number;
}

export const DEFAULTS: Required<MarketStreamOptions> = {
  pollMs: 1_000,
  pingMs: 15_000,
  silenceMs: 30_000,
  maxSubscriptions: 1_000,
  maxMessagesPerSecond: 50,
  bookConcurrency: 8,
  booksPerPeriod: 100,
  allBooksPerPeriod: 20,
  marketsPageSize: 1_000,
  tradesPageSize: 1_000,
  maxTradePages: 5,
  tradeOverlapSeconds: 10,
  maxBufferedBytes: 1 << 20,
  maxPeriodsBehind: 10,
  maxPendingMessages: 50_000,
  staleMs: 5_000,
};

export interface MarketStreamDependencies {
  catalog: CatalogHolder;
  /** Order books, parsed and validated as the REST relay serves them. */
  relay: MarketRelay;
  /** The same upstream client, for the markets list and the trade tape. */
  upstream: Upstream;
  /** Where messages are published and heard: this instance alone (the default), or the deployment through Redis. */
  feed?: MarketFeed;
  logger?: { error(object: object, message: string): void };
  /** Hears every data frame this instance publishes into the feed, numbered, in order (the archive's recorder). */
  recordFrames?: (channel: MarketChannel, entries: readonly FeedEntry[]) => void;
}

/** What the upstream readers of the leader share with the hub. */
export interface UpstreamReading {
  deps: MarketStreamDependencies;
  feed: MarketFeed;
  options: Required<MarketStreamOptions>;
  /** Whether the hub stopped: nothing read after that is published. */
  stopped(): boolean;
  logFailure(what: string, error: unknown, extra?: object): void;
}
