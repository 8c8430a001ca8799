/**
 * Stream clients for both WebSockets (`/quote-stream` and `/api/v1/ws`): they keep their
 * subscriptions, reconnect after a drop with capped exponential backoff, and subscribe again, so a
 * consumer sees one continuous stream of messages across outages. The `/api/v1/ws` client resumes:
 * it subscribes again from the last `seq` it saw per channel (on whichever instance it reaches), so
 * it gets what it missed, or a `gap` frame it reports through `onGap`; `stale` and `recovered` frames
 * reach `onStale`.
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

export interface QuoteFrame {
  u: number;
  ts: number;
  subscribe?: { sb: string; sq: string; auto: boolean }[];
  unsubscribe?: { sb: string; sq: string; auto: boolean }[];
  updates: (
    | { sb: string; sq: string; b: string; B: string; a: string; A: string }
    | { sb: string; sq: string; e: string }
  )[];
}

/** What `/quote-stream` says of the chain: its slot has stood still for `age_ms`, or moves again. */
export type ChainStaleness =
  | { type: "stale"; age_ms: number; ts: number }
  | { type: "recovered"; silent_ms: number; ts: number };

/** The `/quote-stream` client: pairs and the all-prediction-markets subscription survive reconnections. */
export class QuoteStreamClient extends StreamClient<
  QuoteFrame | ChainStaleness | { type: "bad_request"; message: string }
> {
  /** Calls `listener` when the server says the chain stands still (again, with its age), and when it moves again. */
  onStale(listener: (state: ChainStaleness) => void): () => void {
    return this.onMessage((message) => {
      if ("type" in message && (message.type === "stale" || message.type === "recovered")) listener(message);
    });
  }

  /** `baseUrl` is the venue's HTTP base URL, e.g. http://127.0.0.1:8080. */
  static connect(baseUrl: string, options: Omit<StreamClientOptions, "url"> = {}): QuoteStreamClient {
    return new QuoteStreamClient({
      ...options,
      url: `${baseUrl.replace(/^http/, "ws").replace(/\/+$/, "")}/quote-stream`,
    });
  }

  subscribe(baseMint: string, quoteMint: string): void {
    this.remember(`${baseMint}|${quoteMint}`, {
      op: "subscribe",
      base_mint: baseMint,
      quote_mint: quoteMint,
    });
  }

  unsubscribe(baseMint: string, quoteMint: string): void {
    this.forget(`${baseMint}|${quoteMint}`, {
      op: "unsubscribe",
      base_mint: baseMint,
      quote_mint: quoteMint,
    });
  }

  subscribeAllPredictionMarkets(): void {
    this.remember("all", { op: "subscribe_all_prediction_markets" });
  }

  unsubscribeAllPredictionMarkets(): void {
    this.forget("all", { op: "unsubscribe_all_prediction_markets" });
  }
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
    return new MarketStreamClient({
      ...options,
      url: `${baseUrl.replace(/^http/, "ws").replace(/\/+$/, "")}/api/v1/ws`,
    });
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
