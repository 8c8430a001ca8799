/**
 * `oddsgate sim`, in process, against a simulator on loopback: a tester settles, pauses and resumes
 * markets, moves the exchange's clock on and makes its requests fail, and each shows in what the
 * exchange then serves as Kalshi. A production venue's simulator has no such controls.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectUpstream } from "../src/app/connect-upstream.js";
import { parseDuration } from "../src/cli/sim.js";
import { loadConfig } from "../src/config.js";
import { type RunningSimulator, startSimulator } from "../src/simulator/index.js";
import { oddsgate } from "./support/cli.js";
import { miniCatalogue } from "./support/fixtures.js";

let simulator: RunningSimulator;
let env: Record<string, string>;
let active: string[];

const sim = (...args: string[]) => oddsgate(["sim", ...args], env);
const market = async (ticker: string) =>
  (
    (await (await fetch(`${simulator.url}/markets/${ticker}`)).json()) as {
      market: { status: string; result: string };
    }
  ).market;

const cutoff = async () =>
  Date.parse(
    ((await (await fetch(`${simulator.url}/historical/cutoff`)).json()) as { market_settled_ts: string })
      .market_settled_ts,
  ) / 1000;

beforeAll(async () => {
  const catalogue = miniCatalogue();
  simulator = await startSimulator({ catalogue, port: 0 });
  env = { UPSTREAM_URL: simulator.url };
  active = catalogue.events.flatMap((event) =>
    event.markets.filter((m) => m.status === "active").map((m) => m.ticker),
  );
  expect(active.length).toBeGreaterThanOrEqual(2);
});

afterAll(async () => {
  await simulator?.close();
});

describe("oddsgate sim", () => {
  it("settles a market: Kalshi's answer for it is settled with that result, and it cannot be reopened", async () => {
    const ticker = active[0] as string;
    const { stdout } = await sim("settle", ticker, "yes");
    expect(stdout).toContain(`${ticker} settled yes (determined)`);
    expect(await market(ticker)).toMatchObject({ status: "determined", result: "yes" });
    await expect(sim("resume", ticker)).rejects.toMatchObject({
      stderr: expect.stringContaining(`cannot move from determined to active`),
    });
    expect((await market(ticker)).status).toBe("determined");
  });

  it("pauses and resumes a market, and the status lists it while paused", async () => {
    const ticker = active[1] as string;
    await sim("pause", ticker);
    expect((await market(ticker)).status).toBe("inactive");
    const status = JSON.parse((await sim("status", "--json")).stdout) as {
      paused: string[];
      markets: Record<string, number>;
    };
    expect(status.paused).toContain(ticker);
    expect(status.markets.inactive).toBeGreaterThanOrEqual(1);
    expect((await sim("status")).stdout).toContain(`paused: ${ticker}`);
    await sim("resume", ticker);
    expect((await market(ticker)).status).toBe("active");
  });

  it("moves the exchange's clock on, never back", async () => {
    const before = JSON.parse((await sim("status", "--json")).stdout) as { now: number };
    const cutoffBefore = await cutoff();
    const { stdout } = await sim("clock", "+1d12h");
    expect(stdout).toContain("real time +1d12h");
    const after = JSON.parse((await sim("status", "--json")).stdout) as {
      now: number;
      clockOffsetSeconds: number;
    };
    expect(after.clockOffsetSeconds).toBe(36 * 3_600);
    expect(after.now - before.now).toBeGreaterThanOrEqual(36 * 3_600);
    // What the exchange serves follows its clock: Kalshi's historical cutoff moved on by as much.
    expect((await cutoff()) - cutoffBefore).toBeGreaterThanOrEqual(36 * 3_600);
    await expect(sim("clock", "-1h")).rejects.toMatchObject({
      stderr: expect.stringContaining("unknown option '-1h'"),
    });
    await expect(sim("clock", "1 hour")).rejects.toMatchObject({
      stderr: expect.stringContaining("a duration is +"),
    });
    const status = JSON.parse((await sim("status", "--json")).stdout) as { clockOffsetSeconds: number };
    expect(status.clockOffsetSeconds).toBe(36 * 3_600);
  });

  it("makes the next requests fail, then clears the faults", async () => {
    await sim("fault", "status", "503", "--match", "/markets", "--times", "2");
    for (let i = 0; i < 2; i++) expect((await fetch(`${simulator.url}/markets?limit=1`)).status).toBe(503);
    expect((await fetch(`${simulator.url}/markets?limit=1`)).status).toBe(200);
    await sim("fault", "latency", "1");
    expect((await sim("status")).stdout).toContain('"kind":"latency"');
    await sim("fault", "clear");
    expect((await sim("status")).stdout).toContain("faults: none");
    await expect(sim("fault", "status")).rejects.toMatchObject({
      stderr: expect.stringContaining("takes a status code"),
    });
    await expect(sim("fault", "flood")).rejects.toMatchObject({
      stderr: expect.stringContaining("not flood"),
    });
  });

  it("names an unknown market and a missing simulator", async () => {
    await expect(sim("pause", "NO-SUCH-MARKET")).rejects.toMatchObject({
      stderr: expect.stringContaining("no market NO-SUCH-MARKET"),
    });
    await expect(
      oddsgate(["sim", "status"], { SIMULATOR_PORT: "1", HOST: "127.0.0.1" }),
    ).rejects.toMatchObject({
      stderr: expect.stringContaining("no simulator answers at http://127.0.0.1:1"),
    });
  });

  it("reads durations as a person writes them", () => {
    expect(parseDuration("+90s")).toBe(90);
    expect(parseDuration("2h")).toBe(7_200);
    expect(parseDuration("+1w2d3h4m5s")).toBe(604_800 + 2 * 86_400 + 3 * 3_600 + 4 * 60 + 5);
    for (const bad of ["90", "+", "+0s", "+1y", "+-1h", "+1.5h", "+1h 30m"])
      expect(() => parseDuration(bad)).toThrow();
  });
});

describe("a production venue's simulator", () => {
  it("has no controls: `oddsgate sim` says so, and the exchange still answers", async () => {
    const config = loadConfig({}, { MODE: "production", SIMULATOR_PORT: "0" });
    const upstream = await connectUpstream(config, () => miniCatalogue());
    try {
      const origin = new URL(upstream.url).origin;
      const controls = [
        ["GET", "/_sim/status"],
        ["GET", "/_sim/faults"],
        ["POST", "/_sim/clock"],
        ["POST", "/_sim/accounts"],
      ];
      const statusAt = async (base: string, [method, path]: string[]) =>
        (
          await fetch(`${base}${path}`, {
            method: method as string,
            ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}),
          })
        ).status;
      for (const control of controls) {
        expect(await statusAt(new URL(simulator.url).origin, control), control.join(" ")).not.toBe(404);
        expect(await statusAt(origin, control), control.join(" ")).toBe(404);
      }
      expect((await fetch(`${upstream.url}/markets?limit=1`)).status).toBe(200);
      await expect(
        oddsgate(["sim", "settle", active[1] as string, "no"], { UPSTREAM_URL: upstream.url }),
      ).rejects.toMatchObject({
        stderr: expect.stringContaining("has no simulator controls"),
      });
    } finally {
      await upstream.close();
    }
  });
});
