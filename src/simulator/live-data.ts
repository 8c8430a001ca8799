/** Milestones and their live data in Kalshi trade-api v2's JSON, as of a moment. */
import { gameDetails } from "./game-play.js";
import type { Milestone } from "./milestones.js";
import { releaseDetails, weatherDetails } from "./readings.js";

const iso = (seconds: number) => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

const NOTIFICATIONS: Record<Milestone["subject"]["kind"], string> = {
  game: "The game is about to begin.",
  weather: "The day's temperature readings have begun.",
  release: "The figure is about to be released.",
};

/** A milestone as GetMilestones sends it. */
export function kalshiMilestone(milestone: Milestone): Record<string, unknown> {
  return {
    id: milestone.id,
    category: milestone.category,
    type: milestone.type,
    start_date: iso(milestone.start),
    end_date: iso(milestone.end),
    related_event_tickers: milestone.related,
    title: milestone.title,
    notification_message: NOTIFICATIONS[milestone.subject.kind],
    source_id: milestone.sourceId,
    source_ids: { simulator: milestone.sourceId },
    details: milestone.details,
    primary_event_tickers: milestone.primary,
    last_updated_ts: iso(milestone.updated),
  };
}

/** A milestone's live data at `now`, as GetLiveData sends it. */
export function kalshiLiveData(milestone: Milestone, now: number): Record<string, unknown> {
  const { subject } = milestone;
  const details =
    subject.kind === "game"
      ? gameDetails(milestone, subject, now)
      : subject.kind === "weather"
        ? weatherDetails(milestone, subject, now)
        : releaseDetails(milestone, subject, now);
  return { type: milestone.type, details, milestone_id: milestone.id };
}
