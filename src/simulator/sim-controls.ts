/**
 * The testers' `/_sim` controls beside faults and lifecycle changes (routes.ts): the exchange's state
 * at a glance, and its clock moved on. `oddsgate sim` drives them; a production venue does not
 * register any `/_sim` route.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { MARKET_STATUSES, type MarketStatus } from "../contract/markets.js";
import { MAX_ADVANCE_SECONDS, type SimulatorClock } from "./clock.js";
import { parse, type SimulatorContext } from "./routes.js";

/** The paused markets `GET /_sim/status` names; the count covers them all. */
const PAUSED_LISTED = 100;

const ClockBody = z.object({ advanceSeconds: z.number().int().min(1).max(MAX_ADVANCE_SECONDS) });

/** Registers `GET /_sim/status` and `POST /_sim/clock`. */
export function registerSimControls(
  app: FastifyInstance,
  ctx: SimulatorContext,
  clock: SimulatorClock,
): void {
  app.get("/_sim/status", async () => {
    const byStatus = Object.fromEntries(MARKET_STATUSES.map((status) => [status, 0])) as Record<
      MarketStatus,
      number
    >;
    const paused: string[] = [];
    for (const market of ctx.exchange.markets) {
      byStatus[market.lifecycle.status]++;
      if (market.lifecycle.status === "inactive" && paused.length < PAUSED_LISTED)
        paused.push(market.record.ticker);
    }
    return {
      now: clock.now(),
      clockOffsetSeconds: clock.offset,
      markets: byStatus,
      paused,
      faults: ctx.faults.list(),
    };
  });
  app.post("/_sim/clock", async (request) => {
    clock.advance(parse(ClockBody, request.body).advanceSeconds);
    return { now: clock.now(), clockOffsetSeconds: clock.offset };
  });
}
