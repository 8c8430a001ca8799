/**
 * The simulated exchange's state: the catalogue it was started with, indexed, each market's seeded
 * motion, and the lifecycle changes an operator or a test has made since (the only state that is not
 * a function of the catalogue and the clock).
 */
import type {
  CatalogueEvent,
  CatalogueFile,
  MarketRecord,
  MarketResult,
  MarketStatus,
  Series,
} from "../contract/markets.js";
import { catalogueMoment, MarketDynamics } from "./dynamics.js";
import { type EventStrikes, eventStrikes } from "./forecast.js";

/** A market's lifecycle as the exchange now has it. */
export interface Lifecycle {
  status: MarketStatus;
  result: MarketResult;
  /** Basis points paid to YES when a scalar market settles with result "". */
  scalarOutcomePct: number | null;
  /** When it was determined (Unix seconds), or null while it is not: what the historical cutoff reads. */
  settledTs: number | null;
}

export interface SimulatedMarket {
  record: MarketRecord;
  dynamics: MarketDynamics;
  lifecycle: Lifecycle;
}

export interface SimulatedEvent {
  record: CatalogueEvent;
  markets: SimulatedMarket[];
  /** The numeric strikes of its markets, or null when it has too few to forecast. */
  strikes: EventStrikes | null;
}

/** Moves the contract allows (§5): initialized → active ⇄ inactive → closed → determined → finalized. */
const NEXT_STATUSES: Readonly<Record<MarketStatus, readonly MarketStatus[]>> = {
  initialized: ["active"],
  active: ["inactive", "closed"],
  inactive: ["active", "closed"],
  closed: ["determined"],
  determined: ["finalized"],
  finalized: [],
};

export class LifecycleError extends Error {}

/** The statuses of a settled market. */
export const SETTLED_STATUSES: ReadonlySet<MarketStatus> = new Set(["determined", "finalized"]);

/** The exchange's catalogue, indexed by ticker, with the current lifecycle of every market. */
export class SimulatedExchange {
  readonly series: Series[];
  readonly seriesByTicker: Map<string, Series>;
  readonly events: SimulatedEvent[];
  readonly eventsByTicker: Map<string, SimulatedEvent>;
  readonly markets: SimulatedMarket[];
  readonly marketsByTicker: Map<string, SimulatedMarket>;
  /** The moment the catalogue's quotes describe; prices at other times move away from them. */
  readonly moment: number;

  constructor(catalogue: CatalogueFile, moment?: number) {
    const allMarkets = catalogue.events.flatMap((e) => e.markets);
    this.moment = moment ?? catalogueMoment(allMarkets, Math.floor(Date.now() / 1000));
    this.series = catalogue.series;
    this.seriesByTicker = new Map(catalogue.series.map((s) => [s.ticker, s]));
    this.events = catalogue.events.map((record) => {
      const markets = record.markets.map((market) => ({
        record: market,
        dynamics: new MarketDynamics(market, this.moment),
        lifecycle: {
          status: market.status,
          result: market.result,
          scalarOutcomePct: market.scalarOutcomePct,
          // The catalogue says only that a market was settled: at its expiration, as Kalshi settles.
          settledTs: SETTLED_STATUSES.has(market.status) ? market.expirationTime : null,
        },
      }));
      return { record, markets, strikes: eventStrikes(record.markets) };
    });
    this.eventsByTicker = new Map(this.events.map((e) => [e.record.ticker, e]));
    this.markets = this.events.flatMap((e) => e.markets);
    this.marketsByTicker = new Map(this.markets.map((m) => [m.record.ticker, m]));
  }

  /**
   * Moves a market along its lifecycle. Determining it needs a result: "yes"/"no", or "" with a scalar
   * payout. Throws LifecycleError for a move the lifecycle does not allow. `now` is when it happens.
   */
  changeLifecycle(
    ticker: string,
    change: { status: MarketStatus; result?: MarketResult; scalarOutcomePct?: number | null },
    now: number,
  ): SimulatedMarket {
    const market = this.marketsByTicker.get(ticker);
    if (!market) throw new LifecycleError(`no market ${ticker}`);
    const from = market.lifecycle.status;
    // Several steps at once are fine when each is allowed (active → closed → determined, say).
    if (!reachable(from, change.status)) {
      throw new LifecycleError(`market ${ticker} cannot move from ${from} to ${change.status}`);
    }
    const settles = change.status === "determined" || change.status === "finalized";
    if (settles && market.lifecycle.result === "" && market.lifecycle.scalarOutcomePct === null) {
      const result = change.result ?? "";
      const scalar = change.scalarOutcomePct ?? null;
      if (result === "" && scalar === null) {
        throw new LifecycleError(`settling ${ticker} needs a result ("yes" or "no") or a scalarOutcomePct`);
      }
      market.lifecycle.result = result;
      market.lifecycle.scalarOutcomePct = result === "" ? scalar : null;
    }
    if (settles && market.lifecycle.settledTs === null) market.lifecycle.settledTs = now;
    market.lifecycle.status = change.status;
    return market;
  }
}

function reachable(from: MarketStatus, to: MarketStatus): boolean {
  const seen = new Set<MarketStatus>();
  const queue: MarketStatus[] = [from];
  while (queue.length > 0) {
    const status = queue.shift() as MarketStatus;
    for (const next of NEXT_STATUSES[status]) {
      if (next === to) return true;
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return false;
}
