/**
 * Each fault's figures from what the run recorded, and the markdown table they make: answers during
 * the disruption (fault start until the first fully successful round after it), errors by code, time
 * to recover, stream gaps told and untold, and the fate of the intents acknowledged in the phase.
 */
import type { Fate, MissedTrade } from "./audit.js";
import type { Answer, Round, Submission } from "./load.js";
import type { StreamEvent } from "./streams.js";

/** One fault's times (Date.now() ms): the phase runs from `start` to `end`, the fault from `faultStart` to `faultEnd`. */
export interface Phase {
  name: string;
  notes: string[];
  start: number;
  faultStart: number;
  faultEnd: number;
  /** When the first round that started after `faultEnd` and answered everything with 200 started. */
  recoveredAt: number | undefined;
  end: number;
}

export interface PhaseFigures {
  answered: number;
  requests: number;
  /** The slowest answer (or failure) among them. */
  slowestMs: number;
  errors: Map<string, number>;
  recoveryMs: number | undefined;
  gapFrames: number;
  gapClients: number;
  missed: number;
  /** Client×trade pairs the tape says should have arrived in the phase. */
  expected: number;
  unnoticed: number;
  holes: number;
  backwards: number;
  acknowledged: number;
  fates: Map<Fate, number>;
}

/** The first fully successful round that started at or after `from`, if one has ended. */
export function firstGoodRound(rounds: readonly Round[], from: number): Round | undefined {
  return rounds.find((round) => round.startedAt >= from && round.ok);
}

export function figures(
  phase: Phase,
  data: {
    answers: readonly Answer[];
    events: readonly StreamEvent[];
    missed: readonly MissedTrade[];
    expected: readonly { at: number }[];
    submissions: readonly Submission[];
    fates: Map<string, Fate>;
  },
): PhaseFigures {
  const until = phase.recoveredAt ?? phase.end;
  const during = data.answers.filter((a) => a.at >= phase.faultStart && a.at < until);
  const errors = new Map<string, number>();
  for (const answer of during.filter((a) => !a.ok)) {
    const key = `${answer.instance} ${answer.code}`;
    errors.set(key, (errors.get(key) ?? 0) + 1);
  }
  const inPhase = <T extends { at: number }>(items: readonly T[]) =>
    items.filter((item) => item.at >= phase.start && item.at < phase.end);
  const events = inPhase(data.events);
  const missed = inPhase(data.missed);
  const gaps = events.filter((e) => e.kind === "gap");
  const holes = events.filter((e) => e.kind === "hole");
  const fates = new Map<Fate, number>();
  let acknowledged = 0;
  for (const submission of inPhase(data.submissions)) {
    const fate = data.fates.get(submission.signature);
    if (submission.acknowledged) acknowledged += 1;
    // Lost or doubled counts whatever the POST answered; the other fates only for acknowledged intents.
    if (!fate || (!submission.acknowledged && fate !== "lost" && fate !== "doubled")) continue;
    fates.set(fate, (fates.get(fate) ?? 0) + 1);
  }
  return {
    answered: during.filter((a) => a.ok).length,
    requests: during.length,
    slowestMs: Math.max(0, ...during.map((a) => a.ms)),
    errors,
    recoveryMs: phase.recoveredAt === undefined ? undefined : phase.recoveredAt - phase.faultEnd,
    gapFrames: gaps.length,
    gapClients: new Set(gaps.map((e) => e.client)).size,
    missed: missed.length,
    expected: inPhase(data.expected).length,
    unnoticed: missed.filter((m) => !m.told).length + holes.reduce((sum, e) => sum + e.size, 0),
    holes: holes.reduce((sum, e) => sum + e.size, 0),
    backwards: events.filter((e) => e.kind === "backwards").length,
    acknowledged,
    fates,
  };
}

/** "A 502 upstream_unavailable ×12, B timeout ×3", most frequent first. */
function errorList(errors: Map<string, number>): string {
  if (errors.size === 0) return "none";
  return [...errors]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([code, count]) => `${code} ×${count}`)
    .join(", ")
    .concat(errors.size > 5 ? `, +${errors.size - 5} more` : "");
}

/** The markdown table: one row per fault. */
export function table(rows: { phase: Phase; figures: PhaseFigures }[]): string {
  const lines = [
    "| fault | answered (fault → recovered), slowest | errors by code | recovery | gap frames (clients) | trades missed / due | unnoticed | intents acked | filled / refunded / expired | lost | filled twice |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const { phase, figures: f } of rows) {
    const pct = f.requests === 0 ? "-" : `${((100 * f.answered) / f.requests).toFixed(0)}%`;
    const recovery = f.recoveryMs === undefined ? "**never**" : `${(f.recoveryMs / 1000).toFixed(1)} s`;
    const fate = (name: Fate) => f.fates.get(name) ?? 0;
    lines.push(
      `| ${phase.name} | ${f.answered}/${f.requests} (${pct}), ${(f.slowestMs / 1000).toFixed(1)} s | ${errorList(f.errors)} | ${recovery} | ${f.gapFrames} (${f.gapClients}) | ${f.missed} / ${f.expected} | ${f.unnoticed} | ${f.acknowledged} | ${fate("filled")} / ${fate("refunded")} / ${fate("expired") + fate("failed")} | ${fate("lost")} | ${fate("doubled")} |`,
    );
  }
  return lines.join("\n");
}
