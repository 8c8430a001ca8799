/**
 * The simulator's milestones and live data: Kalshi's routes and shapes (read with the published
 * kalshi-typescript client), games that move with the exchange's clock, and final scores and readings
 * that agree with how every settled market of the catalogue resolved, and follow a later settlement.
 */
import { Configuration, LiveDataApi, MilestoneApi } from "kalshi-typescript";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CatalogueEvent, CatalogueFile } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { eventStrikes, type Strike } from "../../src/simulator/forecast.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { TEST_ANCHOR } from "../support/server.js";

const catalogue: CatalogueFile = generateDemoCatalogue({ anchor: TEST_ANCHOR });
const NOON = TEST_ANCHOR + 12 * 3_600;
/** The exchange's clock, moved by the tests. */
let clock = NOON;
let simulator: RunningSimulator;

// biome-ignore lint/suspicious/noExplicitAny: Kalshi bodies, inspected field by field
type Json = any;

beforeAll(async () => {
  simulator = await startSimulator({ catalogue, now: () => clock, port: 0 });
});
beforeEach(() => {
  clock = NOON;
});
afterAll(async () => simulator?.close());

async function get(
  path: string,
  base = simulator.url,
): Promise<{ status: number; text: string; json: Json }> {
  const response = await fetch(`${base}${path}`);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json };
}

async function allMilestones(): Promise<Json[]> {
  const milestones: Json[] = [];
  let cursor = "";
  do {
    const page = await get(`/milestones?limit=200${cursor ? `&cursor=${cursor}` : ""}`);
    expect(page.status).toBe(200);
    milestones.push(...page.json.milestones);
    cursor = page.json.cursor;
  } while (cursor);
  return milestones;
}

async function liveDatas(ids: readonly string[]): Promise<Json[]> {
  return liveDatasAt(simulator.url, ids);
}

async function liveDatasAt(base: string, ids: readonly string[]): Promise<Json[]> {
  const found: Json[] = [];
  for (let i = 0; i < ids.length; i += 100) {
    const query = new URLSearchParams();
    for (const id of ids.slice(i, i + 100)) query.append("milestone_ids", id);
    const answer = await get(`/live_data/batch?${query}`, base);
    expect(answer.status).toBe(200);
    found.push(...answer.json.live_datas);
  }
  return found;
}

const seconds = (iso: string) => Date.parse(iso) / 1000;
const events = new Map(catalogue.events.map((e) => [e.ticker, e]));
/** The first NBA game starting after the catalogue's moment (nothing of it settled yet). */
const futureGame = catalogue.events.find(
  (e) => e.seriesTicker === "KXNBAGAME" && e.markets[0]?.status !== "finalized" && (e.strikeDate ?? 0) > NOON,
) as CatalogueEvent;

async function milestoneOf(eventTicker: string): Promise<Json> {
  const page = await get(`/milestones?limit=10&related_event_ticker=${eventTicker}`);
  expect(page.json.milestones).toHaveLength(1);
  return page.json.milestones[0];
}

describe("Kalshi compatibility: the published kalshi-typescript client reads milestones and live data", () => {
  const config = () => new Configuration({ basePath: simulator.url });

  it("lists milestones with filters, reads one, and its live data by id, by type and in a batch", async () => {
    const milestones = new MilestoneApi(config());
    const page = (await milestones.getMilestones(5, undefined, "Sports", "NBA", undefined, "basketball_game"))
      .data;
    expect(page.milestones).toHaveLength(5);
    for (const m of page.milestones) {
      expect(m.type).toBe("basketball_game");
      expect(m.category).toBe("Sports");
      expect(m.primary_event_tickers[0]).toMatch(/^KXNBAGAME-/);
      expect(m.related_event_tickers).toContain(m.primary_event_tickers[0]);
      expect(m.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Date.parse(m.start_date)).toBeLessThan(Date.parse(m.end_date as string));
    }
    const first = page.milestones[0]!;
    expect((await milestones.getMilestone(first.id)).data.milestone).toEqual(first);

    const live = new LiveDataApi(config());
    const one = (await live.getLiveData("basketball_game", first.id)).data.live_data;
    expect(one.type).toBe("basketball_game");
    expect(one.milestone_id).toBe(first.id);
    const batch = (
      await live.getLiveDatas(
        page.milestones.map((m) => m.id),
        false,
      )
    ).data.live_datas;
    expect(batch.map((d) => d.milestone_id)).toEqual(page.milestones.map((m) => m.id));
    expect(batch[0]).toEqual(one);
  });
});

describe("milestones of the catalogue", () => {
  it("has one per game (its winner event primary, its props related), per city-day and per release", async () => {
    const milestones = await allMilestones();
    const byPrimary = new Map(milestones.map((m) => [m.primary_event_tickers[0], m]));
    const games = catalogue.events.filter((e) => e.competitionScope === "Game");
    expect(games.length).toBeGreaterThan(50);
    for (const game of games) {
      const milestone = byPrimary.get(game.ticker);
      expect(milestone, game.ticker).toBeDefined();
      // The props of a game share its date-and-teams tail.
      const tail = game.ticker.slice(game.ticker.indexOf("-") + 1);
      const props = catalogue.events.filter(
        (e) => e !== game && e.competition === game.competition && e.ticker.endsWith(`-${tail}`),
      );
      expect(new Set(milestone.related_event_tickers)).toEqual(
        new Set([game.ticker, ...props.map((e) => e.ticker)]),
      );
      expect(milestone.details.competition).toBe(game.competition);
      expect(seconds(milestone.start_date)).toBe(game.strikeDate);
    }
    const types = new Set(milestones.map((m) => m.type));
    expect(types).toEqual(
      new Set([
        "basketball_game",
        "football_game",
        "hockey_match",
        "soccer_tournament_multi_leg",
        "weather_daily_high",
        "economic_release",
      ]),
    );
    // Sorted by start; ids unique.
    const starts = milestones.map((m) => seconds(m.start_date));
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(new Set(milestones.map((m) => m.id)).size).toBe(milestones.length);
  });

  it("filters by start, type, competition, category, source and event, and pages", async () => {
    const all = await allMilestones();
    const after = all[Math.floor(all.length / 2)];
    const later = await get(`/milestones?limit=500&minimum_start_date=${after.start_date}`);
    expect(later.json.milestones.every((m: Json) => m.start_date >= after.start_date)).toBe(true);
    expect(later.json.milestones.length).toBe(all.filter((m) => m.start_date >= after.start_date).length);
    const soccer = await get(
      "/milestones?limit=500&competition=premier%20league&type=soccer_tournament_multi_leg",
    );
    expect(soccer.json.milestones.length).toBeGreaterThan(0);
    expect(soccer.json.milestones.every((m: Json) => m.details.competition === "Premier League")).toBe(true);
    const weather = await get("/milestones?limit=500&category=Climate%20and%20Weather");
    expect(weather.json.milestones.every((m: Json) => m.type === "weather_daily_high")).toBe(true);
    expect((await get(`/milestones?limit=5&source_id=${after.source_id}`)).json.milestones).toEqual([after]);
    const page1 = await get("/milestones?limit=3");
    const page2 = await get(`/milestones?limit=3&cursor=${page1.json.cursor}`);
    expect([...page1.json.milestones, ...page2.json.milestones]).toEqual(all.slice(0, 6));
  });

  it("refuses what Kalshi refuses", async () => {
    expect((await get("/milestones?limit=0")).status).toBe(400);
    expect((await get("/milestones?limit=501")).status).toBe(400);
    expect((await get("/milestones?limit=5&minimum_start_date=yesterday")).status).toBe(400);
    expect((await get("/milestones?limit=5&minimum_start_date=2026-02-30T00:00:00Z")).status).toBe(400);
    expect((await get("/milestones?limit=5&cursor=nope")).status).toBe(400);
    expect((await get("/milestones/no-such-milestone")).status).toBe(404);
    const ids = Array.from({ length: 101 }, (_, i) => `milestone_ids=m${i}`).join("&");
    const tooMany = await get(`/live_data/batch?${ids}`);
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error.message).toContain("at most 100");
    const [m] = (await get("/milestones?limit=1&type=hockey_match")).json.milestones;
    expect((await get(`/live_data/basketball_game/milestone/${m.id}`)).status).toBe(404);
    expect((await get(`/live_data/hockey_match/milestone/${m.id}`)).status).toBe(200);
    // Unknown ids are left out of a batch.
    const batch = await get(`/live_data/batch?milestone_ids=nope&milestone_ids=${m.id}`);
    expect(batch.json.live_datas.map((d: Json) => d.milestone_id)).toEqual([m.id]);
  });
});

describe("a game moves with the clock", () => {
  it("is scheduled before its start, scores while it runs, and is final after it", async () => {
    const milestone = await milestoneOf(futureGame.ticker);
    const start = seconds(milestone.start_date);
    const end = seconds(milestone.end_date);
    const at = async (t: number) => {
      clock = t;
      return (await get(`/live_data/basketball_game/milestone/${milestone.id}`)).json.live_data.details;
    };
    const before = await at(start - 60);
    expect(before).toMatchObject({ status: "scheduled", home_points: 0, away_points: 0, period: 0 });
    const seen: Json[] = [];
    for (let i = 1; i <= 20; i++) seen.push(await at(start + Math.floor(((end - start) * i) / 21)));
    expect(seen.every((d) => ["inprogress", "halftime"].includes(d.status))).toBe(true);
    expect(seen.some((d) => d.status === "halftime")).toBe(true);
    // Points only grow, and they do grow.
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i].home_points).toBeGreaterThanOrEqual(seen[i - 1].home_points);
      expect(seen[i].away_points).toBeGreaterThanOrEqual(seen[i - 1].away_points);
      expect(seen[i].period).toBeGreaterThanOrEqual(seen[i - 1].period);
    }
    expect(new Set(seen.map((d) => d.home_points + d.away_points)).size).toBeGreaterThan(10);
    expect(seen.at(-1).period).toBe(4);
    expect(seen[0].period_remaining_time).toMatch(/^\d\d:\d\d$/);
    const final = await at(end);
    expect(final.status).toBe("closed");
    expect(final.home_points).not.toBe(final.away_points);
    expect(final.winner).toBe(final.home_points > final.away_points ? "home" : "away");
    const sum = (side: string) =>
      final.period_scores.reduce((total: number, p: Json) => total + p[`${side}_score`], 0);
    expect([sum("home"), sum("away")]).toEqual([final.home_points, final.away_points]);
    // Final stays final, the same bytes a day later and in another simulator.
    clock = end + 86_400;
    const a = (await get(`/live_data/milestone/${milestone.id}`)).text;
    const other = await startSimulator({ catalogue, now: () => end + 86_400, port: 0 });
    try {
      expect((await get(`/live_data/milestone/${milestone.id}`, other.url)).text).toBe(a);
    } finally {
      await other.close();
    }
    expect(JSON.parse(a).live_data.details).toEqual(final);
  });

  it("follows a later settlement: the side the market resolves to wins the final score", async () => {
    const milestone = await milestoneOf(futureGame.ticker);
    clock = seconds(milestone.end_date) + 60;
    const before = (await get(`/live_data/milestone/${milestone.id}`)).json.live_data.details;
    const loser =
      before.winner === "home" ? milestone.details.home_team_name : milestone.details.away_team_name;
    const winner =
      before.winner === "home" ? milestone.details.away_team_name : milestone.details.home_team_name;
    const settle = (name: string, result: string) => {
      const market = futureGame.markets.find((m) => m.yesSubTitle === name)!;
      return fetch(new URL(`/_sim/markets/${market.ticker}/lifecycle`, simulator.url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "determined", result }),
      });
    };
    expect((await settle(winner, "yes")).status).toBe(200);
    expect((await settle(loser, "no")).status).toBe(200);
    const after = (await get(`/live_data/milestone/${milestone.id}`)).json.live_data.details;
    expect(after.winner).toBe(before.winner === "home" ? "away" : "home");
    const [won, lost] =
      after.winner === "home"
        ? [after.home_points, after.away_points]
        : [after.away_points, after.home_points];
    expect(won).toBeGreaterThan(lost);
  });
});

/** Whether a final live data agrees with a settled market of one of its milestone's events. */
function agrees(
  milestone: Json,
  details: Json,
  event: CatalogueEvent,
  market: CatalogueEvent["markets"][number],
) {
  const strike: Strike | undefined = eventStrikes(event.markets)?.byTicker.get(market.ticker);
  const inside = (s: Strike, v: number) =>
    s.type === "less" ? v < s.cap : s.type === "greater" ? v > s.floor : v >= s.floor && v < s.cap;
  if (milestone.category !== "Sports") {
    return strike ? inside(strike, details.final_high ?? details.value) === (market.result === "yes") : true;
  }
  const home = details.home_points ?? details.home_same_game_score;
  const away = details.away_points ?? details.away_same_game_score;
  const side = (h: number, a: number) =>
    market.yesSubTitle === milestone.details.home_team_name
      ? h > a
      : market.yesSubTitle === milestone.details.away_team_name
        ? a > h
        : h === a;
  let truth: boolean;
  if (event.competitionScope === "Game") truth = side(home, away);
  else if (strike) truth = inside(strike, home + away);
  else {
    const [q1, q2] = details.period_scores;
    truth = side(q1.home_score + q2.home_score, q1.away_score + q2.away_score);
  }
  return truth === (market.result === "yes");
}

describe("final live data agrees with how every settled market resolved", () => {
  it("game winners, totals and first halves; daily highs; economic figures", async () => {
    clock = TEST_ANCHOR + 30 * 86_400;
    const milestones = await allMilestones();
    const datas = await liveDatas(milestones.map((m) => m.id));
    expect(datas).toHaveLength(milestones.length);
    let checked = 0;
    datas.forEach((data, i) => {
      const milestone = milestones[i];
      expect(data.milestone_id).toBe(milestone.id);
      // Releases months ahead are still to come; everything else is over.
      if (seconds(milestone.end_date) > clock) return;
      expect(["closed", "final", "released"]).toContain(data.details.status);
      for (const ticker of milestone.related_event_tickers) {
        const event = events.get(ticker) as CatalogueEvent;
        for (const market of event.markets) {
          if (market.result !== "yes" && market.result !== "no") continue;
          expect(agrees(milestone, data.details, event, market), `${milestone.type} ${market.ticker}`).toBe(
            true,
          );
          checked++;
        }
      }
    });
    // Every kind was checked against many settlements.
    expect(checked).toBeGreaterThan(1_000);
  });

  it("a city's readings run through its day and peak at the final high", async () => {
    const [milestone] = (
      await get(
        "/milestones?limit=1&type=weather_daily_high&related_event_ticker=" +
          catalogue.events.find((e) => e.seriesTicker === "KXHIGHNY" && e.markets[0]?.status === "finalized")!
            .ticker,
      )
    ).json.milestones;
    const start = seconds(milestone.start_date);
    clock = start + 10 * 3_600 + 5;
    const morning = (await get(`/live_data/milestone/${milestone.id}`)).json.live_data.details;
    expect(morning).toMatchObject({ status: "live", final_high: null });
    expect(morning.readings).toHaveLength(11);
    clock = seconds(milestone.end_date);
    const day = (await get(`/live_data/milestone/${milestone.id}`)).json.live_data.details;
    expect(day.status).toBe("final");
    expect(day.readings).toHaveLength(24);
    expect(Math.max(...day.readings.map((r: Json) => r.temperature))).toBe(day.final_high);
    expect(Number.isInteger(day.final_high)).toBe(true);
  });
});

describe("baseball, in season", () => {
  it("plays innings top and bottom, and ends as its markets settled", async () => {
    const july = Date.UTC(2026, 6, 15) / 1000;
    const summer = generateDemoCatalogue({ anchor: july });
    const summerEvents = new Map(summer.events.map((e) => [e.ticker, e]));
    let now = july;
    const other = await startSimulator({ catalogue: summer, now: () => now, port: 0 });
    try {
      const page = await get("/milestones?limit=500&type=baseball_game", other.url);
      const games = page.json.milestones as Json[];
      expect(games.length).toBeGreaterThan(10);
      const [first] = games;
      const at = async (t: number) => {
        now = t;
        return (await get(`/live_data/baseball_game/milestone/${first.id}`, other.url)).json.live_data
          .details;
      };
      const start = seconds(first.start_date);
      const end = seconds(first.end_date);
      const innings: Json[] = [];
      for (let i = 1; i < 18; i++)
        innings.push(await at(start + Math.floor(((end - start) * (i + 0.5)) / 18)));
      expect(innings.map((d) => `${d.inning}${d.inning_half}`)).toEqual(
        Array.from({ length: 17 }, (_, i) => `${Math.floor((i + 1) / 2) + 1}${((i + 1) % 2) + 1}`),
      );
      expect(innings.every((d) => d.status === "inprogress" && d.outs >= 0 && d.outs <= 2)).toBe(true);
      now = july + 30 * 86_400;
      const finals = await liveDatasAt(
        other.url,
        games.map((g) => g.id),
      );
      let checked = 0;
      finals.forEach((data, i) => {
        const milestone = games[i];
        expect(data.details.status).toBe("closed");
        const sum = (side: string) =>
          data.details.period_scores.reduce((total: number, p: Json) => total + p[`${side}_score`], 0);
        expect([sum("home"), sum("away")]).toEqual([data.details.home_points, data.details.away_points]);
        for (const ticker of milestone.related_event_tickers) {
          const event = summerEvents.get(ticker) as CatalogueEvent;
          for (const market of event.markets) {
            if (market.result !== "yes" && market.result !== "no") continue;
            expect(agrees(milestone, data.details, event, market), market.ticker).toBe(true);
            checked++;
          }
        }
      });
      expect(checked).toBeGreaterThan(20);
    } finally {
      await other.close();
    }
  });
});
