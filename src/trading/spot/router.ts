/**
 * Route search over every market of every venue: direct routes and two-leg routes through one
 * intermediate mint, each leg priced with the venue's exact integer math. The best route is the one
 * paying the most output; a shorter route wins a tie.
 *
 * A leg's output grows with its input, so the best two-leg route through a given intermediate mint
 * starts with the best first leg into it. The search therefore ranks the markets of each mint pair by
 * a floating-point estimate and prices exactly only the markets within a hair of the best: linear in
 * the number of markets touching the two mints, with a handful of exact quotes.
 */
import type { Address } from "@solana/kit";
import { isSync, type LegQuote, type SyncOf, type TradingMarket } from "./market.js";

export interface RouteLeg<M extends TradingMarket = TradingMarket> {
  market: M;
  inputMint: Address;
  outputMint: Address;
  inAmount: bigint;
  outAmount: bigint;
}

interface RouteAmounts {
  inAmount: bigint;
  outAmount: bigint;
  /** The output at every leg's marginal price, fees included: the reference for price impact. */
  spotOutAmount: number;
  /** What a fill spends of `inAmount` when it spends less (a prediction buy of whole contracts). */
  spent?: bigint;
}

/** A route one transaction executes: every leg is on a sync market. */
export interface SyncRoute<M extends TradingMarket = TradingMarket> extends RouteAmounts {
  executionMode: "sync";
  legs: RouteLeg<SyncOf<M>>[];
}

/** A direct route on an async market: an order that settles later. */
export interface AsyncRoute<M extends TradingMarket = TradingMarket> extends RouteAmounts {
  executionMode: "async";
  legs: RouteLeg<M>[];
}

/** A route over markets of type `M` (the venue's: `Route<VenueMarket>`). */
export type Route<M extends TradingMarket = TradingMarket> = SyncRoute<M> | AsyncRoute<M>;

export interface RouteRequest {
  inputMint: Address;
  outputMint: Address;
  amount: bigint;
  /** 1 for direct routes only; 2 (the default) allows one intermediate mint. */
  maxLegs: number;
  /** Venues a route may use (all when undefined). */
  venues?: ReadonlySet<string>;
}

/** Estimates within this relative distance of the best are priced exactly, so float error never decides. */
const ESTIMATE_TOLERANCE = 1e-9;

interface BestLeg<M extends TradingMarket> {
  market: M;
  quote: LegQuote;
}

/**
 * The markets trading a mint that a graph finds when asked instead of holding them (the prediction
 * venue's: one per outcome mint, up to a million in a large catalogue). They are async, so only ever
 * a direct route to or from that mint.
 */
export interface MarketsOnDemand<M extends TradingMarket> {
  /** The venue of every market found. */
  readonly venue: string;
  /** The markets trading `mint`. */
  find(mint: Address): readonly M[];
}

/** An index of markets by mint and by mint pair, rebuilt whenever the set of markets changes. */
export class MarketGraph<M extends TradingMarket = TradingMarket> {
  /** mint → neighbouring mint → the markets pairing them. */
  private readonly neighbours = new Map<Address, Map<Address, M[]>>();
  /** The venues of the markets, for telling a venue filter that excludes none. */
  private readonly venueNames = new Set<string>();

  constructor(
    readonly markets: readonly M[],
    private readonly onDemand?: MarketsOnDemand<M>,
  ) {
    for (const market of markets) {
      const [a, b] = market.mints;
      link(this.neighbours, a, b, market);
      link(this.neighbours, b, a, market);
      this.venueNames.add(market.venue);
    }
    if (onDemand) this.venueNames.add(onDemand.venue);
  }

  /** The markets pairing two mints: those held, and those found on demand from either mint. */
  private pairing(a: Address, b: Address): readonly M[] | undefined {
    const held = this.neighbours.get(a)?.get(b);
    if (!this.onDemand) return held;
    const found = [...this.onDemand.find(a), ...this.onDemand.find(b)].filter(
      (market) => market.mints.includes(a) && market.mints.includes(b),
    );
    return found.length === 0 ? held : [...(held ?? []), ...found];
  }

  /** Whether `venues` names every venue of the graph's markets. */
  private allVenuesIn(venues: ReadonlySet<string>): boolean {
    for (const venue of this.venueNames) if (!venues.has(venue)) return false;
    return true;
  }

  /** Whether any market trades `mint`. */
  has(mint: Address): boolean {
    return this.neighbours.has(mint) || (this.onDemand?.find(mint).length ?? 0) > 0;
  }

  /** The best route for the request, or null when none pays any output. */
  bestRoute(request: RouteRequest): Route<M> | null {
    const { inputMint, outputMint, amount } = request;
    // A filter naming every venue the graph has filters nothing: skip the per-market check.
    const venues = request.venues && !this.allVenuesIn(request.venues) ? request.venues : undefined;
    let best: Route<M> | null = null;
    const direct = bestLeg(this.pairing(inputMint, outputMint), inputMint, amount, venues, false);
    if (direct) {
      const { market, quote } = direct;
      best = isSync(market)
        ? {
            legs: [leg(market, quote, inputMint, outputMint, amount)],
            inAmount: quote.inAmount,
            outAmount: quote.outAmount,
            spotOutAmount: quote.spotOutAmount,
            executionMode: "sync",
          }
        : {
            legs: [leg(market, quote, inputMint, outputMint, amount)],
            inAmount: quote.inAmount,
            outAmount: quote.outAmount,
            spotOutAmount: quote.spotOutAmount,
            ...(quote.spent !== undefined ? { spent: quote.spent } : {}),
            executionMode: "async",
          };
    }
    if (request.maxLegs < 2) return best;

    // Two-leg routes are sync: only held markets take part.
    const fromInput = this.neighbours.get(inputMint);
    const toOutput = this.neighbours.get(outputMint);
    if (!fromInput || !toOutput) return best;
    // Intermediate mints neighbour both ends: walk the smaller neighbourhood (most pairs share only a
    // few mints).
    const [walk, other] = fromInput.size <= toOutput.size ? [fromInput, toOutput] : [toOutput, fromInput];
    for (const middle of walk.keys()) {
      if (middle === outputMint || middle === inputMint) continue;
      const firstMarkets = walk === fromInput ? walk.get(middle) : other.get(middle);
      const secondMarkets = walk === fromInput ? other.get(middle) : walk.get(middle);
      if (!firstMarkets || !secondMarkets) continue;
      // Async (prediction) markets settle later, so they cannot be part of a one-transaction route.
      // bestLeg took sync markets only; `isSync` tells the types so.
      const first = bestLeg(firstMarkets, inputMint, amount, venues, true);
      if (!first || !isSync(first.market)) continue;
      const second = bestLeg(secondMarkets, middle, first.quote.outAmount, venues, true);
      if (!second || !isSync(second.market)) continue;
      if (best && second.quote.outAmount <= best.outAmount) continue;
      best = {
        legs: [
          leg(first.market, first.quote, inputMint, middle, amount),
          leg(second.market, second.quote, middle, outputMint, first.quote.outAmount),
        ],
        inAmount: first.quote.inAmount,
        outAmount: second.quote.outAmount,
        spotOutAmount:
          (first.quote.spotOutAmount * second.quote.spotOutAmount) / Number(first.quote.outAmount),
        executionMode: "sync",
      };
    }
    return best;
  }
}

/** Per-request scratch for `bestLeg`'s estimates, reused: the search runs synchronously, one at a time. */
let estimates = new Float64Array(64);

/**
 * The market paying the most for `amount` of `inputMint` among `markets`, exactly priced. With
 * `venues`, only markets of those venues count; with `syncOnly`, only sync markets.
 */
function bestLeg<M extends TradingMarket>(
  markets: readonly M[] | undefined,
  inputMint: Address,
  amount: bigint,
  venues: ReadonlySet<string> | undefined,
  syncOnly: boolean,
): BestLeg<M> | null {
  if (!markets) return null;
  const count = markets.length;
  if (estimates.length < count) estimates = new Float64Array(count * 2);
  let bestEstimate = 0;
  const approximateAmount = Number(amount);
  for (let index = 0; index < count; index++) {
    const market = markets[index] as M;
    const allowed =
      (!syncOnly || market.executionMode === "sync") && (venues === undefined || venues.has(market.venue));
    const estimate = allowed ? market.estimate(inputMint, amount, approximateAmount) : 0;
    estimates[index] = estimate;
    if (estimate > bestEstimate) bestEstimate = estimate;
  }
  if (bestEstimate <= 0) return null;
  const threshold = bestEstimate * (1 - ESTIMATE_TOLERANCE);
  let best: BestLeg<M> | null = null;
  for (let index = 0; index < count; index++) {
    if ((estimates[index] as number) < threshold) continue;
    const market = markets[index] as M;
    const quote = market.quote(inputMint, amount);
    if (quote && quote.outAmount > 0n && (!best || quote.outAmount > best.quote.outAmount)) {
      best = { market, quote };
    }
  }
  return best;
}

function leg<M extends TradingMarket>(
  market: M,
  quote: LegQuote,
  inputMint: Address,
  outputMint: Address,
  inAmount: bigint,
): RouteLeg<M> {
  return { market, inputMint, outputMint, inAmount, outAmount: quote.outAmount };
}

function link<M extends TradingMarket>(
  index: Map<Address, Map<Address, M[]>>,
  from: Address,
  to: Address,
  market: M,
) {
  let byMint = index.get(from);
  if (!byMint) {
    byMint = new Map();
    index.set(from, byMint);
  }
  const list = byMint.get(to);
  if (list) list.push(market);
  else byMint.set(to, [market]);
}
