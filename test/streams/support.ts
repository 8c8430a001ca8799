/** Helpers of the stream tests: a recording WebSocket client, a hub behind its own listener, a scripted upstream tape. */
import websocket from "@fastify/websocket";
import Fastify from "fastify";
import WebSocket from "ws";
import type { CatalogHolder } from "../../src/markets/catalog-holder.js";
import type { MarketFeed } from "../../src/markets/market-feed.js";
import { MarketStreamHub, type MarketStreamOptions } from "../../src/markets/ws.js";
import type { Upstream, UpstreamAnswer } from "../../src/upstream/client.js";
import { UpstreamError } from "../../src/upstream/errors.js";
import { MarketRelay } from "../../src/upstream/relay.js";

export interface Frame {
  channel?: string;
  type: string;
  market_ticker?: string;
  trade_id?: string;
  seq?: number;
  ts?: number;
  age_ms?: number;
  [field: string]: unknown;
}

/** A client that records every frame; `until` resolves on the first frame (recorded or arriving) that matches. */
export async function recordingClient(url: string) {
  const socket = new WebSocket(url);
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  socket.on("message", (data) => {
    frames.push(JSON.parse(data.toString()) as Frame);
    for (const waiter of waiters) waiter();
  });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const until = (predicate: (frames: Frame[]) => boolean, timeoutMs = 10_000, what = "a frame") =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!predicate(frames)) return;
        finish();
        resolve();
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(`${what} did not arrive within ${timeoutMs} ms; got ${JSON.stringify(frames.slice(-5))}`),
        );
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  return {
    socket,
    frames,
    until,
    send: (message: unknown) => socket.send(JSON.stringify(message)),
    trades: () => frames.filter((f) => f.type === "trade"),
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      const closed = new Promise((resolve) => socket.once("close", resolve));
      socket.close();
      await closed;
    },
  };
}

/** One instance's `/api/v1/ws`: a hub on `feed`, behind a listener of its own. */
export async function hubInstance(
  catalog: CatalogHolder,
  upstream: Upstream,
  feed: MarketFeed,
  options: MarketStreamOptions = {},
) {
  const hub = new MarketStreamHub(
    { catalog, relay: new MarketRelay(upstream), upstream, feed },
    { pollMs: 100, ...options },
  );
  await hub.start();
  const app = Fastify();
  await app.register(websocket);
  const sockets = new Set<WebSocket>();
  app.get("/ws", { websocket: true }, (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    hub.accept(socket);
  });
  const url = `${(await app.listen({ host: "127.0.0.1", port: 0 })).replace("http", "ws")}/ws`;
  let stopped = false;
  return {
    hub,
    url,
    /** Cuts the newest connection, as a network failure does. */
    dropNewest() {
      [...sockets].at(-1)?.terminate();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await hub.stop();
      await app.close();
    },
  };
}

/**
 * An upstream whose trade tape the test writes (one trade per `add`, timed now), whose markets list
 * is empty and whose books are unknown; `silent` makes every call fail as a down upstream does.
 */
export class ScriptedTape implements Upstream {
  private readonly trades: {
    trade_id: string;
    ticker: string;
    created_time: string;
    yes_price: number;
    no_price: number;
    count: number;
    taker_side: string;
  }[] = [];
  requests = 0;
  silent = false;

  constructor(private readonly ticker: string) {}

  /** Adds a trade now (of the tape's market, or `ticker`); returns its id. */
  add(ticker = this.ticker): string {
    const id = `T${String(this.trades.length + 1).padStart(6, "0")}`;
    this.trades.push({
      trade_id: id,
      ticker,
      created_time: new Date().toISOString(),
      yes_price: 40,
      no_price: 60,
      count: 1,
      taker_side: "yes",
    });
    return id;
  }

  /** Every trade id written (of `ticker`, when given), in order. */
  ids(ticker?: string): string[] {
    return this.trades.filter((trade) => !ticker || trade.ticker === ticker).map((trade) => trade.trade_id);
  }

  async get(path: string, query?: URLSearchParams): Promise<UpstreamAnswer> {
    this.requests += 1;
    if (this.silent) throw new UpstreamError("unavailable", "the scripted upstream is down");
    if (path === "markets/trades") {
      const since = Number(query?.get("min_ts") ?? 0) * 1000;
      const trades = this.trades.filter((t) => Date.parse(t.created_time) >= since).reverse();
      return json({ trades, cursor: "" });
    }
    if (path === "markets") return json({ markets: [], cursor: "" });
    return { status: 404, contentType: "application/json", body: Buffer.from("{}") };
  }

  async close(): Promise<void> {}
}

function json(body: unknown): UpstreamAnswer {
  return { status: 200, contentType: "application/json", body: Buffer.from(JSON.stringify(body)) };
}

/** Resolves once `holds()` is true, checked every 20 ms (for state no frame announces); rejects after `timeoutMs`. */
export async function whenTrue(holds: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!holds()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
