/**
 * How each sport the simulator follows is played: its live-data type (Kalshi's milestone types), its
 * periods and clock, how its points come, and the scoring level its seeded scores are drawn around.
 */

export interface SportRules {
  /** Kalshi's milestone and live-data type. */
  type: string;
  periods: number;
  /** Game-clock seconds of a period; null where play has no clock (baseball). */
  periodSeconds: number | null;
  /** The period after which the teams break for halftime, if the sport has one. */
  halftimeAfter: number | null;
  /** One team's typical final score, and its spread. */
  teamMean: number;
  sd: number;
  /** Whether a game may end level (soccer's draw). */
  ties: boolean;
  /** How points come: one at a time (goals, runs), basketball's 1–3, or football's scores. */
  scoring: "single" | "basketball" | "football";
}

/** Rules by the sport a series names (its `productMetadata.sport`, else its first tag). */
export const SPORT_RULES: Readonly<Record<string, SportRules>> = {
  Basketball: {
    type: "basketball_game",
    periods: 4,
    periodSeconds: 12 * 60,
    halftimeAfter: 2,
    teamMean: 114,
    sd: 11,
    ties: false,
    scoring: "basketball",
  },
  Football: {
    type: "football_game",
    periods: 4,
    periodSeconds: 15 * 60,
    halftimeAfter: 2,
    teamMean: 22.5,
    sd: 9.5,
    ties: false,
    scoring: "football",
  },
  Hockey: {
    type: "hockey_match",
    periods: 3,
    periodSeconds: 20 * 60,
    halftimeAfter: null,
    teamMean: 3.1,
    sd: 1.6,
    ties: false,
    scoring: "single",
  },
  Baseball: {
    type: "baseball_game",
    periods: 9,
    periodSeconds: null,
    halftimeAfter: null,
    teamMean: 4.5,
    sd: 3,
    ties: false,
    scoring: "single",
  },
  Soccer: {
    // Kalshi files league soccer matches under this type too.
    type: "soccer_tournament_multi_leg",
    periods: 2,
    periodSeconds: 45 * 60,
    halftimeAfter: 1,
    teamMean: 1.3,
    sd: 1.1,
    ties: true,
    scoring: "single",
  },
};

/** Whether one side's score over a stretch of play is reachable in the sport (football never scores exactly 1). */
export function reachable(rules: SportRules, points: number): boolean {
  return points >= 0 && !(rules.scoring === "football" && points === 1);
}
