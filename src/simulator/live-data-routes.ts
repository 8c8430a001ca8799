/**
 * Kalshi trade-api v2's milestone and live-data routes over the simulator's catalogue: GetMilestones
 * (with its filters), GetMilestone, GetLiveData (with and without the type), GetLiveDatas (the batch)
 * and GetEventLiveData.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { rfc3339Seconds } from "../upstream/relay.js";
import { kalshiLiveData, kalshiMilestone } from "./live-data.js";
import { ExchangeRequestError } from "./market-data.js";
import type { Milestone } from "./milestones.js";
import { integer, offsetOf, page, parse, type SimulatorContext } from "./routes.js";

/** Kalshi's bound on the ids of one batch. */
const MAX_BATCH_IDS = 100;
const text = z.string().min(1).max(256);
const MilestonesQuery = z.object({
  limit: integer("limit", 1, 500).default(100),
  cursor: z.string().optional(),
  minimum_start_date: z
    .string()
    .transform((value, ctx) => {
      const seconds = rfc3339Seconds(value);
      if (seconds === undefined) {
        ctx.addIssue({ code: "custom", message: "must be an RFC3339 timestamp" });
        return z.NEVER;
      }
      return seconds;
    })
    .optional(),
  category: text.optional(),
  competition: text.optional(),
  source_id: text.optional(),
  type: text.optional(),
  related_event_ticker: text.optional(),
  min_updated_ts: integer("min_updated_ts", 0, 99_999_999_999).optional(),
});
const BatchQuery = z.object({
  // Kalshi's clients repeat the key for each id; a comma list is read too.
  milestone_ids: z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (Array.isArray(v) ? v : [v]).flatMap((item) => item.split(",")).filter(Boolean))
    .pipe(z.array(text).max(MAX_BATCH_IDS, `at most ${MAX_BATCH_IDS} milestone ids`)),
  include_player_stats: z.enum(["true", "false"]).optional(),
});
const LiveDataQuery = z.object({ include_player_stats: z.enum(["true", "false"]).optional() });
const EventLiveDataQuery = z.object({ range: text.optional() });

const same = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase();

/** Registers the milestone and live-data routes on `app` (mounted under the base path). */
export function registerLiveDataRoutes(app: FastifyInstance, ctx: SimulatorContext): void {
  const book = () => ctx.milestones;
  const milestoneOf = (id: string): Milestone => {
    const milestone = book().get(id);
    if (!milestone) throw new ExchangeRequestError(404, "not_found", `milestone ${id} not found`);
    return milestone;
  };

  app.get("/milestones", async (request) => {
    const q = parse(MilestonesQuery, request.query);
    const matching = book().all.filter(
      (m) =>
        (q.minimum_start_date === undefined || m.start >= q.minimum_start_date) &&
        (q.category === undefined || same(m.category, q.category)) &&
        (q.competition === undefined || same(m.competition, q.competition)) &&
        (q.source_id === undefined || m.sourceId === q.source_id) &&
        (q.type === undefined || m.type === q.type) &&
        (q.related_event_ticker === undefined || m.related.includes(q.related_event_ticker)) &&
        (q.min_updated_ts === undefined || m.updated >= q.min_updated_ts),
    );
    const { items, cursor } = page(matching, offsetOf(q.cursor), q.limit);
    return { milestones: items.map(kalshiMilestone), cursor };
  });

  app.get<{ Params: { id: string } }>("/milestones/:id", async (request) => ({
    milestone: kalshiMilestone(milestoneOf(request.params.id)),
  }));

  app.get("/live_data/batch", async (request) => {
    const q = parse(BatchQuery, request.query);
    const now = ctx.now();
    // Unknown ids are left out, as Kalshi leaves them out.
    const found = q.milestone_ids.flatMap((id) => {
      const milestone = book().get(id);
      return milestone ? [kalshiLiveData(milestone, now)] : [];
    });
    return { live_datas: found };
  });

  app.get<{ Params: { id: string } }>("/live_data/milestone/:id", async (request) => {
    parse(LiveDataQuery, request.query);
    return { live_data: kalshiLiveData(milestoneOf(request.params.id), ctx.now()) };
  });

  app.get<{ Params: { ticker: string } }>("/live_data/events/:ticker", async (request) => {
    parse(EventLiveDataQuery, request.query);
    const { ticker } = request.params;
    // The event's own milestone (it is primary there) before one it is merely related to.
    const milestone =
      book().all.find((m) => m.primary.includes(ticker)) ??
      book().all.find((m) => m.related.includes(ticker));
    if (!milestone) throw new ExchangeRequestError(404, "not_found", `event ${ticker} has no live data`);
    const now = ctx.now();
    const { type, details } = kalshiLiveData(milestone, now);
    return { live_data: { type, details, is_historical: now >= milestone.end } };
  });

  app.get<{ Params: { type: string; id: string } }>("/live_data/:type/milestone/:id", async (request) => {
    parse(LiveDataQuery, request.query);
    const milestone = milestoneOf(request.params.id);
    if (milestone.type !== request.params.type) {
      throw new ExchangeRequestError(
        404,
        "not_found",
        `milestone ${milestone.id} has no ${request.params.type} live data`,
      );
    }
    return { live_data: kalshiLiveData(milestone, ctx.now()) };
  });
}
