/**
 * README.md's "A short tour", run: each command it shows, against a started venue, answering as the
 * README says. The commands are copied here as the README writes them (the first test checks they are
 * still there, so the two cannot drift apart); curl's requests are made with fetch and jq's filters in
 * code, and the `oddsgate` commands run as `npm run cli` runs them, from the sources.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oddsgate } from "./support/cli.js";
import { freePortRun } from "./support/ports.js";
import { startTestServer, type TestServer } from "./support/server.js";

const README_HOST = "http://127.0.0.1:8080";
const tour = fs.readFileSync("README.md", "utf8").split("## A short tour")[1]?.split("\n## ")[0] ?? "";

const CURL = {
  events: `curl -s '${README_HOST}/api/v1/events?limit=2&sort=volume' | jq '.events[].ticker, .cursor'`,
  search: `curl -s '${README_HOST}/api/v1/search?q=high+temp+NYC&limit=1' | jq '.events[0].ticker'`,
  series: `curl -s '${README_HOST}/api/v1/series/KXHIGHNY' | jq`,
  notFound: `curl -si '${README_HOST}/api/v1/event/NOPE'`,
  event: `EVENT=$(curl -s '${README_HOST}/api/v1/events?seriesTickers=KXHIGHNY&status=active&limit=1' | jq -r '.events[0].ticker')`,
  market: `MARKET=$(curl -s "${README_HOST}/api/v1/event/$EVENT?withNestedMarkets=true" | jq -r '.markets[0].ticker')`,
  orderbook: `curl -s "${README_HOST}/api/v1/orderbook/$MARKET" | jq`,
  order: `curl -s "${README_HOST}/order?inputMint=$SOL&outputMint=$USDC&amount=1000000000" | jq`,
};
const MINTS =
  "USDC=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v; SOL=So11111111111111111111111111111111111111112";
const CLI = {
  fund: "npm run cli -- wallet new && npm run cli -- wallet airdrop 2 && npm run cli -- wallet faucet USDC 100",
  markets: "npm run cli -- markets chicago high",
  buy: "npm run cli -- buy KXHIGHCHI-26DEC03-B47.5 yes 5",
  sell: "npm run cli -- sell KXHIGHCHI-26DEC03-B47.5 yes 2",
  trade: "npm run cli -- trade USDC dBTC 50",
  reset: "npm run cli -- reset",
};
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const SOL = "So11111111111111111111111111111111111111112";

let venue: TestServer;
let cli: Record<string, string>;

beforeAll(async () => {
  // The sandbox's JSON-RPC and PubSub (RPC_PORT + 1) on ports the CLI is told, as `serve` would use;
  // the demo's pools, as `npm start` makes them.
  const rpcPort = await freePortRun(2);
  venue = await startTestServer({ settings: { RPC_PORT: String(rpcPort), DEMO_CATALOGUE: "true" } });
  cli = {
    DATA_DIR: venue.settings.DATA_DIR as string,
    PORT: new URL(venue.url).port,
    RPC_PORT: String(rpcPort),
  };
}, 120_000);
afterAll(async () => venue?.stop());

const get = async (url: string) => {
  const response = await fetch(url.replace(README_HOST, venue.url));
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

describe("the README's tour", () => {
  it("shows these commands", () => {
    for (const command of [...Object.values(CURL), MINTS]) expect(tour).toContain(command);
    for (const command of Object.values(CLI))
      expect(tour).toMatch(new RegExp(`^${escapeRegExp(command)}\\s`, "m"));
  });

  it("answers the data API's commands as the README says", async () => {
    const events = await get(`${README_HOST}/api/v1/events?limit=2&sort=volume`);
    const list = events.body.events as { ticker: string }[];
    expect(list.map((event) => event.ticker)).toHaveLength(2);
    expect(events.body.cursor).toEqual(expect.any(Number));

    const search = await get(`${README_HOST}/api/v1/search?q=high+temp+NYC&limit=1`);
    expect((search.body.events as { ticker: string }[])[0]?.ticker).toMatch(/^KXHIGHNY-/);

    const series = await get(`${README_HOST}/api/v1/series/KXHIGHNY`);
    expect(series.body).toMatchObject({ ticker: "KXHIGHNY" });

    const missing = await get(`${README_HOST}/api/v1/event/NOPE`);
    expect(missing).toEqual({ status: 404, body: { code: "event_not_found", msg: expect.any(String) } });
  });

  it("relays an active event's order book from the upstream", async () => {
    const active = await get(`${README_HOST}/api/v1/events?seriesTickers=KXHIGHNY&status=active&limit=1`);
    const event = (active.body.events as { ticker: string }[])[0]?.ticker;
    expect(event).toMatch(/^KXHIGHNY-/);
    const nested = await get(`${README_HOST}/api/v1/event/${event}?withNestedMarkets=true`);
    const market = (nested.body.markets as { ticker: string }[])[0]?.ticker;
    expect(market).toMatch(new RegExp(`^${escapeRegExp(event as string)}-`));
    const book = await get(`${README_HOST}/api/v1/orderbook/${market}`);
    expect(book.status, JSON.stringify(book.body)).toBe(200);
  });

  it("quotes 1 SOL for USDC on the trade API", async () => {
    const order = await get(`${README_HOST}/order?inputMint=${SOL}&outputMint=${USDC}&amount=1000000000`);
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    expect(order.body).toMatchObject({ inputMint: SOL, outputMint: USDC, inAmount: "1000000000" });
    expect(Number(order.body.outAmount)).toBeGreaterThan(0);
    // Quote only: no wallet was given, so no transaction to sign.
    expect(order.body.transaction).toBeUndefined();
  });

  it("funds a wallet, buys and sells a market `markets` lists, trades, and asks before a reset", async () => {
    const run = async (command: string) => (await oddsgate(argsOf(command), cli)).stdout;
    const [create, airdrop, faucet] = CLI.fund.split(" && ");
    const created = await run(create as string);
    const address = /([1-9A-HJ-NP-Za-km-z]{32,44})/.exec(created)?.[1];
    expect(address, created).toBeDefined();
    expect(await run(airdrop as string)).toContain(`to ${address}`);
    expect(await run(faucet as string)).toContain("granted 100 USDC");

    // A line is `TICKER  STATUS  yes BID/ASK  TITLE`: an active market neither near 0 nor near 1.
    const listed = await run(CLI.markets);
    const lines = [
      ...listed.matchAll(/^(KXHIGHCHI-\d{2}[A-Z]{3}\d{2}-[BT][\d.]+) {2}active {2}yes \S+\/(0\.\d+) /gm),
    ];
    const ticker = lines.find(([, , ask]) => Number(ask) > 0.2 && Number(ask) < 0.8)?.[1];
    expect(ticker, listed).toBeDefined();
    const onListed = (command: string) => command.replace("KXHIGHCHI-26DEC03-B47.5", ticker as string);
    const bought = await run(onListed(CLI.buy));
    const fill = /^filled \(closed\): bought (\d+) \S+ YES contracts? at an average [\d.]+ USDC/m.exec(
      bought,
    );
    expect(fill, bought).not.toBeNull();
    expect(Number(fill?.[1])).toBeGreaterThanOrEqual(2);
    expect(await run(onListed(CLI.sell))).toMatch(/^filled \(closed\): sold 2 /m);

    expect(await run(CLI.trade)).toMatch(/^landed: \w{64,88}$/m);

    const reset = await oddsgate(argsOf(CLI.reset), cli).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(reset).toMatchObject({ code: 1, stderr: expect.stringContaining("--yes") });
  }, 300_000);
});

/** The `oddsgate` arguments of `npm run cli -- ARGS`. */
function argsOf(command: string): string[] {
  return command.replace(/^npm run cli -- /, "").split(/\s+/);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
