/**
 * The quote stream (`/quote-stream`, contract §6): clients subscribe to pairs (or to every
 * prediction market) and receive one frame per slot with their acknowledgements and, per pair, the
 * best bid and ask of the base in the quote, each probed with a 10 USDC-equivalent trade through the
 * router (10 CASH counts as 10 USDC: both are dollars, and no pool need join them). The first frame
 * after a subscription carries the pair's current quote; later frames carry only what changed. A
 * consumer that falls behind gets the latest value per pair when it catches up, and is closed if it
 * stays behind. All of that but the quotes and the prediction-market subscription is every pair
 * stream's (`pair-stream.ts`), and so are the positions clients resume from (`seq`, `since`, `gap`)
 * and the `stale`/`recovered` frames of a chain whose slot stands still. The prediction-market
 * subscription resumes too: its `since` applies to every pair it adds at once.
 */
import type { Address } from "@solana/kit";
import type { WebSocket } from "ws";
import { z } from "zod";
import { uiAmountString } from "../../chain/ui-amount.js";
import { USDC_MINT } from "../../contract/markets.js";
import { SETTLEMENT_MINTS } from "../../markets/accounts.js";
import type { TradingBook } from "../spot/trading-book.js";
import {
  PAIR_MESSAGE_USAGE,
  PairMessage,
  PairPeer,
  PairStreamHub,
  type PairStreamOptions,
  SinceField,
} from "./pair-stream.js";

/** What a probe is worth: 10 USDC. */
const PROBE_USDC = 10_000_000n;

export type QuoteStreamOptions = PairStreamOptions;

const AllMessage = z.object({
  op: z.enum(["subscribe_all_prediction_markets", "unsubscribe_all_prediction_markets"]),
  since: SinceField,
});
type AllMessage = z.infer<typeof AllMessage>;
const ClientMessage = z.union([PairMessage, AllMessage]);

type Update =
  | { sb: string; sq: string; b: string; B: string; a: string; A: string }
  | { sb: string; sq: string; e: string };

class Subscriber extends PairPeer {
  allPredictionMarkets = false;
  /** The prediction pair list this connection was last brought up to date with (see `refreshPredictionList`). */
  predictionListSynced = -1;
  /** A resumed subscribe-all's `since`, for the pairs it adds first. */
  resumeAllFrom: number | undefined;
}

/** Every stream connection of this instance, and the per-slot frames they receive. */
export class QuoteStreamHub extends PairStreamHub<Subscriber, AllMessage> {
  private predictionList: { pairs: ReadonlyMap<string, [Address, Address]>; version: number } = {
    pairs: new Map(),
    version: 0,
  };
  /** The pass that last read the prediction markets (see `beforePass`). */
  private predictionListCheckedInPass = -1;
  /** The venue's list of outcome mints the prediction list was last built from. */
  private predictionListSource: readonly Address[] | undefined;

  constructor(book: TradingBook, options: QuoteStreamOptions = {}) {
    super(book, options, {
      schema: ClientMessage,
      usage: `${PAIR_MESSAGE_USAGE} or {"op":"subscribe_all_prediction_markets"|"unsubscribe_all_prediction_markets","since"?:seq}`,
    });
  }

  protected createPeer(socket: WebSocket): Subscriber {
    return new Subscriber(socket);
  }

  protected acknowledgement(base: Address, quote: Address, auto: boolean): string {
    return JSON.stringify({ sb: base, sq: quote, auto });
  }

  protected price(base: Address, quote: Address): string {
    return JSON.stringify(this.quotePair(base, quote));
  }

  protected override handleMessage(subscriber: Subscriber, message: PairMessage | AllMessage): void {
    // Any change may make room under the subscription limit for prediction pairs left out before.
    subscriber.predictionListSynced = -1;
    if (
      message.op !== "subscribe_all_prediction_markets" &&
      message.op !== "unsubscribe_all_prediction_markets"
    ) {
      super.handleMessage(subscriber, message);
      return;
    }
    const already = subscriber.allPredictionMarkets;
    subscriber.allPredictionMarkets = message.op === "subscribe_all_prediction_markets";
    if (subscriber.allPredictionMarkets) {
      if (!already && this.resumable(subscriber, message.since, { all: true }))
        subscriber.resumeAllFrom = message.since;
      return;
    }
    subscriber.resumeAllFrom = undefined;
    for (const [key, pair] of subscriber.pairs) if (pair.auto) this.removePair(subscriber, key);
  }

  /** Brings a subscribe-all connection up to date with the prediction markets, read once per pass. */
  protected override beforePass(subscriber: Subscriber, pass: number): void {
    if (!subscriber.allPredictionMarkets) return;
    if (this.predictionListCheckedInPass !== pass) {
      this.refreshPredictionList();
      this.predictionListCheckedInPass = pass;
    }
    if (subscriber.predictionListSynced !== this.predictionList.version)
      this.followPredictionMarkets(subscriber);
  }

  /** Adds the prediction pairs a subscribe-all connection does not have yet, and drops gone ones. */
  private followPredictionMarkets(subscriber: Subscriber): void {
    const { pairs, version } = this.predictionList;
    for (const [key, [base, quote]] of pairs) {
      if (subscriber.pairs.has(key) || subscriber.pairs.size >= this.options.maxSubscriptions) continue;
      this.addPair(subscriber, key, base, quote, true, subscriber.resumeAllFrom);
    }
    for (const [key, pair] of subscriber.pairs)
      if (pair.auto && !pairs.has(key)) this.removePair(subscriber, key);
    subscriber.predictionListSynced = version;
    // Pairs listed later are new to the client: they come with their value.
    subscriber.resumeAllFrom = undefined;
  }

  /**
   * Every outcome mint of a USDC rail trading on the prediction venue, against USDC (a CASH rail's
   * pairs are followed one by one); its version changes only when the list does, so that
   * subscribe-all connections are walked through it only then.
   */
  private refreshPredictionList(): void {
    const outcomes = this.book.prediction?.usdcOutcomeMints() ?? [];
    // The venue answers the same list until its catalog changes: nothing to compare then.
    if (outcomes === this.predictionListSource) return;
    this.predictionListSource = outcomes;
    const pairs = new Map<string, [Address, Address]>();
    for (const outcome of outcomes) pairs.set(`${outcome}|${USDC_MINT}`, [outcome, USDC_MINT]);
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

  /**
   * How much of `mint` 10 USDC buys: 10 itself of a settlement mint (USDC, CASH), what 10 of its
   * rail's settlement mint buys of an outcome mint, else what 10 USDC buys through the pools.
   */
  private usdcWorth(mint: Address): bigint | null {
    if (SETTLEMENT_MINTS.includes(mint)) return PROBE_USDC;
    const via = this.book.prediction?.marketOf(mint)?.settlementMint ?? USDC_MINT;
    return this.route(via, mint, PROBE_USDC);
  }

  private route(input: Address, output: Address, amount: bigint): bigint | null {
    const route = this.book.graph.bestRoute({ inputMint: input, outputMint: output, amount, maxLegs: 2 });
    return route && route.outAmount > 0n ? route.outAmount : null;
  }
}
