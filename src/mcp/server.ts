/**
 * The MCP server of the agent surface, built from a VenueAccess: the market-data and trading tools,
 * in development the sandbox tools, the resources and the prompts. One per connection (stdio) or per
 * request (stateless streamable HTTP): building it is cheap, and it holds no state of its own.
 */
import fs from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";
import { registerMarketTools } from "./tools/markets.js";
import { registerSandboxTools } from "./tools/sandbox.js";
import { registerTradingTools } from "./tools/trading.js";
import type { VenueAccess } from "./venue-access.js";

const INSTRUCTIONS =
  "Oddsgate is a prediction-market venue. Explore with search_markets, get_event, get_market, get_forecast_history, get_orderbook and get_trades; " +
  "preview an order with quote or place_order (without confirm), place it with confirm: true and follow it with get_order_status; " +
  "get_positions shows a wallet's holdings and redeem pays out a determined market's winning contracts. " +
  "Errors carry the venue's {code,msg} and a hint; the oddsgate://errors resource lists them all.";

/** The package's version: src/mcp/, dist/mcp/ and the bundle's dist/cli/ all sit two levels below its root. */
const VERSION = (
  JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** An MCP server over `venue`, named and versioned as the package. */
export function buildMcpServer(venue: VenueAccess): McpServer {
  const server = new McpServer({ name: "oddsgate", version: VERSION }, { instructions: INSTRUCTIONS });
  registerMarketTools(server, venue);
  registerTradingTools(server, venue);
  if (venue.mode === "development" && venue.sandbox) registerSandboxTools(server, venue.sandbox, venue);
  registerResources(server, venue);
  registerPrompts(server);
  return server;
}
