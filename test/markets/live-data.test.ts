/**
 * Live data (reference §3.8) end to end: the real server relaying a simulator whose clock the tests
 * drive. By event, by mint and by milestone ids agree; a game's scores move while it runs and are final
 * after it; every parameter is bounded; the upstream's faults are answered as the forecast relay
 * answers them; finished games are kept, running ones asked for again, identical calls coalesced.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Event } from "../../src/contract/markets.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { startTestServer, TEST_ANCHOR, type TestServer, testCatalogue } from "../support/server.js";

/** The upstream's budget: long enough that a first call on a loaded CI machine is not cut short. */
const BUDGET_MS = 2_000;
const NOON = TEST_ANCHOR + 12 * 3_600;
/** The simulator's clock, moved by the tests. */
let clock = NOON;
let simulator: RunningSimulator;
let t: TestServer;
interface MilestoneFacts {
  id: string;
  start: number;
  end: number;
  sourceId: string;
}
/**
 * Two NBA games after the catalogue's moment: one played through to its end first (its final answer
 * is kept from then on), and one the other tests ask about while it runs; its total-points event.
 */
let played: Event;
let playedMilestone: MilestoneFacts;
let game: Event;
let total: Event;
let milestone: MilestoneFacts;

// biome-ignore lint/suspicious/noExplicitAny: bodies of many shapes, inspected field by field
type Json = any;

beforeAll(async () => {
  simulator = await startSimulator({ catalogue: await testCatalogue(), now: () => clock, port: 0 });
  t = await startTestServer({
    settings: { UPSTREAM_URL: simulator.url, UPSTREAM_TIMEOUT_MS: String(BUDGET_MS) },
  });
  const games = await t.client.listEvents({
    seriesTickers: ["KXNBAGAME"],
    withNestedMarkets: true,
    limit: 200,
  });
  const totals = await t.client.listEvents({
    seriesTickers: ["KXNBATOTAL"],
    withNestedMarkets: true,
    limit: 200,
  });
  const tail = (ticker: string) => ticker.slice(ticker.indexOf("-") + 1);
  const upcoming = games.events.filter(
    (e) => (e.strikeDate ?? 0) > NOON && totals.events.some((x) => tail(x.ticker) === tail(e.ticker)),
  );
  [played, game] = upcoming as [Event, Event];
  total = totals.events.find((x) => tail(x.ticker) === tail(game.ticker)) as Event;
  const facts = async (event: Event): Promise<MilestoneFacts> => {
    const url = `${simulator.url}/milestones?limit=5&related_event_ticker=${event.ticker}`;
    const [m] = ((await (await fetch(url)).json()) as Json).milestones;
    return {
      id: m.id,
      start: Date.parse(m.start_date) / 1000,
      end: Date.parse(m.end_date) / 1000,
      sourceId: m.source_id,
    };
  };
  playedMilestone = await facts(played);
  milestone = await facts(game);
});
beforeEach(() => {
  clock = NOON;
});
afterEach(() => {
  simulator.faults.clear();
  simulator.faults.resetStats();
});
afterAll(async () => {
  await t?.stop();
  await simulator?.close();
});

async function get(path: string): Promise<{ status: number; text: string; type: string | null; json: Json }> {
  const response = await fetch(`${t.url}${path}`);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, type: response.headers.get("content-type"), json };
}

async function expectError(path: string, status: number, code: string, mentions?: string): Promise<Json> {
  const response = await get(path);
  expect(response.status, response.text).toBe(status);
  expect(Object.keys(response.json).sort()).toEqual(["code", "msg"]);
  expect(response.json.code).toBe(code);
  if (mentions) expect(response.json.msg).toContain(mentions);
  return response.json;
}

const byEvent = (ticker: string, query = "") =>
  `/api/v1/live_data/by-event/${ticker}${query ? `?${query}` : ""}`;
const byMint = (mint: string, query = "") => `/api/v1/live_data/by-mint/${mint}${query ? `?${query}` : ""}`;
const byIds = (...ids: string[]) =>
  `/api/v1/live_data?${ids.map((id) => `milestoneIds=${encodeURIComponent(id)}`).join("&")}`;
const accountsOf = (event: Event) => Object.values(event.markets?.[0]?.accounts ?? {})[0]!;
const upstreamCalls = (path: string) => simulator.faults.stats().byPath[`/trade-api/v2/${path}`] ?? 0;

describe("GET /live_data/by-event/{event}: a game as it runs", () => {
  it("is scheduled before the start, moves during the game and is final after it", async () => {
    clock = playedMilestone.start - 600;
    const before = await get(byEvent(played.ticker));
    expect(before.status).toBe(200);
    expect(before.type).toContain("application/json");
    expect(Object.keys(before.json)).toEqual(["live_datas"]);
    expect(before.json.live_datas).toHaveLength(1);
    const [entry] = before.json.live_datas;
    expect(Object.keys(entry).sort()).toEqual(["details", "milestone_id", "type"]);
    expect(entry).toMatchObject({ type: "basketball_game", milestone_id: playedMilestone.id });
    expect(entry.details).toMatchObject({ status: "scheduled", home_points: 0, away_points: 0 });

    const running: Json[] = [];
    for (const share of [0.1, 0.3, 0.6, 0.9]) {
      clock = Math.floor(playedMilestone.start + share * (playedMilestone.end - playedMilestone.start));
      const details = (await get(byEvent(played.ticker))).json.live_datas[0].details;
      expect(details.status).toBe("inprogress");
      running.push(details);
    }
    const points = running.map((d) => d.home_points + d.away_points);
    expect(points.every((p, i) => i === 0 || p > (points[i - 1] as number))).toBe(true);

    clock = playedMilestone.end + 60;
    const final = (await get(byEvent(played.ticker))).json.live_datas[0].details;
    expect(final.status).toBe("closed");
    expect(final.home_points + final.away_points).toBeGreaterThanOrEqual(points.at(-1) as number);
    expect(final.winner).toBe(final.home_points > final.away_points ? "home" : "away");
  });
});

describe("by event, by mint and by milestone ids agree", () => {
  it("answers the same bytes for the event, each of its mints, its props' mints and the ids", async () => {
    clock = Math.floor((milestone.start + milestone.end) / 2);
    const expected = await get(byEvent(game.ticker));
    expect(expected.status).toBe(200);
    const { marketLedger, yesMint, noMint } = accountsOf(game);
    for (const path of [
      byMint(yesMint),
      byMint(noMint),
      byMint(marketLedger),
      byMint(accountsOf(total).yesMint),
      byEvent(total.ticker),
      byIds(milestone.id),
      // An id the upstream does not know is left out.
      `/api/v1/live_data?milestoneIds=${milestone.id},unknown-milestone`,
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.text, path).toBe(expected.text);
    }
  });

  it("answers an event without milestones with an empty list, without asking for live data", async () => {
    const event = (await t.client.listEvents({ seriesTickers: ["KXCONTROLH"], limit: 1 })).events[0]!;
    const answer = await get(byEvent(event.ticker));
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ live_datas: [] });
    expect(upstreamCalls("live_data/batch")).toBe(0);
  });

  it("honours the filters: minimumStartDate, category, competition, sourceId, type", async () => {
    const iso = (s: number) => new Date(s * 1000).toISOString();
    const count = async (query: string) => {
      const answer = await get(byEvent(game.ticker, query));
      expect(answer.status, answer.text).toBe(200);
      return answer.json.live_datas.length;
    };
    expect(await count(`minimumStartDate=${iso(milestone.start)}`)).toBe(1);
    expect(await count(`minimumStartDate=${iso(milestone.start + 1)}`)).toBe(0);
    expect(await count("minimumStartDate=2026-11-21T19:00:00-05:00")).toBe(
      milestone.start >= Date.parse("2026-11-22T00:00:00Z") / 1000 ? 1 : 0,
    );
    expect(await count("category=Sports")).toBe(1);
    expect(await count("category=Economics")).toBe(0);
    expect(await count("competition=NBA")).toBe(1);
    expect(await count("competition=NFL")).toBe(0);
    expect(await count(`sourceId=${encodeURIComponent(milestone.sourceId)}`)).toBe(1);
    expect(await count("sourceId=other")).toBe(0);
    expect(await count("type=basketball_game")).toBe(1);
    expect(await count("type=football_game")).toBe(0);
    const { yesMint } = accountsOf(game);
    expect((await get(byMint(yesMint, "type=football_game"))).json).toEqual({ live_datas: [] });
  });
});

describe("bounds", () => {
  it("answers 404 event_not_found for an unknown event or mint", async () => {
    await expectError(byEvent("KXNOPE-26NOV22"), 404, "event_not_found", "KXNOPE-26NOV22");
    await expectError(byMint("11111111111111111111111111111111"), 404, "event_not_found");
  });

  it("requires milestoneIds and bounds them", async () => {
    await expectError("/api/v1/live_data", 400, "bad_request", "milestoneIds");
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `m-${i}`);
    await expectError(byIds(...ids(101)), 400, "bad_request", "at most 100");
    await expectError(
      `/api/v1/live_data?milestoneIds=${ids(101).join(",")}`,
      400,
      "bad_request",
      "at most 100",
    );
    // 100 unknown ids are a fine question with an empty answer.
    const hundred = await get(byIds(...ids(100)));
    expect(hundred.status).toBe(200);
    expect(hundred.json).toEqual({ live_datas: [] });
    await expectError(byIds("a", ""), 400, "bad_request", "blank");
    await expectError("/api/v1/live_data?milestoneIds=a,,b", 400, "bad_request", "blank");
    await expectError(byIds("a", "a"), 400, "bad_request", "repeat");
    await expectError(byIds("a/../b"), 400, "bad_request", "milestoneIds");
    await expectError(byIds("x".repeat(129)), 400, "bad_request", "128");
    expect((await get(byIds("x".repeat(128)))).status).toBe(200);
  });

  it.each([
    "yesterday",
    "2026-11-22",
    "2026-02-30T00:00:00Z",
    "2026-11-22T25:00:00Z",
    "2026-11-22T10:00:00+25:00",
    "1795305600",
    `2026-11-22T00:00:00.${"0".repeat(40)}Z`,
  ])("refuses the minimumStartDate %s", async (bad) => {
    await expectError(
      byEvent(game.ticker, `minimumStartDate=${encodeURIComponent(bad)}`),
      400,
      "bad_request",
      "minimumStartDate",
    );
  });

  it("bounds the text filters, the event ticker and the mint", async () => {
    for (const name of ["category", "competition", "sourceId", "type"]) {
      await expectError(byEvent(game.ticker, `${name}=${"x".repeat(129)}`), 400, "bad_request", name);
      await expectError(byEvent(game.ticker, `${name}=a%01b`), 400, "bad_request", "control");
      await expectError(byEvent(game.ticker, `${name}=`), 400, "bad_request", name);
    }
    await expectError(byEvent("E".repeat(129)), 400, "bad_request");
    await expectError(byMint("1".repeat(65)), 400, "bad_request");
  });
});

describe("upstream faults: answered as the forecast relay answers them", () => {
  /** Two calls that reach the upstream and succeed, so the faults here never trip the circuit breaker. */
  async function healthy(): Promise<void> {
    for (let i = 0; i < 2; i++) expect((await get(byIds(milestone.id))).status).toBe(200);
  }
  const paths = () => [byIds(milestone.id), byEvent(game.ticker)];
  // An event's milestones are kept a while: a lookup with filters not asked for before reaches the upstream.
  let lookups = 0;
  const freshLookup = () =>
    byEvent(game.ticker, `minimumStartDate=2000-01-01T00:00:${String(lookups++ % 60).padStart(2, "0")}Z`);

  beforeEach(() => {
    // Mid-game: nothing is final, so every call reaches the upstream.
    clock = Math.floor((milestone.start + milestone.end) / 2);
  });

  it.each([
    ["a 500", { kind: "status", status: 500 }],
    ["a 503", { kind: "status", status: 503 }],
    ["a 429", { kind: "status", status: 429 }],
    ["a garbage body", { kind: "malformed" }],
    ["a connection reset", { kind: "reset" }],
  ] as const)("answers 502 upstream_unavailable for %s", async (_name, fault) => {
    for (const path of paths()) {
      simulator.faults.set({ ...fault, match: "live_data/batch", times: 1 });
      await expectError(path, 502, "upstream_unavailable");
      await healthy();
    }
    simulator.faults.set({ ...fault, match: "/milestones", times: 1 });
    await expectError(freshLookup(), 502, "upstream_unavailable");
    await healthy();
  });

  it("passes the upstream's 404 on as event_not_found and its 400 as upstream_rejected", async () => {
    for (const path of paths()) {
      simulator.faults.set({ kind: "status", status: 404, match: "live_data/batch", times: 1 });
      await expectError(path, 404, "event_not_found");
      simulator.faults.set({ kind: "status", status: 400, match: "live_data/batch", times: 1 });
      await expectError(path, 400, "upstream_rejected", "injected 400");
    }
    simulator.faults.set({ kind: "status", status: 400, match: "/milestones", times: 1 });
    await expectError(freshLookup(), 400, "upstream_rejected", "injected 400");
  });

  it("answers 504 upstream_timeout at the budget when the upstream hangs or is too slow", async () => {
    for (const path of paths()) {
      simulator.faults.set({ kind: "hang", match: "live_data/batch", times: 1 });
      // The budget's own timeout answers (its 504 names the budget): the hung upstream never would.
      await expectError(path, 504, "upstream_timeout", `${BUDGET_MS} ms`);
      simulator.faults.set({ kind: "latency", ms: BUDGET_MS * 3, match: "live_data/batch", times: 1 });
      await expectError(path, 504, "upstream_timeout");
      await healthy();
    }
  });
});

describe("cache and coalescing", () => {
  it("sends identical calls in flight upstream once", async () => {
    clock = Math.floor((milestone.start + milestone.end) / 2);
    simulator.faults.set({ kind: "latency", ms: 200, match: "live_data/batch", times: 1 });
    const answers = await Promise.all(Array.from({ length: 5 }, () => get(byIds(milestone.id))));
    expect(answers.every((a) => a.status === 200 && a.text === answers[0]!.text)).toBe(true);
    expect(upstreamCalls("live_data/batch")).toBe(1);
  });

  it("keeps an event's milestones a while, so a repeated by-event call asks the upstream only for live data", async () => {
    clock = Math.floor((milestone.start + milestone.end) / 2);
    const query = "category=Sports";
    await get(byEvent(game.ticker, query));
    simulator.faults.resetStats();
    for (let i = 0; i < 3; i++) expect((await get(byEvent(game.ticker, query))).status).toBe(200);
    expect(upstreamCalls("milestones")).toBe(0);
    expect(upstreamCalls("live_data/batch")).toBe(3);
  });

  // Last: the game is over from here on, and its answer kept.
  it("asks again for a game that is running, and keeps a finished one", async () => {
    clock = Math.floor((milestone.start + milestone.end) / 2);
    await get(byIds(milestone.id));
    await get(byIds(milestone.id));
    expect(upstreamCalls("live_data/batch")).toBe(2);

    clock = milestone.end + 60;
    simulator.faults.resetStats();
    const first = await get(byIds(milestone.id));
    expect(first.json.live_datas[0].details.status).toBe("closed");
    // Kept: no more calls upstream, and an upstream failing now changes nothing.
    simulator.faults.set({ kind: "status", status: 500, match: "live_data/batch" });
    for (let i = 0; i < 3; i++) expect((await get(byIds(milestone.id))).text).toBe(first.text);
    expect((await get(byEvent(game.ticker))).text).toBe(first.text);
    expect(upstreamCalls("live_data/batch")).toBe(1);
  });
});

describe("documentation", () => {
  it("describes the three operations and their parameters in /api/v1/openapi.json", async () => {
    const document = (await get("/api/v1/openapi.json")).json;
    const paths = Object.keys(document.paths).filter((p) => p.includes("live_data"));
    expect(paths.sort()).toEqual([
      "/api/v1/live_data",
      "/api/v1/live_data/by-event/{event_ticker}",
      "/api/v1/live_data/by-mint/{mint}",
    ]);
    const names = (path: string) => document.paths[path].get.parameters.map((p: Json) => p.name).sort();
    expect(names("/api/v1/live_data")).toEqual(["milestoneIds"]);
    expect(names("/api/v1/live_data/by-event/{event_ticker}")).toEqual(
      ["category", "competition", "event_ticker", "minimumStartDate", "sourceId", "type"].sort(),
    );
    expect(document.paths["/api/v1/live_data/by-mint/{mint}"].get.operationId).toBe("live_data_by_mint");
  });
});
