/**
 * The market-data tools: search_markets, get_event, get_market, get_forecast_history, get_orderbook
 * and get_trades. Lists are bounded (MAX_ITEMS, with a cursor); nothing is cut without saying so.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { Market } from "../../contract/markets.js";
import { MarketStatus } from "../../contract/markets.js";
import {
  EventOutput,
  EventSummary,
  ForecastOutput,
  Limit,
  MarketOutput,
  MarketSummary,
  OrderbookOutput,
  SearchOutput,
  Ticker,
  TradesOutput,
} from "../schemas.js";
import type { VenueAccess } from "../venue-access.js";
import { defineTool, READ_ONLY } from "./define.js";

/** Forecast points kept in one answer (the newest). */
const MAX_FORECAST_POINTS = 200;
const DAY_SECONDS = 86_400;
/** Book levels a side at most. */
const MAX_DEPTH = 50;

/** A market cut to its summary (the schema's keys only). */
function summarize(market: Market): MarketSummary {
  return MarketSummary.parse(market);
}

function priceOf(value: string | null): string {
  return value === null ? "-" : value;
}

/** Registers the market-data tools. */
export function registerMarketTools(server: McpServer, venue: VenueAccess): void {
  defineTool(
    server,
    {
      name: "search_markets",
      title: "Search markets",
      description:
        "Find prediction markets: by words (matching the event, series or market) or, without a query, the busiest by volume. Returns a page of market summaries (ticker, status, YES/NO bid and ask as dollar prices 0-1) and a cursor for the next page.",
      input: {
        query: z.string().max(200).optional().describe('search words, e.g. "high temp NYC"'),
        status: MarketStatus.optional().describe("only markets in this status (default: any)"),
        limit: Limit.default(10).describe(
          "without a query: markets per page; with one: events per page (each with its markets)",
        ),
        cursor: z.number().int().min(0).optional(),
      },
      output: SearchOutput,
      annotations: READ_ONLY,
    },
    async ({ query, status, limit, cursor }) => {
      const page = { limit, ...(cursor !== undefined ? { cursor } : {}) };
      let markets: MarketSummary[];
      let next: number | null;
      if (query) {
        const events = await venue.markets.search(query, { ...page, withNestedMarkets: true });
        markets = events.events
          .flatMap((event) => event.markets ?? [])
          .filter((market) => !status || market.status === status)
          .map(summarize);
        next = events.cursor;
      } else {
        const found = await venue.markets.listMarkets({
          ...page,
          sort: "volume",
          order: "desc",
          ...(status ? { status } : {}),
        });
        markets = found.markets.map(summarize);
        next = found.cursor;
      }
      const lines = markets
        .slice(0, 10)
        .map((m) => `${m.ticker} ${m.status} yes ${priceOf(m.yesBid)}/${priceOf(m.yesAsk)} ${m.title}`);
      const more = markets.length > 10 ? `\n... ${markets.length - 10} more in the structured result` : "";
      const text = `${markets.length} market(s)${next !== null ? `; next page: cursor ${next}` : ""}\n${lines.join("\n")}${more}`;
      return { text, data: { markets, cursor: next } };
    },
  );

  defineTool(
    server,
    {
      name: "get_event",
      title: "Get an event",
      description:
        "An event (what is being forecast, its series and settlement sources) with its markets' summaries.",
      input: { ticker: Ticker.describe("the event's ticker") },
      output: EventOutput,
      annotations: READ_ONLY,
    },
    async ({ ticker }) => {
      const event = await venue.markets.getEvent(ticker, { withNestedMarkets: true });
      const markets = (event.markets ?? []).map(summarize);
      const { markets: _nested, ...fields } = event;
      return {
        text: `${event.ticker} (series ${event.seriesTicker}): ${event.title}; ${markets.length} market(s)`,
        data: { event: EventSummary.parse(fields), markets },
      };
    },
  );

  defineTool(
    server,
    {
      name: "get_market",
      title: "Get a market",
      description:
        "One market in full: prices, status and result, rules (rulesPrimary, rulesSecondary), times, and its on-chain accounts (outcome mints per settlement rail).",
      input: { ticker: Ticker.describe("the market's ticker") },
      output: MarketOutput,
      annotations: READ_ONLY,
    },
    async ({ ticker }) => {
      const market = await venue.markets.getMarket(ticker);
      const result = market.result ? ` result ${market.result}` : "";
      return {
        text: `${market.ticker} ${market.status}${result}: yes ${priceOf(market.yesBid)}/${priceOf(market.yesAsk)}, no ${priceOf(market.noBid)}/${priceOf(market.noAsk)}; ${market.title}`,
        data: { market },
      };
    },
  );

  defineTool(
    server,
    {
      name: "get_forecast_history",
      title: "Get an event's forecast history",
      description:
        "The upstream's numerical forecast of an event over time, at percentiles (basis points: 5000 is the median). Default: the last day, hourly. Compare it with the markets' strikes and prices to judge them.",
      input: {
        eventTicker: Ticker,
        seriesTicker: Ticker.optional().describe("the event's series (default: the event's own)"),
        percentiles: z.array(z.number().int().min(0).max(10_000)).min(1).max(10).default([2500, 5000, 7500]),
        startTs: z.number().int().optional().describe("Unix seconds; default endTs minus a day"),
        endTs: z
          .number()
          .int()
          .optional()
          .describe("Unix seconds; default now, or the event's strike date when earlier"),
        periodInterval: z.union([z.literal(0), z.literal(1), z.literal(60), z.literal(1440)]).default(60),
      },
      output: ForecastOutput,
      annotations: READ_ONLY,
    },
    async (args) => {
      const event = await venue.markets.getEvent(args.eventTicker);
      const seriesTicker = args.seriesTicker ?? event.seriesTicker;
      // By default the day up to now, or up to the event's strike when that is past.
      const now = Math.floor(Date.now() / 1000);
      const endTs = args.endTs ?? Math.min(now, event.strikeDate ?? now);
      const startTs = args.startTs ?? endTs - DAY_SECONDS;
      const history = await venue.markets.forecastHistory(seriesTicker, args.eventTicker, {
        percentiles: args.percentiles,
        startTs,
        endTs,
        periodInterval: args.periodInterval,
      });
      const all = history.forecast_history.map((point) => ({
        endPeriodTs: point.end_period_ts,
        percentiles: point.percentile_points.map((p) => ({
          percentile: p.percentile,
          forecast: p.numerical_forecast,
          formatted: p.formatted_forecast,
        })),
      }));
      const points = all.slice(-MAX_FORECAST_POINTS);
      const last = points.at(-1);
      const latest = last
        ? last.percentiles.map((p) => `p${p.percentile / 100} ${p.formatted}`).join(", ")
        : "no points";
      const cut =
        all.length > points.length
          ? ` (newest ${points.length} of ${all.length}: narrow the range for older)`
          : "";
      return {
        text: `${args.eventTicker}: ${points.length} point(s)${cut}; latest ${latest}`,
        data: {
          eventTicker: args.eventTicker,
          seriesTicker,
          periodInterval: args.periodInterval,
          points,
          truncated: all.length > points.length,
        },
      };
    },
  );

  defineTool(
    server,
    {
      name: "get_orderbook",
      title: "Get a market's order book",
      description:
        "A market's resting bids for YES and for NO (dollar price, contracts), best first, to `depth` levels a side. A NO bid at p is a YES ask at 1-p.",
      input: { ticker: Ticker, depth: z.number().int().min(1).max(MAX_DEPTH).default(10) },
      output: OrderbookOutput,
      annotations: READ_ONLY,
    },
    async ({ ticker, depth }) => {
      const book = await venue.markets.orderbook(ticker);
      const levels = (side: Record<string, number>) =>
        Object.entries(side)
          .map(([price, contracts]) => ({ price, contracts }))
          .sort((a, b) => Number(b.price) - Number(a.price));
      const yes = levels(book.yes_bids);
      const no = levels(book.no_bids);
      const best = (side: { price: string }[]) => side[0]?.price ?? "-";
      return {
        text: `${ticker}: best YES bid ${best(yes)}, best NO bid ${best(no)}; ${yes.length}/${no.length} levels`,
        data: {
          ticker,
          yesBids: yes.slice(0, depth),
          noBids: no.slice(0, depth),
          sequence: book.sequence,
          truncated: yes.length > depth || no.length > depth,
        },
      };
    },
  );

  defineTool(
    server,
    {
      name: "get_trades",
      title: "Get recent trades",
      description:
        "Trades on the upstream exchange, newest first, for one market or all; page with the cursor.",
      input: {
        ticker: Ticker.optional(),
        limit: Limit.default(20),
        cursor: z.string().max(256).optional(),
      },
      output: TradesOutput,
      annotations: READ_ONLY,
    },
    async ({ ticker, limit, cursor }) => {
      const page = await venue.markets.trades({
        limit,
        ...(ticker ? { ticker } : {}),
        ...(cursor ? { cursor } : {}),
      });
      const trades = page.trades.map((trade) => ({
        tradeId: trade.tradeId,
        ticker: trade.ticker,
        yesPriceDollars: trade.yesPriceDollars,
        noPriceDollars: trade.noPriceDollars,
        count: trade.count,
        takerSide: trade.takerSide,
        createdTime: trade.createdTime,
      }));
      const newest = trades[0];
      return {
        text: `${trades.length} trade(s)${newest ? `; newest ${newest.ticker} yes ${newest.yesPriceDollars} x${newest.count}` : ""}`,
        data: { trades, cursor: page.cursor ?? null },
      };
    },
  );
}
