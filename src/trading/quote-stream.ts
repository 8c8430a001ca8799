/**
 * The quote stream (`/quote-stream`, contract §6): clients subscribe to pairs (or to every
 * prediction market) and receive one frame per slot with their acknowledgements and, per pair, the
 * best bid and ask of the base in the quote, each probed with a 10 USDC-equivalent trade through the
 * router. The first frame after a subscription carries the pair's current quote; later frames carry
 * only what changed. A consumer that falls behind gets the latest value per pair when it catches up,
 * and is closed if it stays behind.
 */
import type { Address } from "@solana/kit";
import type { WebSocket } from "ws";
import { z } from "zod";
import { USDC_MINT } from "../chain/programs.js";
import { uiAmountString } from "../chain/sandbox/rpc-encoding.js";
import { badRequest, StreamPeers } from "../http/stream-peers.js";
import type { TradingBook } from "./book.js";
import type { SharedQuotes } from "./shared-quotes.js";
import { isAddress } from "./transaction.js";
import { PREDICTION_VENUE } from "./venues/prediction.js";

/** What a probe is worth: 10 USDC. */
const PROBE_USDC = 10_000_000n;

export interface QuoteStreamOptions {
  /** How often the server pings (default 15 s). */
  pingMs?: number;
  /** Silence after which a peer is closed (default 30 s). */
  silenceMs?: number;
  /** How often frames go out (default: one slot, 400 ms). */
  frameMs?: number;
  maxSubscriptions?: number;
  maxMessagesPerSecond?: number;
  /** Bytes queued on a socket beyond which it is behind; frames are held back and coalesced. */
  maxBufferedBytes?: number;
  /** Frames a consumer may stay behind before it is closed. */
  maxFramesBehind?: number;
}

const DEFAULTS: Required<QuoteStreamOptions> = {
  pingMs: 15_000,
  silenceMs: 30_000,
  frameMs: 400,
  maxSubscriptions: 1_000,
  maxMessagesPerSecond: 50,
  maxBufferedBytes: 1 << 20,
  maxFramesBehind: 25,
};

const PairMessage = z.object({
  op: z.enum(["subscribe", "unsubscribe"]),
  base_mint: z.string().refine(isAddress, "base_mint must be a base58 mint address"),
  quote_mint: z.string().refine(isAddress, "quote_mint must be a base58 mint address"),
});
const AllMessage = z.object({
  op: z.enum(["subscribe_all_prediction_markets", "unsubscribe_all_prediction_markets"]),
});
const ClientMessage = z.union([PairMessage, AllMessage]);

interface Pair {
  base: Address;
  quote: Address;
  /** Subscribed through subscribe_all_prediction_markets. */
  auto: boolean;
  /** The update last sent, serialized, so only changes go out. */
  lastSent: string | undefined;
}

interface Ack {
  sb: string;
  sq: string;
  auto: boolean;
}

type Update =
  | { sb: string; sq: string; b: string; B: string; a: string; A: string }
  | { sb: string; sq: string; e: string };

class Subscriber {
  readonly pairs = new Map<string, Pair>();
  subscribed: Ack[] = [];
  unsubscribed: Ack[] = [];
  allPredictionMarkets = false;
  framesBehind = 0;

  constructor(readonly socket: WebSocket) {}
}

/** Every stream connection of this instance, and the per-slot frames they receive. */
export class QuoteStreamHub {
  private readonly subscribers: StreamPeers<Subscriber>;
  private readonly options: Required<QuoteStreamOptions>;
  private frameTimer: NodeJS.Timeout | undefined;
  private shared: SharedQuotes | undefined;
  private fanoutObserver: ((seconds: number) => void) | undefined;

  constructor(
    private readonly book: TradingBook,
    options: QuoteStreamOptions = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.subscribers = new StreamPeers(this.options, (subscriber, message) =>
      this.handle(subscriber, message),
    );
  }

  start(): void {
    this.frameTimer = setInterval(() => this.sendFrames(), this.options.frameMs).unref();
    this.subscribers.start();
  }

  stop(): void {
    clearInterval(this.frameTimer);
    this.subscribers.stop();
    void this.shared?.close();
  }

  /**
   * Hears, per slot, the seconds from the start of the frame pass until every frame of it was written
   * to its socket (the target is under 0.1 s at p99).
   */
  onFanout(observer: (seconds: number) => void): void {
    this.fanoutObserver = observer;
  }

  /** Takes quotes from the instance that leads through Redis instead of computing them all here. */
  share(shared: SharedQuotes): void {
    this.shared = shared;
  }

  /** Quotes the given pairs (`base|quote` keys), serialized as updates: what the leader publishes. */
  computeQuotes(pairs: readonly string[]): Map<string, string> {
    const quotes = new Map<string, string>();
    for (const key of pairs) {
      const [base, quote] = key.split("|") as [Address, Address];
      if (base && quote) quotes.set(key, JSON.stringify(this.quotePair(base, quote)));
    }
    return quotes;
  }

  /** Takes a new connection. */
  accept(socket: WebSocket): void {
    this.subscribers.add(new Subscriber(socket));
  }

  /** Connections open now. */
  get size(): number {
    return this.subscribers.size;
  }

  private handle(subscriber: Subscriber, parsed: unknown): void {
    const message = ClientMessage.safeParse(parsed);
    if (!message.success) {
      badRequest(
        subscriber.socket,
        `expected {"op":"subscribe"|"unsubscribe","base_mint","quote_mint"} or {"op":"subscribe_all_prediction_markets"|"unsubscribe_all_prediction_markets"}: ${message.error.issues[0]?.message ?? "invalid"}`,
      );
      return;
    }
    const op = message.data.op;
    if (op === "subscribe_all_prediction_markets" || op === "unsubscribe_all_prediction_markets") {
      subscriber.allPredictionMarkets = op === "subscribe_all_prediction_markets";
      if (!subscriber.allPredictionMarkets) {
        for (const [key, pair] of subscriber.pairs) {
          if (!pair.auto) continue;
          subscriber.pairs.delete(key);
          subscriber.unsubscribed.push({ sb: pair.base, sq: pair.quote, auto: true });
        }
      }
      return;
    }
    const { base_mint: base, quote_mint: quote } = message.data as z.infer<typeof PairMessage>;
    const key = `${base}|${quote}`;
    if (op === "subscribe") {
      if (subscriber.pairs.has(key)) return;
      if (subscriber.pairs.size >= this.options.maxSubscriptions) {
        badRequest(
          subscriber.socket,
          `at most ${this.options.maxSubscriptions} subscriptions per connection`,
        );
        return;
      }
      subscriber.pairs.set(key, {
        base: base as Address,
        quote: quote as Address,
        auto: false,
        lastSent: undefined,
      });
      subscriber.subscribed.push({ sb: base, sq: quote, auto: false });
    } else if (subscriber.pairs.delete(key)) {
      subscriber.unsubscribed.push({ sb: base, sq: quote, auto: false });
    }
  }

  /** One frame per connection with something to say; every pair quoted at most once per slot. */
  private sendFrames(): void {
    if (this.subscribers.size === 0 || !this.book.loaded) return;
    let clock: { slot: bigint };
    try {
      clock = this.book.clock;
    } catch {
      return;
    }
    // Each pair is quoted and serialized once per slot, however many connections follow it; with
    // Redis, once across all instances (a pair not yet published is quoted here meanwhile).
    const published = this.shared?.latest;
    const quotes = new Map<string, string>();
    const quoteOf = (pair: Pair) => {
      const key = `${pair.base}|${pair.quote}`;
      let json = quotes.get(key) ?? published?.get(key);
      if (json === undefined) {
        json = JSON.stringify(this.quotePair(pair.base, pair.quote));
        quotes.set(key, json);
      }
      return json;
    };
    const started = performance.now();
    let unwritten = 1;
    const written = () => {
      unwritten -= 1;
      if (unwritten === 0 && sent > 0) this.fanoutObserver?.((performance.now() - started) / 1000);
    };
    let sent = 0;
    let predictionPairs: [Address, Address][] | undefined;
    const head = `{"u":${Number(clock.slot)},"ts":${Math.floor(Date.now() / 1000)}`;
    if (this.shared) {
      const followed = new Set<string>();
      for (const subscriber of this.subscribers) for (const key of subscriber.pairs.keys()) followed.add(key);
      this.shared.follow(followed);
    }
    for (const subscriber of this.subscribers) {
      if (subscriber.allPredictionMarkets) {
        predictionPairs ??= this.predictionPairs();
        this.followPredictionMarkets(subscriber, predictionPairs);
      }
      if (subscriber.socket.bufferedAmount > this.options.maxBufferedBytes) {
        // Behind: hold this frame back; the next one carries the latest value of every pair.
        subscriber.framesBehind += 1;
        if (subscriber.framesBehind > this.options.maxFramesBehind)
          this.subscribers.drop(subscriber, 1013, "consumer too slow");
        continue;
      }
      subscriber.framesBehind = 0;
      const updates: string[] = [];
      for (const pair of subscriber.pairs.values()) {
        const json = quoteOf(pair);
        if (json === pair.lastSent) continue;
        pair.lastSent = json;
        updates.push(json);
      }
      const { subscribed, unsubscribed } = subscriber;
      if (updates.length === 0 && subscribed.length === 0 && unsubscribed.length === 0) continue;
      subscriber.subscribed = [];
      subscriber.unsubscribed = [];
      const acks =
        (subscribed.length > 0 ? `,"subscribe":${JSON.stringify(subscribed)}` : "") +
        (unsubscribed.length > 0 ? `,"unsubscribe":${JSON.stringify(unsubscribed)}` : "");
      unwritten += 1;
      sent += 1;
      subscriber.socket.send(`${head}${acks},"updates":[${updates.join(",")}]}`, written);
    }
    written();
  }

  /** Adds the prediction pairs a subscribe-all connection does not have yet, and drops gone ones. */
  private followPredictionMarkets(subscriber: Subscriber, pairs: readonly [Address, Address][]): void {
    const current = new Set<string>();
    for (const [base, quote] of pairs) {
      const key = `${base}|${quote}`;
      current.add(key);
      if (subscriber.pairs.has(key) || subscriber.pairs.size >= this.options.maxSubscriptions) continue;
      subscriber.pairs.set(key, { base, quote, auto: true, lastSent: undefined });
      subscriber.subscribed.push({ sb: base, sq: quote, auto: true });
    }
    for (const [key, pair] of subscriber.pairs) {
      if (pair.auto && !current.has(key)) {
        subscriber.pairs.delete(key);
        subscriber.unsubscribed.push({ sb: pair.base, sq: pair.quote, auto: true });
      }
    }
  }

  /** Every outcome mint trading on the prediction venue, against USDC. */
  private predictionPairs(): [Address, Address][] {
    const pairs: [Address, Address][] = [];
    for (const market of this.book.prediction?.markets() ?? []) {
      if (market.venue !== PREDICTION_VENUE || market.executionMode !== "async") continue;
      const outcome = market.mints[0] === USDC_MINT ? market.mints[1] : market.mints[0];
      pairs.push([outcome, USDC_MINT]);
    }
    return pairs;
  }

  /** Best bid and ask of `base` in `quote`, each from a 10 USDC-equivalent probe through the router. */
  private quotePair(base: Address, quote: Address): Update {
    const baseToken = this.book.token(base);
    const quoteToken = this.book.token(quote);
    if (!baseToken || !quoteToken || base === quote) return { sb: base, sq: quote, e: "unknown_pair" };
    const probeBase = this.usdcWorth(base);
    const probeQuote = this.usdcWorth(quote);
    const bid = probeBase ? this.route(base, quote, probeBase) : null;
    const ask = probeQuote ? this.route(quote, base, probeQuote) : null;
    if (!bid || !ask || !probeBase || !probeQuote) return { sb: base, sq: quote, e: "no_route" };
    const price = (quoteUnits: bigint, baseUnits: bigint) =>
      (
        Number(quoteUnits) /
        10 ** quoteToken.decimals /
        (Number(baseUnits) / 10 ** baseToken.decimals)
      ).toFixed(8);
    const size = (baseUnits: bigint) => Number(uiAmountString(baseUnits, baseToken.decimals)).toFixed(8);
    return {
      sb: base,
      sq: quote,
      b: price(bid, probeBase),
      B: size(probeBase),
      a: price(probeQuote, ask),
      A: size(ask),
    };
  }

  /** How much of `mint` 10 USDC buys (10 USDC itself for USDC). */
  private usdcWorth(mint: Address): bigint | null {
    return mint === USDC_MINT ? PROBE_USDC : this.route(USDC_MINT, mint, PROBE_USDC);
  }

  private route(input: Address, output: Address, amount: bigint): bigint | null {
    const route = this.book.graph.bestRoute({ inputMint: input, outputMint: output, amount, maxLegs: 2 });
    return route && route.outAmount > 0n ? route.outAmount : null;
  }
}
