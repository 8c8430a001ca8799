/**
 * What the pair streams (`/quote-stream`, `/book-stream`) share: clients subscribe to and unsubscribe
 * from `base|quote` pairs; once per slot every pair some connection follows is priced once (with Redis,
 * once across all instances) and serialized once, and each connection gets one frame with its
 * acknowledgements and the pairs that changed since its previous frame. The first frame after a
 * subscription carries the pair's current value. A consumer that falls behind gets the latest value per
 * pair when it catches up, and is closed if it stays behind. What a pair's value is (a best bid and
 * ask, ten levels a side) is the stream's own.
 *
 * Resuming (`pair-positions.ts`): every frame carries `seq`, the position its values are as of, the
 * same on every instance. A subscribe may carry `since`, the last `seq` the client saw for that pair:
 * if the position is known, the acknowledgement comes with the pair's value only when it changed after
 * `since`; otherwise a `{"type":"gap","sb","sq","seq","ts"}` frame goes out first, and the value with
 * the acknowledgement, as for a new subscription. When the chain's slot stands still, every connection
 * hears `stale` frames, then `recovered` (`chain-watch.ts`).
 */
import type { Address } from "@solana/kit";
import type { WebSocket } from "ws";
import { z } from "zod";
import { isAddressText } from "../../chain/base58.js";
import { badRequest, StreamHub } from "../../http/stream-peers.js";
import type { TradingBook } from "../spot/trading-book.js";
import { ChainWatch } from "./chain-watch.js";
import { DEFAULT_PAIR_RETENTION_MS, PairPositions, type Publication } from "./pair-positions.js";
import type { SharedQuotes } from "./shared-quotes.js";

export interface PairStreamOptions {
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
  /** How long the chain's slot may stand still before connections hear `stale` (default 5 s); also how often it is repeated. */
  staleMs?: number;
  /**
   * How long positions are kept for resuming, and a pair nobody follows any more is still priced
   * (default 120 s); with Redis, the shared positions keep theirs (`SharedQuotesOptions.retentionMs`).
   */
  retentionMs?: number;
  /** Pairs of closed connections still priced for their resumes, at most (the oldest go first). */
  maxLingeringPairs?: number;
}

const DEFAULTS: Required<PairStreamOptions> = {
  pingMs: 15_000,
  silenceMs: 30_000,
  frameMs: 400,
  maxSubscriptions: 1_000,
  maxMessagesPerSecond: 50,
  maxBufferedBytes: 1 << 20,
  maxFramesBehind: 25,
  staleMs: 5_000,
  retentionMs: DEFAULT_PAIR_RETENTION_MS,
  maxLingeringPairs: 10_000,
};

/** A mint address in a client's message, branded once checked. */
const MintField = (name: string) =>
  z.custom<Address>(
    (value) => typeof value === "string" && isAddressText(value),
    `${name} must be a base58 mint address`,
  );

/** A resume position in a client's subscribe: the last `seq` it saw for the subscription. */
export const SinceField = z
  .number("since must be a seq the stream sent")
  .int("since must be a seq the stream sent")
  .min(0, "since must be a seq the stream sent")
  .max(Number.MAX_SAFE_INTEGER, "since must be a seq the stream sent")
  .optional();

/** `{"op":"subscribe"|"unsubscribe","base_mint","quote_mint","since"?}`: what every pair stream understands. */
export const PairMessage = z.object({
  op: z.enum(["subscribe", "unsubscribe"]),
  base_mint: MintField("base_mint"),
  quote_mint: MintField("quote_mint"),
  since: SinceField,
});
export type PairMessage = z.infer<typeof PairMessage>;

/** What `PairMessage` expects, for a `bad_request` frame. */
export const PAIR_MESSAGE_USAGE = `{"op":"subscribe"|"unsubscribe","base_mint","quote_mint","since"?:seq}`;

function isPairMessage(message: { op: string }): message is PairMessage {
  return message.op === "subscribe" || message.op === "unsubscribe";
}

/**
 * What a refused message got wrong: of a union of messages (a stream with messages of its own), the
 * complaint of the message whose `op` it has, rather than zod's bare "Invalid input".
 */
function whatIsWrong(issue: z.core.$ZodIssue | undefined): string {
  if (issue?.code === "invalid_union") {
    for (const branch of issue.errors) {
      const inner = branch.find((candidate) => candidate.path[0] !== "op");
      if (inner && !branch.some((candidate) => candidate.path[0] === "op")) return inner.message;
    }
  }
  return issue?.message ?? "invalid";
}

/**
 * A pair some connection of this instance follows, with its latest value: one object per pair, shared
 * by every connection that follows it, so a frame pass prices and serializes each pair once.
 */
interface FollowedPair {
  /** `base|quote`. */
  readonly key: string;
  readonly base: Address;
  readonly quote: Address;
  /** The update serialized; the same string until the value changes. */
  json: string;
  /** Bumped whenever `json` changes, so a connection compares a number rather than the JSON text. */
  version: number;
  /** The frame pass that last priced it. */
  pricedInPass: number;
  /**
   * When a pass last found it followed (ms). A pair nobody follows is still priced for the retention
   * (`retentionMs`), so that a client resuming meanwhile is not sent a value it has; then forgotten.
   */
  followedAt: number;
}

/** A connection's subscription to one pair. */
export interface PairSubscription {
  readonly followed: FollowedPair;
  /** Added by the stream itself (e.g. subscribe_all_prediction_markets), not by a pair message. */
  readonly auto: boolean;
  /** The version of the value last sent on this connection (0: none yet), so only changes go out. */
  sentVersion: number;
  /** A resumed subscription's `since`, until its first frame: the value goes out only if it changed after it. */
  resumeFrom: number | undefined;
}

/** One connection of a pair stream; a stream extends it with state of its own. */
export class PairPeer {
  readonly pairs = new Map<string, PairSubscription>();
  /** Acknowledgements not yet sent, serialized. */
  subscribed: string[] = [];
  unsubscribed: string[] = [];
  /** Frames held back in a row because the socket is behind; past the limit it is closed. */
  framesBehind = 0;
  /** Frames held back since its last frame. */
  heldBack = 0;
  /** The hub's count of skipped passes when its last frame went out. */
  skippedMark = 0;

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
class FramePass<P extends PairPeer> {
  private readonly started = performance.now();
  /** Frames handed to a socket and not yet written, plus one held until the last was handed over. */
  private unwritten = 1;
  private sent = 0;

  constructor(
    readonly number: number,
    /** The start every frame of the pass shares: slot, time and position. */
    readonly head: string,
    /** The values (with their positions) the pass sends, as of the position in `head`. */
    readonly published: Publication | undefined,
    readonly remaining: Iterator<P>,
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

/**
 * Every connection of one pair stream on this instance, and the per-slot frames they receive. `P` is
 * the stream's connection state, `M` the messages it understands besides `PairMessage`.
 */
export abstract class PairStreamHub<
  P extends PairPeer,
  M extends { op: string } = PairMessage,
> extends StreamHub<P> {
  protected readonly options: Required<PairStreamOptions>;
  /** Every pair a connection follows, by `base|quote`. */
  private readonly followedPairs = new Map<string, FollowedPair>();
  private frameTimer: NodeJS.Timeout | undefined;
  private shared: SharedQuotes | undefined;
  private fanoutObserver: ((seconds: number) => void) | undefined;
  private passes = 0;
  /** The pass whose frames are still being handed to their sockets; a slot that comes meanwhile is skipped. */
  private passInProgress: FramePass<P> | undefined;
  /** Slots skipped because the previous pass was still going out. */
  private skippedPasses = 0;
  private readonly continueFanout = (): void => this.fanOut();
  /** This instance's positions, when it prices alone (with Redis, the shared ones are used). */
  private readonly ownPositions: PairPositions;
  private readonly chainWatch: ChainWatch;

  constructor(
    protected readonly book: TradingBook,
    options: PairStreamOptions,
    /** Every message the stream understands (a union including `PairMessage`), and their shapes for errors. */
    private readonly messages: { schema: z.ZodType<M | PairMessage>; usage: string },
  ) {
    const rules = { ...DEFAULTS, ...options };
    super(rules);
    this.options = rules;
    this.ownPositions = new PairPositions(rules.retentionMs);
    this.chainWatch = new ChainWatch(
      () => {
        try {
          return this.book.clock.slot;
        } catch {
          return undefined;
        }
      },
      rules.staleMs,
      (frame) => this.tellAll(frame),
    );
  }

  /** The pair's current value, serialized as the update a frame carries. */
  protected abstract price(base: Address, quote: Address): string;

  /** The acknowledgement of a (un)subscription, serialized. */
  protected abstract acknowledgement(base: Address, quote: Address, auto: boolean): string;

  /** What a frame carries after its updates (`,"field":value...`), for `peer` with `skipped` slots missed. */
  protected frameTail(_peer: P, _skipped: number): string {
    return "";
  }

  /** Called for every connection at the start of a pass, before the followed pairs are collected. */
  protected beforePass(_peer: P, _pass: number): void {}

  /** The state the stream keeps for a new connection. */
  protected abstract createPeer(socket: WebSocket): P;

  protected peerFor(socket: WebSocket): P {
    const peer = this.createPeer(socket);
    // A new connection has missed no slots yet.
    peer.skippedMark = this.skippedPasses;
    return peer;
  }

  /** Starts the frames (one pass per `frameMs`) and the pings. */
  start(): void {
    this.frameTimer = setInterval(() => this.sendFrames(), this.options.frameMs).unref();
    this.subscribers.start();
    this.chainWatch.start();
  }

  /** Stops the frames, closes every connection and, when shared, leaves Redis. */
  async stop(): Promise<void> {
    clearInterval(this.frameTimer);
    this.chainWatch.stop();
    this.passInProgress = undefined;
    this.subscribers.stop();
    await this.shared?.close();
  }

  /**
   * Hears, per slot, the seconds from the start of the frame pass until every frame of it was written
   * to its socket (the target is under 0.1 s at p99).
   */
  onFanout(observer: (seconds: number) => void): void {
    this.fanoutObserver = observer;
  }

  /** Takes values from the instance that leads through Redis instead of computing them all here. */
  share(shared: SharedQuotes): void {
    this.shared = shared;
  }

  /** The positions clients resume from: the deployment's with Redis, this instance's without. */
  private get positions(): PairPositions {
    return this.shared?.positions ?? this.ownPositions;
  }

  /** Sends a frame to every open connection now (`stale`, `recovered`). */
  protected tellAll(frame: string): void {
    for (const peer of this.subscribers)
      if (peer.socket.readyState === peer.socket.OPEN) peer.socket.send(frame);
  }

  /**
   * Checks a subscribe's `since`: true when the subscription can resume from it; otherwise the
   * connection is sent a `gap` frame saying which subscription (`target`) will start afresh, from which
   * position.
   */
  protected resumable(peer: P, since: number | undefined, target: Record<string, unknown>): boolean {
    if (since === undefined) return false;
    if (this.positions.knows(since)) return true;
    const seq = this.positions.latest?.seq ?? 0;
    peer.socket.send(JSON.stringify({ type: "gap", ...target, seq, ts: Date.now() }));
    return false;
  }

  /**
   * Prices the given pairs (`base|quote` keys), serialized as updates: what the leader publishes.
   * Throws `TradingNotReady("chain")` while the chain's state is not current: nothing is published
   * from it (this instance's own frames stop too, and its connections hear `stale`).
   */
  computeQuotes(pairs: readonly string[]): Map<string, string> {
    this.book.checkChain();
    const quotes = new Map<string, string>();
    for (const key of pairs) {
      // Keys come from every instance through Redis: only well-formed pairs are priced.
      const [base, quote] = key.split("|");
      if (base && quote && isAddressText(base) && isAddressText(quote))
        quotes.set(key, this.price(base, quote));
    }
    return quotes;
  }

  protected handle(peer: P, parsed: unknown): void {
    const message = this.messages.schema.safeParse(parsed);
    if (!message.success) {
      badRequest(peer.socket, `expected ${this.messages.usage}: ${whatIsWrong(message.error.issues[0])}`);
      return;
    }
    this.handleMessage(peer, message.data);
  }

  /** Answers a well-formed message; a stream with messages of its own overrides it. */
  protected handleMessage(peer: P, message: M | PairMessage): void {
    if (!isPairMessage(message)) return;
    const { base_mint: base, quote_mint: quote } = message;
    const key = `${base}|${quote}`;
    if (message.op === "unsubscribe") {
      this.removePair(peer, key);
      return;
    }
    if (peer.pairs.has(key)) return;
    if (peer.pairs.size >= this.options.maxSubscriptions) {
      badRequest(peer.socket, `at most ${this.options.maxSubscriptions} subscriptions per connection`);
      return;
    }
    const resume = this.resumable(peer, message.since, { sb: base, sq: quote });
    this.addPair(peer, key, base, quote, false, resume ? message.since : undefined);
  }

  /**
   * Subscribes a connection to a pair; its next frame acknowledges it and carries the current value
   * (with `resumeFrom`, only if the value changed after that position).
   */
  protected addPair(
    peer: P,
    key: string,
    base: Address,
    quote: Address,
    auto: boolean,
    resumeFrom?: number,
  ): void {
    let followed = this.followedPairs.get(key);
    if (!followed) {
      followed = { key, base, quote, json: "", version: 0, pricedInPass: 0, followedAt: Date.now() };
      this.followedPairs.set(key, followed);
    }
    peer.pairs.set(key, { followed, auto, sentVersion: 0, resumeFrom });
    peer.subscribed.push(this.acknowledgement(base, quote, auto));
  }

  /** Unsubscribes a connection from a pair it follows; its next frame acknowledges it. */
  protected removePair(peer: P, key: string): void {
    const pair = peer.pairs.get(key);
    if (!pair) return;
    peer.pairs.delete(key);
    // Asked to stop, not dropped: no resume needs it kept, so it goes at the next pass unless another
    // connection follows it (which marks it followed again). Otherwise a client subscribing and
    // unsubscribing fresh pairs would keep thousands priced for the retention.
    pair.followed.followedAt = Number.NEGATIVE_INFINITY;
    peer.unsubscribed.push(this.acknowledgement(pair.followed.base, pair.followed.quote, pair.auto));
  }

  /**
   * One frame per connection with something to say. Every followed pair is priced and serialized once
   * per slot (with Redis, once across all instances; a pair not yet published is priced here
   * meanwhile), so a connection's frame is its acknowledgements and the JSON of its changed pairs
   * joined together. The frames go out in slices of `FANOUT_SLICE_MS`, letting other work run between.
   * Every frame of a pass carries the position of the publication the pass began with.
   */
  private sendFrames(): void {
    if (this.subscribers.size === 0 || !this.book.loaded) return;
    if (this.passInProgress) {
      this.skippedPasses += 1;
      return;
    }
    let clock: { slot: bigint };
    try {
      clock = this.book.clock;
    } catch {
      return;
    }
    this.passes += 1;
    const published = this.followAndPrice(this.passes);
    this.passInProgress = new FramePass(
      this.passes,
      `{"u":${Number(clock.slot)},"ts":${Math.floor(Date.now() / 1000)},"seq":${published?.seq ?? 0}`,
      published,
      this.subscribers[Symbol.iterator](),
      this.fanoutObserver,
    );
    this.fanOut();
  }

  /**
   * Lets the stream bring each connection up to date, forgets pairs nobody has followed for the
   * retention, tells Redis what this instance follows, and prices every followed pair once, from one
   * state of the book: alone, it publishes them at a position itself; with Redis it takes the leader's
   * latest publication. Pricing a pair until it is forgotten is what makes its positions exact: a pair
   * priced again after a pause counts as changed, whatever its value.
   */
  private followAndPrice(pass: number): Publication | undefined {
    const now = Date.now();
    for (const peer of this.subscribers) {
      this.beforePass(peer, pass);
      for (const pair of peer.pairs.values()) pair.followed.followedAt = now;
    }
    const lingering: FollowedPair[] = [];
    for (const [key, followed] of this.followedPairs) {
      if (now - followed.followedAt > this.options.retentionMs) this.followedPairs.delete(key);
      else if (followed.followedAt < now) lingering.push(followed);
    }
    // Pairs of closed connections are kept for their resumes, but only so many: connections that open
    // with new pairs and close must not grow what is priced every slot without bound.
    const { maxLingeringPairs } = this.options;
    if (lingering.length > maxLingeringPairs) {
      lingering.sort((a, b) => a.followedAt - b.followedAt);
      for (const followed of lingering.slice(0, lingering.length - maxLingeringPairs))
        this.followedPairs.delete(followed.key);
    }
    let published: Publication | undefined;
    if (this.shared) {
      this.shared.follow(this.followedPairs.keys());
      published = this.shared.publication;
    } else {
      const values = new Map<string, string>();
      for (const followed of this.followedPairs.values())
        values.set(followed.key, this.price(followed.base, followed.quote));
      published = this.ownPositions.issue(values);
    }
    for (const followed of this.followedPairs.values()) this.reprice(followed, pass, published);
    return published;
  }

  /** Takes the pair's latest value, keeping the previous string (and version) when nothing changed. */
  private reprice(followed: FollowedPair, pass: number, published: Publication | undefined): void {
    const json = published?.values.get(followed.key)?.json ?? this.price(followed.base, followed.quote);
    followed.pricedInPass = pass;
    if (json === followed.json) return;
    followed.json = json;
    followed.version += 1;
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
      const peer = next.value;
      if (peer.socket.bufferedAmount > maxBufferedBytes) {
        // Behind: hold this frame back; the next one carries the latest value of every pair.
        peer.framesBehind += 1;
        peer.heldBack += 1;
        if (peer.framesBehind > maxFramesBehind) this.subscribers.drop(peer, 1013, "consumer too slow");
      } else {
        peer.framesBehind = 0;
        const frame = this.frameFor(peer, fanout);
        if (frame !== undefined) {
          fanout.handedOver();
          peer.socket.send(frame, FRAME_SEND_OPTIONS, fanout.written);
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
  private frameFor(peer: P, fanout: FramePass<P>): string | undefined {
    let updates = "";
    for (const pair of peer.pairs.values()) {
      const { followed } = pair;
      // Subscribed since the pass began: priced now, so that the acknowledgement comes with the value.
      if (followed.pricedInPass !== fanout.number) this.reprice(followed, fanout.number, fanout.published);
      if (pair.resumeFrom !== undefined) {
        // Resumed: the client has the value as of `resumeFrom`; unchanged since, it is not sent again.
        const value = fanout.published?.values.get(followed.key);
        if (value && value.json === followed.json && value.changedAt <= pair.resumeFrom)
          pair.sentVersion = followed.version;
        pair.resumeFrom = undefined;
      }
      if (followed.version === pair.sentVersion) continue;
      pair.sentVersion = followed.version;
      updates = updates === "" ? followed.json : `${updates},${followed.json}`;
    }
    const { subscribed, unsubscribed } = peer;
    if (updates === "" && subscribed.length === 0 && unsubscribed.length === 0) return undefined;
    let frame = fanout.head;
    if (subscribed.length > 0) {
      frame += `,"subscribe":[${subscribed.join(",")}]`;
      peer.subscribed = [];
    }
    if (unsubscribed.length > 0) {
      frame += `,"unsubscribe":[${unsubscribed.join(",")}]`;
      peer.unsubscribed = [];
    }
    const skipped = peer.heldBack + (this.skippedPasses - peer.skippedMark);
    peer.heldBack = 0;
    peer.skippedMark = this.skippedPasses;
    return `${frame},"updates":[${updates}]${this.frameTail(peer, skipped)}}`;
  }
}
