/**
 * `oddsgate markets`, `buy` and `sell`: prediction markets by ticker, through the running venue's
 * HTTP API like any client. `buy TICKER yes 10` spends 10 USDC on YES contracts and waits for the
 * fill; `sell TICKER yes 3` sells 3 contracts, or redeems them once the market is determined.
 */
import type { Command } from "commander";
import type { Market } from "../contract/markets.js";
import {
  type Cli,
  CliError,
  chainFrom,
  configFrom,
  failingAsMessages,
  printJson,
  venueFailure,
  venueSeedFrom,
  withSettings,
} from "./support.js";
import { TRADE_SETTINGS, tradeRequest } from "./trading.js";

const STATUSES = ["initialized", "active", "inactive", "closed", "determined", "finalized"] as const;
const SETTLED = new Set<Market["status"]>(["determined", "finalized"]);
/** The settlement mint buys pay with and sales are paid in: the USDC rail. */
const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

/** Adds `markets`, `buy` and `sell`. */
export function registerMarketsCommands(program: Command, cli: Cli): void {
  withSettings(
    program
      .command("markets")
      .argument("[words...]", "search words: every one must match the event, series or market")
      .option("--status <status>", `only markets in this status (${STATUSES.join(", ")}, or any)`, "active")
      .option("--limit <n>", "at most this many markets (1-200)", "20")
      .option("--api-key <key>", "x-api-key for a production venue (or ODDSGATE_API_KEY)")
      .option("--json", "print the markets as the API returns them")
      .description("browse and search the running venue's markets: ticker, status, prices, title"),
    ["HOST", "PORT", "MARKETS_PORT"],
  ).action(
    failingAsMessages(async (words: string[], options) => {
      const config = configFrom(cli, options);
      const limit = Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200)
        throw new CliError("--limit must be a whole number from 1 to 200");
      const status = options.status as string;
      if (status !== "any" && !(STATUSES as readonly string[]).includes(status))
        throw new CliError(`--status must be one of ${STATUSES.join(", ")} or any, got ${status}`);
      const request = tradeRequest(cli, config, options);
      const client = await marketsClient(request);
      const wanted = status === "any" ? undefined : (status as Market["status"]);
      let markets: Market[];
      try {
        if (words.length === 0) {
          const page = await client.listMarkets({
            limit,
            sort: "volume",
            order: "desc",
            ...(wanted ? { status: wanted } : {}),
          });
          markets = page.markets;
        } else {
          const page = await client.search(words.join(" "), { withNestedMarkets: true, limit: 200 });
          markets = page.events
            .flatMap((event) => event.markets ?? [])
            .filter((market) => !wanted || market.status === wanted)
            .slice(0, limit);
        }
      } catch (error) {
        throw venueFailure(request.marketsUrl, error, request.apiKey);
      }
      if (options.json) return printJson(cli, markets);
      if (markets.length === 0) {
        cli.console.log(
          `no ${wanted ?? ""} markets${words.length > 0 ? ` match "${words.join(" ")}"` : ""}`.replace(
            "  ",
            " ",
          ),
        );
        return;
      }
      for (const market of markets) cli.console.log(describeMarket(market));
    }),
  );

  for (const side of ["buy", "sell"] as const) {
    withSettings(
      program
        .command(side)
        .argument("<ticker>", "the market's ticker (find one with `oddsgate markets WORDS`)")
        .argument("<outcome>", "yes or no")
        .argument(
          "<amount>",
          side === "buy" ? "USDC to spend, e.g. 10 or 2.5" : "contracts to sell (or redeem), e.g. 3",
        )
        .argument("[wallet]", "the wallet (name in DATA_DIR/wallets) that signs and pays", "default")
        .option("--slippage-bps <bps>", "allowed slippage in basis points (default: auto)")
        .option("--api-key <key>", "x-api-key for a production venue (or ODDSGATE_API_KEY)")
        .option("--json", "print the order, its fill and the balances as JSON")
        .description(
          side === "buy"
            ? "buy YES or NO contracts of a market with USDC, wait for the fill, print contracts, average price and fees"
            : "sell YES or NO contracts of a market for USDC (a determined market: redeem them), wait for the fill",
        ),
      TRADE_SETTINGS,
    ).action(
      failingAsMessages(async (ticker: string, outcome: string, amount: string, name: string, options) => {
        const config = configFrom(cli, options);
        const which = outcome.toLowerCase();
        if (which !== "yes" && which !== "no")
          throw new CliError(`outcome must be yes or no, got ${outcome}`);
        const request = tradeRequest(cli, config, options);
        const client = await marketsClient(request);
        const market = await client.getMarket(ticker).catch((error: unknown) => {
          if ((error as { code?: string }).code === "market_not_found")
            throw new CliError(`no market ${ticker}: find one with \`oddsgate markets WORDS\``);
          throw venueFailure(request.marketsUrl, error, request.apiKey);
        });
        refuseUntradable(market, side, which);
        const rail = market.accounts[USDC];
        if (!rail) throw new CliError(`market ${market.ticker} has no USDC rail on this venue`);
        const mint = which === "yes" ? rail.yesMint : rail.noMint;
        const [{ describeTrade, tradeCommand, tradeJson }, { walletFile }] = await Promise.all([
          import("./trading-operations.js"),
          import("../chain/wallet.js"),
        ]);
        const outcomeTrade = await tradeCommand({
          ...request,
          venueSeed: await venueSeedFrom(config),
          input: side === "buy" ? "USDC" : mint,
          output: side === "buy" ? mint : "USDC",
          amount,
          // A settled market's outcome mints are not listed among the venue's tokens: 6 decimals.
          inputDecimals: 6,
          walletFile: walletFile(config.DATA_DIR, name),
          chain: await chainFrom(config),
        });
        if (options.json) printJson(cli, tradeJson(outcomeTrade));
        else cli.console.log(describeTrade(outcomeTrade).join("\n"));
      }),
    );
  }
}

async function marketsClient(request: { marketsUrl: string; apiKey?: string }) {
  const { MarketsClient } = await import("../client/markets.js");
  return new MarketsClient({
    baseUrl: request.marketsUrl,
    ...(request.apiKey ? { apiKey: request.apiKey } : {}),
  });
}

/**
 * Refuses, with what to do instead, an order the market's state rules out: buying once it stopped
 * trading, selling while it is neither active nor settled.
 */
function refuseUntradable(market: Market, side: "buy" | "sell", outcome: "yes" | "no"): void {
  if (market.status === "active") return;
  if (SETTLED.has(market.status)) {
    if (side === "sell") return;
    const result = market.result ? ` with result ${market.result}` : "";
    throw new CliError(
      `market ${market.ticker} is ${market.status}${result}: it no longer trades; redeem contracts you hold with \`oddsgate sell ${market.ticker} ${market.result || outcome} CONTRACTS\``,
    );
  }
  throw new CliError(
    `market ${market.ticker} is ${market.status}: it trades only while active (find active ones with \`oddsgate markets WORDS\`)`,
  );
}

/** One line per market: ticker, status, YES bid/ask, title. */
function describeMarket(market: Market): string {
  const price = (value: string | null) => (value === null ? "-" : value.replace(/0{1,2}$/, ""));
  const settled = SETTLED.has(market.status) && market.result ? ` ${market.result}` : "";
  return `${market.ticker}  ${market.status}${settled}  yes ${price(market.yesBid)}/${price(market.yesAsk)}  ${market.title}`;
}
