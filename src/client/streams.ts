/**
 * Stream clients for both WebSockets (`/quote-stream` and `/api/v1/ws`): they keep their
 * subscriptions, reconnect after a drop with capped exponential backoff, and subscribe again, so a
 * consumer sees one continuous stream of messages across outages.
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
      for (const message of this.subscriptions.values()) socket.send(JSON.stringify(message));
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

/** The `/quote-stream` client: pairs and the all-prediction-markets subscription survive reconnections. */
export class QuoteStreamClient extends StreamClient<QuoteFrame | { type: "bad_request"; message: string }> {
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

/** A message of `/api/v1/ws`: a price tick, a trade or an order book, or a refusal. */
export type MarketStreamMessage =
  | {
      channel: "prices";
      type: "ticker";
      market_ticker: string;
      yes_bid: string | null;
      yes_ask: string | null;
      no_bid: string | null;
      no_ask: string | null;
    }
  | {
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
    }
  | {
      channel: "orderbook";
      type: "orderbook";
      market_ticker: string;
      yes_bids: Record<string, number>;
      no_bids: Record<string, number>;
    }
  | { type: "bad_request"; message: string };

/** The `/api/v1/ws` client: each channel's subscriptions survive reconnections. */
export class MarketStreamClient extends StreamClient<MarketStreamMessage> {
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
}
