/**
 * The banner above every view: the venue refusing or not answering this page (rate limit, unreachable,
 * not ready) with when it tries again, and the upstream exchange being unavailable since when (the
 * view's last data then shows greyed). Also the health watch: one read of `/health-check/live` every
 * 30 s while the tab is shown (the Status view asks for 15 s), which is the health witness of the
 * upstream (health.ts) and the report the Status view shows.
 */
import "./banner.css";
import { effect } from "@preact/signals";
import { getHealth } from "./api";
import {
  type HealthReport,
  healthCadenceMs,
  healthReadAt,
  healthReport,
  reportUpstream,
  upstreamDownSince,
  upstreamFailing,
  venueTrouble,
} from "./health";

/** A time of day, to the second, in the reader's locale. */
function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString("en-GB", { hour12: false });
}

/** The banners (none while all is well). */
export function Banner() {
  const trouble = venueTrouble.value;
  const since = upstreamDownSince.value;
  const failing = upstreamFailing.value;
  return (
    <>
      {trouble && (
        <div class="banner" role="alert" data-testid="banner" data-reason={trouble.reason}>
          <strong>
            {trouble.reason === "rate_limited"
              ? "The venue is limiting this page's requests"
              : trouble.reason === "not_ready"
                ? "The venue is not ready yet"
                : trouble.reason === "unreachable"
                  ? `The venue does not answer since ${clock(trouble.since)}`
                  : `The venue fails since ${clock(trouble.since)}`}
          </strong>
          <span>
            Retrying at {clock(trouble.retryAt)}, waiting longer each time; what the page shows stays.
          </span>
          {trouble.reason !== "rate_limited" && trouble.message && (
            <span class="small">({trouble.message})</span>
          )}
        </div>
      )}
      {since !== null && (
        <div class="banner" role="alert" data-testid="upstream-banner">
          <strong>Upstream unavailable since {clock(since)}</strong>
          <span>
            The exchange this venue relays does not answer: the last data received is shown greyed, and
            updates again when it answers.
          </span>
          <span class="small">
            (
            {Object.values(failing)
              .map((entry) => entry.detail)
              .filter(Boolean)
              .join("; ")}
            )
          </span>
        </div>
      )}
    </>
  );
}

const STARTING_MS = 5_000;
const TROUBLE_MS = 5_000;
let timer: ReturnType<typeof setTimeout> | undefined;
let reading = false;
let first = true;

function schedule(ms: number): void {
  clearTimeout(timer);
  timer = setTimeout(() => void readHealth(), ms);
}

/** While the upstream is down, how often its health is read (its recovery shows within this). */
const DOWN_MS = 15_000;

function nextDelay(report: HealthReport | null): number {
  const trouble = venueTrouble.value;
  let delay = healthCadenceMs.value;
  // While the venue refuses or does not answer: when its pause ends (the backoff grows), at most
  // every TROUBLE_MS (the views' own requests retry too).
  if (trouble) return Math.min(delay, Math.max(TROUBLE_MS, trouble.retryAt - Date.now()));
  // While the instance starts, a little sooner (briefly); while the upstream is down, soon enough.
  if (report?.status === "starting") delay = Math.min(delay, STARTING_MS);
  if (upstreamDownSince.value !== null) delay = Math.min(delay, DOWN_MS);
  return delay;
}

/** Reads the health report once (unless hidden or already reading) and schedules the next read. */
export async function readHealth(): Promise<void> {
  if (document.hidden) return; // visibilitychange reads again when the tab is shown
  if (reading) return;
  reading = true;
  let report: HealthReport | null = null;
  try {
    report = await getHealth(first);
    first = false;
    healthReport.value = report;
    healthReadAt.value = Date.now();
    const upstream = report?.parts.upstream;
    if (upstream && !upstream.ok) {
      reportUpstream("health", true, Date.now(), `upstream circuit breaker ${upstream.state}`);
    } else if (upstream) {
      reportUpstream("health", false);
      // The health says it answers now: a relayed answer that failed before this read is history.
      reportUpstream("api", false);
    }
  } catch {
    // The venue's trouble (unreachable, refused) is in the banner already; read again at the cadence.
  } finally {
    reading = false;
    schedule(nextDelay(report));
  }
}

/** Starts the health watch: a read now, then at the cadence while the tab is shown. */
export function startHealthWatch(): void {
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) clearTimeout(timer);
    else void readHealth();
  });
  // A view asking for another cadence gets it from the next read on.
  let previous = healthCadenceMs.value;
  effect(() => {
    const cadence = healthCadenceMs.value;
    if (cadence < previous && !reading) schedule(0);
    previous = cadence;
  });
  void readHealth();
}
