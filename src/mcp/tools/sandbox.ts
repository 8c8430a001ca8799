/**
 * The development-only tools: sandbox_fund_wallet, sandbox_settle_market and sandbox_time_travel.
 * A production venue never registers them (server.ts), so they are neither listed nor callable.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { SandboxControls } from "../sandbox.js";
import { Side, Ticker, UiAmount } from "../schemas.js";
import type { VenueAccess } from "../venue-access.js";
import { defineTool } from "./define.js";

/** How long settling waits for the venue's catalogue to show the result, and how often it looks. */
const SETTLE_WAIT_MS = 15_000;
const SETTLE_POLL_MS = 100;

const WalletName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "1-64 letters, digits, _ or -")
  .describe("the sandbox wallet's name; created when it does not exist");
const SANDBOX = { destructiveHint: false, openWorldHint: false } as const;

/** Registers the sandbox tools over `sandbox`. */
export function registerSandboxTools(server: McpServer, sandbox: SandboxControls, venue: VenueAccess): void {
  defineTool(
    server,
    {
      name: "sandbox_fund_wallet",
      title: "Fund a sandbox wallet",
      description:
        "Development only: creates the named sandbox wallet if needed and funds it with SOL (for fees) and USDC from the sandbox's faucet. Use its name as `wallet` in the trading tools.",
      input: {
        name: WalletName,
        sol: UiAmount.default("1").describe("SOL to airdrop (at most 1000)"),
        usdc: UiAmount.default("100").describe("USDC to grant"),
      },
      output: {
        name: z.string(),
        address: z.string(),
        created: z.boolean(),
        sol: z.string(),
        usdc: z.string(),
        signatures: z.array(z.string()),
      },
      annotations: SANDBOX,
    },
    async ({ name, sol, usdc }) => {
      const funded = await sandbox.fundWallet(name, { sol, usdc });
      return {
        text: `${funded.created ? "created and funded" : "funded"} ${name} (${funded.address}) with ${sol} SOL and ${usdc} USDC`,
        data: funded,
      };
    },
  );

  defineTool(
    server,
    {
      name: "sandbox_settle_market",
      title: "Settle a market on the simulator",
      description:
        "Development only: determines a market's result on the simulated exchange and syncs the venue, which then stops its trading and opens redemption of the winning side.",
      input: { ticker: Ticker, result: Side },
      output: {
        ticker: z.string(),
        status: z.string(),
        seenByVenue: z
          .boolean()
          .describe("whether the venue's catalogue showed the result before this answered"),
      },
      annotations: { ...SANDBOX, destructiveHint: true },
    },
    async ({ ticker, result }) => {
      const settled = await sandbox.settleMarket(ticker, result);
      const seenByVenue = await venueShowsResult(venue, ticker);
      const next = seenByVenue
        ? `redeem its ${result.toUpperCase()} contracts`
        : "the venue has not shown it yet: check get_market in a few seconds";
      return {
        text: `${settled.ticker} settled ${result} (${settled.status}); ${next}`,
        data: { ...settled, seenByVenue },
      };
    },
  );

  defineTool(
    server,
    {
      name: "sandbox_time_travel",
      title: "Move the sandbox clocks on",
      description:
        "Development only: moves the sandbox chain's clock and the simulated exchange's clock forward (never back) by `seconds`, then syncs the venue.",
      input: {
        seconds: z
          .number()
          .int()
          .min(1)
          .max(366 * 86_400),
      },
      output: { chainUnixTimestamp: z.number().int(), exchangeNow: z.number().int().nullable() },
      annotations: { ...SANDBOX, destructiveHint: true },
    },
    async ({ seconds }) => {
      const moved = await sandbox.timeTravel(seconds);
      return {
        text: `chain clock now ${new Date(moved.chainUnixTimestamp * 1000).toISOString()}${moved.exchangeNow !== null ? `, exchange clock ${new Date(moved.exchangeNow * 1000).toISOString()}` : ""}`,
        data: moved,
      };
    },
  );
}

/** Waits until the venue's catalogue shows the market settled (a sync stores it, the catalogue reloads after). */
async function venueShowsResult(venue: VenueAccess, ticker: string): Promise<boolean> {
  for (const deadline = Date.now() + SETTLE_WAIT_MS; Date.now() < deadline; ) {
    const market = await venue.markets.getMarket(ticker);
    if (market.status === "determined" || market.status === "finalized") return true;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
  }
  return false;
}
