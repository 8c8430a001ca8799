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
import { isAddressText } from "../chain/base58.js";
import { uiAmountString } from "../chain/ui-amount.js";
import { USDC_MINT } from "../contract/markets.js";
import { badRequest, StreamHub } from "../http/stream-peers.js";
import type { TradingBook } from "./book.js";
import type { PairQuotes, SharedQuotes } from "./shared-quotes.js";
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

/** A mint address in a client's message, branded once checked. */
const MintField = (name: string) =>
  z.custom<Address>(
    (value) => typeof value === "string" && isAddressText(value),
    `${name} must be a base58 mint address`,
  );

const PairMessage = z.object({
  op: z.enum(["subscribe", "unsubscribe"]),
  base_mint: MintField("base_mint"),
  quote_mint: MintField("quote_mint"),
});
const AllMessage = z.object({
  op: z.enum(["subscribe_all_prediction_markets", "unsubscribe_all_prediction_markets"]),
});
const ClientMessage = z.union([PairMessage, AllMessage]);

/**
 * A pair some connection of this instance follows, with its latest quote: one object per pair, shared
 * by every connection that follows it, so a frame pass quotes and serializes each pair once.
 */
interface QuotedPair {
  /** `base|quote`. */
  readonly key: string;
  readonly base: Address;
  readonly quote: Address;
  /** The update serialized; the same string until the quote changes. */
  json: string;
  /** Bumped whenever `json` changes, so a connection compares a number rather than the JSON text. */
  version: number;
  /** The frame pass that last quoted it. */
  quotedInPass: number;
  /** The frame pass that last found it followed; pairs nobody follows are forgotten. */
  followedInPass: number;
}

interface Pair {
  readonly quoted: QuotedPair;
  /** Subscribed through subscribe_all_prediction_markets. */
  readonly auto: boolean;
  /** The version of the quote last sent on this connection (0: none yet), so only changes go out. */
  sentVersion: number;
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
  /** The prediction pair list this connection was last brought up to date with (see `refreshPredictionList`). */
  predictionListSynced = -1;
  framesBehind = 0;

  constructor(readonly socket: WebSocket) {}
}

/**
 * Frames are small and differ per connection, so compressing them would cost a deflate per connection
 * per slot for little saving: never compressed, whatever the server negotiates for other streams.
 */
const FRAME_SEND_OPTIONS = { binary: false, compress: false } as const;

/** How long a frame pass writes before it lets other work (requests, the chain) run. */
const FANOUT_SLICE_MS = 10;

/**
 * One frame pass: its frames go out over one or more event-loop turns, and it times them from its
 * start until every frame was written to its socket (the fan-out metric).
 */
class FramePass {
  private readonly started = performance.now();
  /** Frames handed to a socket and not yet written, plus one held until the last was handed over. */
  private unwritten = 1;
  private sent = 0;

  constructor(
    readonly number: number,
    /** The start every frame of the pass shares: slot and time. */
    readonly head: string,
    readonly remaining: Iterator<Subscriber>,
    private readonly observer: ((seconds: number) => void) | undefined,
  ) {}

  /** The send callback: one frame written (or failed with its socket). */
  readonly written = (): void => {
    this.unwritten -= 1;
    if (this.unwritten === 0 && this.sent > 0) this.observer?.((performance.now() - this.started) / 1000);
  };

  /** Counts a frame handed to its socket; `written` hears when it was written. */
  handedOver(): void {
    this.sent += 1;
    this.unwritten += 1;
  }

  /** Every frame was handed over: releases the held count. */
  finish(): void {
    this.written();
  }
}

/** Every stream connection of this instance, and the per-slot frames they receive. */
export class QuoteStreamHub extends StreamHub<Subscriber> {
  private readonly options: Required<QuoteStreamOptions>;
  /** Every pair a connection follows, by `base|quote`. */
  private readonly followedPairs = new Map<string, QuotedPair>();
  private frameTimer: NodeJS.Timeout | undefined;
  private shared: SharedQuotes | undefined;
  private fanoutObserver: ((seconds: number) => void) | undefined;
  private passes = 0;
  /** The pass whose frames are still being handed to their sockets; a slot that comes meanwhile is skipped. */
  private passInProgress: FramePass | undefined;
  private predictionList: { pairs: ReadonlyMap<string, [Address, Address]>; version: number } = {
    pairs: new Map(),
    version: 0,
  };
  private readonly continueFanout = (): void => this.fanOut();

  constructor(
    private readonly book: TradingBook,
    options: QuoteStreamOptions = {},
  ) {
    const rules = { ...DEFAULTS, ...options };
    super(rules);
    this.options = rules;
  }

  start(): void {
    this.frameTimer = setInterval(() => this.sendFrames(), this.options.frameMs).unref();
    this.subscribers.start();
  }

  stop(): void {
    clearInterval(this.frameTimer);
    this.passInProgress = undefined;
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
      // Keys come from every instance through Redis: only well-formed pairs are quoted.
      const [base, quote] = key.split("|");
      if (base && quote && isAddressText(base) && isAddressText(quote))
        quotes.set(key, JSON.stringify(this.quotePair(base, quote)));
    }
    return quotes;
  }

  protected peerFor(socket: WebSocket): Subscriber {
    return new Subscriber(socket);
  }

  protected handle(subscriber: Subscriber, parsed: unknown): void {
    const message = ClientMessage.safeParse(parsed);
    if (!message.success) {
      badRequest(
        subscriber.socket,
        `expected {"op":"subscribe"|"unsubscribe","base_mint","quote_mint"} or {"op":"subscribe_all_prediction_markets"|"unsubscribe_all_prediction_markets"}: ${message.error.issues[0]?.message ?? "invalid"}`,
      );
      return;
    }
    // Any change may make room under the subscription limit for prediction pairs left out before.
    subscriber.predictionListSynced = -1;
    const op = message.data.op;
    if (op === "subscribe_all_prediction_markets" || op === "unsubscribe_all_prediction_markets") {
      subscriber.allPredictionMarkets = op === "subscribe_all_prediction_markets";
      if (!subscriber.allPredictionMarkets) {
        for (const [key, pair] of subscriber.pairs) {
          if (!pair.auto) continue;
          subscriber.pairs.delete(key);
          subscriber.unsubscribed.push({ sb: pair.quoted.base, sq: pair.quoted.quote, auto: true });
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
      this.addPair(subscriber, key, base, quote, false);
    } else if (subscriber.pairs.delete(key)) {
      subscriber.unsubscribed.push({ sb: base, sq: quote, auto: false });
    }
  }

  /** Subscribes a connection to a pair; its next frame acknowledges it and carries the current quote. */
  private addPair(subscriber: Subscriber, key: string, base: Address, quote: Address, auto: boolean): void {
    let quoted = this.followedPairs.get(key);
    if (!quoted) {
      quoted = { key, base, quote, json: "", version: 0, quotedInPass: 0, followedInPass: this.passes };
      this.followedPairs.set(key, quoted);
    }
    subscriber.pairs.set(key, { quoted, auto, sentVersion: 0 });
    subscriber.subscribed.push({ sb: base, sq: quote, auto });
  }

  /**
   * One frame per connection with something to say. Every followed pair is quoted and serialized once
   * per slot (with Redis, once across all instances; a pair not yet published is quoted here
   * meanwhile), so a connection's frame is its acknowledgements and the JSON of its changed pairs
   * joined together. The frames go out in slices of `FANOUT_SLICE_MS`, letting other work run between.
   */
  private sendFrames(): void {
    if (this.passInProgress || this.subscribers.size === 0 || !this.book.loaded) return;
    let clock: { slot: bigint };
    try {
      clock = this.book.clock;
    } catch {
      return;
    }
    this.passes += 1;
    this.passInProgress = new FramePass(
      this.passes,
      `{"u":${Number(clock.slot)},"ts":${Math.floor(Date.now() / 1000)}`,
      this.subscribers[Symbol.iterator](),
      this.fanoutObserver,
    );
    this.followAndQuote(this.passes);
    this.fanOut();
  }

  /**
   * Brings subscribe-all connections up to date with the prediction markets, forgets pairs nobody
   * follows any more, tells Redis what this instance follows, and quotes every followed pair once,
   * from one state of the book.
   */
  private followAndQuote(pass: number): void {
    let predictionListChecked = false;
    for (const subscriber of this.subscribers) {
      if (subscriber.allPredictionMarkets) {
        if (!predictionListChecked) {
          this.refreshPredictionList();
          predictionListChecked = true;
        }
        if (subscriber.predictionListSynced !== this.predictionList.version)
          this.followPredictionMarkets(subscriber);
      }
      for (const pair of subscriber.pairs.values()) pair.quoted.followedInPass = pass;
    }
    for (const [key, quoted] of this.followedPairs) {
      if (quoted.followedInPass !== pass) this.followedPairs.delete(key);
    }
    this.shared?.follow(this.followedPairs.keys());
    const published = this.shared?.latest;
    for (const quoted of this.followedPairs.values()) this.requote(quoted, pass, published);
  }

  /** Takes the pair's latest quote, keeping the previous string (and version) when nothing changed. */
  private requote(quoted: QuotedPair, pass: number, published: PairQuotes | undefined): void {
    const json = published?.get(quoted.key) ?? JSON.stringify(this.quotePair(quoted.base, quoted.quote));
    quoted.quotedInPass = pass;
    if (json === quoted.json) return;
    quoted.json = json;
    quoted.version += 1;
  }

  /** Writes frames of the pass in progress until its slice of time is up, then yields and resumes. */
  private fanOut(): void {
    const fanout = this.passInProgress;
    if (!fanout) return;
    const sliceEnd = performance.now() + FANOUT_SLICE_MS;
    const { maxBufferedBytes, maxFramesBehind } = this.options;
    let checked = 0;
    for (;;) {
      const next = fanout.remaining.next();
      if (next.done) break;
      const subscriber = next.value;
      if (subscriber.socket.bufferedAmount > maxBufferedBytes) {
        // Behind: hold this frame back; the next one carries the latest value of every pair.
        subscriber.framesBehind += 1;
        if (subscriber.framesBehind > maxFramesBehind)
          this.subscribers.drop(subscriber, 1013, "consumer too slow");
      } else {
        subscriber.framesBehind = 0;
        const frame = this.frameFor(subscriber, fanout);
        if (frame !== undefined) {
          fanout.handedOver();
          subscriber.socket.send(frame, FRAME_SEND_OPTIONS, fanout.written);
        }
      }
      // Reading the clock every few frames keeps its cost out of the loop.
      checked += 1;
      if ((checked & 31) === 0 && performance.now() > sliceEnd) {
        setImmediate(this.continueFanout);
        return;
      }
    }
    this.passInProgress = undefined;
    fanout.finish();
  }

  /** The connection's frame for this pass: acknowledgements and changed pairs; none if it has nothing. */
  private frameFor(subscriber: Subscriber, fanout: FramePass): string | undefined {
    let updates = "";
    for (const pair of subscriber.pairs.values()) {
      const { quoted } = pair;
      // Subscribed since the pass began: quoted now, so that the acknowledgement comes with the quote.
      if (quoted.quotedInPass !== fanout.number) this.requote(quoted, fanout.number, this.shared?.latest);
      if (quoted.version === pair.sentVersion) continue;
      pair.sentVersion = quoted.version;
      updates = updates === "" ? quoted.json : `${updates},${quoted.json}`;
    }
    const { subscribed, unsubscribed } = subscriber;
    if (updates === "" && subscribed.length === 0 && unsubscribed.length === 0) return undefined;
    let frame = fanout.head;
    if (subscribed.length > 0) {
      frame += `,"subscribe":${JSON.stringify(subscribed)}`;
      subscriber.subscribed = [];
    }
    if (unsubscribed.length > 0) {
      frame += `,"unsubscribe":${JSON.stringify(unsubscribed)}`;
      subscriber.unsubscribed = [];
    }
    return `${frame},"updates":[${updates}]}`;
  }

  /** Adds the prediction pairs a subscribe-all connection does not have yet, and drops gone ones. */
  private followPredictionMarkets(subscriber: Subscriber): void {
    const { pairs, version } = this.predictionList;
    for (const [key, [base, quote]] of pairs) {
      if (subscriber.pairs.has(key) || subscriber.pairs.size >= this.options.maxSubscriptions) continue;
      this.addPair(subscriber, key, base, quote, true);
    }
    for (const [key, pair] of subscriber.pairs) {
      if (pair.auto && !pairs.has(key)) {
        subscriber.pairs.delete(key);
        subscriber.unsubscribed.push({ sb: pair.quoted.base, sq: pair.quoted.quote, auto: true });
      }
    }
    subscriber.predictionListSynced = version;
  }

  /**
   * Every outcome mint trading on the prediction venue, against USDC; its version changes only when
   * the list does, so that subscribe-all connections are walked through it only then.
   */
  private refreshPredictionList(): void {
    const pairs = new Map<string, [Address, Address]>();
    for (const market of this.book.prediction?.markets() ?? []) {
      if (market.venue !== PREDICTION_VENUE) continue;
      const outcome = market.mints[0] === USDC_MINT ? market.mints[1] : market.mints[0];
      pairs.set(`${outcome}|${USDC_MINT}`, [outcome, USDC_MINT]);
    }
    const previous = this.predictionList.pairs;
    let same = pairs.size === previous.size;
    if (same) for (const key of pairs.keys()) if (!previous.has(key)) same = false;
    if (!same) this.predictionList = { pairs, version: this.predictionList.version + 1 };
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
