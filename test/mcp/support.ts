/** Driving the MCP server with the SDK's own client: connecting, calling tools, following an order. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";

/** A connected client over `transport`, its tools listed (so their output schemas are checked). */
export async function connectClient(transport: Transport): Promise<Client> {
  const client = new Client({ name: "oddsgate-test", version: "1.0.0" });
  await client.connect(transport);
  await client.listTools();
  return client;
}

/** Calls a tool that must succeed; returns its structured result. */
export async function callOk<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  expect(result.content[0]?.type).toBe("text");
  return result.structuredContent as T;
}

/** Calls a tool that must fail; returns its `{code, msg, hint}`. */
export async function callFailing(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ code: string; msg: string; hint: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError).toBe(true);
  const first = result.content[0];
  return JSON.parse(first?.type === "text" ? first.text : "{}");
}

/** The text of the resource at `uri`. */
export async function resourceText(client: Client, uri: string): Promise<string> {
  const [first] = (await client.readResource({ uri })).contents;
  return first && "text" in first ? first.text : "";
}

/** Asks get_order_status until the order is done; returns its last status. */
export async function followOrder(client: Client, signature: string): Promise<Record<string, unknown>> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    const status = await callOk(client, "get_order_status", { signature });
    if (status.done) return status;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`order ${signature} was not done within 30 s`);
}

export const TOOLS = [
  "search_markets",
  "get_event",
  "get_market",
  "get_forecast_history",
  "get_orderbook",
  "get_trades",
  "quote",
  "place_order",
  "get_order_status",
  "get_positions",
  "redeem",
];
export const SANDBOX_TOOLS = ["sandbox_fund_wallet", "sandbox_settle_market", "sandbox_time_travel"];

export interface MarketSummary {
  ticker: string;
  eventTicker: string;
  status: string;
  yesAsk: string | null;
  yesBid: string | null;
}

/**
 * An agent's round trip on a development venue: search, read an event and its forecast, fund a
 * sandbox wallet, preview then confirm a buy, follow it to closed, settle the market with the
 * sandbox tool, redeem, and see the position and USDC change.
 */
export async function exploreTradeSettleRedeem(client: Client): Promise<void> {
  const searched = await callOk<{ markets: MarketSummary[] }>(client, "search_markets", {
    query: "high temp",
  });
  expect(searched.markets.length).toBeGreaterThan(0);
  // A temperature market (its event has a numeric forecast) priced well inside 0-1, paging by volume.
  let market: MarketSummary | undefined;
  let cursor: number | null | undefined;
  for (let page = 0; page < 10 && !market && cursor !== null; page++) {
    const found: { markets: MarketSummary[]; cursor: number | null } = await callOk(
      client,
      "search_markets",
      {
        status: "active",
        limit: 50,
        ...(cursor ? { cursor } : {}),
      },
    );
    market = found.markets.find(
      (m) => m.ticker.startsWith("KXHIGH") && Number(m.yesAsk ?? 0) > 0.2 && Number(m.yesAsk ?? 1) < 0.8,
    );
    cursor = found.cursor;
  }
  if (!market) throw new Error("no active temperature market priced inside 0.2-0.8");
  const { event, markets } = await callOk<{ event: { seriesTicker: string }; markets: MarketSummary[] }>(
    client,
    "get_event",
    { ticker: market.eventTicker },
  );
  expect(markets.map((m) => m.ticker)).toContain(market.ticker);
  const forecast = await callOk<{ seriesTicker: string; points: unknown[] }>(client, "get_forecast_history", {
    eventTicker: market.eventTicker,
  });
  expect(forecast.seriesTicker).toBe(event.seriesTicker);
  expect(forecast.points.length, JSON.stringify(forecast)).toBeGreaterThan(0);
  await callOk(client, "get_orderbook", { ticker: market.ticker });

  await callOk(client, "sandbox_fund_wallet", { name: "agent", sol: "2", usdc: "50" });
  const before = await callOk<{ usdc: string; positions: unknown[] }>(client, "get_positions", {
    wallet: "agent",
  });
  expect(before).toMatchObject({ usdc: "50", positions: [] });

  const order = { ticker: market.ticker, side: "yes", amount: "5", wallet: "agent" };
  const preview = await callOk<{
    status: string;
    preview: { pay: { amount: string }; receive: { amount: string } };
  }>(client, "place_order", order);
  expect(preview.status).toBe("preview");
  expect(preview.preview.pay.amount).toBe("5");
  expect(Number(preview.preview.receive.amount)).toBeGreaterThan(0);
  // A preview sends nothing.
  expect((await callOk<{ usdc: string }>(client, "get_positions", { wallet: "agent" })).usdc).toBe("50");

  const placed = await callOk<{ status: string; signature: string }>(client, "place_order", {
    ...order,
    confirm: true,
  });
  expect(placed.status).toBe("submitted");
  expect(await followOrder(client, placed.signature)).toMatchObject({ status: "closed" });
  const bought = await callOk<{
    usdc: string;
    positions: { ticker: string; side: string; contracts: string }[];
  }>(client, "get_positions", { wallet: "agent" });
  const position = bought.positions.find((p) => p.ticker === market.ticker && p.side === "yes");
  expect(Number(position?.contracts), JSON.stringify(bought)).toBeGreaterThan(0);
  expect(Number(bought.usdc)).toBeLessThan(50);

  expect(
    await callOk(client, "sandbox_settle_market", { ticker: market.ticker, result: "yes" }),
  ).toMatchObject({
    seenByVenue: true,
  });
  const settled = await callOk<{ market: { status: string; result: string } }>(client, "get_market", {
    ticker: market.ticker,
  });
  expect(settled.market).toMatchObject({ status: "determined", result: "yes" });
  const redeemed = await callOk<{ status: string; signature: string; contracts: string }>(client, "redeem", {
    ticker: market.ticker,
    wallet: "agent",
  });
  expect(redeemed).toMatchObject({ status: "submitted", contracts: position?.contracts });
  expect(await followOrder(client, redeemed.signature)).toMatchObject({ status: "closed" });
  const after = await callOk<{ usdc: string; positions: { ticker: string }[] }>(client, "get_positions", {
    wallet: "agent",
  });
  expect(after.positions.filter((p) => p.ticker === market.ticker)).toEqual([]);
  expect(Number(after.usdc)).toBeCloseTo(Number(bought.usdc) + Number(position?.contracts), 6);
}
