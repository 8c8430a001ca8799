/**
 * Stream clients for the WebSockets (`/quote-stream`, `/book-stream` and `/api/v1/ws`): they keep
 * their subscriptions, reconnect after a drop with capped exponential backoff, and subscribe again, so
 * a consumer sees one continuous stream of messages across outages. Each resumes: it subscribes again
 * from the last `seq` it saw (per channel on `/api/v1/ws`, per pair on the pair streams; on whichever
 * instance it reaches), so it gets what it missed, or a `gap` frame it reports through `onGap`;
 * `stale` and `recovered` frames reach `onStale`.
 */
import WebSocket from "ws";

export interface StreamClientOptions {
  /** ws:// or wss:// URL of the stream. */
  url: string;
  /** Sent as `x-api-key` on the upgrade (never in the URL). */
  apiKey?: string;
  /** First reconnection delay (default 250 ms), doubled per failure up to `maxBackoffMs` (default 10 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/** A resilient JSON stream: `subscribe` remembers, `onMessage` hears every message, `close` stops it. */
export class StreamClient<Message = unknown> {
  private socket: WebSocket | undefined;
  private readonly subscriptions = new Map<string, unknown>();
  private readonly listeners = new Set<(message: Message) => void>();
  private readonly openListeners = new Set<() => void>();
  private closed = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: StreamClientOptions) {
    this.connect();
  }

  /** Calls `listener` with every message; returns a function that stops it. */
  onMessage(listener: (message: Message) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls `listener` on every (re)connection, after the subscriptions have been sent again. */
  onOpen(listener: () => void): () => void {
    this.openListeners.add(listener);
    return () => this.openListeners.delete(listener);
  }

  /** Sends `message` now (when connected) and again after every reconnection, until `forget(key)`. */
  remember(key: string, message: unknown): void {
    this.subscriptions.set(key, message);
    this.send(message);
  }

  /** Stops re-sending a remembered message and sends `message` (its undoing) once. */
  forget(key: string, message: unknown): void {
    this.subscriptions.delete(key);
    this.send(message);
  }

  /** Whether the socket is open now. */
  get connected(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.socket?.close();
  }

  /** What to send for a remembered message after a reconnection (itself, unless a stream resumes). */
  protected resubscription(message: unknown): unknown {
    return message;
  }

  private send(message: unknown): void {
    if (this.connected) this.socket?.send(JSON.stringify(message));
  }

  private connect(): void {
    const socket = new WebSocket(this.options.url, {
      headers: this.options.apiKey ? { "x-api-key": this.options.apiKey } : {},
    });
    this.socket = socket;
    socket.on("open", () => {
      this.attempt = 0;
      for (const message of this.subscriptions.values())
        socket.send(JSON.stringify(this.resubscription(message)));
      for (const listener of this.openListeners) listener();
    });
    socket.on("message", (data) => {
      let message: Message;
      try {
        message = JSON.parse(data.toString()) as Message;
      } catch {
        return;
      }
      for (const listener of this.listeners) listener(message);
    });
    // An error is always followed by close, where the reconnection is scheduled.
    socket.on("error", () => {});
    socket.on("close", () => {
      if (this.closed) return;
      const base = this.options.backoffMs ?? 250;
      const delay = Math.min(base * 2 ** this.attempt, this.options.maxBackoffMs ?? 10_000);
      this.attempt += 1;
      this.timer = setTimeout(() => this.connect(), delay);
    });
  }
}

/** What every pair-stream frame (`/quote-stream`, `/book-stream`) carries: its slot, time and position. */
interface PairFrameHead {
  /** The slot the frame was priced at. */
  u: number;
  /** Server time, Unix seconds. */
  ts: number;
  /** The position its values are as of, the same on every instance: what a subscription resumes from. */
  seq: number;
}

export interface QuoteFrame extends PairFrameHead {
  subscribe?: { sb: string; sq: string; auto: boolean }[];
  unsubscribe?: { sb: string; sq: string; auto: boolean }[];
  updates: (
    | { sb: string; sq: string; b: string; B: string; a: string; A: string }
    | { sb: string; sq: string; e: string }
  )[];
}

/** One level of a `/book-stream` side: its price and the base one direct `/order` can take out to it. */
export interface BookLevel {
  price: number;
  cumulative_size_human: number;
}

export interface BookFrame extends PairFrameHead {
  subscribe?: { sb: string; sq: string }[];
  unsubscribe?: { sb: string; sq: string }[];
  updates: (
    | { sb: string; sq: string; mid: number; tick: number; crossed: boolean; b: BookLevel[]; a: BookLevel[] }
    | { sb: string; sq: string; e: "no_market" }
  )[];
  /** Slots this connection missed since its previous frame. */
  skipped: number;
}

/** What a pair stream says of the chain: its slot has stood still for `age_ms`, or moves again. */
export type ChainStaleness =
  | { type: "stale"; age_ms: number; ts: number }
  | { type: "recovered"; silent_ms: number; ts: number };

/**
 * A resume a pair stream could not serve, for one pair (`sb`, `sq`) or the prediction-market
 * subscription (`all`): values in between were not replayed; the current value follows at once.
 */
export type PairGap =
  | { type: "gap"; sb: string; sq: string; seq: number; ts: number }
  | { type: "gap"; all: true; seq: number; ts: number };

/** A message of a pair stream: a frame, the chain's state, a gap, or a refusal. */
export type PairStreamMessage<Frame> =
  | Frame
  | ChainStaleness
  | PairGap
  | { type: "bad_request"; message: string };

/** The key a pair stream client remembers a subscription under. */
const pairKey = (baseMint: string, quoteMint: string) => `${baseMint}|${quoteMint}`;
const ALL = "all";

/**
 * What the pair-stream clients share: pairs survive reconnections, resumed from the last position
 * seen for each (`since`), so that only what changed comes again, or a `gap` reported by `onGap`.
 */
export class PairStreamClient<
  Frame extends PairFrameHead & {
    subscribe?: { sb: string; sq: string; auto?: boolean }[];
    unsubscribe?: { sb: string; sq: string; auto?: boolean }[];
  },
> extends StreamClient<PairStreamMessage<Frame>> {
  /** The last position seen per remembered subscription (a pair's key, or "all"). */
  private readonly positions = new Map<string, number>();
  /** The subscriptions acknowledged on the current connection: every frame on it brings them up to date. */
  private readonly confirmed = new Set<string>();
  private readonly gapListeners = new Set<(gap: PairGap) => void>();

  constructor(options: StreamClientOptions) {
    super(options);
    // A new connection has acknowledged nothing yet (its resubscriptions were just sent).
    this.onOpen(() => this.confirmed.clear());
    this.onMessage((message) => this.observe(message));
  }

  subscribe(baseMint: string, quoteMint: string): void {
    this.remember(pairKey(baseMint, quoteMint), {
      op: "subscribe",
      base_mint: baseMint,
      quote_mint: quoteMint,
    });
  }

  unsubscribe(baseMint: string, quoteMint: string): void {
    const key = pairKey(baseMint, quoteMint);
    this.positions.delete(key);
    this.confirmed.delete(key);
    this.forget(key, { op: "unsubscribe", base_mint: baseMint, quote_mint: quoteMint });
  }

  /** The last position seen for a pair (undefined before its acknowledgement). */
  position(baseMint: string, quoteMint: string): number | undefined {
    return this.positions.get(pairKey(baseMint, quoteMint));
  }

  /** Calls `listener` when a resume could not be served: the pair's current value follows at once. */
  onGap(listener: (gap: PairGap) => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  /** Calls `listener` when the server says the chain stands still (again, with its age), and when it moves again. */
  onStale(listener: (state: ChainStaleness) => void): () => void {
    return this.onMessage((message) => {
      if ("type" in message && (message.type === "stale" || message.type === "recovered")) listener(message);
    });
  }

  protected override resubscription(message: unknown): unknown {
    const subscription = message as { op?: string; base_mint?: string; quote_mint?: string };
    const key =
      subscription.op === "subscribe"
        ? pairKey(subscription.base_mint ?? "", subscription.quote_mint ?? "")
        : subscription.op === "subscribe_all_prediction_markets"
          ? ALL
          : undefined;
    const since = key === undefined ? undefined : this.positions.get(key);
    return since === undefined ? message : { ...subscription, since };
  }

  /** Forgets the position of the prediction-market subscription (for `QuoteStreamClient`). */
  protected forgetAll(): void {
    this.positions.delete(ALL);
    this.confirmed.delete(ALL);
  }

  private observe(message: PairStreamMessage<Frame>): void {
    if ("type" in message) {
      if (message.type !== "gap") return;
      // The client holds nothing current for it until the acknowledgement brings the value.
      this.positions.delete("all" in message ? ALL : pairKey(message.sb, message.sq));
      for (const listener of this.gapListeners) listener(message);
      return;
    }
    for (const ack of message.subscribe ?? []) this.confirmed.add(ack.auto ? ALL : pairKey(ack.sb, ack.sq));
    for (const ack of message.unsubscribe ?? []) {
      if (ack.auto) continue;
      this.confirmed.delete(pairKey(ack.sb, ack.sq));
      this.positions.delete(pairKey(ack.sb, ack.sq));
    }
    // A frame brings every pair of the connection up to date as of its position.
    if (message.seq > 0) for (const key of this.confirmed) this.positions.set(key, message.seq);
  }
}

/** The `/quote-stream` client: pairs and the all-prediction-markets subscription survive reconnections, resumed. */
export class QuoteStreamClient extends PairStreamClient<QuoteFrame> {
  /** `baseUrl` is the venue's HTTP base URL, e.g. http://127.0.0.1:8080. */
  static connect(baseUrl: string, options: Omit<StreamClientOptions, "url"> = {}): QuoteStreamClient {
    return new QuoteStreamClient({ ...options, url: streamUrl(baseUrl, "/quote-stream") });
  }

  subscribeAllPredictionMarkets(): void {
    this.remember(ALL, { op: "subscribe_all_prediction_markets" });
  }

  unsubscribeAllPredictionMarkets(): void {
    this.forgetAll();
    this.forget(ALL, { op: "unsubscribe_all_prediction_markets" });
  }
}

/** The `/book-stream` client: pairs survive reconnections, resumed. */
export class BookStreamClient extends PairStreamClient<BookFrame> {
  /** `baseUrl` is the venue's HTTP base URL, e.g. http://127.0.0.1:8080. */
  static connect(baseUrl: string, options: Omit<StreamClientOptions, "url"> = {}): BookStreamClient {
    return new BookStreamClient({ ...options, url: streamUrl(baseUrl, "/book-stream") });
  }
}

/** The ws:// URL of a stream from the venue's HTTP base URL. */
function streamUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/^http/, "ws").replace(/\/+$/, "")}${path}`;
}

export type MarketChannel = "prices" | "trades" | "orderbook";

/** What every data frame of `/api/v1/ws` carries: its channel's position (the same on every instance) and when it was published (ms). */
interface Sequenced {
  seq: number;
  ts: number;
}

/** A message of `/api/v1/ws`: a price tick, a trade or an order book, a control frame, or a refusal. */
export type MarketStreamMessage =
  | ({
      channel: "prices";
      type: "ticker";
      market_ticker: string;
      yes_bid: string | null;
      yes_ask: string | null;
      no_bid: string | null;
      no_ask: string | null;
    } & Sequenced)
  | ({
      channel: "trades";
      type: "trade";
      market_ticker: string;
      trade_id: string;
      price: number;
      count: number;
      yes_price: number;
      no_price: number;
      yes_price_dollars: string;
      no_price_dollars: string;
      taker_side: "yes" | "no";
      created_time: number;
    } & Sequenced)
  | ({
      channel: "orderbook";
      type: "orderbook";
      market_ticker: string;
      yes_bids: Record<string, number>;
      no_bids: Record<string, number>;
    } & Sequenced)
  | ({ channel: MarketChannel; type: "subscribed" } & Sequenced)
  | ({ channel: MarketChannel; type: "gap" } & Sequenced)
  | { channel: MarketChannel; type: "stale"; age_ms: number; ts: number }
  | { channel: MarketChannel; type: "recovered"; silent_ms: number; ts: number }
  | { type: "bad_request"; message: string };

/** The upstream's state for a channel, as the server last said: silent for `ageMs`, or answering again. */
export type MarketStaleness =
  | { channel: MarketChannel; stale: true; ageMs: number }
  | { channel: MarketChannel; stale: false; silentMs: number };

/**
 * The `/api/v1/ws` client: each channel's subscriptions survive reconnections, resumed from the last
 * position seen (`seq`), so nothing is missed without a `gap` saying so.
 */
export class MarketStreamClient extends StreamClient<MarketStreamMessage> {
  private readonly positions = new Map<MarketChannel, number>();
  private readonly gapListeners = new Set<(channel: MarketChannel, seq: number) => void>();
  private readonly staleListeners = new Set<(state: MarketStaleness) => void>();

  constructor(options: StreamClientOptions) {
    super(options);
    this.onMessage((message) => this.observe(message));
  }

  /** `baseUrl` is the venue's HTTP base URL, e.g. http://127.0.0.1:8080 (no /api/v1). */
  static connect(baseUrl: string, options: Omit<StreamClientOptions, "url"> = {}): MarketStreamClient {
    return new MarketStreamClient({ ...options, url: streamUrl(baseUrl, "/api/v1/ws") });
  }

  /** Follows `tickers` on `channel`, or every market when `tickers` is "all". */
  subscribe(channel: MarketChannel, tickers: readonly string[] | "all"): void {
    const target = tickers === "all" ? { all: true } : { tickers: [...tickers] };
    this.remember(`${channel}|${tickers === "all" ? "*" : tickers.join(",")}`, {
      type: "subscribe",
      channel,
      ...target,
    });
  }

  unsubscribe(channel: MarketChannel, tickers: readonly string[] | "all"): void {
    const target = tickers === "all" ? { all: true } : { tickers: [...tickers] };
    this.forget(`${channel}|${tickers === "all" ? "*" : tickers.join(",")}`, {
      type: "unsubscribe",
      channel,
      ...target,
    });
  }

  /** The last position seen on `channel` (undefined before its first `subscribed` frame). */
  position(channel: MarketChannel): number | undefined {
    return this.positions.get(channel);
  }

  /**
   * Calls `listener` when frames of `channel` up to `seq` may be missing (after a reconnection the
   * server could not fill, or a hole on its side): prices and books follow as a snapshot; trades
   * before `seq` must be read from `GET /api/v1/trades`.
   */
  onGap(listener: (channel: MarketChannel, seq: number) => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  /** Calls `listener` when the server says a channel's upstream is silent (again, with its age), and when it recovers. */
  onStale(listener: (state: MarketStaleness) => void): () => void {
    this.staleListeners.add(listener);
    return () => this.staleListeners.delete(listener);
  }

  protected override resubscription(message: unknown): unknown {
    const subscription = message as { type?: string; channel?: MarketChannel };
    const since = subscription.channel ? this.positions.get(subscription.channel) : undefined;
    return subscription.type === "subscribe" && since !== undefined ? { ...subscription, since } : message;
  }

  private observe(message: MarketStreamMessage): void {
    if (!("channel" in message)) return;
    if (message.type === "stale" || message.type === "recovered") {
      const state: MarketStaleness =
        message.type === "stale"
          ? { channel: message.channel, stale: true, ageMs: message.age_ms }
          : { channel: message.channel, stale: false, silentMs: message.silent_ms };
      for (const listener of this.staleListeners) listener(state);
      return;
    }
    // Snapshot values may be older than the position; the position only moves forward.
    const seen = this.positions.get(message.channel) ?? 0;
    if (message.type === "gap" || message.seq > seen) this.positions.set(message.channel, message.seq);
    if (message.type === "gap")
      for (const listener of this.gapListeners) listener(message.channel, message.seq);
  }
}
