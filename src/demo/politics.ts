/**
 * Elections: chamber control and presidential party (KXCONTROLH, KXCONTROLS, KXPRESPARTY), statewide
 * party markets (KXGOVPARTY, KXSENATEPARTY), and mayoral races with candidate markets. Candidates are
 * invented and every outcome is synthetic; only offices, states and calendars are real.
 */
import type { CatalogueEvent, Series } from "../contract/markets.js";
import {
  buildEvent,
  type DemoContext,
  type EventPlan,
  type FamilyCatalogue,
  historyLength,
  type MarketTerms,
  makeSeries,
} from "./build.js";
import {
  civil,
  DAY,
  EASTERN,
  HOUR,
  localTime,
  MINUTE,
  nthWeekday,
  shortDate,
  usElectionDay,
} from "./calendar.js";
import { clamp, type Random } from "./random.js";

/** Past election cycles kept per unit of scale (at most MAX_PAST_CYCLES). */
const HISTORY_CYCLES = 1;
const MAX_PAST_CYCLES = 5;

const TERMS: MarketTerms = {
  canCloseEarly: true,
  earlyCloseCondition: "This market will close and expire early once the race is called.",
  rulesSecondary:
    "A race is called when the Associated Press projects a winner. If no projection is made, the market " +
    "settles on the certified result.",
  fractionalTradingEnabled: false,
};

const PROHIBITIONS = [
  "Candidates, their campaign staff and their immediate families may not trade in this market.",
  "Employees of election authorities may not trade in this market.",
];
const AP_SOURCE = { name: "Associated Press", url: "https://apnews.com/hub/elections" };

const PARTIES = [
  { suffix: "D", name: "Democratic Party", members: "Democrats" },
  { suffix: "R", name: "Republican Party", members: "Republicans" },
] as const;

const STATES: Record<string, string> = {
  AZ: "Arizona",
  FL: "Florida",
  GA: "Georgia",
  IN: "Indiana",
  ME: "Maine",
  MI: "Michigan",
  MO: "Missouri",
  MT: "Montana",
  NC: "North Carolina",
  NH: "New Hampshire",
  NV: "Nevada",
  OH: "Ohio",
  PA: "Pennsylvania",
  TX: "Texas",
  VT: "Vermont",
  WA: "Washington",
  WI: "Wisconsin",
};

/** Competitive governor races by cycle: midterm years and presidential years. */
function governorStates(year: number): string[] {
  return year % 4 === 2 ? ["AZ", "GA", "MI", "NV", "PA", "WI"] : ["NC", "NH", "WA", "MO", "IN", "VT"];
}

/** Competitive Senate races by the class up that year (the classes rotate on a six-year cycle). */
function senateStates(year: number): string[] {
  if (year % 6 === 4) return ["GA", "MI", "NC", "ME", "TX", "NH"];
  if (year % 6 === 0) return ["AZ", "PA", "WI", "NV", "OH", "FL"];
  return ["AZ", "MI", "NV", "PA", "WI", "MT"];
}

function politicsSeries(
  ticker: string,
  title: string,
  tags: string[],
  source: { name: string; url: string },
): Series {
  return makeSeries({
    ticker,
    title,
    category: "Politics",
    tags,
    frequency: "custom",
    settlementSources: [source],
    additionalProhibitions: PROHIBITIONS,
    productMetadata: null,
    terms: "elections",
  });
}

/** Times of a race decided on `electionDay`: polls close at 8pm ET, the call comes hours to days later. */
function raceTimes(electionDay: number, listedDaysBefore: number, rng: Random) {
  const pollsClose = localTime(EASTERN, electionDay, 20);
  const called = pollsClose + Math.round(rng.between(3 * HOUR, 3 * DAY));
  return {
    strikeDate: pollsClose,
    strikePeriod: null,
    openTime: pollsClose - listedDaysBefore * DAY,
    closeTime: called,
    expirationTime: pollsClose + 60 * DAY,
    settledAt: called + rng.between(30 * MINUTE, 6 * HOUR),
  };
}

interface PartyRace {
  series: Series;
  ticker: string;
  title: string;
  /** "control of the House", "the Georgia governorship" */
  prize: string;
  /** The winning condition for a party, e.g. "the Republican Party's nominee wins the race for …". */
  rule: (party: string) => string;
  listedDaysBefore: number;
  expectedVolume: number;
  /** Spread of the Democrats' odds across races: national contests are closer than state ones. */
  lean: number;
}

function partyRaceEvent(
  ctx: DemoContext,
  race: PartyRace,
  year: number,
  electionDay: number,
): CatalogueEvent {
  const rng = ctx.root.fork(race.ticker);
  const democratic = clamp(rng.normal(0.5, race.lean), 0.04, 0.96);
  const democratsWin = rng.chance(democratic);
  const plan: EventPlan = {
    series: race.series,
    terms: TERMS,
    ticker: race.ticker,
    title: race.title,
    subtitle: `Election on ${shortDate(electionDay)}`,
    ...raceTimes(electionDay, race.listedDaysBefore, rng),
    expectedVolume: race.expectedVolume,
    outcomes: PARTIES.map((party) => {
      const isDemocratic = party.suffix === "D";
      return {
        suffix: party.suffix,
        title: `Will ${party.members} win ${race.prize} in ${year}?`,
        yesSubTitle: party.name,
        rulesPrimary: `If ${race.rule(party.name)} in the ${year} general election, then the market resolves to Yes.`,
        probability: isDemocratic ? democratic : 1 - democratic,
        payout: isDemocratic === democratsWin ? 1 : 0,
      };
    }),
  };
  return buildEvent(plan, ctx.now, ctx.root);
}

function partyCatalogue(ctx: DemoContext): FamilyCatalogue {
  const house = politicsSeries("KXCONTROLH", "House control", ["US Elections", "Congress"], AP_SOURCE);
  const senate = politicsSeries("KXCONTROLS", "Senate control", ["US Elections", "Congress"], AP_SOURCE);
  const president = politicsSeries(
    "KXPRESPARTY",
    "Presidential election winning party",
    ["US Elections", "President"],
    AP_SOURCE,
  );
  const governor = politicsSeries(
    "KXGOVPARTY",
    "Governor races by party",
    ["US Elections", "Governors"],
    AP_SOURCE,
  );
  const senateRace = politicsSeries(
    "KXSENATEPARTY",
    "Senate races by party",
    ["US Elections", "Congress"],
    AP_SOURCE,
  );

  const pollsClosed = (year: number) => localTime(EASTERN, usElectionDay(year), 20) <= ctx.now;
  let next = civil(ctx.today).year;
  next += next % 2;
  if (pollsClosed(next)) next += 2;
  const pastCycles = Math.min(MAX_PAST_CYCLES, historyLength(ctx, HISTORY_CYCLES));
  const events: CatalogueEvent[] = [];
  for (let year = next - 2 * pastCycles; year <= next; year += 2) {
    const day = usElectionDay(year);
    const yy = String(year % 100).padStart(2, "0");
    const races: PartyRace[] = [
      {
        series: house,
        ticker: `KXCONTROLH-${yy}`,
        title: `Which party will win the House in ${year}?`,
        prize: "control of the House",
        rule: (party) => `the ${party} wins a majority of seats in the US House of Representatives`,
        listedDaysBefore: 800,
        expectedVolume: 4_000_000,
        lean: 0.12,
      },
      {
        series: senate,
        ticker: `KXCONTROLS-${yy}`,
        title: `Which party will win the Senate in ${year}?`,
        prize: "control of the Senate",
        rule: (party) =>
          `the ${party} wins a majority of the US Senate, counting the Vice President's tie-breaking vote,`,
        listedDaysBefore: 800,
        expectedVolume: 3_000_000,
        lean: 0.12,
      },
    ];
    if (year % 4 === 0) {
      races.push({
        series: president,
        ticker: `KXPRESPARTY-${yy}`,
        title: `Which party will win the presidency in ${year}?`,
        prize: "the presidency",
        rule: (party) => `the ${party}'s nominee wins the presidential election`,
        listedDaysBefore: 1_000,
        expectedVolume: 20_000_000,
        lean: 0.12,
      });
    }
    for (const state of governorStates(year)) {
      races.push({
        series: governor,
        ticker: `KXGOVPARTY-${yy}${state}`,
        title: `Which party will win the ${STATES[state]} governor's race in ${year}?`,
        prize: `the ${STATES[state]} governorship`,
        rule: (party) => `the ${party}'s nominee wins the race for Governor of ${STATES[state]}`,
        listedDaysBefore: 500,
        expectedVolume: 300_000,
        lean: 0.22,
      });
    }
    for (const state of senateStates(year)) {
      races.push({
        series: senateRace,
        ticker: `KXSENATEPARTY-${yy}${state}`,
        title: `Which party will win the ${STATES[state]} Senate race in ${year}?`,
        prize: `the ${STATES[state]} Senate seat`,
        rule: (party) => `the ${party}'s nominee wins the US Senate race in ${STATES[state]}`,
        listedDaysBefore: 500,
        expectedVolume: 400_000,
        lean: 0.22,
      });
    }
    for (const race of races) events.push(partyRaceEvent(ctx, race, year, day));
  }
  return { series: [house, senate, president, governor, senateRace], events };
}

// ---------------------------------------------------------------- mayoral races

const FIRST_NAMES = [
  "Jordan",
  "Maya",
  "Daniel",
  "Priya",
  "Marcus",
  "Elena",
  "Samuel",
  "Grace",
  "Victor",
  "Naomi",
  "Andre",
  "Leah",
  "Owen",
  "Camila",
  "Isaac",
  "Renee",
  "Tobias",
  "Alana",
];
const LAST_NAMES = [
  "Rivera",
  "Whitaker",
  "Okafor",
  "Lindqvist",
  "Haddad",
  "Castellano",
  "Brennan",
  "Nakamura",
  "Delacroix",
  "Abernathy",
  "Quintero",
  "Sorensen",
  "Holloway",
  "Ferreira",
  "Calloway",
  "Ashford",
  "Navarro",
  "Pemberton",
];

interface MayoralCity {
  series: string;
  city: string;
  /** Whether `year` is an election year, and the general election's date in it. */
  isElectionYear: (year: number) => boolean;
  electionDay: (year: number) => number;
  authority: { name: string; url: string };
}

const MAYORAL_CITIES: readonly MayoralCity[] = [
  {
    series: "KXMAYORNYC",
    city: "New York City",
    isElectionYear: (year) => year % 4 === 1,
    electionDay: usElectionDay,
    authority: { name: "New York City Board of Elections", url: "https://www.vote.nyc/" },
  },
  {
    series: "KXMAYORCHI",
    city: "Chicago",
    isElectionYear: (year) => year % 4 === 3,
    // Chicago's municipal general election falls on the last Tuesday of February.
    electionDay: (year) => nthWeekday(year, 2, 2, -1),
    authority: { name: "Chicago Board of Election Commissioners", url: "https://chicagoelections.gov/" },
  },
  {
    series: "KXMAYORLA",
    city: "Los Angeles",
    isElectionYear: (year) => year % 4 === 2,
    electionDay: usElectionDay,
    authority: { name: "Los Angeles City Clerk", url: "https://clerk.lacity.gov/" },
  },
];

function mayoralEvent(ctx: DemoContext, city: MayoralCity, series: Series, year: number): CatalogueEvent {
  const ticker = `${city.series}-${String(year % 100).padStart(2, "0")}`;
  const rng = ctx.root.fork(ticker);
  const lastNames = rng.shuffle(LAST_NAMES).slice(0, rng.int(4, 6));
  const strengths = lastNames.map(() => Math.exp(rng.normal(0, 1)));
  const total = strengths.reduce((sum, s) => sum + s, 0);
  const odds = strengths.map((s) => s / total);
  const winner = rng.weighted(odds);
  const day = city.electionDay(year);
  const plan: EventPlan = {
    series,
    terms: TERMS,
    ticker,
    title: `Who will win the ${year} ${city.city} mayoral election?`,
    subtitle: `General election on ${shortDate(day)}`,
    ...raceTimes(day, 400, rng),
    expectedVolume: 600_000,
    outcomes: lastNames.map((lastName, i) => {
      const candidate = `${rng.pick(FIRST_NAMES)} ${lastName}`;
      return {
        suffix: lastName.toUpperCase(),
        title: `Will ${candidate} win the ${year} ${city.city} mayoral election?`,
        yesSubTitle: candidate,
        rulesPrimary:
          `If ${candidate} wins the ${year} ${city.city} mayoral general election, as certified by the ` +
          `${city.authority.name}, then the market resolves to Yes.`,
        probability: odds[i] as number,
        payout: i === winner ? 1 : 0,
      };
    }),
  };
  return buildEvent(plan, ctx.now, ctx.root);
}

function mayoralCatalogue(ctx: DemoContext): FamilyCatalogue {
  const series: Series[] = [];
  const events: CatalogueEvent[] = [];
  const thisYear = civil(ctx.today).year;
  const pastCycles = Math.min(MAX_PAST_CYCLES, historyLength(ctx, HISTORY_CYCLES));
  for (const city of MAYORAL_CITIES) {
    const record = politicsSeries(
      city.series,
      `${city.city} mayoral election`,
      ["Elections", "Mayoral races"],
      city.authority,
    );
    series.push(record);
    const decided = (year: number) => localTime(EASTERN, city.electionDay(year), 20) <= ctx.now;
    let next = thisYear;
    while (!city.isElectionYear(next) || decided(next)) next++;
    for (let cycle = pastCycles; cycle >= 0; cycle--)
      events.push(mayoralEvent(ctx, city, record, next - 4 * cycle));
  }
  return { series, events };
}

/** Party-control, statewide and mayoral election markets. */
export function politicsCatalogue(ctx: DemoContext): FamilyCatalogue {
  const parties = partyCatalogue(ctx);
  const mayors = mayoralCatalogue(ctx);
  return { series: [...parties.series, ...mayors.series], events: [...parties.events, ...mayors.events] };
}
