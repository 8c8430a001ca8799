/**
 * The messages of the WebSocket streams (contract §5–6), as the AsyncAPI document publishes them:
 * what a client sends and what the server sends on `/api/v1/ws`, `/quote-stream`, `/book-stream` and
 * `/priority-fees/stream`. The hubs that speak them (markets/ws.ts, trading/streams/quote-stream.ts,
 * book-stream.ts, pair-stream.ts, routes/priority-fees-stream.ts) build their frames by hand for speed;
 * test/http/api-documents.test.ts checks their frames against these.
 */
import { z } from "zod";
import { USDC_MINT } from "./markets.js";

const MARKET_CHANNELS = ["prices", "trades", "orderbook"] as const;

const marketTickers = z
  .array(z.string().min(1).max(200))
  .min(1)
  .max(1_000)
  .meta({ description: "Market tickers; at most 1,000 followed per connection over all channels" });

const since = z.number().int().min(0).meta({
  description:
    "Resume: the last seq this client saw on the channel (from any instance). The server sends what it missed instead of a snapshot, or a gap frame (then a snapshot) when that is no longer kept",
});

/** `/api/v1/ws`: follow (or stop following) a channel for some tickers or for every market. */
export const MarketStreamRequest = z
  .union([
    z.object({
      type: z.enum(["subscribe", "unsubscribe"]),
      channel: z.enum(MARKET_CHANNELS),
      tickers: marketTickers,
      since: since.optional(),
    }),
    z.object({
      type: z.enum(["subscribe", "unsubscribe"]),
      channel: z.enum(MARKET_CHANNELS),
      all: z.literal(true).meta({ description: "Every market (unsubscribing from all ends the channel)" }),
      since: since.optional(),
    }),
  ])
  .meta({
    title: "MarketStreamRequest",
    description: "Give either tickers or all:true, not both",
    examples: [{ type: "subscribe", channel: "prices", tickers: ["KXHIGHNY-26NOV22-B52.5"] }],
  });

/** What every data frame of `/api/v1/ws` carries besides the contract's fields. */
const sequenced = {
  seq: z.number().int().min(1).meta({
    description:
      "Position in the channel's log, the same on every instance of the deployment; increases frame after frame on a connection's channel",
  }),
  ts: z.number().int().meta({ description: "When the server published the frame, Unix milliseconds" }),
};

const dollarsOrNull = z
  .string()
  .nullable()
  .meta({ description: 'A dollar price, "0.4200"; null without one' });

/** `prices`: a market's best bid and ask, when they change (and on subscribing). */
export const MarketTicker = z
  .object({
    channel: z.literal("prices"),
    type: z.literal("ticker"),
    market_ticker: z.string(),
    yes_bid: dollarsOrNull,
    yes_ask: dollarsOrNull,
    no_bid: dollarsOrNull,
    no_ask: dollarsOrNull,
    ...sequenced,
  })
  .meta({ title: "MarketTicker" });

/** `trades`: each trade after the subscription, in the order they happened. */
export const MarketTrade = z
  .object({
    channel: z.literal("trades"),
    type: z.literal("trade"),
    market_ticker: z.string(),
    trade_id: z.string(),
    price: z.number().meta({ description: "Yes price in cents, 0–100" }),
    count: z.number().int().meta({ description: "Contracts traded" }),
    yes_price: z.number().int().meta({ description: "Cents, 0–100" }),
    no_price: z.number().int().meta({ description: "Cents, 0–100" }),
    yes_price_dollars: z.string().meta({ description: '"0.4200"' }),
    no_price_dollars: z.string().meta({ description: '"0.5800"' }),
    taker_side: z.enum(["yes", "no"]),
    created_time: z.number().int().meta({ description: "Unix milliseconds" }),
    ...sequenced,
  })
  .meta({ title: "MarketTrade" });

const bids = z
  .record(z.string(), z.number())
  .meta({ description: 'Dollar price ("0.4200") → contracts bid at it' });

/** `orderbook`: a market's whole book, right after subscribing and then on every change. */
export const MarketOrderbook = z
  .object({
    channel: z.literal("orderbook"),
    type: z.literal("orderbook"),
    market_ticker: z.string(),
    yes_bids: bids,
    no_bids: bids,
    ...sequenced,
  })
  .meta({ title: "MarketOrderbook" });

const marketChannel = z.enum(MARKET_CHANNELS);
const now = z.number().int().meta({ description: "Server time, Unix milliseconds" });

/** After every subscribe: the position what came before it (snapshot or replay) covers; resume from it. */
export const MarketSubscribed = z
  .object({
    channel: marketChannel,
    type: z.literal("subscribed"),
    seq: z
      .number()
      .int()
      .min(0)
      .meta({ description: "The channel's position this subscription starts after" }),
    ts: now,
  })
  .meta({ title: "MarketSubscribed" });

/** Frames up to `seq` may be missing (not kept any more, or never read): take a fresh snapshot. */
export const MarketGap = z
  .object({
    channel: marketChannel,
    type: z.literal("gap"),
    seq: z.number().int().min(0).meta({
      description:
        "The position to continue from; prices and books follow as a snapshot, trades before it are on GET /api/v1/trades",
    }),
    ts: now,
  })
  .meta({ title: "MarketGap" });

/** The upstream has given nothing for this channel for `age_ms`: repeated while it lasts. */
export const MarketStale = z
  .object({
    channel: marketChannel,
    type: z.literal("stale"),
    age_ms: z.number().int().min(0).meta({ description: "Milliseconds since the upstream last answered" }),
    ts: now,
  })
  .meta({ title: "MarketStale" });

/** The upstream answers again after being stale. */
export const MarketRecovered = z
  .object({
    channel: marketChannel,
    type: z.literal("recovered"),
    silent_ms: z.number().int().min(0).meta({ description: "How long the upstream was silent" }),
    ts: now,
  })
  .meta({ title: "MarketRecovered" });

/** Any stream's answer to a message it cannot take; the socket stays open. */
export const StreamBadRequest = z
  .object({
    type: z.literal("bad_request"),
    message: z.string().meta({ description: "What was wrong, and what the stream expects" }),
  })
  .meta({ title: "StreamBadRequest" });

const mint = (description: string) =>
  z
    .string()
    .min(32)
    .max(44)
    .meta({ description: `${description}, base58`, examples: [USDC_MINT] });

const pairSince = z.number().int().min(0).optional().meta({
  description:
    "Resume: the last seq this client saw for the subscription (from any instance). The acknowledgement then comes with the value only if it changed after that position (the latest value is what was missed), or, when the position is not known (older than the retention of at least 120 s, from the future or another deployment), after a gap frame and with the value",
});

/** `/quote-stream` and `/book-stream`: follow (or stop following) one pair. */
export const PairStreamRequest = z
  .object({
    op: z.enum(["subscribe", "unsubscribe"]),
    base_mint: mint("The base token's mint"),
    quote_mint: mint("The quote token's mint"),
    since: pairSince,
  })
  .meta({ title: "PairStreamRequest" });

/** `/quote-stream` only: follow every prediction market's outcome mints against USDC, or stop (since applies to every pair it adds). */
export const AllPredictionMarketsRequest = z
  .object({
    op: z.enum(["subscribe_all_prediction_markets", "unsubscribe_all_prediction_markets"]),
    since: pairSince,
  })
  .meta({ title: "AllPredictionMarketsRequest" });

const eightDecimals = (description: string) =>
  z
    .string()
    .regex(/^\d+\.\d{8}$/)
    .meta({ description: `${description}, 8 decimals` });

const frameHead = {
  u: z.number().int().meta({ description: "The slot the frame was priced at" }),
  ts: z.number().int().meta({ description: "Unix seconds" }),
  seq: z.number().int().min(0).meta({
    description:
      "The position the frame's values are as of, the same on every instance of the deployment (it increases when a value changes; 0 before the first); resume a subscription from the last one seen",
  }),
};

/** `/quote-stream`: one frame per slot to each connection with something new. */
export const QuoteFrame = z
  .object({
    ...frameHead,
    subscribe: z
      .array(z.object({ sb: z.string(), sq: z.string(), auto: z.boolean() }))
      .optional()
      .meta({ description: "Subscriptions acknowledged; auto: added by subscribe_all_prediction_markets" }),
    unsubscribe: z
      .array(z.object({ sb: z.string(), sq: z.string(), auto: z.boolean() }))
      .optional()
      .meta({ description: "Subscriptions ended" }),
    updates: z.array(
      z.union([
        z.object({
          sb: z.string().meta({ description: "Base mint" }),
          sq: z.string().meta({ description: "Quote mint" }),
          b: eightDecimals("Best bid of the base in the quote"),
          B: eightDecimals("Base size the bid was probed with"),
          a: eightDecimals("Best ask of the base in the quote"),
          A: eightDecimals("Base size the ask was probed with"),
        }),
        z.object({
          sb: z.string(),
          sq: z.string(),
          e: z.string().meta({ description: "Why the pair has no quote: unknown_pair, no_route" }),
        }),
      ]),
    ),
  })
  .meta({ title: "QuoteFrame" });

const level = z.object({
  price: z.number().meta({ description: "Quote per base, human units" }),
  cumulative_size_human: z
    .number()
    .meta({ description: "Base one direct /order can take from spot out to this level" }),
});

/** `/book-stream`: one frame per slot to each connection with something new. */
export const BookFrame = z
  .object({
    ...frameHead,
    subscribe: z
      .array(z.object({ sb: z.string(), sq: z.string() }))
      .optional()
      .meta({ description: "Subscriptions acknowledged" }),
    unsubscribe: z
      .array(z.object({ sb: z.string(), sq: z.string() }))
      .optional()
      .meta({ description: "Subscriptions ended" }),
    updates: z.array(
      z.union([
        z.object({
          sb: z.string(),
          sq: z.string(),
          mid: z.number().meta({ description: "Quote over base reserve of the deepest direct pool" }),
          tick: z.number(),
          crossed: z.boolean(),
          b: z.array(level).meta({ description: "Ten bid levels, nearest first" }),
          a: z.array(level).meta({ description: "Ten ask levels, nearest first" }),
        }),
        z.object({ sb: z.string(), sq: z.string(), e: z.literal("no_market") }),
      ]),
    ),
    skipped: z.number().int().min(0).meta({ description: "Slots missed since the previous frame" }),
  })
  .meta({ title: "BookFrame" });

const serverMs = z.number().int().meta({ description: "Server time, Unix milliseconds" });
const gapSeq = z.number().int().min(0).meta({
  description: "The position to continue from; the subscription's acknowledgement and value follow",
});

/** `/quote-stream` and `/book-stream`: a resume that could not be served; the current value follows. */
export const PairStreamGap = z
  .union([
    z.object({ type: z.literal("gap"), sb: z.string(), sq: z.string(), seq: gapSeq, ts: serverMs }),
    z.object({
      type: z.literal("gap"),
      all: z.literal(true).meta({ description: "The prediction-market subscription (/quote-stream)" }),
      seq: gapSeq,
      ts: serverMs,
    }),
  ])
  .meta({ title: "PairStreamGap" });

/** `/quote-stream` and `/book-stream`: the chain's slot has not moved for `age_ms`; repeated while it lasts. */
export const ChainStale = z
  .object({
    type: z.literal("stale"),
    age_ms: z.number().int().min(0).meta({ description: "Milliseconds since the slot last moved" }),
    ts: z.number().int().meta({ description: "Server time, Unix milliseconds" }),
  })
  .meta({ title: "ChainStale" });

/** `/quote-stream` and `/book-stream`: the chain's slot moves again after being stale. */
export const ChainRecovered = z
  .object({
    type: z.literal("recovered"),
    silent_ms: z.number().int().min(0).meta({ description: "How long the slot stood still" }),
    ts: z.number().int().meta({ description: "Server time, Unix milliseconds" }),
  })
  .meta({ title: "ChainRecovered" });

/** One stream as the AsyncAPI document describes it: its path and the messages each side sends. */
export interface StreamChannel {
  /** The channel's key in the document. */
  readonly id: string;
  readonly address: string;
  readonly title: string;
  readonly description: string;
  /** What a client sends, by message name. */
  readonly requests: Readonly<Record<string, z.ZodType>>;
  /** What the server sends, by message name. */
  readonly frames: Readonly<Record<string, z.ZodType>>;
}

const RESUME =
  "Every frame carries seq, its position, the same on every instance; subscribe again with since (the last seq seen) to get only the values that changed, or a gap frame and the current value.";

const LIVENESS =
  "The server pings every 15 s and closes a peer silent for 30 s; messages are rate limited, and a consumer that falls behind is sent the latest values, then closed (1013).";

export const MARKET_DATA_STREAM: StreamChannel = {
  id: "marketData",
  address: "/api/v1/ws",
  title: "Market data",
  description: `Prices, trades and order books of prediction markets, relayed from the upstream exchange: subscribe per channel to tickers or to every market. Every data frame carries seq (the channel's position, the same on every instance) and ts; each subscribe is answered by a subscribed frame with the position it covers; subscribe again with since (the last seq seen) to get what was missed, or a gap frame. stale frames say the upstream has been silent (with the age), recovered that it answers again. ${LIVENESS}`,
  requests: { MarketStreamRequest },
  frames: {
    MarketTicker,
    MarketTrade,
    MarketOrderbook,
    MarketSubscribed,
    MarketGap,
    MarketStale,
    MarketRecovered,
    StreamBadRequest,
  },
};

export const QUOTE_STREAM: StreamChannel = {
  id: "quoteStream",
  address: "/quote-stream",
  title: "Quotes",
  description: `Per slot, the best bid and ask of each followed pair (10 USDC probes through the router), changes only; the first frame after a subscription carries its quote. stale frames say the chain's slot has stood still (with the age), recovered that it moves again. ${RESUME} ${LIVENESS}`,
  requests: { PairStreamRequest, AllPredictionMarketsRequest },
  frames: { QuoteFrame, PairStreamGap, ChainStale, ChainRecovered, StreamBadRequest },
};

export const BOOK_STREAM: StreamChannel = {
  id: "bookStream",
  address: "/book-stream",
  title: "Books",
  description: `Per slot, ten levels a side of each followed pair's direct pools, exact from the curve, changes only. stale frames say the chain's slot has stood still (with the age), recovered that it moves again. ${RESUME} ${LIVENESS}`,
  requests: { PairStreamRequest },
  frames: { BookFrame, PairStreamGap, ChainStale, ChainRecovered, StreamBadRequest },
};

/** `/priority-fees/stream`, whose frames are `GET /priority-fees`'s body (`levels`). */
export function priorityFeesStream(levels: z.ZodType): StreamChannel {
  return {
    id: "priorityFeesStream",
    address: "/priority-fees/stream",
    title: "Priority fees",
    description: `The priority fee levels on connect (once read) and whenever they change. The stream takes no messages: any message gets a bad_request frame. ${LIVENESS}`,
    requests: {},
    frames: { PriorityFeeLevels: levels, StreamBadRequest },
  };
}
