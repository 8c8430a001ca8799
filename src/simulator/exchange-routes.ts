/**
 * Kalshi trade-api v2's exchange-wide routes over the simulator: GetExchangeStatus,
 * GetExchangeSchedule and GetSeriesFeeChanges (ExchangeApi), GetFiltersForSports and
 * GetTagsForSeriesCategories (SearchApi). Each is read off the catalogue and the exchange's clock.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { Series } from "../contract/markets.js";
import { iso } from "./kalshi-json.js";
import { stableId } from "./milestones.js";
import { flag, MAX_TICKER, parse, type SimulatorContext } from "./routes.js";

const FeeChangesQuery = z.object({
  series_ticker: z.string().max(MAX_TICKER).optional(),
  show_historical: flag.default(false),
});
const DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] as const;

/** A series' sport, as its product metadata or first tag names it. */
const sportOf = (series: Series) =>
  typeof series.productMetadata?.sport === "string" ? series.productMetadata.sport : series.tags[0];

export function registerExchangeInfoRoutes(app: FastifyInstance, ctx: SimulatorContext): void {
  /** The span the catalogue trades over: from its first market's open to its last market's close. */
  const tradingSpan = () => {
    let open = Number.POSITIVE_INFINITY;
    let close = 0;
    for (const { record } of ctx.exchange.markets) {
      open = Math.min(open, record.openTime);
      close = Math.max(close, record.closeTime);
    }
    return { open, close };
  };

  app.get("/exchange/status", async () => {
    const now = ctx.now();
    // Trading is on while some market is open: the simulator's tape prints in every minute of one.
    const open = ctx.exchange.markets.filter(
      ({ record, lifecycle }) =>
        lifecycle.status === "active" && record.openTime <= now && now < record.closeTime,
    );
    const nextOpen = ctx.exchange.markets
      .map(({ record }) => record.openTime)
      .filter((t) => t > now)
      .reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    return {
      exchange_active: true,
      trading_active: open.length > 0,
      exchange_estimated_resume_time: open.length === 0 && Number.isFinite(nextOpen) ? iso(nextOpen) : null,
    };
  });

  app.get("/exchange/schedule", async () => {
    // The simulator trades around the clock and has no maintenance: one weekly schedule, open all day,
    // effective over the span its catalogue trades.
    const { open, close } = tradingSpan();
    const week = Object.fromEntries(DAYS.map((day) => [day, [{ open_time: "00:00", close_time: "24:00" }]]));
    return {
      schedule: {
        standard_hours: [{ start_time: iso(open), end_time: iso(close), ...week }],
        maintenance_windows: [],
      },
    };
  });

  app.get("/series/fee_changes", async (request) => {
    const q = parse(FeeChangesQuery, request.query);
    const now = ctx.now();
    // Each series' fee took effect when its first market opened; only later ones are pending changes.
    const firstOpen = new Map<string, number>();
    for (const event of ctx.exchange.events) {
      for (const { record } of event.markets) {
        const series = event.record.seriesTicker;
        firstOpen.set(series, Math.min(firstOpen.get(series) ?? record.openTime, record.openTime));
      }
    }
    const changes = ctx.exchange.series.flatMap((series) => {
      const scheduled = firstOpen.get(series.ticker);
      if (scheduled === undefined || (q.series_ticker !== undefined && series.ticker !== q.series_ticker))
        return [];
      if (!q.show_historical && scheduled <= now) return [];
      return [
        {
          id: stableId(`fee-change/${series.ticker}`),
          series_ticker: series.ticker,
          fee_type: series.feeType,
          fee_multiplier: series.feeMultiplier,
          scheduled_ts: iso(scheduled),
        },
      ];
    });
    return { series_fee_change_arr: changes };
  });

  app.get("/search/tags_by_categories", async () => {
    const tags = new Map<string, Set<string>>();
    for (const series of ctx.exchange.series) {
      const set = tags.get(series.category) ?? new Set<string>();
      for (const tag of series.tags) set.add(tag);
      tags.set(series.category, set);
    }
    return {
      tags_by_categories: Object.fromEntries([...tags].map(([category, set]) => [category, [...set]])),
    };
  });

  app.get("/search/filters_by_sport", async () => {
    const sports = new Map<
      string,
      { scopes: Set<string>; competitions: Map<string, Set<string>>; volume: number }
    >();
    for (const event of ctx.exchange.events) {
      const series = ctx.exchange.seriesByTicker.get(event.record.seriesTicker);
      const sport = series && series.category === "Sports" ? sportOf(series) : undefined;
      if (sport === undefined) continue;
      const entry = sports.get(sport) ?? { scopes: new Set(), competitions: new Map(), volume: 0 };
      const { competition, competitionScope: scope } = event.record;
      if (scope) entry.scopes.add(scope);
      if (competition) {
        const scopes = entry.competitions.get(competition) ?? new Set<string>();
        if (scope) scopes.add(scope);
        entry.competitions.set(competition, scopes);
      }
      entry.volume += event.record.volume ?? 0;
      sports.set(sport, entry);
    }
    // Kalshi orders sports by how much they trade.
    const ordering = [...sports]
      .sort(([a, x], [b, y]) => y.volume - x.volume || (a < b ? -1 : 1))
      .map(([s]) => s);
    const filters = Object.fromEntries(
      ordering.map((sport) => {
        const entry = sports.get(sport) as NonNullable<ReturnType<typeof sports.get>>;
        const competitions = Object.fromEntries(
          [...entry.competitions].map(([name, scopes]) => [name, { scopes: [...scopes].sort() }]),
        );
        return [sport, { scopes: [...entry.scopes].sort(), competitions }];
      }),
    );
    return { filters_by_sports: filters, sport_ordering: ordering };
  });
}
