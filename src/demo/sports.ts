/**
 * Sports: game winners (KXNBAGAME, KXNFLGAME, KXNHLGAME, KXMLBGAME, KXEPLGAME), game props (total
 * points or goals, first-half winner) and season champions (KXNBA, KXSB, KXPREMIERLEAGUE). Schedules
 * follow each league's season and weekly rhythm; pairings, ratings and scores are synthetic.
 */
import type { CatalogueEvent, Series, SettlementSource } from "../contract/markets.js";
import {
  buildEvent,
  type DemoContext,
  type EventPlan,
  type FamilyCatalogue,
  historyLength,
  type MarketTerms,
  makeSeries,
  type OutcomePlan,
  strikeLabel,
} from "./build.js";
import {
  civil,
  clockLabel,
  DAY,
  dayNumber,
  EASTERN,
  HOUR,
  LONDON,
  localTime,
  longDate,
  MINUTE,
  nthWeekday,
  shortDate,
  tickerDate,
  type Zone,
  zoneName,
} from "./calendar.js";
import { normalCdf } from "./random.js";
import { EPL_TEAMS, MLB_TEAMS, NBA_TEAMS, NFL_TEAMS, NHL_TEAMS, type Team } from "./teams.js";

/** Settled days of games kept per unit of scale; games list three days before they start. */
const HISTORY_DAYS = 4;
const DAYS_AHEAD = 3;
const LISTED_DAYS_BEFORE = 3;
/** Past seasons' champion events kept per unit of scale (at most MAX_PAST_SEASONS). */
const HISTORY_SEASONS = 1;
const MAX_PAST_SEASONS = 3;

const TERMS: MarketTerms = {
  canCloseEarly: true,
  earlyCloseCondition: "This market will close and expire early once the result is official.",
  rulesSecondary:
    "If the game is postponed, the market stays open until it is played. If it is not played within two " +
    "weeks of the scheduled date, the market resolves to No.",
  fractionalTradingEnabled: false,
};
const FUTURES_TERMS: MarketTerms = {
  ...TERMS,
  earlyCloseCondition: "This market will close and expire early once the champion is decided.",
  rulesSecondary: null,
};
const PROHIBITIONS = [
  "Players, coaches, officials and league employees may not trade in markets on their league.",
];

interface Slot {
  weekday: number;
  hours: number;
  games: number;
}

type Schedule =
  | { kind: "daily"; games: readonly [number, number]; hours: readonly number[] }
  | { kind: "weekly"; slots: readonly Slot[] };

type Prop =
  | {
      kind: "total";
      series: string;
      title: string;
      scope: string;
      unit: string;
      offsets: readonly number[];
      volume: number;
    }
  | { kind: "firstHalf"; series: string; title: string; scope: string; volume: number };

interface Championship {
  series: string;
  title: string;
  /** "the 2027 NBA Finals" for a season ending in `year`. */
  prize: (year: number) => string;
  /** When the title is decided in the season's final year. */
  decidedAt: (year: number) => number;
  volume: number;
}

interface League {
  key: string;
  sport: string;
  competition: string;
  teams: readonly Team[];
  zone: Zone;
  /** First and last regular-season day as [month, day]; a season that starts late ends the next year. */
  season: readonly [readonly [number, number], readonly [number, number]];
  schedule: Schedule;
  /** A team's score per half: normal around `mean` / 2, shifted by ratings and home advantage. */
  scoring: {
    mean: number;
    sd: number;
    ratingWeight: number;
    homeEdge: number;
    overtime: readonly [number, number];
  };
  ties: boolean;
  durationHours: number;
  /** Soccer names the home side first ("Arsenal vs Chelsea"); US leagues the visitors ("Boston at Denver"). */
  homeFirst: boolean;
  /** US team names take an article: "the Boston Celtics"; club names don't. */
  article: boolean;
  noun: string;
  source: SettlementSource;
  gameSeries: string;
  gameTitle: string;
  gameVolume: number;
  props: readonly Prop[];
  championship?: Championship;
}

const at = (weekday: number, hours: number, games: number): Slot => ({ weekday, hours, games });

const LEAGUES: readonly League[] = [
  {
    key: "NBA",
    sport: "Basketball",
    competition: "NBA",
    teams: NBA_TEAMS,
    zone: EASTERN,
    season: [
      [10, 21],
      [4, 12],
    ],
    schedule: { kind: "daily", games: [3, 8], hours: [19, 19.5, 20, 21, 22, 22.5] },
    scoring: { mean: 114, sd: 11, ratingWeight: 3, homeEdge: 2.5, overtime: [2, 9] },
    ties: false,
    durationHours: 2.5,
    homeFirst: false,
    article: true,
    noun: "game",
    source: { name: "NBA", url: "https://www.nba.com/" },
    gameSeries: "KXNBAGAME",
    gameTitle: "NBA game winner",
    gameVolume: 400_000,
    props: [
      {
        kind: "total",
        series: "KXNBATOTAL",
        title: "NBA total points",
        scope: "Total Points",
        unit: "points",
        offsets: [-15, -10, -5, 0, 5, 10],
        volume: 100_000,
      },
    ],
    championship: {
      series: "KXNBA",
      title: "NBA champion",
      prize: (year) => `the ${year} NBA Finals`,
      decidedAt: (year) => localTime(EASTERN, dayNumber(year, 6, 18), 23),
      volume: 5_000_000,
    },
  },
  {
    key: "NFL",
    sport: "Football",
    competition: "NFL",
    teams: NFL_TEAMS,
    zone: EASTERN,
    season: [
      [9, 4],
      [1, 4],
    ],
    // Thursday night, the Sunday windows, Sunday and Monday night: every team plays once a week.
    schedule: {
      kind: "weekly",
      slots: [
        at(4, 20.25, 1),
        at(0, 13, 8),
        at(0, 16 + 5 / 60, 2),
        at(0, 16 + 25 / 60, 3),
        at(0, 20 + 20 / 60, 1),
        at(1, 20.25, 1),
      ],
    },
    scoring: { mean: 22.5, sd: 9.5, ratingWeight: 4, homeEdge: 2, overtime: [3, 6] },
    ties: false,
    durationHours: 3.25,
    homeFirst: false,
    article: true,
    noun: "game",
    source: { name: "NFL", url: "https://www.nfl.com/" },
    gameSeries: "KXNFLGAME",
    gameTitle: "NFL game winner",
    gameVolume: 2_000_000,
    props: [
      {
        kind: "firstHalf",
        series: "KXNFL1HWINNER",
        title: "NFL first-half winner",
        scope: "1st Half",
        volume: 300_000,
      },
    ],
    championship: {
      series: "KXSB",
      title: "Super Bowl champion",
      prize: (year) => `Super Bowl ${romanNumeral(year - 1966)}`,
      decidedAt: (year) => localTime(EASTERN, nthWeekday(year, 2, 0, 2), 22.5),
      volume: 10_000_000,
    },
  },
  {
    key: "NHL",
    sport: "Hockey",
    competition: "NHL",
    teams: NHL_TEAMS,
    zone: EASTERN,
    season: [
      [10, 7],
      [4, 16],
    ],
    schedule: { kind: "daily", games: [3, 8], hours: [19, 19.5, 20, 22] },
    scoring: { mean: 3.1, sd: 1.6, ratingWeight: 0.4, homeEdge: 0.2, overtime: [1, 1] },
    ties: false,
    durationHours: 2.5,
    homeFirst: false,
    article: true,
    noun: "game",
    source: { name: "NHL", url: "https://www.nhl.com/" },
    gameSeries: "KXNHLGAME",
    gameTitle: "NHL game winner",
    gameVolume: 120_000,
    props: [],
  },
  {
    key: "MLB",
    sport: "Baseball",
    competition: "MLB",
    teams: MLB_TEAMS,
    zone: EASTERN,
    season: [
      [3, 26],
      [9, 28],
    ],
    schedule: {
      kind: "daily",
      games: [6, 12],
      hours: [13 + 5 / 60, 18 + 40 / 60, 19 + 5 / 60, 19 + 10 / 60, 20 + 10 / 60, 21 + 40 / 60, 22 + 10 / 60],
    },
    scoring: { mean: 4.5, sd: 3, ratingWeight: 0.8, homeEdge: 0.25, overtime: [1, 2] },
    ties: false,
    durationHours: 3,
    homeFirst: false,
    article: true,
    noun: "game",
    source: { name: "MLB", url: "https://www.mlb.com/" },
    gameSeries: "KXMLBGAME",
    gameTitle: "MLB game winner",
    gameVolume: 150_000,
    props: [],
  },
  {
    key: "EPL",
    sport: "Soccer",
    competition: "Premier League",
    teams: EPL_TEAMS,
    zone: LONDON,
    season: [
      [8, 15],
      [5, 24],
    ],
    schedule: {
      kind: "weekly",
      slots: [at(6, 12.5, 1), at(6, 15, 4), at(6, 17.5, 1), at(0, 14, 2), at(0, 16.5, 1), at(1, 20, 1)],
    },
    scoring: { mean: 1.3, sd: 1.1, ratingWeight: 0.5, homeEdge: 0.25, overtime: [0, 0] },
    ties: true,
    durationHours: 2,
    homeFirst: true,
    article: false,
    noun: "match",
    source: { name: "Premier League", url: "https://www.premierleague.com/" },
    gameSeries: "KXEPLGAME",
    gameTitle: "Premier League match result",
    gameVolume: 200_000,
    props: [
      {
        kind: "total",
        series: "KXEPLTOTAL",
        title: "Premier League total goals",
        scope: "Total Goals",
        unit: "goals",
        offsets: [-1, 0, 1, 2],
        volume: 60_000,
      },
    ],
    championship: {
      series: "KXPREMIERLEAGUE",
      title: "Premier League champion",
      prize: (year) => `the ${year - 1}-${String(year % 100).padStart(2, "0")} Premier League`,
      decidedAt: (year) => localTime(LONDON, dayNumber(year, 5, 24), 18),
      volume: 2_000_000,
    },
  },
];

function romanNumeral(value: number): string {
  const numerals: readonly (readonly [number, string])[] = [
    [50, "L"],
    [40, "XL"],
    [10, "X"],
    [9, "IX"],
    [5, "V"],
    [4, "IV"],
    [1, "I"],
  ];
  let rest = value;
  let result = "";
  for (const [amount, symbol] of numerals) {
    while (rest >= amount) {
      result += symbol;
      rest -= amount;
    }
  }
  return result;
}

/** The year the season containing `day` started, or null when the league is not playing then. */
function seasonStartYear(league: League, day: number): number | null {
  const { year, month, day: dayOfMonth } = civil(day);
  const key = month * 100 + dayOfMonth;
  const [[startMonth, startDay], [endMonth, endDay]] = league.season;
  const start = startMonth * 100 + startDay;
  const end = endMonth * 100 + endDay;
  if (start <= end) return key >= start && key <= end ? year : null;
  if (key >= start) return year;
  return key <= end ? year - 1 : null;
}

/** Team strengths for one season (standard normal), shared by its games and its champion market. */
function ratings(ctx: DemoContext, league: League, startYear: number): number[] {
  const rng = ctx.root.fork(`${league.key}:ratings:${startYear}`);
  return league.teams.map(() => rng.normal());
}

interface Fixture {
  home: Team;
  away: Team;
  /** Local kick-off, hours after midnight. */
  hours: number;
}

/** The games a league plays on a local date. */
function fixtures(ctx: DemoContext, league: League, day: number): Fixture[] {
  if (seasonStartYear(league, day) === null) return [];
  const schedule = league.schedule;
  if (schedule.kind === "daily") {
    const rng = ctx.root.fork(`${league.key}:slate:${day}`);
    const count = Math.min(
      rng.int(schedule.games[0], schedule.games[1]),
      Math.floor(league.teams.length / 2),
    );
    const order = rng.shuffle(league.teams);
    return Array.from({ length: count }, (_, i) => ({
      away: order[2 * i] as Team,
      home: order[2 * i + 1] as Team,
      hours: rng.pick(schedule.hours),
    }));
  }
  // Weeks run Thursday to Wednesday (day 0 of the epoch was a Thursday), so each team plays once per week.
  const rng = ctx.root.fork(`${league.key}:week:${Math.floor(day / 7)}`);
  const order = rng.shuffle(league.teams);
  const weekday = civil(day).weekday;
  const result: Fixture[] = [];
  let pair = 0;
  for (const slot of schedule.slots) {
    for (let g = 0; g < slot.games; g++, pair++) {
      if (slot.weekday !== weekday) continue;
      result.push({ away: order[2 * pair] as Team, home: order[2 * pair + 1] as Team, hours: slot.hours });
    }
  }
  return result;
}

interface Game extends Fixture {
  league: League;
  day: number;
  start: number;
  /** Expected points per game for each side. */
  homeMean: number;
  awayMean: number;
  home1H: number;
  away1H: number;
  homeFinal: number;
  awayFinal: number;
}

function playGame(
  ctx: DemoContext,
  league: League,
  day: number,
  fixture: Fixture,
  strength: Map<string, number>,
): Game {
  const rng = ctx.root.fork(`${league.key}:game:${day}:${fixture.home.code}`);
  const { mean, sd, ratingWeight, homeEdge, overtime } = league.scoring;
  const edge =
    (ratingWeight * ((strength.get(fixture.home.code) ?? 0) - (strength.get(fixture.away.code) ?? 0)) +
      homeEdge) /
    2;
  // Some matchups run faster or slower than others, which moves both sides' scoring together.
  const pace = rng.normal(0, sd * 0.3);
  const homeMean = mean + pace + edge;
  const awayMean = mean + pace - edge;
  const half = (m: number) => Math.max(0, Math.round(rng.normal(m / 2, sd / Math.SQRT2)));
  const home1H = half(homeMean);
  const away1H = half(awayMean);
  let homeFinal = home1H + half(homeMean);
  let awayFinal = away1H + half(awayMean);
  if (!league.ties && homeFinal === awayFinal) {
    const margin = rng.int(overtime[0], overtime[1]);
    if (rng.chance(0.5)) homeFinal += margin;
    else awayFinal += margin;
  }
  return {
    ...fixture,
    league,
    day,
    start: localTime(league.zone, day, fixture.hours),
    homeMean,
    awayMean,
    home1H,
    away1H,
    homeFinal,
    awayFinal,
  };
}

/** Home-win, tie and away-win probabilities for a margin that is normal with the given mean and sd. */
function resultOdds(margin: number, sd: number, ties: boolean): { home: number; tie: number; away: number } {
  const home = 1 - normalCdf(0.5, margin, sd);
  const away = normalCdf(-0.5, margin, sd);
  const tie = 1 - home - away;
  return ties ? { home, tie, away } : { home: home + tie / 2, tie: 0, away: away + tie / 2 };
}

function sportsSeries(league: League, ticker: string, title: string, frequency: string): Series {
  return makeSeries({
    ticker,
    title,
    category: "Sports",
    // The sports filters read the sport from the first tag of a Sports series.
    tags: [league.sport, league.competition],
    frequency,
    settlementSources: [league.source],
    additionalProhibitions: PROHIBITIONS,
    productMetadata: { league: league.competition, sport: league.sport },
    terms: `sports-${league.key.toLowerCase()}`,
  });
}

/** The events of one game: its winner market and the league's props. */
function gameEvents(ctx: DemoContext, game: Game, seriesOf: Map<string, Series>): CatalogueEvent[] {
  const { league, home, away, day } = game;
  const [first, second] = league.homeFirst ? [home, away] : [away, home];
  const matchup = league.homeFirst ? `${home.name} vs ${away.name}` : `${away.name} at ${home.name}`;
  const date = shortDate(day);
  const named = (team: Team) => (league.article ? `the ${team.name}` : team.name);
  const fixture = `the ${matchup} ${league.noun} originally scheduled for ${longDate(day)}`;
  const kickoff = `${date}, ${clockLabel(game.hours)} ${zoneName(league.zone, day)}`;
  // Each half scores with sd / √2 per team, so a full game's margin or total has sd·√2, a half's margin sd.
  const { sd } = league.scoring;

  const plan = (
    series: string,
    scope: string,
    title: string,
    volume: number,
    outcomes: OutcomePlan[],
  ): EventPlan => {
    const ticker = `${series}-${tickerDate(day)}${first.code}${second.code}`;
    const rng = ctx.root.fork(ticker);
    const closeTime = game.start + Math.round(league.durationHours * HOUR);
    return {
      series: seriesOf.get(series) as Series,
      terms: TERMS,
      ticker,
      title,
      subtitle: kickoff,
      competition: league.competition,
      competitionScope: scope,
      strikeDate: game.start,
      strikePeriod: null,
      openTime: game.start - LISTED_DAYS_BEFORE * DAY,
      closeTime,
      expirationTime: game.start + 14 * DAY,
      settledAt: closeTime + rng.between(10 * MINUTE, 60 * MINUTE),
      expectedVolume: volume,
      outcomes,
    };
  };
  const winnerOutcome = (
    team: Team,
    other: Team,
    probability: number,
    wins: boolean,
    clause: string,
  ): OutcomePlan => ({
    suffix: team.code,
    title: `Will ${named(team)} beat ${named(other)} on ${date}?`,
    yesSubTitle: team.name,
    rulesPrimary: `If ${named(team)} win ${fixture}${clause}, then the market resolves to Yes.`,
    probability,
    payout: wins ? 1 : 0,
  });

  const full = resultOdds(game.homeMean - game.awayMean, sd * Math.SQRT2, league.ties);
  const regulation = league.ties ? " in regulation time (90 minutes plus stoppage time)" : "";
  const homeWins = winnerOutcome(home, away, full.home, game.homeFinal > game.awayFinal, regulation);
  const awayWins = winnerOutcome(away, home, full.away, game.awayFinal > game.homeFinal, regulation);
  const draw: OutcomePlan = {
    suffix: "TIE",
    title: `Will ${home.name} and ${away.name} draw on ${date}?`,
    yesSubTitle: "Tie",
    rulesPrimary: `If ${fixture} ends in a tie${regulation}, then the market resolves to Yes.`,
    probability: full.tie,
    payout: game.homeFinal === game.awayFinal ? 1 : 0,
  };
  const winners = league.ties ? [homeWins, draw, awayWins] : [awayWins, homeWins];
  const events = [
    buildEvent(plan(league.gameSeries, "Game", matchup, league.gameVolume, winners), ctx.now, ctx.root),
  ];

  for (const prop of league.props) {
    if (prop.kind === "total") {
      const expected = game.homeMean + game.awayMean;
      const total = game.homeFinal + game.awayFinal;
      const centre = Math.round(expected);
      const outcomes = prop.offsets.map((offset): OutcomePlan => {
        const line = centre + offset + 0.5;
        return {
          suffix: `T${strikeLabel(line)}`,
          title: `Will ${matchup} have over ${line} total ${prop.unit} on ${date}?`,
          yesSubTitle: `Over ${line} ${prop.unit}`,
          rulesPrimary: `If the combined final score of ${fixture} is more than ${line} ${prop.unit}, then the market resolves to Yes.`,
          probability: 1 - normalCdf(line, expected, sd * Math.SQRT2),
          payout: total > line ? 1 : 0,
        };
      });
      events.push(
        buildEvent(
          plan(prop.series, prop.scope, `${matchup}: total ${prop.unit}`, prop.volume, outcomes),
          ctx.now,
          ctx.root,
        ),
      );
    } else {
      const half = resultOdds((game.homeMean - game.awayMean) / 2, sd, true);
      const leads = (team: Team, other: Team, probability: number, wins: boolean): OutcomePlan => ({
        suffix: team.code,
        title: `Will ${named(team)} lead ${named(other)} at halftime on ${date}?`,
        yesSubTitle: team.name,
        rulesPrimary: `If ${named(team)} lead at the end of the first half of ${fixture}, then the market resolves to Yes.`,
        probability,
        payout: wins ? 1 : 0,
      });
      const outcomes = [
        leads(away, home, half.away, game.away1H > game.home1H),
        {
          suffix: "TIE",
          title: `Will ${matchup} be tied at halftime on ${date}?`,
          yesSubTitle: "Tie",
          rulesPrimary: `If the score is tied at the end of the first half of ${fixture}, then the market resolves to Yes.`,
          probability: half.tie,
          payout: game.away1H === game.home1H ? 1 : 0,
        },
        leads(home, away, half.home, game.home1H > game.away1H),
      ];
      events.push(
        buildEvent(
          plan(prop.series, prop.scope, `${matchup}: first half winner`, prop.volume, outcomes),
          ctx.now,
          ctx.root,
        ),
      );
    }
  }
  return events;
}

/** The champion event of the season ending in `endYear`. */
function championshipEvent(
  ctx: DemoContext,
  league: League,
  championship: Championship,
  series: Series,
  endYear: number,
): CatalogueEvent {
  const ticker = `${championship.series}-${String(endYear % 100).padStart(2, "0")}`;
  const rng = ctx.root.fork(ticker);
  const strength = ratings(ctx, league, endYear - 1);
  const weights = strength.map((r) => Math.exp(1.6 * r));
  const total = weights.reduce((sum, w) => sum + w, 0);
  const champion = rng.weighted(weights);
  const decidedAt = championship.decidedAt(endYear);
  const prize = championship.prize(endYear);
  const [startMonth, startDay] = league.season[0];
  const seasonStart = localTime(league.zone, dayNumber(endYear - 1, startMonth, startDay), 12);
  const plan: EventPlan = {
    series,
    terms: FUTURES_TERMS,
    ticker,
    title: `Who will win ${prize}?`,
    subtitle: `Decided by ${shortDate(Math.floor(decidedAt / DAY))}`,
    competition: league.competition,
    competitionScope: "Championship",
    strikeDate: decidedAt,
    strikePeriod: null,
    openTime: seasonStart - 150 * DAY,
    closeTime: decidedAt,
    expirationTime: decidedAt + 14 * DAY,
    settledAt: decidedAt + rng.between(30 * MINUTE, 3 * HOUR),
    expectedVolume: championship.volume,
    outcomes: league.teams.map((team, i) => ({
      suffix: team.code,
      title: `Will ${league.article ? `the ${team.name}` : team.name} win ${prize}?`,
      yesSubTitle: team.name,
      rulesPrimary: `If ${league.article ? `the ${team.name}` : team.name} win ${prize}, then the market resolves to Yes.`,
      probability: (weights[i] as number) / total,
      payout: i === champion ? 1 : 0,
    })),
  };
  return buildEvent(plan, ctx.now, ctx.root);
}

/** Every league's games around the anchor and its champion markets. */
export function sportsCatalogue(ctx: DemoContext): FamilyCatalogue {
  const series: Series[] = [];
  const events: CatalogueEvent[] = [];
  const firstDay = ctx.today - historyLength(ctx, HISTORY_DAYS);
  for (const league of LEAGUES) {
    const frequency = league.schedule.kind;
    const seriesOf = new Map<string, Series>();
    seriesOf.set(league.gameSeries, sportsSeries(league, league.gameSeries, league.gameTitle, frequency));
    for (const prop of league.props)
      seriesOf.set(prop.series, sportsSeries(league, prop.series, prop.title, frequency));
    series.push(...seriesOf.values());

    const strengthBySeason = new Map<number, Map<string, number>>();
    for (let day = firstDay; day <= ctx.today + DAYS_AHEAD; day++) {
      const startYear = seasonStartYear(league, day);
      if (startYear === null) continue;
      let strength = strengthBySeason.get(startYear);
      if (!strength) {
        const values = ratings(ctx, league, startYear);
        strength = new Map(league.teams.map((team, i) => [team.code, values[i] as number]));
        strengthBySeason.set(startYear, strength);
      }
      for (const fixture of fixtures(ctx, league, day)) {
        events.push(...gameEvents(ctx, playGame(ctx, league, day, fixture, strength), seriesOf));
      }
    }

    const championship = league.championship;
    if (championship) {
      const record = sportsSeries(league, championship.series, championship.title, "annual");
      series.push(record);
      let current = civil(ctx.today).year;
      while (championship.decidedAt(current) <= ctx.now) current++;
      const pastSeasons = Math.min(MAX_PAST_SEASONS, historyLength(ctx, HISTORY_SEASONS));
      for (let endYear = current - pastSeasons; endYear <= current; endYear++) {
        events.push(championshipEvent(ctx, league, championship, record, endYear));
      }
    }
  }
  return { series, events };
}
