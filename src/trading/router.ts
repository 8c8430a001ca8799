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
import type { ExecutionMode, LegQuote, TradingMarket } from "./market.js";

export interface RouteLeg {
  market: TradingMarket;
  inputMint: Address;
  outputMint: Address;
  inAmount: bigint;
  outAmount: bigint;
}

export interface Route {
  legs: RouteLeg[];
  inAmount: bigint;
  outAmount: bigint;
  /** The output at every leg's marginal price, fees included: the reference for price impact. */
  spotOutAmount: number;
  executionMode: ExecutionMode;
}

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

type Allowed = (market: TradingMarket) => boolean;

interface BestLeg {
  market: TradingMarket;
  quote: LegQuote;
}

/** An index of markets by mint and by mint pair, rebuilt whenever the set of markets changes. */
export class MarketGraph {
  /** mint → neighbouring mint → the markets pairing them. */
  private readonly neighbours = new Map<Address, Map<Address, TradingMarket[]>>();

  constructor(readonly markets: readonly TradingMarket[]) {
    for (const market of markets) {
      const [a, b] = market.mints;
      link(this.neighbours, a, b, market);
      link(this.neighbours, b, a, market);
    }
  }

  /** Whether any market trades `mint`. */
  has(mint: Address): boolean {
    return this.neighbours.has(mint);
  }

  /** The best route for the request, or null when none pays any output. */
  bestRoute(request: RouteRequest): Route | null {
    const { inputMint, outputMint, amount } = request;
    const venues = request.venues;
    const allowed: Allowed = venues ? (market) => venues.has(market.venue) : () => true;
    const fromInput = this.neighbours.get(inputMint);
    if (!fromInput) return null;

    let best: Route | null = null;
    const direct = bestLeg(fromInput.get(outputMint), inputMint, amount, allowed);
    if (direct) {
      best = {
        legs: [leg(direct, inputMint, outputMint, amount)],
        inAmount: direct.quote.inAmount,
        outAmount: direct.quote.outAmount,
        spotOutAmount: direct.quote.spotOutAmount,
        executionMode: direct.market.executionMode,
      };
    }
    if (request.maxLegs < 2) return best;

    // Async (prediction) markets settle later, so they cannot be part of a one-transaction route.
    const syncAllowed: Allowed = (market) => market.executionMode === "sync" && allowed(market);
    const toOutput = this.neighbours.get(outputMint);
    if (!toOutput) return best;
    // Intermediate mints neighbour both ends: walk the smaller neighbourhood (USDC neighbours every
    // outcome mint of the prediction venue; most pairs share only a few mints).
    const [walk, other] = fromInput.size <= toOutput.size ? [fromInput, toOutput] : [toOutput, fromInput];
    for (const middle of walk.keys()) {
      if (middle === outputMint || middle === inputMint) continue;
      const firstMarkets = walk === fromInput ? walk.get(middle) : other.get(middle);
      const secondMarkets = walk === fromInput ? other.get(middle) : walk.get(middle);
      if (!firstMarkets || !secondMarkets) continue;
      const first = bestLeg(firstMarkets, inputMint, amount, syncAllowed);
      if (!first) continue;
      const second = bestLeg(secondMarkets, middle, first.quote.outAmount, syncAllowed);
      if (!second) continue;
      if (best && second.quote.outAmount <= best.outAmount) continue;
      best = {
        legs: [leg(first, inputMint, middle, amount), leg(second, middle, outputMint, first.quote.outAmount)],
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

/** The market paying the most for `amount` of `inputMint` among `markets`, exactly priced. */
function bestLeg(
  markets: readonly TradingMarket[] | undefined,
  inputMint: Address,
  amount: bigint,
  allowed: Allowed,
): BestLeg | null {
  if (!markets) return null;
  let bestEstimate = 0;
  const estimates: number[] = [];
  for (const market of markets) {
    const estimate = allowed(market) ? market.estimate(inputMint, amount) : 0;
    estimates.push(estimate);
    if (estimate > bestEstimate) bestEstimate = estimate;
  }
  if (bestEstimate <= 0) return null;
  const threshold = bestEstimate * (1 - ESTIMATE_TOLERANCE);
  let best: BestLeg | null = null;
  markets.forEach((market, index) => {
    if ((estimates[index] as number) < threshold) return;
    const quote = market.quote(inputMint, amount);
    if (quote && quote.outAmount > 0n && (!best || quote.outAmount > best.quote.outAmount)) {
      best = { market, quote };
    }
  });
  return best;
}

function leg(best: BestLeg, inputMint: Address, outputMint: Address, inAmount: bigint): RouteLeg {
  return { market: best.market, inputMint, outputMint, inAmount, outAmount: best.quote.outAmount };
}

function link(
  index: Map<Address, Map<Address, TradingMarket[]>>,
  from: Address,
  to: Address,
  market: TradingMarket,
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
