/**
 * /api/v1/ws with real `ws` clients against the whole server and its simulator: prices consistent
 * with the relayed order book, order-book snapshots on subscribe, the trade tape (milliseconds, no
 * repeats), error frames that keep the socket open, unsubscribing, upstream faults that leave streams
 * open, and the upgrade's access rules in production.
 */
import websocket from "@fastify/websocket";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { MarketStreamHub } from "../../src/markets/ws.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { MarketRelay } from "../../src/upstream/relay.js";
import { startTestServer, type TestServer, testCatalogue } from "../support/server.js";
import { expectProductionStreamAccess } from "../support/streams.js";

interface Message {
  channel?: string;
  type: string;
  market_ticker?: string;
  message?: string;
  [field: string]: unknown;
}

interface Book {
  yes_bids: Record<string, number>;
  no_bids: Record<string, number>;
}

/**
 * The simulator's clock runs this many times faster than the real one, so that its markets trade
 * every second or so rather than a few times a minute: the trade tape has something to stream at once.
 */
const SPEED = 30;
const started = Date.now() / 1000;
/** The simulator's clock, in Unix seconds. */
const simulatorNow = () => Math.floor(started + (Date.now() / 1000 - started) * SPEED);

let simulator: RunningSimulator;
let t: TestServer;
let tickers: string[];
beforeAll(async () => {
  simulator = await startSimulator({ catalogue: await testCatalogue(), port: 0, now: simulatorNow });
  t = await startTestServer({ settings: { UPSTREAM_URL: simulator.url } });
  tickers = t.server.catalog
    .require()
    .markets.filter((m) => m.record.status === "active")
    .map((m) => m.record.ticker);
}, 120_000);
afterAll(async () => {
  await t?.stop();
  await simulator?.close();
});

const streamUrl = (base = t.url) => `${base.replace("http", "ws")}/api/v1/ws`;

/** A hub of its own over the test server's catalogue and upstream, on a Fastify app of its own. */
async function standaloneHub(options: ConstructorParameters<typeof MarketStreamHub>[1]) {
  const upstream = t.server.upstream.client;
  const hub = new MarketStreamHub(
    { catalog: t.server.catalog, relay: new MarketRelay(upstream), upstream },
    options,
  );
  void hub.start();
  const app = Fastify();
  await app.register(websocket);
  app.get("/ws", { websocket: true }, (socket) => hub.accept(socket));
  const url = `${(await app.listen({ host: "127.0.0.1", port: 0 })).replace("http", "ws")}/ws`;
  return {
    url,
    async stop() {
      await hub.stop();
      await app.close();
    },
  };
}

/** A client that records every message it receives. */
async function connect(url = streamUrl()) {
  const socket = new WebSocket(url);
  const messages: Message[] = [];
  socket.on("message", (data) => messages.push(JSON.parse(data.toString()) as Message));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const next = async (predicate: (message: Message) => boolean, timeoutMs = 10_000): Promise<Message> => {
    let found: Message | undefined;
    const take = () => {
      const index = messages.findIndex(predicate);
      if (index >= 0) found = messages.splice(0, index + 1).pop();
      return found !== undefined;
    };
    await arrival(socket, take, timeoutMs).catch(() => {
      throw new Error(`no such message; got ${JSON.stringify(messages).slice(0, 500)}`);
    });
    return found as Message;
  };
  return { socket, messages, next, send: (message: unknown) => socket.send(JSON.stringify(message)) };
}

/** Resolves once `arrived()` holds, checked on each message the socket receives; rejects after `timeoutMs`. */
function arrival(socket: WebSocket, arrived: () => boolean, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!arrived()) return;
      finish();
      resolve();
    };
    const timer = setTimeout(() => {
      finish();
      reject(new Error(`nothing arrived within ${timeoutMs} ms`));
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      socket.off("message", check);
    };
    // Registered after the client's own listener, so the message is recorded when this runs.
    socket.on("message", check);
    check();
  });
}

async function restBook(ticker: string): Promise<Book> {
  const response = await fetch(`${t.url}/api/v1/orderbook/${ticker}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Book;
}

const best = (side: Record<string, number>) => Math.max(...Object.keys(side).map(Number));
const DOLLARS = /^(0|1)\.\d{4}$/;

describe("/api/v1/ws", () => {
  it("counts its connected clients in /metrics (oddsgate_stream_clients), as the operations view shows", async () => {
    const clients = async () => {
      const text = await (await fetch(`${t.url}/metrics`)).text();
      return Number(/^oddsgate_stream_clients\{stream="\/api\/v1\/ws"\} (\d+)$/m.exec(text)?.[1]);
    };
    const before = await clients();
    expect(Number.isInteger(before)).toBe(true);
    const client = await connect();
    await expect.poll(clients).toBe(before + 1);
    client.socket.close();
    await expect.poll(clients).toBe(before);
  });

  it("answers plain HTTP with a {code,msg} 426 that says to open a WebSocket", async () => {
    const response = await fetch(`${t.url}/api/v1/ws`);
    expect(response.status).toBe(426);
    expect(response.headers.get("upgrade")).toBe("websocket");
    expect(await response.json()).toEqual({
      code: "upgrade_required",
      msg: expect.stringContaining("WebSocket"),
    });
  });

  it("sends a market's prices on subscribe, consistent with its relayed order book", async () => {
    const ticker = tickers[0] as string;
    const client = await connect();
    try {
      client.send({ type: "subscribe", channel: "prices", tickers: [ticker] });
      let price = await client.next((m) => m.channel === "prices" && m.market_ticker === ticker);
      expect(Object.keys(price).sort()).toEqual(
        ["channel", "market_ticker", "no_ask", "no_bid", "seq", "ts", "type", "yes_ask", "yes_bid"].sort(),
      );
      expect(price.type).toBe("ticker");
      for (const field of ["yes_bid", "yes_ask", "no_bid", "no_ask"]) expect(price[field]).toMatch(DOLLARS);
      // The book and the quote are read moments apart; a price that moved in between shows up as a new message.
      for (let attempt = 0; ; attempt++) {
        const book = await restBook(ticker);
        const latest = client.messages.filter((m) => m.type === "ticker").pop();
        if (latest) price = latest;
        client.messages.length = 0;
        const expected = {
          yes_bid: best(book.yes_bids).toFixed(4),
          yes_ask: (1 - best(book.no_bids)).toFixed(4),
          no_bid: best(book.no_bids).toFixed(4),
          no_ask: (1 - best(book.yes_bids)).toFixed(4),
        };
        const got = {
          yes_bid: price.yes_bid,
          yes_ask: price.yes_ask,
          no_bid: price.no_bid,
          no_ask: price.no_ask,
        };
        if (JSON.stringify(got) === JSON.stringify(expected) || attempt === 3) {
          expect(got).toEqual(expected);
          break;
        }
        // The stream sends the moved price at the end of its next period.
        await t.server.marketStream.nextPoll();
      }
    } finally {
      client.socket.close();
    }
  });

  it("sends a full order-book snapshot right after subscribing, to every subscriber", async () => {
    const ticker = tickers[1] as string;
    // A hub whose next period is an hour away: a snapshot that arrives was read on subscribe.
    const hub = await standaloneHub({ pollMs: 3_600_000 });
    const first = await connect(hub.url);
    const second = await connect(hub.url);
    try {
      first.send({ type: "subscribe", channel: "orderbook", tickers: [ticker] });
      const snapshot = await first.next((m) => m.channel === "orderbook" && m.market_ticker === ticker);
      expect(Object.keys(snapshot).sort()).toEqual([
        "channel",
        "market_ticker",
        "no_bids",
        "seq",
        "ts",
        "type",
        "yes_bids",
      ]);
      expect(snapshot.type).toBe("orderbook");
      const book = await restBook(ticker);
      for (const side of ["yes_bids", "no_bids"] as const) {
        const levels = snapshot[side] as Record<string, number>;
        expect(Object.keys(levels).length).toBeGreaterThan(0);
        for (const [price, size] of Object.entries(levels)) {
          expect(price).toMatch(DOLLARS);
          expect(Number.isInteger(size) && size > 0).toBe(true);
        }
        // The same number of levels as the relay serves (sizes may have moved since).
        expect(Object.keys(levels).length).toBe(Object.keys(book[side]).length);
      }
      // A second subscriber to the same market gets the snapshot at once too.
      second.send({ type: "subscribe", channel: "orderbook", tickers: [ticker] });
      const again = await second.next((m) => m.type === "orderbook");
      expect(again.market_ticker).toBe(ticker);
    } finally {
      first.socket.close();
      second.socket.close();
      await hub.stop();
    }
  });

  it("streams each new trade once, with created_time in milliseconds", async () => {
    const client = await connect();
    try {
      // The venue asks for the trades since its own clock's time; the simulator's clock is ahead of it.
      const subscribedAt = Date.now();
      client.send({ type: "subscribe", channel: "trades", all: true });
      // All the demo's markets together trade a few times a (simulated) minute, fewer as the date moves
      // past TEST_ANCHOR and markets close, with gaps of a minute or more: hence the wide deadline.
      await arrival(client.socket, () => client.messages.some((m) => m.type === "trade"), 120_000);
      // Two more completed periods: a trade sent again by the first would have arrived by the end of the second.
      await t.server.marketStream.nextPoll();
      await t.server.marketStream.nextPoll();
      const trades = client.messages.filter((m) => m.type === "trade");
      expect(trades.length).toBeGreaterThan(0);
      const ids = trades.map((trade) => trade.trade_id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const trade of trades) {
        expect(Object.keys(trade).sort()).toEqual(
          [
            "channel",
            "count",
            "created_time",
            "market_ticker",
            "no_price",
            "no_price_dollars",
            "price",
            "seq",
            "taker_side",
            "trade_id",
            "ts",
            "type",
            "yes_price",
            "yes_price_dollars",
          ].sort(),
        );
        expect(trade.type).toBe("trade");
        expect(trade.created_time).toBeGreaterThan(1e12);
        expect(trade.created_time as number).toBeGreaterThanOrEqual(
          Math.floor(subscribedAt / 1000) * 1000 - 1_000,
        );
        expect(trade.created_time as number).toBeLessThanOrEqual((simulatorNow() + 1) * 1000);
        expect((trade.yes_price as number) + (trade.no_price as number)).toBe(100);
        expect(trade.yes_price_dollars).toBe(((trade.yes_price as number) / 100).toFixed(4));
        expect(["yes", "no"]).toContain(trade.taker_side);
      }
      // The same trade on the REST tape, in seconds there.
      const trade = trades[0] as Message;
      const page = (await (
        await fetch(`${t.url}/api/v1/trades?ticker=${trade.market_ticker}&limit=50`)
      ).json()) as { trades: { tradeId: string; createdTime: number; count: number }[] };
      const same = page.trades.find((row) => row.tradeId === trade.trade_id);
      expect(same?.createdTime).toBe(Math.floor((trade.created_time as number) / 1000));
      expect(same?.count).toBe(trade.count);
    } finally {
      client.socket.close();
    }
  }, 150_000);

  it("answers bad messages with bad_request frames and stays open", async () => {
    const client = await connect();
    try {
      client.socket.send("not json");
      expect((await client.next((m) => m.type === "bad_request")).message).toContain("JSON");
      client.send({ type: "subscribe", channel: "weather", all: true });
      expect((await client.next((m) => m.type === "bad_request")).message).toContain("channel");
      client.send({ type: "subscribe", channel: "prices" });
      expect((await client.next((m) => m.type === "bad_request")).message).toContain("all:true or tickers");
      client.send({ type: "subscribe", channel: "orderbook", tickers: [tickers[0], "NOPE-1", "NOPE-2"] });
      const unknown = await client.next((m) => m.type === "bad_request");
      expect(unknown.message).toContain("NOPE-1");
      expect(unknown.message).toContain("NOPE-2");
      expect(unknown.message).not.toContain(tickers[0]);
      // Still open and serving.
      expect(client.socket.readyState).toBe(WebSocket.OPEN);
      client.send({ type: "subscribe", channel: "orderbook", tickers: [tickers[0]] });
      expect((await client.next((m) => m.type === "orderbook")).market_ticker).toBe(tickers[0]);
    } finally {
      client.socket.close();
    }
  });

  it("subscribes to every market's prices and stops after unsubscribing", async () => {
    const client = await connect();
    try {
      client.send({ type: "subscribe", channel: "prices", all: true });
      // One page of the open markets: many quotes at once.
      const quoted = new Set<unknown>();
      await arrival(
        client.socket,
        () => {
          for (const message of client.messages.splice(0)) quoted.add(message.market_ticker);
          return quoted.size > 50;
        },
        10_000,
      );
      client.send({ type: "unsubscribe", channel: "prices", all: true });
      // Requests are handled in order: once this one is answered, the unsubscribe has been.
      client.socket.send("not json");
      await client.next((m) => m.type === "bad_request");
      client.messages.length = 0;
      // Two whole periods, each of which would have sent prices to a subscriber (nothing to wait on
      // but the periods themselves), then one more answered request so that anything sent has arrived.
      await t.server.marketStream.nextPoll();
      await t.server.marketStream.nextPoll();
      await t.server.marketStream.nextPoll();
      client.socket.send("not json");
      await client.next((m) => m.type === "bad_request");
      expect(client.messages).toEqual([]);
      expect(client.socket.readyState).toBe(WebSocket.OPEN);
    } finally {
      client.socket.close();
    }
  });

  it("keeps streams open through upstream faults and resumes after them", async () => {
    const controls = `${new URL(simulator.url).origin}/_sim/faults`;
    const ticker = tickers[2] as string;
    const client = await connect();
    try {
      client.send({ type: "subscribe", channel: "orderbook", tickers: [ticker] });
      client.send({ type: "subscribe", channel: "trades", all: true });
      await client.next((m) => m.type === "orderbook");
      const put = await fetch(controls, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify([
          { kind: "status", status: 500, match: "orderbook", times: 2 },
          { kind: "malformed", match: "markets/trades", times: 2 },
        ]),
      });
      expect(put.status).toBe(200);
      // The faults are spent by the stream's own polling.
      await expect
        .poll(async () => ((await (await fetch(controls)).json()) as { faults: unknown[] }).faults, {
          timeout: 15_000,
          interval: 100,
        })
        .toEqual([]);
      expect(client.socket.readyState).toBe(WebSocket.OPEN);
      // Served again: a new subscription gets its snapshot.
      client.send({ type: "subscribe", channel: "orderbook", tickers: [tickers[3]] });
      expect(
        (await client.next((m) => m.channel === "orderbook" && m.market_ticker === tickers[3])).type,
      ).toBe("orderbook");
    } finally {
      await fetch(controls, { method: "DELETE" });
      client.socket.close();
    }
  }, 20_000);
});

describe("MarketStreamHub connection rules", () => {
  it("closes a peer that stops answering pings, keeps one that answers, and limits its message rate", async () => {
    const hub = await standaloneHub({
      pollMs: 100,
      pingMs: 100,
      // Wide enough that the lively client answers in time on a loaded machine.
      silenceMs: 1_500,
      maxMessagesPerSecond: 3,
      maxSubscriptions: 2,
    });
    const url = hub.url;
    try {
      const silent = new WebSocket(url, { autoPong: false });
      const lively = await connect(url);
      await new Promise((resolve) => silent.once("close", resolve));
      expect(lively.socket.readyState).toBe(WebSocket.OPEN);
      lively.send({ type: "subscribe", channel: "prices", tickers: tickers.slice(0, 3) });
      expect((await lively.next((m) => m.type === "bad_request")).message).toContain("at most 2");
      for (let i = 0; i < 3; i++) lively.send({ type: "unsubscribe", channel: "trades", all: true });
      expect((await lively.next((m) => m.type === "bad_request")).message).toContain("per second");
      expect(lively.socket.readyState).toBe(WebSocket.OPEN);
      lively.socket.close();
    } finally {
      await hub.stop();
    }
  });
});

describe("/api/v1/ws access in production", () => {
  it(
    "needs a key with the streams permission, in a header",
    () => expectProductionStreamAccess("/api/v1/ws"),
    60_000,
  );
});
