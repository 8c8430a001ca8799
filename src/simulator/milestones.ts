/**
 * The simulator's milestones (Kalshi's real-world occurrences behind events), derived from its
 * catalogue: one per game (the winner event first, its props related), one per day of a city's
 * high temperature, one per economic release with numeric strikes. Ids are UUID-shaped hashes of the
 * primary event's ticker, so the same catalogue always has the same milestones.
 */
import type { Series } from "../contract/markets.js";
import { hash128 } from "../demo/random.js";
import type { SimulatedEvent, SimulatedExchange, SimulatedMarket } from "./exchange.js";
import { SPORT_RULES, type SportRules } from "./sport-rules.js";

const DAY = 86_400;
/** Share of the time between a game's start and its markets' close that the game itself takes. */
const PLAYING_SHARE = 0.94;

export type Side = "home" | "away";

export interface Team {
  code: string;
  name: string;
  /** A stable UUID-shaped id, as Kalshi's structured targets have. */
  id: string;
}

/** A game: its teams, and the events whose settlement says something about its score. */
export interface GameSubject {
  kind: "game";
  rules: SportRules;
  home: Team;
  away: Team;
  winner: SimulatedEvent;
  /** The first-half winner event, if the game has one. */
  half: SimulatedEvent | undefined;
  /** The total points (or goals) ladder, if the game has one. */
  total: SimulatedEvent | undefined;
  /** Every market of every related event: their results are what the score must agree with. */
  markets: SimulatedMarket[];
}

/** A number published at the milestone's end: a day's high temperature, an economic figure. */
export interface ReadingSubject {
  kind: "weather" | "release";
  event: SimulatedEvent;
  series: Series;
}

export interface Milestone {
  id: string;
  category: string;
  type: string;
  title: string;
  /** Unix seconds. */
  start: number;
  end: number;
  competition: string | null;
  sourceId: string;
  primary: string[];
  related: string[];
  /** When the milestone was listed: its first event's open. */
  updated: number;
  details: Record<string, unknown>;
  subject: GameSubject | ReadingSubject;
}

/** A UUID-shaped id from a hash of `key`. */
export function stableId(key: string): string {
  const hex = hash128(`oddsgate-simulator/${key}`)
    .map((word) => word.toString(16).padStart(8, "0"))
    .join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const suffixOf = (market: SimulatedMarket) =>
  market.record.ticker.slice(market.record.eventTicker.length + 1);
/** The part of an event ticker after its series: the game's date and teams, shared by all its events. */
const tailOf = (ticker: string) => ticker.slice(ticker.indexOf("-") + 1);

/** Every milestone of an exchange's catalogue, built on first use. */
export class MilestoneBook {
  private built: { all: Milestone[]; byId: Map<string, Milestone> } | undefined;

  constructor(private readonly exchange: SimulatedExchange) {}

  /** Every milestone, by start then id. */
  get all(): readonly Milestone[] {
    return this.build().all;
  }

  get(id: string): Milestone | undefined {
    return this.build().byId.get(id);
  }

  private build() {
    if (!this.built) {
      const all = [...this.games(), ...this.readings()].sort(
        (a, b) => a.start - b.start || (a.id < b.id ? -1 : 1),
      );
      this.built = { all, byId: new Map(all.map((m) => [m.id, m])) };
    }
    return this.built;
  }

  private seriesOf(event: SimulatedEvent): Series | undefined {
    return this.exchange.seriesByTicker.get(event.record.seriesTicker);
  }

  private games(): Milestone[] {
    // A game's events share the competition and the ticker's date-and-teams tail.
    const groups = new Map<string, { rules: SportRules; events: SimulatedEvent[] }>();
    for (const event of this.exchange.events) {
      const series = this.seriesOf(event);
      if (series?.category !== "Sports" || event.record.competition === null) continue;
      const sport = series.productMetadata?.sport ?? series.tags?.[0];
      const rules = typeof sport === "string" ? SPORT_RULES[sport] : undefined;
      if (!rules) continue;
      const key = `${event.record.competition}|${tailOf(event.record.ticker)}`;
      const group = groups.get(key);
      if (group) group.events.push(event);
      else groups.set(key, { rules, events: [event] });
    }
    const milestones: Milestone[] = [];
    for (const { rules, events } of groups.values()) {
      const milestone = gameMilestone(rules, events);
      if (milestone) milestones.push(milestone);
    }
    return milestones;
  }

  private readings(): Milestone[] {
    const milestones: Milestone[] = [];
    for (const event of this.exchange.events) {
      const series = this.seriesOf(event);
      const first = event.markets[0];
      if (!series || !first || !event.strikes) continue;
      const close = first.record.closeTime;
      const common = {
        category: series.category,
        title: event.record.title,
        competition: null,
        sourceId: `sim:${event.record.ticker}`,
        primary: [event.record.ticker],
        related: [event.record.ticker],
        updated: first.record.openTime,
        id: stableId(`milestone/${event.record.ticker}`),
      };
      if (series.category === "Climate and Weather") {
        const unit = series.productMetadata?.unit;
        milestones.push({
          ...common,
          type: "weather_daily_high",
          // The climate day the market settles on: the day that ends at its close.
          start: close + 60 - DAY,
          end: close,
          details: {
            station: series.productMetadata?.station ?? null,
            location: series.title.replace(/^Highest temperature in /, ""),
            unit: typeof unit === "string" ? unit : "°F",
          },
          subject: { kind: "weather", event, series },
        });
      } else if (series.category === "Economics") {
        const release = event.record.strikeDate ?? close;
        milestones.push({
          ...common,
          type: "economic_release",
          start: release,
          end: release,
          details: { indicator: series.title, unit: event.strikes.unit },
          subject: { kind: "release", event, series },
        });
      }
    }
    return milestones;
  }
}

/** The milestone of one game's events, or undefined when they hold no winner event with two named teams. */
function gameMilestone(rules: SportRules, events: SimulatedEvent[]): Milestone | undefined {
  const winner = events.find((e) => e.record.competitionScope === "Game");
  const start = winner?.record.strikeDate;
  const close = winner?.markets[0]?.record.closeTime;
  if (!winner || start === null || start === undefined || close === undefined) return undefined;
  // US leagues write the visitors first ("Boston Celtics at Denver Nuggets"), soccer the hosts ("Arsenal vs Chelsea").
  const match = /^(.+) (at|vs) (.+)$/.exec(winner.record.title);
  if (!match) return undefined;
  const [homeName, awayName] = match[2] === "at" ? [match[3], match[1]] : [match[1], match[3]];
  const team = (name: string | undefined): Team | undefined => {
    const market = winner.markets.find((m) => m.record.yesSubTitle === name);
    if (!market || !name) return undefined;
    const code = suffixOf(market);
    return { code, name, id: stableId(`team/${winner.record.competition}/${code}`) };
  };
  const home = team(homeName);
  const away = team(awayName);
  if (!home || !away) return undefined;
  const others = events
    .filter((e) => e !== winner)
    .sort((a, b) => (a.record.ticker < b.record.ticker ? -1 : 1));
  const competition = winner.record.competition;
  return {
    id: stableId(`milestone/${winner.record.ticker}`),
    category: "Sports",
    type: rules.type,
    title: winner.record.title,
    start,
    end: start + Math.round((close - start) * PLAYING_SHARE),
    competition,
    sourceId: `sim:${winner.record.ticker}`,
    primary: [winner.record.ticker],
    related: [winner.record.ticker, ...others.map((e) => e.record.ticker)],
    updated: Math.min(...events.flatMap((e) => e.markets.map((m) => m.record.openTime))),
    details: {
      competition,
      home_team_id: home.id,
      away_team_id: away.id,
      home_team_name: home.name,
      away_team_name: away.name,
    },
    subject: {
      kind: "game",
      rules,
      home,
      away,
      winner,
      half: others.find((e) => /half/i.test(e.record.competitionScope ?? "")),
      total: others.find((e) => e.strikes !== null),
      markets: events.flatMap((e) => e.markets),
    },
  };
}

/** The Kalshi side of a team or tie market of a game's event: its ticker suffix is the team's code. */
export function outcomeOf(subject: GameSubject, market: SimulatedMarket): Side | "tie" | undefined {
  const suffix = suffixOf(market);
  if (suffix === subject.home.code) return "home";
  if (suffix === subject.away.code) return "away";
  return suffix === "TIE" ? "tie" : undefined;
}
