/**
 * One market: candlesticks, the order book as a ladder and a depth chart, and the recent trades, kept
 * live by the `orderbook` and `trades` streams (or polled when the stream cannot be opened). In
 * development the sandbox's trade ticket is loaded beside them.
 */
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { count, getJson, type Market, type OrderBook, settings, type Trade } from "../api";
import { type Level, ladder } from "../book";
import { centsText, clock, dateTime, price } from "../format";
import { emptyText } from "../health";
import { link } from "../router";
import { type FillRecord, fillsOf, historyVersion, walletAddress } from "../sandbox/history";
import { follow, type StreamMessage, streamUnavailable } from "../stream";
import { Candles } from "./Candles";

const TRADES_SHOWN = 40;

/** The market page. */
export function MarketView({ ticker }: { ticker: string }) {
  const [market, setMarket] = useState<Market | null>(null);
  const [error, setError] = useState("");
  const [book, setBook] = useState<OrderBook | null>(null);
  const [trades, setTrades] = useState<Trade[]>([]);
  const [Ticket, setTicket] = useState<ComponentType<{ market: Market; book: OrderBook | null }> | null>(
    null,
  );
  const [SimControls, setSimControls] = useState<ComponentType<{
    ticker: string;
    status: string;
    onChanged: () => void;
  }> | null>(null);
  const reload = () =>
    getJson<Market>(`/api/v1/market/${encodeURIComponent(ticker)}`).then(setMarket, () => {});

  useEffect(() => {
    setMarket(null);
    getJson<Market>(`/api/v1/market/${encodeURIComponent(ticker)}`).then(setMarket, (failure: Error) =>
      setError(failure.message),
    );
  }, [ticker]);

  useEffect(() => {
    if (!settings.value.simulator) return;
    import("../sandbox/SimControls").then((module) => setSimControls(() => module.MarketSimControls));
  }, [settings.value.simulator]);

  // Read again once a minute until it settles, so a page left open offers Redeem when it does.
  const settling = market !== null && market.status !== "determined" && market.status !== "finalized";
  useEffect(() => {
    if (!settling) return;
    const timer = setInterval(() => {
      if (document.hidden) return;
      getJson<Market>(`/api/v1/market/${encodeURIComponent(ticker)}`).then(setMarket, () => {});
    }, 60_000);
    return () => clearInterval(timer);
  }, [ticker, settling]);

  useEffect(() => {
    if (!settings.value.sandbox) return;
    // The signing code (@solana/kit) is a chunk of its own: browsing never downloads it.
    import("../sandbox/Ticket").then((module) => setTicket(() => module.Ticket));
  }, [settings.value.sandbox]);

  useEffect(() => {
    let stopped = false;
    const loadBook = () =>
      getJson<OrderBook>(`/api/v1/orderbook/${encodeURIComponent(ticker)}`).then(
        (body) => !stopped && setBook(body),
        () => {},
      );
    const loadTrades = () =>
      getJson<{ trades: Trade[] }>("/api/v1/trades", { ticker, limit: TRADES_SHOWN }).then(
        (body) => !stopped && setTrades((previous) => merge(body.trades, previous)),
        () => {},
      );
    void loadBook();
    void loadTrades();
    if (streamUnavailable()) {
      const timer = setInterval(() => {
        void loadBook();
        void loadTrades();
      }, 2_000);
      return () => {
        stopped = true;
        clearInterval(timer);
      };
    }
    const stopBook = follow("orderbook", ticker, (message) =>
      setBook({
        yes_bids: message.yes_bids as OrderBook["yes_bids"],
        no_bids: message.no_bids as OrderBook["no_bids"],
      }),
    );
    const stopTrades = follow("trades", ticker, (message) =>
      setTrades((previous) => merge([fromStream(message)], previous)),
    );
    return () => {
      stopped = true;
      stopBook();
      stopTrades();
    };
  }, [ticker]);

  // The test wallet's own fills of this market (sandbox only), marked among the tape's trades.
  const recorded = historyVersion.value;
  const own = settings.value.sandbox
    ? fillsOf(walletAddress())
        .filter((fill) => fill.ticker === ticker && fill.kind !== "redeem")
        .map(ownTrade)
    : [];
  const shown: (Trade & { fill?: FillRecord })[] = [...own, ...trades].sort(
    (a, b) => b.createdTime - a.createdTime,
  );

  if (error) return <p class="error">{error}</p>;
  if (!market) return <p class="muted">Loading…</p>;
  const settled = market.status === "determined" || market.status === "finalized";
  // A settled market has no book (the venue answers 404 for it): the last one seen is not shown.
  const levels = book && !settled ? ladder(book) : { bids: [], asks: [] };
  return (
    <article aria-labelledby="market-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={link("/")}>Markets</a> ›{" "}
        <a href={link(`/event/${market.eventTicker}`)}>{market.eventTicker}</a>
      </nav>
      <h1 id="market-title">{market.title}</h1>
      <p class="muted">
        {market.ticker} · <span class={`badge status-${market.status}`}>{market.status}</span>
        {market.result ? ` · result ${market.result}` : ""} · volume {count(market.volume)} · open interest{" "}
        {count(market.openInterest)} · closes {dateTime(market.closeTime)}
      </p>
      {SimControls && <SimControls ticker={ticker} status={market.status} onChanged={() => void reload()} />}
      {/* Once settled, the ticket (the wallet's position and its Redeem) comes first, above the charts. */}
      {Ticket && settled && (
        <div class="settled-ticket">
          <Ticket market={market} book={book} />
        </div>
      )}
      <div class="market-grid">
        <div class="stack">
          <Candles ticker={ticker} />
          <section class="card" aria-labelledby="depth-title">
            <h2 id="depth-title">Depth</h2>
            <Depth bids={levels.bids} asks={levels.asks} />
          </section>
        </div>
        <div class="stack">
          {Ticket && !settled && <Ticket market={market} book={book} />}
          <section class="card" aria-labelledby="book-title">
            <h2 id="book-title">Order book (yes)</h2>
            <Ladder bids={levels.bids} asks={levels.asks} />
          </section>
          <section class="card" aria-labelledby="trades-title">
            <h2 id="trades-title">Recent trades</h2>
            <div class="table-wrap short">
              <table class="small" data-testid="trades" data-own-fills={own.length} data-history={recorded}>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Taker</th>
                    <th scope="col" class="num">
                      Yes price
                    </th>
                    <th scope="col" class="num">
                      Contracts
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {shown.map((trade) => {
                    const fill = trade.fill ?? null;
                    return (
                      <tr
                        key={trade.tradeId}
                        data-trade-id={trade.tradeId}
                        class={fill ? `own-fill${trade.takerSide === "no" ? " down-side" : ""}` : undefined}
                        data-own={fill ? "true" : undefined}
                        data-signature={fill?.signature}
                      >
                        <td>{clock(trade.createdTime)}</td>
                        <td class={trade.takerSide === "yes" ? "up" : "down"}>
                          {fill ? `${fill.kind} ${trade.takerSide}` : trade.takerSide}
                          {fill && (
                            <span class="own-badge" title="A fill of this browser's test wallet">
                              You
                            </span>
                          )}
                        </td>
                        <td class="num">{price(trade.yesPriceDollars)}</td>
                        <td class="num">{count(trade.count)}</td>
                      </tr>
                    );
                  })}
                  {shown.length === 0 && (
                    <tr>
                      <td colSpan={4} class="muted">
                        {emptyText("No trades yet.")}
                      </td>
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
          </section>
        </div>
      </div>
    </article>
  );
}

/** Newest first, each trade once. */
function merge(incoming: Trade[], previous: Trade[]): Trade[] {
  const seen = new Set<string>();
  return [...incoming, ...previous]
    .filter((trade) => !seen.has(trade.tradeId) && seen.add(trade.tradeId))
    .sort((a, b) => b.createdTime - a.createdTime)
    .slice(0, TRADES_SHOWN);
}

/** A fill of the test wallet as a row of the trades list: its price per contract on the yes scale. */
function ownTrade(fill: FillRecord): Trade & { fill: FillRecord } {
  const perContract = Number(fill.usdc) / Number(fill.contracts);
  const yesPrice = fill.side === "yes" ? perContract : 1 - perContract;
  return {
    tradeId: `own-${fill.signature}`,
    ticker: fill.ticker,
    count: Number(fill.contracts) / 1e6,
    yesPriceDollars: yesPrice.toFixed(4),
    noPriceDollars: (1 - yesPrice).toFixed(4),
    takerSide: fill.side,
    createdTime: fill.time,
    fill,
  };
}

function fromStream(message: StreamMessage): Trade {
  return {
    tradeId: String(message.trade_id),
    ticker: String(message.market_ticker),
    count: Number(message.count),
    yesPriceDollars: String(message.yes_price_dollars),
    noPriceDollars: String(message.no_price_dollars),
    takerSide: String(message.taker_side),
    createdTime: Math.floor(Number(message.created_time) / 1000),
  };
}

/** Asks above (best at the bottom), bids below (best at the top), each with a size bar. */
function Ladder({ bids, asks }: { bids: Level[]; asks: Level[] }) {
  const largest = Math.max(1, ...bids.map((level) => level.size), ...asks.map((level) => level.size));
  const row = (side: "bid" | "ask", level: Level) => (
    <tr
      key={`${side}-${level.price}`}
      class={side}
      data-side={side}
      data-price={level.price}
      data-size={level.size}
    >
      <td class="num">{price(level.price)}</td>
      <td class="num bar-cell">
        <span class="bar" style={{ width: `${(level.size / largest) * 100}%` }} />
        <span class="bar-label">{count(level.size)}</span>
      </td>
      <td class="num muted">{count(level.cumulative)}</td>
    </tr>
  );
  const spread =
    bids[0] && asks[0] ? `spread ${centsText((Number(asks[0].price) - Number(bids[0].price)) * 100)}` : "";
  return (
    <table class="ladder small" data-testid="ladder">
      <thead>
        <tr>
          <th scope="col" class="num">
            Price
          </th>
          <th scope="col" class="num">
            Contracts
          </th>
          <th scope="col" class="num">
            Total
          </th>
        </tr>
      </thead>
      <tbody>
        {[...asks].reverse().map((level) => row("ask", level))}
        <tr class="spread">
          <td colSpan={3} class="muted">
            {spread || "no two-sided book"}
          </td>
        </tr>
        {bids.map((level) => row("bid", level))}
      </tbody>
    </table>
  );
}

/** Cumulative contracts by yes price: bids to the left of the spread, asks to the right. */
function Depth({ bids, asks }: { bids: Level[]; asks: Level[] }) {
  const width = 600;
  const height = 180;
  if (bids.length === 0 && asks.length === 0) return <p class="muted">{emptyText("Empty book.")}</p>;
  const prices = [...bids, ...asks].map((level) => Number(level.price));
  const low = Math.min(...prices);
  const high = Math.max(...prices);
  const most = Math.max(1, bids.at(-1)?.cumulative ?? 0, asks.at(-1)?.cumulative ?? 0);
  const x = (price: number) => ((price - low) / Math.max(high - low, 0.0001)) * (width - 20) + 10;
  const y = (size: number) => height - 20 - (size / most) * (height - 30);
  const steps = (levels: Level[]) => {
    let path = "";
    let previous = 0;
    for (const level of levels) {
      const px = x(Number(level.price));
      path += ` L${px},${y(previous)} L${px},${y(level.cumulative)}`;
      previous = level.cumulative;
    }
    return { path, last: levels.at(-1) };
  };
  const area = (levels: Level[]) => {
    const { path, last } = steps(levels);
    if (!last || !levels[0]) return "";
    const start = x(Number(levels[0].price));
    const end = x(Number(last.price));
    return `M${start},${y(0)}${path} L${end},${y(0)} Z`;
  };
  return (
    <svg
      class="depth"
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={`Depth: ${bids.at(-1)?.cumulative ?? 0} contracts bid, ${asks.at(-1)?.cumulative ?? 0} offered`}
    >
      <path class="depth-bid" d={area(bids)} />
      <path class="depth-ask" d={area(asks)} />
      <line class="axis" x1="0" x2={width} y1={height - 20} y2={height - 20} />
      <text x="10" y={height - 5} class="axis-label">
        {price(low)}
      </text>
      <text x={width - 10} y={height - 5} class="axis-label" text-anchor="end">
        {price(high)}
      </text>
      <text x="10" y="14" class="axis-label">
        {count(most)}
      </text>
    </svg>
  );
}
