/**
 * The catalog keeps a serialized market in two parts, its own bytes and an ending most markets share
 * (early-close condition and secondary rules): what it serves must be every market's whole JSON.
 */
import { describe, expect, it } from "vitest";
import type { Market, MarketRecord } from "../../src/contract/markets.js";
import { deriveCashRail, type MarketAccounts } from "../../src/markets/accounts.js";
import { type Catalog, CatalogBuilder, toWireMarket } from "../../src/markets/catalog.js";
import { event, market, series } from "../support/fixtures.js";

const EVENT = "KXHIGHNY-26NOV23";
const SHARED_RULES = "Not all weather data is the same: the NWS Climatological Report (Daily) decides.";

/** A catalog of these markets, all in one event; given `previous`, built as its reload. */
async function catalogOf(markets: MarketRecord[], previous?: Catalog, version = 1): Promise<Catalog> {
  const builder = new CatalogBuilder(previous);
  builder.addMarkets(
    markets.map((m) => ({
      ticker: m.ticker,
      data: JSON.stringify(m),
      // Any three distinct valid addresses per market.
      addresses: deriveCashRail({ marketLedger: m.ticker }),
    })),
  );
  const { markets: _, ...record } = event(EVENT, "KXHIGHNY", markets);
  return builder.build({ version, series: [series("KXHIGHNY")], events: [record] });
}

/**
 * The wire Market the contract defines, built as an object (the catalog writes its accounts map out
 * as text): every rail USDC first, each with the market's state.
 */
function wireMarket(record: MarketRecord, addresses: MarketAccounts): Market {
  const determined = record.status === "determined" || record.status === "finalized";
  const accounts: Market["accounts"] = {};
  for (const rail of addresses.rails)
    accounts[rail.settlementMint] = {
      marketLedger: rail.marketLedger,
      yesMint: rail.yesMint,
      noMint: rail.noMint,
      isInitialized: record.tokenized,
      redemptionStatus: record.tokenized && determined ? "open" : null,
      scalarOutcomePct: record.scalarOutcomePct,
    };
  return toWireMarket(record, accounts);
}

const parsed = (json: Buffer) => JSON.parse(json.toString("utf8")) as Record<string, unknown>;

describe("catalog market JSON", () => {
  it("serves every market whole, byte for byte, with one copy of each shared ending", async () => {
    const markets = [
      market(`${EVENT}-T50`, EVENT, { rulesSecondary: SHARED_RULES }),
      market(`${EVENT}-T51`, EVENT, { rulesSecondary: SHARED_RULES }),
      market(`${EVENT}-T52`, EVENT, { rulesSecondary: SHARED_RULES, earlyCloseCondition: "If it snows." }),
      market(`${EVENT}-T53`, EVENT),
    ];
    const catalog = await catalogOf(markets);
    for (const record of markets) {
      const entry = catalog.market(record.ticker);
      if (!entry) throw new Error(`${record.ticker} is missing`);
      expect(catalog.marketJson(entry).toString("utf8")).toBe(
        JSON.stringify(wireMarket(record, entry.addresses)),
      );
      expect(parsed(catalog.marketJson(entry))).toMatchObject({
        ticker: record.ticker,
        rulesSecondary: record.rulesSecondary,
        earlyCloseCondition: record.earlyCloseCondition,
      });
    }
    const tail = (ticker: string) => catalog.market(`${EVENT}-${ticker}`)?.jsonTail;
    expect(tail("T50")).toBe(tail("T51"));
    expect(tail("T52")).not.toBe(tail("T50"));
    expect(catalog.sharedTails.size).toBe(3);
    // An event's nested markets are the same bytes.
    const nested = parsed(catalog.eventJson(catalog.event(EVENT)!, true)).markets as unknown[];
    expect(nested).toEqual(markets.map((m) => parsed(catalog.marketJson(catalog.market(m.ticker)!))));
  });

  it("splits at the key itself whatever the texts hold", async () => {
    const tricky = [
      'He said ","earlyCloseCondition":"no" and left.',
      '\\",\\"earlyCloseCondition\\":',
      ',"earlyCloseCondition":',
      'Bet ","accounts":{} and ","yesBid":1 here.',
      "Ünïcödé ° — 北京 🌧",
    ];
    const markets = tricky.map((text, i) =>
      market(`${EVENT}-X${i}`, EVENT, {
        title: text,
        rulesPrimary: text,
        rulesSecondary: text,
        earlyCloseCondition: text,
      }),
    );
    const catalog = await catalogOf(markets);
    for (const record of markets) {
      const entry = catalog.market(record.ticker)!;
      expect(catalog.marketJson(entry).toString("utf8")).toBe(
        JSON.stringify(wireMarket(record, entry.addresses)),
      );
    }
  });

  it("keeps no account addresses in a market's bytes, and serves them, or an empty map, from its entry", async () => {
    const markets = [
      market(`${EVENT}-T50`, EVENT, { title: "Ünïcödé — 北京", tokenized: true }),
      market(`${EVENT}-T51`, EVENT, { status: "determined", result: "yes", tokenized: true }),
      market(`${EVENT}-T52`, EVENT, { tokenized: false }),
      market(`${EVENT}-T53`, EVENT, { status: "finalized", scalarOutcomePct: 37.5, tokenized: true }),
    ];
    const catalog = await catalogOf(markets);
    const entry = catalog.event(EVENT)!;
    const nested = parsed(catalog.eventJson(entry, true)).markets as Record<string, unknown>[];
    const bare = parsed(catalog.eventJson(entry, true, false)).markets as Record<string, unknown>[];
    markets.forEach((record, i) => {
      const market = catalog.market(record.ticker)!;
      for (const rail of market.addresses.rails)
        for (const address of [rail.marketLedger, rail.yesMint, rail.noMint])
          expect(market.json.includes(address)).toBe(false);
      expect(catalog.marketJson(market).toString("utf8")).toBe(
        JSON.stringify(wireMarket(record, market.addresses)),
      );
      expect(nested[i]).toEqual(wireMarket(record, market.addresses));
      expect(bare[i]).toEqual({ ...wireMarket(record, market.addresses), accounts: {} });
    });
    const determined = nested[1]?.accounts as Record<string, { redemptionStatus: string | null }>;
    expect(Object.values(determined).map((a) => a.redemptionStatus)).toEqual(["open", "open"]);
    // Served twice, the same bytes: kept for the markets last served.
    expect(catalog.marketJson(catalog.market(markets[0]!.ticker)!)).toBe(
      catalog.marketJson(catalog.market(markets[0]!.ticker)!),
    );
  });

  it("drops endings no market uses after a reload and reuses the kept ones", async () => {
    const first = await catalogOf([
      market(`${EVENT}-T50`, EVENT, { rulesSecondary: SHARED_RULES }),
      market(`${EVENT}-T51`, EVENT, { rulesSecondary: "Only this market's rules." }),
    ]);
    const second = await catalogOf(
      [
        market(`${EVENT}-T50`, EVENT, { rulesSecondary: SHARED_RULES }),
        market(`${EVENT}-T51`, EVENT, { rulesSecondary: SHARED_RULES }),
      ],
      first,
      2,
    );
    expect(second.sharedTails.size).toBe(1);
    // The changed market takes the ending the unchanged one kept from the first catalog.
    expect(second.market(`${EVENT}-T51`)?.jsonTail).toBe(first.market(`${EVENT}-T50`)?.jsonTail);
    expect(parsed(second.marketJson(second.market(`${EVENT}-T51`)!)).rulesSecondary).toBe(SHARED_RULES);
    // The replaced catalog still serves its own.
    expect(parsed(first.marketJson(first.market(`${EVENT}-T51`)!)).rulesSecondary).toBe(
      "Only this market's rules.",
    );
  });

  it("keeps a market's JSON whole once 10,000 distinct endings are shared", async () => {
    const markets = Array.from({ length: 10_010 }, (_, i) =>
      market(`${EVENT}-U${String(i).padStart(5, "0")}`, EVENT, { rulesSecondary: `Rules number ${i}.` }),
    );
    const catalog = await catalogOf(markets);
    expect(catalog.sharedTails.size).toBe(10_000);
    const whole = catalog.markets.filter((m) => m.jsonTail.length === 0);
    expect(whole).toHaveLength(10);
    for (const entry of whole) expect(parsed(catalog.marketJson(entry)).ticker).toBe(entry.record.ticker);
    for (const entry of catalog.markets.slice(0, 20))
      expect(parsed(catalog.marketJson(entry)).rulesSecondary).toBe(
        `Rules number ${Number(entry.record.ticker.slice(-5))}.`,
      );
  });
});
