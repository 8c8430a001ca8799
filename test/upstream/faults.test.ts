/**
 * The relay's fault matrix against the simulator's fault controls: whatever the upstream does, the
 * caller gets a clear `{code, msg}` within the time budget, and identical calls reach it once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningSimulator } from "../../src/simulator/index.js";
import { startTestServer, TEST_ANCHOR, type TestServer } from "../support/server.js";

const BUDGET_MS = 600;
let t: TestServer;
let simulator: RunningSimulator;
let path: string;

beforeAll(async () => {
  t = await startTestServer({ settings: { UPSTREAM_TIMEOUT_MS: String(BUDGET_MS) } });
  simulator = t.server.upstream.simulator!;
  // Built now rather than inside the first test's 600 ms budget (generating the demo exchange takes a
  // while on a loaded machine).
  expect(simulator.exchange).toBeDefined();
  const event = (await t.client.listEvents({ seriesTickers: ["KXHIGHNY"], status: "active" })).events[0]!;
  // The range ends now, so every call goes to the upstream (nothing settled to cache).
  const query = new URLSearchParams({
    percentiles: "5000",
    startTs: String(TEST_ANCHOR),
    endTs: String(Math.floor(Date.now() / 1000)),
    periodInterval: "1440",
  });
  path = `/api/v1/event/KXHIGHNY/${event.ticker}/forecast_percentile_history?${query}`;
});
afterEach(() => simulator.faults.clear());
afterAll(async () => t?.stop());

async function call(): Promise<{ status: number; body: { code?: string; msg?: string }; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${t.url}${path}`);
  const body = (await response.json()) as { code?: string; msg?: string };
  return { status: response.status, body, ms: performance.now() - started };
}

describe("relay fault matrix", () => {
  it("answers 200 while the upstream is healthy", async () => {
    expect((await call()).status).toBe(200);
  });

  it("answers 504 upstream_timeout when the upstream hangs, within the budget", async () => {
    simulator.faults.set({ kind: "hang", match: "forecast_percentile_history", times: 1 });
    const answer = await call();
    expect(answer.status).toBe(504);
    expect(answer.body.code).toBe("upstream_timeout");
    expect(answer.body.msg).toContain(`${BUDGET_MS} ms`);
    // The budget's own timeout answered (the 504 naming it), after waiting it out, not at once: a lower
    // bound, which load cannot break. The hung upstream would never have answered.
    expect(answer.ms).toBeGreaterThanOrEqual(BUDGET_MS * 0.9);
  });

  it("answers 504 when the upstream is slower than the budget", async () => {
    simulator.faults.set({
      kind: "latency",
      ms: BUDGET_MS * 3,
      match: "forecast_percentile_history",
      times: 1,
    });
    const answer = await call();
    expect(answer.status).toBe(504);
    expect(answer.body.code).toBe("upstream_timeout");
  });

  it.each([
    ["a 500", { kind: "status", status: 500 }],
    ["a 503", { kind: "status", status: 503 }],
    ["a 429", { kind: "status", status: 429 }],
    ["a garbage body", { kind: "malformed" }],
    ["a connection reset", { kind: "reset" }],
  ] as const)("answers 502 upstream_unavailable for %s", async (_name, fault) => {
    simulator.faults.set({ ...fault, match: "forecast_percentile_history", times: 1 });
    const answer = await call();
    expect(answer.status).toBe(502);
    expect(answer.body.code).toBe("upstream_unavailable");
    expect(Object.keys(answer.body).sort()).toEqual(["code", "msg"]);
    // The next call, with the fault spent, is served again.
    expect((await call()).status).toBe(200);
  });

  it("sends identical concurrent calls to the upstream once", async () => {
    simulator.faults.set({ kind: "latency", ms: 200, match: "forecast_percentile_history" });
    simulator.faults.resetStats();
    const answers = await Promise.all(Array.from({ length: 10 }, () => fetch(`${t.url}${path}`)));
    const bodies = await Promise.all(answers.map((response) => response.text()));
    for (const response of answers) expect(response.status).toBe(200);
    for (const body of bodies) expect(body).toBe(bodies[0]);
    const forwarded = Object.entries(simulator.faults.stats().byPath)
      .filter(([p]) => p.includes("forecast_percentile_history"))
      .reduce((sum, [, n]) => sum + n, 0);
    expect(forwarded).toBe(1);
  });

  it("serves a settled range from its cache without asking the upstream", async () => {
    const settled = path
      .replace(/endTs=\d+/, `endTs=${TEST_ANCHOR - 3_600}`)
      .replace(/startTs=\d+/, `startTs=${TEST_ANCHOR - 86_400}`);
    const first = await fetch(`${t.url}${settled}`);
    expect(first.status).toBe(200);
    const body = await first.text();
    simulator.faults.set({ kind: "status", status: 500, match: "forecast_percentile_history" });
    const second = await fetch(`${t.url}${settled}`);
    expect(second.status).toBe(200);
    expect(await second.text()).toBe(body);
  });
});
