/**
 * The trading tools: quote, place_order (a preview unless confirmed), get_order_status,
 * get_positions and redeem. Orders go through the venue's /order like any client's.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Address } from "@solana/kit";
import { z } from "zod";
import { uiAmountString } from "../../chain/ui-amount.js";
import { walletBalance } from "../../chain/wallet.js";
import { OddsgateApiError } from "../../client/http.js";
import { USDC_MINT } from "../../contract/markets.js";
import { ToolRefusal } from "../error-hints.js";
import {
  Action,
  MAX_ITEMS,
  OrderStatusOutput,
  PlacedOutput,
  PositionsOutput,
  QuoteOutput,
  RedeemOutput,
  Side,
  Ticker,
  UiAmount,
  Wallet,
} from "../schemas.js";
import type { VenueAccess } from "../venue-access.js";
import { defineTool, READ_ONLY } from "./define.js";
import { DECIMALS, describePreview, executeOrder, orderWallet, outcomeMint, quoteOrder } from "./orders.js";

const SlippageBps = z
  .number()
  .int()
  .min(0)
  .max(10_000)
  .optional()
  .describe("default: the venue's auto slippage");
const OrderInput = {
  ticker: Ticker,
  side: Side,
  action: Action.default("buy"),
  amount: UiAmount.describe("buy: USDC to spend; sell: contracts to sell"),
  slippageBps: SlippageBps,
};
const DONE = new Set(["closed", "expired", "failed"]);

/** Registers the trading tools. */
export function registerTradingTools(server: McpServer, venue: VenueAccess): void {
  defineTool(
    server,
    {
      name: "quote",
      title: "Quote an order",
      description:
        "What buying (USDC in) or selling (contracts in) a market's YES or NO would fill at now: the expected and minimum fill, average price, price impact and fees. Sends nothing.",
      input: OrderInput,
      output: QuoteOutput,
      annotations: READ_ONLY,
    },
    async (spec) => {
      const { preview } = await quoteOrder(venue, spec);
      return { text: describePreview(preview), data: { preview } };
    },
  );

  const signing =
    venue.mode === "development"
      ? "A sandbox wallet given by name is signed for and sent here; a wallet address gets the transaction to sign and send itself."
      : "The result carries the venue-signed transaction for the wallet to sign and send itself (this venue holds no one's keys).";
  defineTool(
    server,
    {
      name: "place_order",
      title: "Place an order",
      description: `Buys or sells a market's YES or NO contracts. Without confirm: true it only previews: every cost and the expected fill, nothing sent. ${signing} Follow a sent order with get_order_status until it is closed.`,
      input: {
        ...OrderInput,
        wallet: Wallet,
        confirm: z.boolean().default(false).describe("true: place it"),
      },
      output: PlacedOutput,
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ wallet: named, confirm, ...spec }) => {
      const wallet = orderWallet(venue, named);
      const { order, preview } = await quoteOrder(venue, spec, wallet.address);
      const line = describePreview(preview);
      if (!confirm)
        return {
          text: `PREVIEW (nothing sent): ${line}. Call place_order again with confirm: true to place it.`,
          data: { status: "preview" as const, preview, wallet: wallet.address },
        };
      const placed = await executeOrder(venue, wallet, order);
      const text =
        placed.status === "submitted"
          ? `sent ${placed.signature}: ${line}. Follow it with get_order_status.`
          : `sign the transaction with ${wallet.address} and send it, then follow its signature with get_order_status: ${line}`;
      return { text, data: { ...placed, preview, wallet: wallet.address } };
    },
  );

  defineTool(
    server,
    {
      name: "get_order_status",
      title: "Get an order's status",
      description:
        "A prediction-market order by the signature of its transaction: pending, open, pendingClose, then closed (filled, maybe partly), expired or failed, with its fills and what was returned unused.",
      input: { signature: z.string().min(32).max(128) },
      output: OrderStatusOutput,
      annotations: READ_ONLY,
    },
    async ({ signature }) => {
      try {
        const status = await venue.orderStatus(signature);
        return {
          text: `${signature}: ${status.status}; in ${status.inAmount}, out ${status.outAmount} (base units)`,
          data: { ...status, done: DONE.has(status.status), seenByVenue: true },
        };
      } catch (error) {
        // The venue records an order once its transaction lands: until then it does not know the signature.
        if (!(error instanceof OddsgateApiError && error.status === 404)) throw error;
        return {
          text: `${signature}: not seen by the venue yet; ask again in a second`,
          data: {
            status: "pending" as const,
            inAmount: "0",
            outAmount: "0",
            done: false,
            seenByVenue: false,
          },
        };
      }
    },
  );

  defineTool(
    server,
    {
      name: "get_positions",
      title: "Get a wallet's positions",
      description: `A wallet's SOL, USDC and outcome-token positions (market, side, contracts, whether redeemable now), at most ${MAX_ITEMS}.`,
      input: { wallet: Wallet },
      output: PositionsOutput,
      annotations: READ_ONLY,
    },
    async ({ wallet: named }) => {
      const wallet = orderWallet(venue, named);
      const balance = await walletBalance(venue.chain, wallet.address as Address);
      const held = new Map<string, bigint>();
      for (const token of balance.tokens) held.set(token.mint, (held.get(token.mint) ?? 0n) + token.amount);
      const usdc = uiAmountString(held.get(USDC_MINT) ?? 0n, DECIMALS);
      const candidates = [...held]
        .filter(([mint, amount]) => mint !== USDC_MINT && amount > 0n)
        .map(([m]) => m);
      // The batch skips mints that are no market's (demo tokens); a market a first buy just initialized is found too.
      const shown = candidates.slice(0, MAX_ITEMS);
      const markets = shown.length === 0 ? [] : (await venue.markets.marketsBatch({ mints: shown })).markets;
      const positions = markets.flatMap((market) =>
        (["yes", "no"] as const).flatMap((side) => {
          const mint = outcomeMint(market, side);
          const amount = held.get(mint) ?? 0n;
          if (amount === 0n) return [];
          const settled = market.status === "determined" || market.status === "finalized";
          return [
            {
              ticker: market.ticker,
              side,
              contracts: uiAmountString(amount, DECIMALS),
              mint,
              marketStatus: market.status,
              result: market.result,
              redeemable: settled && market.result === side,
            },
          ];
        }),
      );
      const lines = positions.map(
        (p) =>
          `${p.contracts} ${p.ticker} ${p.side.toUpperCase()} (${p.marketStatus}${p.redeemable ? ", redeemable" : ""})`,
      );
      return {
        text: `${wallet.address}: ${balance.sol} SOL, ${usdc} USDC${lines.length ? `\n${lines.join("\n")}` : "; no positions"}`,
        data: {
          wallet: wallet.address,
          sol: balance.sol,
          usdc,
          positions,
          truncated: candidates.length > shown.length,
        },
      };
    },
  );

  defineTool(
    server,
    {
      name: "redeem",
      title: "Redeem winning contracts",
      description:
        "Once a market is determined, turns the wallet's winning contracts into USDC (1 USDC each): all of them unless `contracts` says how many. Follow it with get_order_status.",
      input: { ticker: Ticker, wallet: Wallet, contracts: UiAmount.optional() },
      output: RedeemOutput,
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ ticker, wallet: named, contracts }) => {
      const wallet = orderWallet(venue, named);
      const market = await venue.markets.getMarket(ticker);
      const settled = market.status === "determined" || market.status === "finalized";
      if (!settled || (market.result !== "yes" && market.result !== "no"))
        throw new ToolRefusal(
          "route_not_found",
          `market ${ticker} is ${market.status}${market.result ? ` with result ${market.result}` : ""}: nothing to redeem yet`,
          "redeem once get_market shows it determined with a yes or no result; before that, sell with place_order",
        );
      const side = market.result;
      const amount = contracts ?? (await heldContracts(venue, wallet.address, outcomeMint(market, side)));
      const { order } = await quoteOrder(venue, { ticker, side, action: "sell", amount }, wallet.address);
      const placed = await executeOrder(venue, wallet, order);
      const expectedUsdc = uiAmountString(BigInt(order.outAmount), DECIMALS);
      const text =
        placed.status === "submitted"
          ? `redeeming ${amount} ${ticker} ${side.toUpperCase()} for ~${expectedUsdc} USDC: sent ${placed.signature}`
          : `sign the transaction with ${wallet.address} and send it to redeem ${amount} ${ticker} ${side.toUpperCase()} for ~${expectedUsdc} USDC`;
      const { lastValidBlockHeight: _height, ...sent } = placed as typeof placed & {
        lastValidBlockHeight?: number;
      };
      return {
        text,
        data: { ...sent, ticker, side, contracts: amount, expectedUsdc, wallet: wallet.address },
      };
    },
  );
}

/** Every contract of `mint` the wallet holds, as a decimal string; refuses when it holds none. */
async function heldContracts(venue: VenueAccess, owner: string, mint: string): Promise<string> {
  const accounts = await venue.chain.getTokenAccountsByOwner(owner as Address, { mint: mint as Address });
  const total = accounts.reduce((sum, account) => sum + account.amount, 0n);
  if (total === 0n)
    throw new ToolRefusal(
      "insufficient_funds",
      `${owner} holds no winning contracts of this market`,
      "check get_positions: only the side the market resolved to pays out",
    );
  return uiAmountString(total, DECIMALS);
}
