/** Prompts for the two common tasks: finding a market mispriced against its forecast, and placing and following an order. */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

function userMessage(text: string) {
  return { messages: [{ role: "user" as const, content: { type: "text" as const, text } }] };
}

/** Registers the prompts. */
export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    "find_mispriced_market",
    {
      title: "Find a market mispriced against its forecast",
      description: "Search a topic's markets and compare their prices with the event's forecast history",
      argsSchema: { topic: z.string().max(200).describe('what to look at, e.g. "high temp NYC" or "CPI"') },
    },
    ({ topic }) =>
      userMessage(
        [
          `Find a prediction market about "${topic}" whose price disagrees with its event's forecast.`,
          "1. search_markets with that query and status active; pick an event with several strike markets.",
          "2. get_event for its markets (each YES price is the market's implied probability), then get_forecast_history for the event (percentiles 1000, 2500, 5000, 7500, 9000).",
          "3. For each market, estimate from the forecast percentiles the probability its YES resolves true, and compare it with yesAsk (to buy YES) and 1 - yesBid (to buy NO).",
          "4. Check depth with get_orderbook and the cost with quote before suggesting a trade. Report the market, your probability, the price and the edge; place nothing.",
        ].join("\n"),
      ),
  );

  server.registerPrompt(
    "place_and_track_order",
    {
      title: "Place and track an order",
      description: "Preview an order, place it once confirmed, and follow it to its fill",
      argsSchema: {
        ticker: z.string().max(128),
        side: z.string().describe("yes or no"),
        usdc: z.string().describe("USDC to spend"),
        wallet: z.string().describe("a wallet address, or in development a sandbox wallet's name"),
      },
    },
    ({ ticker, side, usdc, wallet }) =>
      userMessage(
        [
          `Buy ${side} on ${ticker} for ${usdc} USDC with wallet ${wallet}.`,
          "1. get_market: it must be active. get_positions: the wallet must hold the USDC (in development, sandbox_fund_wallet funds it).",
          "2. place_order without confirm: show me the preview (what it pays, the expected and minimum contracts, average price, fees) and ask me to go ahead.",
          "3. Once I agree, place_order with confirm: true. If it returns a transaction, it must be signed by the wallet and sent; otherwise it returns the signature.",
          "4. get_order_status with the signature until done is true; report the status, contracts filled and USDC spent, then get_positions.",
        ].join("\n"),
      ),
  );
}
