/**
 * What the MCP tools reach the venue through: the package's own typed clients over one `fetch`, so
 * auth, tiers, rate limits, validation and `{code,msg}` errors are exactly the routes'. Over `/mcp`
 * that fetch runs the same Fastify app in process with the caller's key; `oddsgate mcp --url` gives
 * the global fetch and a remote venue.
 */

import type { Chain } from "../chain/chain.js";
import { ApiTransport, type ClientOptions } from "../client/http.js";
import { MarketsClient } from "../client/markets.js";
import { TradeClient } from "../client/trade.js";
import type { Config } from "../config.js";
import type { OrderStatusResponse } from "../contract/trade.js";
import type { SandboxControls } from "./sandbox.js";

export interface VenueAccess {
  mode: Config["MODE"];
  markets: MarketsClient;
  trade: TradeClient;
  /** GET /order-status for the order opened by `signature`. */
  orderStatus(signature: string): Promise<OrderStatusResponse>;
  /** A JSON document the venue publishes at `path` (/openapi.json, /asyncapi.json...). */
  document(path: string): Promise<unknown>;
  /** The chain the venue trades on: wallets' holdings, and sending what a sandbox wallet signed. */
  chain: Chain;
  /** Sandbox wallets, funding, settling and time travel: development only. */
  sandbox?: SandboxControls;
}

/** The clients of the venue at `client.baseUrl`, seen through `client.fetch` with `client.apiKey`. */
export function venueAccess(
  client: ClientOptions,
  rest: Pick<VenueAccess, "mode" | "chain" | "sandbox">,
): VenueAccess {
  const tradeApi = new ApiTransport(client, "");
  return {
    ...rest,
    markets: new MarketsClient(client),
    trade: new TradeClient(client),
    orderStatus: (signature) => tradeApi.get<OrderStatusResponse>("/order-status", { signature }),
    document: (path) => tradeApi.get(path),
  };
}
