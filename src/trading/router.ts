/**
 * Route search over every market of every venue: direct routes and two-leg routes through one
 * intermediate mint, each leg priced with the venue's exact integer math. The best route is the one
 * paying the most output; a shorter route wins a tie.
 */
import type { Address } from "@solana/kit";
import type { ExecutionMode, TradingMarket } from "./market.js";

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

/** An index of markets by mint and by mint pair, rebuilt whenever the set of markets changes. */
export class MarketGraph {
  private readonly byMint = new Map<Address, TradingMarket[]>();
  private readonly byPair = new Map<string, TradingMarket[]>();

  constructor(readonly markets: readonly TradingMarket[]) {
    for (const market of markets) {
      const [a, b] = market.mints;
      push(this.byMint, a, market);
      push(this.byMint, b, market);
      push(this.byPair, pairKey(a, b), market);
    }
  }

  /** Whether any market trades `mint`. */
  has(mint: Address): boolean {
    return this.byMint.has(mint);
  }

  /** The best route for the request, or null when none pays any output. */
  bestRoute(request: RouteRequest): Route | null {
    const { inputMint, outputMint, amount } = request;
    const allowed = (market: TradingMarket) => !request.venues || request.venues.has(market.venue);
    let best: Route | null = null;
    const consider = (route: Route | null) => {
      if (route && route.outAmount > 0n && (!best || route.outAmount > best.outAmount)) best = route;
    };
    for (const market of this.byPair.get(pairKey(inputMint, outputMint)) ?? []) {
      if (allowed(market)) consider(direct(market, inputMint, outputMint, amount));
    }
    if (request.maxLegs < 2) return best;
    for (const first of this.byMint.get(inputMint) ?? []) {
      // Async (prediction) markets settle later, so they cannot feed a second leg in one transaction.
      if (!allowed(first) || first.executionMode === "async") continue;
      const middle = other(first, inputMint);
      if (middle === outputMint) continue;
      const candidates = (this.byPair.get(pairKey(middle, outputMint)) ?? []).filter(
        (m) => allowed(m) && m.executionMode === "sync",
      );
      if (candidates.length === 0) continue;
      const leg1 = first.quote(inputMint, amount);
      if (!leg1 || leg1.outAmount <= 0n) continue;
      for (const second of candidates) {
        const leg2 = second.quote(middle, leg1.outAmount);
        if (!leg2 || leg2.outAmount <= 0n) continue;
        consider({
          legs: [
            {
              market: first,
              inputMint,
              outputMint: middle,
              inAmount: leg1.inAmount,
              outAmount: leg1.outAmount,
            },
            {
              market: second,
              inputMint: middle,
              outputMint,
              inAmount: leg1.outAmount,
              outAmount: leg2.outAmount,
            },
          ],
          inAmount: leg1.inAmount,
          outAmount: leg2.outAmount,
          spotOutAmount: (leg1.spotOutAmount * leg2.spotOutAmount) / Number(leg1.outAmount),
          executionMode: "sync",
        });
      }
    }
    return best;
  }
}

function direct(
  market: TradingMarket,
  inputMint: Address,
  outputMint: Address,
  amount: bigint,
): Route | null {
  const quote = market.quote(inputMint, amount);
  if (!quote) return null;
  return {
    legs: [{ market, inputMint, outputMint, inAmount: quote.inAmount, outAmount: quote.outAmount }],
    inAmount: quote.inAmount,
    outAmount: quote.outAmount,
    spotOutAmount: quote.spotOutAmount,
    executionMode: market.executionMode,
  };
}

function other(market: TradingMarket, mint: Address): Address {
  return market.mints[0] === mint ? market.mints[1] : market.mints[0];
}

function pairKey(a: Address, b: Address): string {
  return a < b ? `${a}|${b}` : `${b}|${a}`;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
