/** What the archive's tests share. */
import { expect } from "vitest";
import { TEST_ANCHOR } from "../support/server.js";

/** Reads three percentiles of the first active KXHIGHNY event's forecast over three hours through `url`: the points it got. */
export async function readForecast(url: string): Promise<number> {
  const listed = await fetch(
    `${url}/api/v1/events?seriesTickers=KXHIGHNY&status=active&withNestedMarkets=true`,
  );
  const { events } = (await listed.json()) as { events: { ticker: string; markets?: unknown[] }[] };
  const event = events.find((e) => (e.markets?.length ?? 0) >= 5);
  if (!event) throw new Error("the test catalogue has no active KXHIGHNY event");
  const query = new URLSearchParams({
    percentiles: "2500,5000,7500",
    startTs: String(TEST_ANCHOR - 3 * 3_600),
    endTs: String(TEST_ANCHOR),
    periodInterval: "60",
  });
  const response = await fetch(
    `${url}/api/v1/event/KXHIGHNY/${event.ticker}/forecast_percentile_history?${query}`,
  );
  const body = (await response.json()) as { forecast_history: { percentile_points: unknown[] }[] };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.forecast_history.reduce((sum, period) => sum + period.percentile_points.length, 0);
}
