/**
 * Kalshi trade-api v2's combination and target routes over the simulator's games:
 * GetMultivariateEventCollections, GetMultivariateEventCollection and GetMultivariateEvents
 * (each game with two or more events is a same-game collection, as Kalshi lists its same-game parlays),
 * and GetStructuredTargets, GetStructuredTarget (the games' teams).
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { iso } from "./kalshi-json.js";
import type { GameSubject, Milestone } from "./milestones.js";
import {
  cursorParam,
  flag,
  integer,
  MAX_TICKER,
  notFound,
  offsetOf,
  page,
  parse,
  repeated,
  type SimulatorContext,
} from "./routes.js";

const text = z.string().min(1).max(256);
const CollectionsQuery = z.object({
  status: z.enum(["unopened", "open", "closed"]).optional(),
  associated_event_ticker: z.string().max(MAX_TICKER).optional(),
  series_ticker: z.string().max(MAX_TICKER).optional(),
  limit: integer("limit", 1, 200).default(100),
  cursor: cursorParam,
});
const MultivariateEventsQuery = z.object({
  limit: integer("limit", 1, 200).default(100),
  cursor: cursorParam,
  series_ticker: z.string().max(MAX_TICKER).optional(),
  collection_ticker: z.string().max(MAX_TICKER).optional(),
  with_nested_markets: flag.default(false),
});
const TargetsQuery = z.object({
  ids: repeated("ids", text, 100).optional(),
  type: text.optional(),
  competition: text.optional(),
  page_size: integer("page_size", 1, 2000).default(100),
  cursor: cursorParam,
});

interface Collection {
  ticker: string;
  milestone: Milestone;
  subject: GameSubject;
  open: number;
  close: number;
}

interface Target {
  id: string;
  json: Record<string, unknown>;
  type: string;
  competition: string | null;
}

export function registerComboRoutes(app: FastifyInstance, ctx: SimulatorContext): void {
  let built: { collections: Collection[]; byTicker: Map<string, Collection>; targets: Target[] } | undefined;
  // Read off the milestones on first use, as they are read off the exchange.
  const games = () => {
    if (built) return built;
    const collections: Collection[] = [];
    const targets = new Map<string, Target>();
    for (const milestone of ctx.milestones.all) {
      const subject = milestone.subject;
      if (subject.kind !== "game") continue;
      const sport = subject.rules.type.replace(/_(game|match|tournament.*)$/, "");
      for (const team of [subject.home, subject.away]) {
        if (targets.has(team.id)) continue;
        targets.set(team.id, {
          id: team.id,
          type: `${sport}_team`,
          competition: milestone.competition,
          json: {
            id: team.id,
            name: team.name,
            type: `${sport}_team`,
            details: { competition: milestone.competition, abbreviation: team.code },
            source_id: `sim:team/${milestone.competition}/${team.code}`,
            last_updated_ts: iso(milestone.updated),
          },
        });
      }
      const events = [subject.winner, subject.half, subject.total].filter((e) => e !== undefined);
      // A combination needs two legs: a game with one event has none to offer.
      if (events.length < 2) continue;
      const markets = events.flatMap((e) => e.markets);
      collections.push({
        ticker: `KXMVESGP-${subject.winner.record.ticker.slice(subject.winner.record.ticker.indexOf("-") + 1)}`,
        milestone,
        subject,
        open: Math.min(...markets.map((m) => m.record.openTime)),
        close: Math.max(...markets.map((m) => m.record.closeTime)),
      });
    }
    built = {
      collections,
      byTicker: new Map(collections.map((c) => [c.ticker, c])),
      targets: [...targets.values()],
    };
    return built;
  };
  const eventsOf = (c: Collection) =>
    [c.subject.winner, c.subject.half, c.subject.total].filter((e) => e !== undefined);
  const statusOf = (c: Collection, now: number) =>
    now < c.open ? "unopened" : now < c.close ? "open" : "closed";
  const collectionJson = (c: Collection) => {
    const events = eventsOf(c);
    return {
      collection_ticker: c.ticker,
      series_ticker: c.subject.winner.record.seriesTicker,
      title: `${c.milestone.title}: same-game combinations`,
      description: `Combinations of outcomes of ${c.milestone.title}, one market from each event.`,
      open_date: iso(c.open),
      close_date: iso(c.close),
      associated_events: events.map((e) => ({
        ticker: e.record.ticker,
        is_yes_only: false,
        size_max: 1,
        size_min: 1,
        active_quoters: [],
      })),
      associated_event_tickers: events.map((e) => e.record.ticker),
      is_ordered: false,
      is_single_market_per_event: true,
      is_all_yes: false,
      size_min: 2,
      size_max: events.length,
      functional_description:
        "One market from each of two or more of the game's events; pays if every leg does.",
    };
  };

  app.get("/multivariate_event_collections", async (request) => {
    const q = parse(CollectionsQuery, request.query);
    const now = ctx.now();
    const matching = games().collections.filter(
      (c) =>
        (q.status === undefined || statusOf(c, now) === q.status) &&
        (q.series_ticker === undefined || c.subject.winner.record.seriesTicker === q.series_ticker) &&
        (q.associated_event_ticker === undefined ||
          eventsOf(c).some((e) => e.record.ticker === q.associated_event_ticker)),
    );
    const { items, cursor } = page(matching, offsetOf(q.cursor), q.limit);
    return { multivariate_contracts: items.map(collectionJson), cursor };
  });

  app.get<{ Params: { ticker: string } }>("/multivariate_event_collections/:ticker", async (request) => {
    const collection = games().byTicker.get(request.params.ticker);
    if (!collection) throw notFound(`multivariate event collection ${request.params.ticker}`);
    return { multivariate_contract: collectionJson(collection) };
  });

  app.get("/events/multivariate", async (request) => {
    const q = parse(MultivariateEventsQuery, request.query);
    if (q.collection_ticker !== undefined && !games().byTicker.has(q.collection_ticker)) {
      throw notFound(`multivariate event collection ${q.collection_ticker}`);
    }
    // Combination events are made by traders creating markets in a collection (an authenticated call
    // the simulator does not take yet): until then every collection has none.
    return { events: [], cursor: "" };
  });

  app.get("/structured_targets", async (request) => {
    const q = parse(TargetsQuery, request.query);
    const ids = q.ids ? new Set(q.ids) : undefined;
    const matching = games().targets.filter(
      (t) =>
        (!ids || ids.has(t.id)) &&
        (q.type === undefined || t.type === q.type) &&
        (q.competition === undefined || t.competition === q.competition),
    );
    const { items, cursor } = page(matching, offsetOf(q.cursor), q.page_size);
    return { structured_targets: items.map((t) => t.json), cursor };
  });

  app.get<{ Params: { id: string } }>("/structured_targets/:id", async (request) => {
    const target = games().targets.find((t) => t.id === request.params.id);
    if (!target) throw notFound(`structured target ${request.params.id}`);
    return { structured_target: target.json };
  });
}
