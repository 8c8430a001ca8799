/**
 * The explorer's simulator panel, in development with the embedded simulator only: `/explorer/sim/*` relays
 * a few of the simulator's `/_sim` controls (its status, its clock, a market's lifecycle, faults) from
 * the page's own origin (its CSP allows no other), then syncs the venue's catalogue so the page sees a
 * change at once instead of at the next SYNC_INTERVAL. The simulator validates what it is sent; here
 * only sizes and shapes are bounded.
 */
import { z } from "zod";
import { ApiError } from "../contract/errors.js";
import type { ZodApp } from "./types.js";

/** What the relay needs of the venue: where its simulator listens, and a sync on demand. */
export interface SimulatorControls {
  url: string;
  /** Syncs the catalogue from the simulator now (after any sync in progress). */
  syncNow(): Promise<void>;
}

const BODY_BYTES = 4 * 1024;
const TIMEOUT_MS = 10_000;
const Ticker = z.object({ ticker: z.string().min(1).max(128) });
// The simulator checks the fields (and says what is wrong); the venue bounds the shapes it passes on.
const Change = z.record(z.string(), z.unknown());
const Faults = z.array(z.record(z.string(), z.unknown())).max(20);

/** Registers `GET /explorer/sim/status`, `POST /explorer/sim/clock`, `POST /explorer/sim/markets/:ticker/lifecycle` and `PUT /explorer/sim/faults`. */
export function registerSimRelay(app: ZodApp, controls: SimulatorControls): void {
  const relay = async (method: string, path: string, body?: unknown, sync = false): Promise<unknown> => {
    let answer: Response;
    try {
      answer = await fetch(new URL(path, controls.url), {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch {
      throw new ApiError("upstream_unavailable", "the simulator did not answer");
    }
    const text = await answer.text();
    if (!answer.ok) throw new ApiError("bad_request", `the simulator refused: ${simulatorMessage(text)}`);
    if (sync) await controls.syncNow();
    return text === "" ? {} : JSON.parse(text);
  };
  const limits = { bodyLimit: BODY_BYTES, schema: { hide: true } } as const;
  app.get("/explorer/sim/status", { schema: { hide: true } }, async () => relay("GET", "/_sim/status"));
  app.post("/explorer/sim/clock", { ...limits, schema: { hide: true, body: Change } }, async (request) =>
    relay("POST", "/_sim/clock", request.body, true),
  );
  app.post(
    "/explorer/sim/markets/:ticker/lifecycle",
    { ...limits, schema: { hide: true, params: Ticker, body: Change } },
    async (request) =>
      relay(
        "POST",
        `/_sim/markets/${encodeURIComponent(request.params.ticker)}/lifecycle`,
        request.body,
        true,
      ),
  );
  // An empty list clears the faults.
  app.put("/explorer/sim/faults", { ...limits, schema: { hide: true, body: Faults } }, async (request) =>
    relay("PUT", "/_sim/faults", request.body),
  );
}

// The simulator's `{error: {message, details}}` as one line, else its text, bounded.
function simulatorMessage(text: string): string {
  try {
    const { error } = JSON.parse(text) as { error?: { message?: string; details?: string } };
    if (error?.message) return error.details ? `${error.message}: ${error.details}` : error.message;
  } catch {
    // not JSON: its text, as it came
  }
  return text.slice(0, 200);
}
