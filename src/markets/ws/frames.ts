/** The frames of the market-data stream, as serialized once for every connection that gets them. */
import type { ReferenceBook } from "../../upstream/relay.js";
import type { FeedEntry, MarketChannel, Publication } from "../market-feed.js";

/** An entry with its frame, serialized once for every connection that gets it. */
export interface Framed extends FeedEntry {
  frame: string;
}

/** An entry with its frame: the message with `seq` and `ts` appended. */
export function framed(entry: FeedEntry): Framed {
  return { ...entry, frame: `${entry.message.slice(0, -1)},"seq":${entry.seq},"ts":${entry.ts}}` };
}

/**
 * The key a held-back message is coalesced under: the latest price and book per market replaces the
 * one before, every trade is kept. Keys are `channel|ticker`, `trades|ticker|seq` or `control|...`.
 */
export function messageKey(channel: MarketChannel, entry: FeedEntry): string {
  return channel === "trades" ? `trades|${entry.ticker}|${entry.seq}` : `${channel}|${entry.ticker}`;
}

export function staleFrame(channel: MarketChannel, ageMs: number): object {
  return { channel, type: "stale", age_ms: ageMs, ts: Date.now() };
}

export function bookMessage(ticker: string, book: ReferenceBook): Publication {
  return {
    ticker,
    message: JSON.stringify({
      channel: "orderbook",
      type: "orderbook",
      market_ticker: ticker,
      yes_bids: book.yes_bids,
      no_bids: book.no_bids,
    }),
  };
}

export function priceMessage(
  ticker: string,
  quote: Record<"yes_bid" | "yes_ask" | "no_bid" | "no_ask", string | null>,
): Publication {
  return {
    ticker,
    message: JSON.stringify({ channel: "prices", type: "ticker", market_ticker: ticker, ...quote }),
  };
}

/** A trade of the upstream's tape, as the relay's reference shape normalizes it. */
export interface ReferenceTrade {
  tradeId: string;
  ticker: string;
  price: number;
  count: number;
  yesPrice: number;
  noPrice: number;
  yesPriceDollars: string;
  noPriceDollars: string;
  takerSide: string;
  createdTime: number;
}

export function tradeMessage(trade: ReferenceTrade, createdMs: number): Publication {
  return {
    ticker: trade.ticker,
    id: trade.tradeId,
    message: JSON.stringify({
      channel: "trades",
      type: "trade",
      market_ticker: trade.ticker,
      trade_id: trade.tradeId,
      price: trade.price,
      count: trade.count,
      yes_price: trade.yesPrice,
      no_price: trade.noPrice,
      yes_price_dollars: trade.yesPriceDollars,
      no_price_dollars: trade.noPriceDollars,
      taker_side: trade.takerSide,
      created_time: createdMs,
    }),
  };
}
