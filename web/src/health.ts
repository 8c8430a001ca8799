/**
 * What the page knows about the venue's and the upstream's health, from three witnesses: the
 * streams' `stale`/`recovered` frames, the health report (`/health-check/live`, polled by the
 * banner), and relayed answers that failed (`upstream_unavailable`, `upstream_timeout`). The header's
 * badge, the banner and the greying of the last data all read these signals; nothing here fetches.
 */
import { computed, signal } from "@preact/signals";

/** Who says the upstream is failing. */
export type Witness = "stream" | "health" | "api";

/** Since when each witness has said the upstream fails (ms since the epoch), and its words. */
export const upstreamFailing = signal<Partial<Record<Witness, { since: number; detail: string }>>>({});

/** Since when the upstream has been unavailable (the earliest witness), or null while it answers. */
export const upstreamDownSince = computed<number | null>(() => {
  const times = Object.values(upstreamFailing.value).map((entry) => entry.since);
  return times.length ? Math.min(...times) : null;
});

/** A witness says the upstream fails (since `since`, kept from its first word) or answers again. */
export function reportUpstream(witness: Witness, failing: boolean, since = Date.now(), detail = ""): void {
  const current = upstreamFailing.value;
  if (!failing) {
    if (!current[witness]) return;
    const { [witness]: _gone, ...rest } = current;
    upstreamFailing.value = rest;
    return;
  }
  const earlier = current[witness];
  if (earlier && earlier.since <= since && earlier.detail === detail) return;
  upstreamFailing.value = {
    ...current,
    [witness]: { since: earlier ? Math.min(earlier.since, since) : since, detail },
  };
}

/** Why the venue itself does not answer this page at the moment, and when the page tries again. */
export interface VenueTrouble {
  reason: "rate_limited" | "unreachable" | "not_ready" | "failing";
  /** The venue's own words (its `{code,msg}`), or the browser's. */
  message: string;
  since: number;
  /** When the next attempt is due (ms since the epoch). */
  retryAt: number;
}

export const venueTrouble = signal<VenueTrouble | null>(null);

/** The venue answered: whatever kept it from answering is over. */
export function venueAnswered(): void {
  if (venueTrouble.value) venueTrouble.value = null;
}

/** The venue refused or failed to answer; the caller retries at `retryAt`. */
export function venueRefused(reason: VenueTrouble["reason"], message: string, retryAt: number): void {
  const since = venueTrouble.value?.since ?? Date.now();
  venueTrouble.value = { reason, message, since, retryAt };
}

/** The venue's health report, as `/health-check/live` answers it. */
export interface HealthPart {
  ok: boolean;
  required: boolean;
  state: string;
  latencyMs?: number;
  slot?: number;
  loadedAt?: string;
  detail?: string;
}

export interface HealthReport {
  status: string;
  ready: boolean;
  checkedAt?: string;
  parts: Record<string, HealthPart | undefined>;
}

/** The latest health report the page read (null before the first, or from an instance without one). */
export const healthReport = signal<HealthReport | null>(null);
/** When it was read (page time, ms). */
export const healthReadAt = signal<number | null>(null);

/** How often the health report is read while the tab is shown, by the views that ask for more. */
export const healthCadenceMs = signal(30_000);

/**
 * What an empty panel says: `empty` ("Empty book.") while the upstream answers, but not while it is
 * unavailable, when an empty panel means only that nothing came.
 */
export function emptyText(empty: string): string {
  return upstreamDownSince.value === null ? empty : "Nothing received: the upstream is unavailable.";
}
