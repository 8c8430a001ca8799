/**
 * History without a cutoff: an upstream that keeps an hour of forecasts (the simulator with a one-hour
 * live window and a clock the test moves) forgets a range the venue read two hours ago, and the venue
 * still answers it, from its archive, exactly as it did then; a range straddling the cutoff is the
 * archive's periods then the upstream's, each once, in time order. `GET /orderbook/{ticker}?at=`
 * answers the book the venue recorded at or before a moment, and 404 before anything was recorded.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { startTestServer, TEST_ANCHOR, type TestServer, testCatalogue } from "../support/server.js";

const HOUR = 3_600;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-history-"));
/** The simulator's clock (Unix seconds), moved by the tests. */
let clock = TEST_ANCHOR;
let simulator: RunningSimulator;
let t: TestServer;
let event: string;

interface Period {
  end_period_ts: number;
  percentile_points: { percentile: number; numerical_forecast: number }[];
}

beforeAll(async () => {
  simulator = await startSimulator({
    catalogue: await testCatalogue(),
    port: 0,
    now: () => clock,
    historyWindowSeconds: HOUR,
  });
  t = await startTestServer({
    settings: {
      UPSTREAM_URL: simulator.url,
      ARCHIVE: "true",
      ARCHIVE_DIR: dir,
      ARCHIVE_FLUSH_SECONDS: "3600",
    },
  });
  const listed = await fetch(
    `${t.url}/api/v1/events?seriesTickers=KXHIGHNY&status=active&withNestedMarkets=true`,
  );
  const { events } = (await listed.json()) as { events: { ticker: string; markets?: unknown[] }[] };
  const found = events.find((e) => (e.markets?.length ?? 0) >= 5);
  if (!found) throw new Error("the test catalogue has no active KXHIGHNY event");
  event = found.ticker;
}, 120_000);

afterAll(async () => {
  await t?.stop();
  await simulator?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const forecastQuery = (startTs: number, endTs: number) =>
  new URLSearchParams({
    percentiles: "1000,5000,9000",
    startTs: String(startTs),
    endTs: String(endTs),
    periodInterval: "1",
  });

/** The forecast periods the venue (or, with `direct`, the upstream itself) answers for a range. */
async function forecast(startTs: number, endTs: number, direct = false): Promise<Period[]> {
  const query = forecastQuery(startTs, endTs);
  const url = direct
    ? `${simulator.url}/series/KXHIGHNY/events/${event}/forecast_percentile_history?${query
        .toString()
        .replace(/startTs/, "start_ts")
        .replace(/endTs/, "end_ts")
        .replace(/periodInterval/, "period_interval")}`
    : `${t.url}/api/v1/event/KXHIGHNY/${event}/forecast_percentile_history?${query}`;
  const response = await fetch(url);
  const body = (await response.json()) as { forecast_history: Period[] };
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body.forecast_history;
}

describe("history older than the upstream keeps", () => {
  it("answers a forecast range the upstream has forgotten from the archive, as it was answered then", async () => {
    const [start, end] = [TEST_ANCHOR - HOUR / 2, TEST_ANCHOR];
    const then = await forecast(start, end);
    expect(then.length).toBeGreaterThanOrEqual(30);
    await t.server.archive?.flush();

    clock = TEST_ANCHOR + 2 * HOUR;
    expect(await forecast(start, end, true)).toEqual([]);
    expect(await forecast(start, end)).toEqual(then);
  });

  it("joins a range across the cutoff: the archive's periods, then the upstream's, each once", async () => {
    clock = TEST_ANCHOR + 2 * HOUR;
    const [start, end] = [TEST_ANCHOR - HOUR / 2, TEST_ANCHOR + 2 * HOUR];
    const upstream = await forecast(start, end, true);
    expect(upstream.length).toBeGreaterThan(0);
    expect(upstream[0]?.end_period_ts).toBeGreaterThanOrEqual(TEST_ANCHOR + HOUR);
    const joined = await forecast(start, end);
    const ends = joined.map((period) => period.end_period_ts);
    expect(ends).toEqual([...new Set(ends)].sort((a, b) => a - b));
    // What was read before the cutoff moved, then everything the upstream still has.
    expect(joined.slice(joined.length - upstream.length)).toEqual(upstream);
    expect(joined[0]?.end_period_ts).toBe(TEST_ANCHOR - HOUR / 2);
    expect(joined.length).toBeGreaterThan(upstream.length + 30);
  });

  it("asks the archive nothing when the upstream covers the range: the upstream's answer, unchanged", async () => {
    clock = TEST_ANCHOR + 2 * HOUR;
    const [start, end] = [TEST_ANCHOR + HOUR + 60, TEST_ANCHOR + 2 * HOUR];
    expect(await forecast(start, end)).toEqual(await forecast(start, end, true));
  });
});

describe("GET /orderbook/{ticker}?at=", () => {
  const ticker = () =>
    t.server.catalog.require().markets.find((m) => m.record.status === "active")?.record.ticker as string;

  it("answers the book recorded at or before a moment, with depth, and 404 before any", async () => {
    const before = new Date(Date.now() - 1_000).toISOString();
    const now = (await (await fetch(`${t.url}/api/v1/orderbook/${ticker()}`)).json()) as {
      yes_bids: object;
      no_bids: object;
    };
    const recordedBy = new Date(Date.now() + 1).toISOString();
    await t.server.archive?.flush();

    const at = await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${recordedBy}`);
    const book = (await at.json()) as { yes_bids: object; no_bids: object; sequence: number };
    expect(at.status, JSON.stringify(book)).toBe(200);
    expect({ yes_bids: book.yes_bids, no_bids: book.no_bids }).toEqual({
      yes_bids: now.yes_bids,
      no_bids: now.no_bids,
    });
    expect(book.sequence).toBeLessThanOrEqual(Date.parse(recordedBy));

    const shallow = (await (
      await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${recordedBy}&depth=1`)
    ).json()) as {
      yes_bids: object;
    };
    expect(Object.keys(shallow.yes_bids).length).toBeLessThanOrEqual(1);

    const early = await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${before}`);
    expect(early.status).toBe(404);
    expect(((await early.json()) as { code: string }).code).toBe("orderbook_not_found");
  });

  it("refuses a moment that is no RFC 3339 time with 400", async () => {
    for (const at of ["yesterday", "2026-13-01T00:00:00Z", "1764800000", "x".repeat(100)]) {
      const response = await fetch(`${t.url}/api/v1/orderbook/${ticker()}?at=${encodeURIComponent(at)}`);
      expect(response.status, at).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe("bad_request");
    }
  });
});
