/**
 * A simulated game, play by play: a seeded final score that agrees with every settled market of the
 * game (the winner, the total-points ladder, the first-half winner), split into periods and scoring
 * plays laid out over the game's real time, and Kalshi's live-data `details` of it at any moment:
 * scheduled before the start, moving while it runs, final after it.
 */
import { Random } from "../demo/random.js";
import type { SimulatedEvent, SimulatedMarket } from "./exchange.js";
import { impliedCdf, quantileOf } from "./forecast.js";
import { type GameSubject, type Milestone, outcomeOf, type Side } from "./milestones.js";
import { reachable, type SportRules } from "./sport-rules.js";

type Outcome = Side | "tie";
const OUTCOMES: readonly Outcome[] = ["home", "away", "tie"];

/** A stretch of play: a period (a half-inning in baseball), in Unix seconds. */
interface Segment {
  /** Period (inning) number, from 1. */
  period: number;
  /** Baseball: 1 for the top of the inning (the visitors bat), 2 for the bottom. */
  inningHalf: 1 | 2 | null;
  start: number;
  end: number;
  /** Halftime follows this segment. */
  halftimeAfter: boolean;
}

interface Play {
  at: number;
  side: Side;
  points: number;
  segment: number;
}

interface GamePlan {
  home: number;
  away: number;
  segments: Segment[];
  /** In time order. */
  plays: Play[];
}

/** What the settled markets of a game say: the outcomes and first-half leaders allowed, the total's bounds. */
interface Constraints {
  winners: Set<Outcome>;
  halves: Set<Outcome>;
  lo: number;
  hi: number;
}

/** Plans by game, redrawn only when a market of the game settles differently. */
const plans = new WeakMap<GameSubject, { signature: string; plan: GamePlan }>();

/** Kalshi's live data `details` of a game at `now`. */
export function gameDetails(
  milestone: Milestone,
  subject: GameSubject,
  now: number,
): Record<string, unknown> {
  const plan = planOf(milestone, subject);
  const state = stateAt(plan, milestone, now);
  switch (subject.rules.type) {
    case "football_game":
      return footballDetails(milestone, subject, plan, state, now);
    case "baseball_game":
      return baseballDetails(milestone, plan, state, now);
    case "soccer_tournament_multi_leg":
      return soccerDetails(milestone, subject, plan, state);
    default:
      return clockDetails(milestone, subject, plan, state);
  }
}

function planOf(milestone: Milestone, subject: GameSubject): GamePlan {
  const signature = subject.markets.map((m) => m.lifecycle.result).join(",");
  const known = plans.get(subject);
  if (known?.signature === signature) return known.plan;
  const plan = drawPlan(milestone, subject, constraintsOf(subject));
  plans.set(subject, { signature, plan });
  return plan;
}

function constraintsOf(subject: GameSubject): Constraints {
  const winners = new Set<Outcome>(subject.rules.ties ? OUTCOMES : ["home", "away"]);
  const halves = new Set<Outcome>(OUTCOMES);
  const narrow = (allowed: Set<Outcome>, event: SimulatedEvent | undefined) => {
    const before = new Set(allowed);
    for (const market of event?.markets ?? []) {
      const outcome = outcomeOf(subject, market);
      const { result } = market.lifecycle;
      if (!outcome || result === "") continue;
      if (result === "yes") {
        for (const o of OUTCOMES) if (o !== outcome) allowed.delete(o);
      } else {
        allowed.delete(outcome);
      }
    }
    // Contradictory settlements (an operator's doing): fall back to what was allowed before.
    if (allowed.size === 0) for (const o of before) allowed.add(o);
  };
  narrow(winners, subject.winner);
  narrow(halves, subject.half);
  let lo = 0;
  let hi = Number.POSITIVE_INFINITY;
  const strikes = subject.total?.strikes;
  for (const market of subject.total?.markets ?? []) {
    const strike = strikes?.byTicker.get(market.record.ticker);
    const { result } = market.lifecycle;
    if (!strike || result === "") continue;
    // Totals are whole numbers: "over 224.5" is 225 or more.
    if (strike.type === "greater") {
      if (result === "yes") lo = Math.max(lo, Math.floor(strike.floor) + 1);
      else hi = Math.min(hi, Math.floor(strike.floor));
    } else if (strike.type === "less") {
      if (result === "yes") hi = Math.min(hi, Math.ceil(strike.cap) - 1);
      else lo = Math.max(lo, Math.ceil(strike.cap));
    }
  }
  if (lo > hi) [lo, hi] = [0, Number.POSITIVE_INFINITY];
  return { winners, halves, lo, hi };
}

/** A market's belief in YES as the catalogue priced it, or its result once settled. */
function belief(market: SimulatedMarket): number | null {
  const { yesBid, yesAsk, result } = market.record;
  if (yesBid !== null && yesAsk !== null) return (Number(yesBid) + Number(yesAsk)) / 2;
  if (result === "yes") return 1;
  if (result === "no") return 0;
  return null;
}

function drawPlan(milestone: Milestone, subject: GameSubject, c: Constraints): GamePlan {
  const { rules } = subject;
  const rng = new Random(`oddsgate-simulator/game/${milestone.id}`);
  // The outcome: drawn from the market's own beliefs among those the settled markets allow.
  const weights = new Map<Outcome, number>();
  for (const market of subject.winner.markets) {
    const outcome = outcomeOf(subject, market);
    if (outcome) weights.set(outcome, belief(market) ?? 0.5);
  }
  const allowed = OUTCOMES.filter((o) => c.winners.has(o));
  const preferred = allowed[rng.weighted(allowed.map((o) => (weights.get(o) ?? 0) + 0.01))] as Outcome;
  const order = [preferred, ...allowed.filter((o) => o !== preferred)];
  const targetTotal = drawTotal(subject, rng);
  const targetMargin = 1 + Math.abs(rng.normal(0, rules.sd * 1.2));
  const halfShare = [rng.between(0.4, 0.6), rng.between(0.4, 0.6)] as const;
  const cap = Math.max(c.lo, Math.ceil(targetTotal + 10 * rules.sd + 10));
  const hi = Math.min(c.hi, cap);
  const totals = range(c.lo, hi).sort((a, b) => Math.abs(a - targetTotal) - Math.abs(b - targetTotal));
  // The nearest score to the drawn one that every settled market agrees with; the first candidates
  // nearly always do, and the search is bounded for settlements an operator made contradictory.
  for (const halves of [c.halves, new Set(OUTCOMES)]) {
    let tries = 0;
    for (const outcome of order) {
      for (const total of totals) {
        for (const margin of margins(outcome, total, targetMargin)) {
          if (++tries > MAX_TRIES) break;
          const home = (total + margin) / 2;
          const away = (total - margin) / 2;
          if (!reachable(rules, home) || !reachable(rules, away)) continue;
          const half = firstHalf(rules, home, away, halves, halfShare);
          if (half) return layOut(milestone, subject, rng, { home, away }, half);
        }
      }
    }
  }
  const home = Math.max(2, Math.round(rules.teamMean));
  return layOut(milestone, subject, rng, { home, away: home - 2 }, { home: 2, away: 0 });
}

/** Scores tried before settling for a plain one. */
const MAX_TRIES = 5_000;

/** The total drawn from the total-points ladder's beliefs when the game has one, else the sport's level. */
function drawTotal(subject: GameSubject, rng: Random): number {
  const { rules, total } = subject;
  if (total?.strikes) {
    const beliefs = new Map(total.markets.map((m) => [m.record.ticker, belief(m) ?? 0.5]));
    return Math.round(quantileOf(impliedCdf(total.strikes, beliefs), rng.between(0.05, 0.95)));
  }
  return Math.max(0, Math.round(rng.normal(2 * rules.teamMean, rules.sd * 1.4)));
}

const range = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

/** Home-minus-away margins giving `outcome` at `total`, nearest the target size first. */
function margins(outcome: Outcome, total: number, target: number): number[] {
  if (outcome === "tie") return total % 2 === 0 ? [0] : [];
  const sizes = range(1, total)
    .filter((m) => (total - m) % 2 === 0)
    .sort((a, b) => Math.abs(a - target) - Math.abs(b - target));
  return outcome === "home" ? sizes : sizes.map((m) => -m);
}

const leader = (home: number, away: number): Outcome => (home > away ? "home" : away > home ? "away" : "tie");

/** First-half points led by an allowed side, nearest the drawn shares of the final score. */
function firstHalf(
  rules: SportRules,
  home: number,
  away: number,
  allowed: Set<Outcome>,
  share: readonly [number, number],
): { home: number; away: number } | undefined {
  const target = [Math.round(home * share[0]), Math.round(away * share[1])] as const;
  let best: { home: number; away: number } | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (let h = 0; h <= home; h++) {
    if (!reachable(rules, h) || !reachable(rules, home - h)) continue;
    for (let a = 0; a <= away; a++) {
      if (!reachable(rules, a) || !reachable(rules, away - a) || !allowed.has(leader(h, a))) continue;
      const distance = Math.abs(h - target[0]) + Math.abs(a - target[1]);
      if (distance < bestDistance) {
        best = { home: h, away: a };
        bestDistance = distance;
      }
    }
  }
  return best;
}

/** Splits `points` in two reachable parts, the first near `share` of it. */
function splitTwo(rules: SportRules, points: number, share: number): [number, number] {
  const target = Math.round(points * share);
  const firsts = range(0, points).sort((a, b) => Math.abs(a - target) - Math.abs(b - target));
  const first = firsts.find((p) => reachable(rules, p) && reachable(rules, points - p)) ?? points;
  return [first, points - first];
}

/** Periods, segments in real time and scoring plays for a final score and its first half. */
function layOut(
  milestone: Milestone,
  subject: GameSubject,
  rng: Random,
  final: { home: number; away: number },
  half: { home: number; away: number },
): GamePlan {
  const { rules } = subject;
  const periods: { home: number; away: number }[] = [];
  if (rules.halftimeAfter !== null) {
    const perHalf = rules.periods / 2;
    for (const [home, away] of [
      [half.home, half.away],
      [final.home - half.home, final.away - half.away],
    ] as const) {
      if (perHalf === 1) periods.push({ home, away });
      else {
        const shares = [rng.between(0.35, 0.65), rng.between(0.35, 0.65)] as const;
        const [h1, h2] = splitTwo(rules, home, shares[0]);
        const [a1, a2] = splitTwo(rules, away, shares[1]);
        periods.push({ home: h1, away: a1 }, { home: h2, away: a2 });
      }
    }
  } else {
    for (let i = 0; i < rules.periods; i++) periods.push({ home: 0, away: 0 });
    for (const side of ["home", "away"] as const) {
      for (let point = 0; point < final[side]; point++) {
        (periods[rng.int(0, rules.periods - 1)] as { home: number; away: number })[side] += 1;
      }
    }
  }

  const segments = timeline(milestone, rules);
  const plays: Play[] = [];
  segments.forEach((segment, index) => {
    const scores = periods[segment.period - 1] as { home: number; away: number };
    // Baseball's visitors bat in the top of the inning, its hosts in the bottom.
    const sides: Side[] =
      segment.inningHalf === 1 ? ["away"] : segment.inningHalf === 2 ? ["home"] : ["home", "away"];
    for (const side of sides) {
      for (const points of playsOf(rules, scores[side], rng)) {
        const at = Math.floor(segment.start + rng.between(0.02, 0.98) * (segment.end - segment.start));
        plays.push({ at, side, points, segment: index });
      }
    }
  });
  plays.sort((a, b) => a.at - b.at || (a.side < b.side ? -1 : 1));
  return { ...final, segments, plays };
}

/** The scoring plays that make up `points` in the sport. */
function playsOf(rules: SportRules, points: number, rng: Random): number[] {
  const plays: number[] = [];
  let left = points;
  while (left > 0) {
    let play = 1;
    if (rules.scoring === "basketball") {
      const roll = rng.next();
      play = left >= 3 && roll < 0.3 ? 3 : left >= 2 && roll < 0.9 ? 2 : 1;
    } else if (rules.scoring === "football") {
      // Touchdowns with the kick, field goals, now and then a missed kick, a two-point try or a safety.
      const options = ([7, 3, 6, 8, 2] as const).filter((p) => p <= left && left - p !== 1);
      const weights = options.map((p) => ({ 7: 0.55, 3: 0.3, 6: 0.05, 8: 0.07, 2: 0.03 })[p]);
      play = options[rng.weighted(weights)] ?? left;
    }
    plays.push(play);
    left -= play;
  }
  return rng.shuffle(plays);
}

/** The game's periods laid over [start, end]: equal periods, short breaks between, a longer halftime. */
function timeline(milestone: Milestone, rules: SportRules): Segment[] {
  const baseball = rules.periodSeconds === null;
  const count = baseball ? rules.periods * 2 : rules.periods;
  const gap = baseball ? 0.05 : 0.04;
  const halftime = rules.halftimeAfter === null ? 0 : rules.periods === 2 ? 0.33 : 0.3;
  const units = count + (count - 1) * gap + (halftime > 0 ? halftime - gap : 0);
  const unit = (milestone.end - milestone.start) / units;
  const segments: Segment[] = [];
  let at = milestone.start;
  for (let i = 0; i < count; i++) {
    const period = baseball ? Math.floor(i / 2) + 1 : i + 1;
    const halftimeAfter = !baseball && rules.halftimeAfter === i + 1;
    const end = i === count - 1 ? milestone.end : at + unit;
    segments.push({
      period,
      inningHalf: baseball ? (((i % 2) + 1) as 1 | 2) : null,
      start: at,
      end,
      halftimeAfter,
    });
    at = end + unit * (halftimeAfter ? halftime : gap);
  }
  return segments.map((s) => ({ ...s, start: Math.round(s.start), end: Math.round(s.end) }));
}

type Phase = "pre" | "live" | "break" | "halftime" | "final";

interface GameState {
  phase: Phase;
  /** The segment being played, or the last one played during a break. */
  segment: Segment | undefined;
  /** How far through its segment play is, 0–1. */
  progress: number;
  home: number;
  away: number;
  lastPlay: Play | undefined;
}

function stateAt(plan: GamePlan, milestone: Milestone, now: number): GameState {
  if (now < milestone.start) {
    return { phase: "pre", segment: undefined, progress: 0, home: 0, away: 0, lastPlay: undefined };
  }
  let home = 0;
  let away = 0;
  let lastPlay: Play | undefined;
  for (const play of plan.plays) {
    if (play.at > now) break;
    if (play.side === "home") home += play.points;
    else away += play.points;
    lastPlay = play;
  }
  if (now >= milestone.end) {
    return { phase: "final", segment: plan.segments.at(-1), progress: 1, home, away, lastPlay };
  }
  let segment: Segment | undefined;
  for (const s of plan.segments) {
    if (s.start > now) break;
    segment = s;
  }
  const current = segment as Segment;
  if (now < current.end) {
    const progress = (now - current.start) / (current.end - current.start);
    return { phase: "live", segment: current, progress, home, away, lastPlay };
  }
  return {
    phase: current.halftimeAfter ? "halftime" : "break",
    segment: current,
    progress: 1,
    home,
    away,
    lastPlay,
  };
}

/** Sportradar's game status words, which Kalshi passes on. */
function statusOf(phase: Phase): string {
  return phase === "pre"
    ? "scheduled"
    : phase === "final"
      ? "closed"
      : phase === "halftime"
        ? "halftime"
        : "inprogress";
}

const widgetStatus = (phase: Phase) => (phase === "pre" ? "pre" : phase === "final" ? "finished" : "live");

/** "MM:SS" of the game clock left in the period. */
function clockLeft(rules: SportRules, state: GameState): string {
  const total = rules.periodSeconds ?? 0;
  const left =
    state.phase === "live"
      ? Math.max(0, Math.ceil(total * (1 - state.progress)))
      : state.phase === "pre"
        ? total
        : 0;
  return `${String(Math.floor(left / 60)).padStart(2, "0")}:${String(left % 60).padStart(2, "0")}`;
}

/** What a scoring play of so many points is called, per way of scoring. */
const PLAY_NAMES: Record<string, Record<number, string>> = {
  basketball_game: { 1: "free throw made", 2: "two-point shot made", 3: "three-point shot made" },
  football_game: {
    2: "safety",
    3: "field goal is good",
    6: "touchdown, extra point missed",
    7: "touchdown, extra point good",
    8: "touchdown, two-point conversion good",
  },
  baseball_game: { 1: "run scores" },
};

function lastPlayOf(
  subject: GameSubject,
  state: GameState,
): { description: string; occurence_ts: number } | null {
  const play = state.lastPlay;
  if (!play) return null;
  const what = PLAY_NAMES[subject.rules.type]?.[play.points] ?? "goal";
  // `occurence_ts` is Kalshi's spelling.
  return { description: `${subject[play.side].name}: ${what}`, occurence_ts: play.at };
}

function common(milestone: Milestone, state: GameState): Record<string, unknown> {
  return {
    status: statusOf(state.phase),
    widget_status: widgetStatus(state.phase),
    start_ts: milestone.start,
    home_points: state.home,
    away_points: state.away,
  };
}

/** Basketball and hockey: periods with a running clock. */
function clockDetails(
  milestone: Milestone,
  subject: GameSubject,
  plan: GamePlan,
  state: GameState,
): Record<string, unknown> {
  const basketball = subject.rules.type === "basketball_game";
  return {
    ...common(milestone, state),
    period: state.segment?.period ?? 0,
    period_type: basketball ? "quarter" : "period",
    period_remaining_time: clockLeft(subject.rules, state),
    ...(basketball
      ? { possession: state.phase === "live" ? (state.lastPlay?.side === "home" ? "away" : "home") : null }
      : { home_strength: "even", away_strength: "even" }),
    period_scores: periodScores(plan, state),
    winner: state.phase === "final" ? leader(plan.home, plan.away) : null,
    last_play: lastPlayOf(subject, state),
  };
}

function footballDetails(
  milestone: Milestone,
  subject: GameSubject,
  plan: GamePlan,
  state: GameState,
  now: number,
): Record<string, unknown> {
  let situation: Record<string, unknown> | null = null;
  if (state.phase === "live") {
    // A fresh down and distance every minute of play, seeded by the minute.
    const rng = new Random(`oddsgate-simulator/situation/${milestone.id}/${Math.floor(now / 60)}`);
    const offence = rng.chance(0.5) ? subject.home : subject.away;
    const yardline = rng.int(1, 50);
    const down = rng.int(1, 4);
    const goalToGo = yardline <= 10 && rng.chance(0.5);
    situation = {
      possession_team_id: offence.id,
      down,
      yfd: goalToGo ? yardline : rng.int(1, 10),
      yardline,
      side_team_id: (rng.chance(0.5) ? subject.home : subject.away).id,
      goal_to_go: goalToGo,
    };
  }
  return {
    ...common(milestone, state),
    quarter: state.segment?.period ?? 0,
    clock: clockLeft(subject.rules, state),
    situation,
    is_under_review: false,
    period_scores: periodScores(plan, state),
    winner: state.phase === "final" ? leader(plan.home, plan.away) : null,
    last_play: lastPlayOf(subject, state),
  };
}

function baseballDetails(
  milestone: Milestone,
  plan: GamePlan,
  state: GameState,
  now: number,
): Record<string, unknown> {
  const segment = state.segment;
  const outs =
    state.phase === "live" ? Math.min(2, Math.floor(state.progress * 3)) : state.phase === "pre" ? 0 : 3;
  return {
    ...common(milestone, state),
    inning: segment?.period ?? 0,
    inning_half: segment?.inningHalf ?? 1,
    outs,
    period_scores: periodScores(plan, state),
    winner: state.phase === "final" ? leader(plan.home, plan.away) : null,
    last_updated_ts: now,
  };
}

/** Sportradar's match clock label: "35'", "45+2'", "90+3'". */
function minuteLabel(segment: Segment, progress: number): string {
  const base = (segment.period - 1) * 45;
  const minute = Math.floor(progress * 48) + 1;
  return minute <= 45 ? `${base + minute}'` : `${base + 45}+${minute - 45}'`;
}

function soccerDetails(
  milestone: Milestone,
  subject: GameSubject,
  plan: GamePlan,
  state: GameState,
): Record<string, unknown> {
  const words = {
    pre: ["not_started", "not_started", "", "Not started"],
    live: [
      "live",
      state.segment?.period === 1 ? "1st_half" : "2nd_half",
      state.segment?.period === 1 ? "1st" : "2nd",
      state.segment?.period === 1 ? "1st half" : "2nd half",
    ],
    break: ["live", "2nd_half", "2nd", "2nd half"],
    halftime: ["live", "halftime", "HT", "Half-Time"],
    final: ["closed", "ended", "FT", "Full-Time"],
  }[state.phase];
  const events = (side: Side) =>
    plan.plays
      .filter((p) => p.side === side && state.lastPlay !== undefined && p.at <= state.lastPlay.at)
      .map((p) => {
        const segment = plan.segments[p.segment] as Segment;
        return {
          event_type: "score_change",
          time: minuteLabel(segment, (p.at - segment.start) / (segment.end - segment.start)),
        };
      });
  const winner = leader(plan.home, plan.away);
  return {
    status: words[0],
    match_status: words[1],
    half: words[2],
    status_text: words[3],
    time:
      state.phase === "live" && state.segment
        ? minuteLabel(state.segment, state.progress)
        : state.phase === "halftime"
          ? "45'"
          : state.phase === "final"
            ? "90'"
            : "",
    start_ts: milestone.start,
    home_same_game_score: state.home,
    away_same_game_score: state.away,
    home_significant_events: events("home"),
    away_significant_events: events("away"),
    period_scores: periodScores(plan, state).map((p) => ({ ...p, type: "regular_period" })),
    winner: state.phase === "final" ? (winner === "tie" ? "draw" : winner) : null,
    last_play: lastPlayOf(subject, state),
  };
}

/** Points per period begun so far: `{number, home_score, away_score}`. */
function periodScores(
  plan: GamePlan,
  state: GameState,
): { number: number; home_score: number; away_score: number }[] {
  if (state.phase === "pre") return [];
  const current = state.segment?.period ?? 0;
  const scores = new Map<number, { number: number; home_score: number; away_score: number }>();
  for (let period = 1; period <= current; period++)
    scores.set(period, { number: period, home_score: 0, away_score: 0 });
  for (const play of plan.plays) {
    if (state.lastPlay === undefined || play.at > state.lastPlay.at) break;
    const entry = scores.get((plan.segments[play.segment] as Segment).period);
    if (!entry) continue;
    if (play.side === "home") entry.home_score += play.points;
    else entry.away_score += play.points;
  }
  return [...scores.values()];
}
