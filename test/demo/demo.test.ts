import { describe, expect, it } from "vitest";
import {
  type CatalogueEvent,
  CatalogueFile,
  MARKET_STATUSES,
  type MarketRecord,
} from "../../src/contract/markets.js";
import { generateDemoCatalogue, generateStressCatalogue } from "../../src/demo/generate.js";
import { MarketDynamics } from "../../src/simulator/dynamics.js";

/** 2026-11-22T00:00:00Z; the catalogue describes noon UTC of that day. */
const ANCHOR = 1_795_305_600;
const NOW = ANCHOR + 12 * 3_600;

const catalogue = generateDemoCatalogue({ anchor: ANCHOR });
const events = catalogue.events;
const markets = events.flatMap((e) => e.markets);
const seriesByTicker = new Map(catalogue.series.map((s) => [s.ticker, s]));

/** Series whose markets are "above X" ladders (several can resolve yes) rather than exclusive outcomes. */
const LADDER_SERIES = new Set([
  "KXFED",
  "KXCPI",
  "KXCPIYOY",
  "KXPAYROLLS",
  "KXU3",
  "KXGDP",
  "KXBTCD",
  "KXETHD",
  "KXNBATOTAL",
  "KXEPLTOTAL",
]);
const SETTLED = new Set(["determined", "finalized"]);
const cents = (price: string) => Math.round(Number(price) * 100);
const isTemperature = (e: CatalogueEvent) => e.seriesTicker.startsWith("KXHIGH");
const strikeOf = (m: MarketRecord) => Number(m.ticker.slice(m.eventTicker.length + 2));

describe("generateDemoCatalogue", () => {
  it("produces a valid catalogue file", () => {
    expect(() => CatalogueFile.parse(catalogue)).not.toThrow();
  });

  it("has at least 40 series, 400 events and 3,000 markets at scale 1", () => {
    expect(catalogue.series.length).toBeGreaterThanOrEqual(40);
    expect(events.length).toBeGreaterThanOrEqual(400);
    expect(markets.length).toBeGreaterThanOrEqual(3_000);
  });

  it("is deterministic for the same options and differs for another seed or anchor", () => {
    const json = JSON.stringify(catalogue);
    expect(JSON.stringify(generateDemoCatalogue({ anchor: ANCHOR, seed: "oddsgate-demo", scale: 1 }))).toBe(
      json,
    );
    expect(JSON.stringify(generateDemoCatalogue({ anchor: ANCHOR, seed: "another-seed" }))).not.toBe(json);
    expect(JSON.stringify(generateDemoCatalogue({ anchor: ANCHOR + 86_400 }))).not.toBe(json);
  });

  it("rejects an anchor in milliseconds and a non-positive scale", () => {
    expect(() => generateDemoCatalogue({ anchor: ANCHOR * 1000 })).toThrow(/Unix seconds/);
    expect(() => generateDemoCatalogue({ anchor: ANCHOR, scale: 0 })).toThrow(/scale/);
  });

  it("uses unique series, event and market tickers", () => {
    expect(new Set(catalogue.series.map((s) => s.ticker)).size).toBe(catalogue.series.length);
    expect(new Set(events.map((e) => e.ticker)).size).toBe(events.length);
    expect(new Set(markets.map((m) => m.ticker)).size).toBe(markets.length);
  });

  it("links every market to its event and every event to a series", () => {
    for (const event of events) {
      expect(seriesByTicker.has(event.seriesTicker), event.ticker).toBe(true);
      expect(event.ticker.startsWith(`${event.seriesTicker}-`)).toBe(true);
      expect(event.markets.length).toBeGreaterThan(0);
      for (const market of event.markets) {
        expect(market.eventTicker).toBe(event.ticker);
        expect(market.ticker.startsWith(`${event.ticker}-`)).toBe(true);
      }
    }
  });

  it("shows every status and every result", () => {
    expect(new Set(markets.map((m) => m.status))).toEqual(new Set(MARKET_STATUSES));
    expect(new Set(markets.map((m) => m.result))).toEqual(new Set(["", "yes", "no"]));
  });

  it('sets results only on settled markets, with scalar payouts as a result of "" plus basis points', () => {
    for (const m of markets) {
      if (!SETTLED.has(m.status)) expect(m.result, m.ticker).toBe("");
      if (m.marketType === "scalar" && SETTLED.has(m.status)) {
        expect(m.result, m.ticker).toBe("");
        expect(m.scalarOutcomePct, m.ticker).not.toBeNull();
      } else {
        expect(m.scalarOutcomePct, m.ticker).toBeNull();
        if (SETTLED.has(m.status)) expect(["yes", "no"], m.ticker).toContain(m.result);
      }
    }
    const scalarStatuses = markets.filter((m) => m.scalarOutcomePct !== null).map((m) => m.status);
    expect(scalarStatuses).toContain("determined");
  });

  it("settles exclusive outcomes on exactly one winner and ladders on a prefix of strikes", () => {
    const settled = events.filter(
      (e) => SETTLED.has(e.markets[0]?.status ?? "") && e.markets[0]?.marketType === "binary",
    );
    expect(settled.length).toBeGreaterThan(100);
    for (const event of settled) {
      if (LADDER_SERIES.has(event.seriesTicker)) {
        const results = [...event.markets].sort((a, b) => strikeOf(a) - strikeOf(b)).map((m) => m.result);
        expect(results.join(","), event.ticker).toMatch(/^(yes,)*(yes|no)?(,no)*$/);
      } else {
        expect(event.markets.filter((m) => m.result === "yes").length, event.ticker).toBe(1);
      }
    }
  });

  it("quotes consistent books: whole cents, bid <= ask, NO mirroring YES", () => {
    for (const m of markets) {
      const prices = [m.yesBid, m.yesAsk, m.noBid, m.noAsk];
      if (m.status === "active" || m.status === "inactive") expect(prices, m.ticker).not.toContain(null);
      if (m.status === "initialized" || SETTLED.has(m.status))
        expect(prices, m.ticker).toEqual([null, null, null, null]);
      if (m.yesBid === null || m.yesAsk === null || m.noBid === null || m.noAsk === null) {
        expect(prices, m.ticker).toEqual([null, null, null, null]);
        continue;
      }
      for (const price of [m.yesBid, m.yesAsk, m.noBid, m.noAsk]) expect(price).toMatch(/^0\.\d{2}00$/);
      expect(cents(m.yesBid)).toBeLessThanOrEqual(cents(m.yesAsk));
      expect(cents(m.noBid)).toBe(100 - cents(m.yesAsk));
      expect(cents(m.noAsk)).toBe(100 - cents(m.yesBid));
    }
  });

  it("keeps fixed-point strings equal to the counts and event totals equal to their markets' sums", () => {
    for (const event of events) {
      let volume24h = 0;
      for (const m of event.markets) {
        expect(m.volumeFp).toBe(`${m.volume}.00`);
        expect(m.openInterestFp).toBe(`${m.openInterest}.00`);
        expect(m.volume24hFp).toMatch(/^\d+\.00$/);
        const lastDay = Number.parseInt(m.volume24hFp ?? "", 10);
        expect(lastDay).toBeLessThanOrEqual(m.volume);
        volume24h += lastDay;
      }
      expect(event.volume).toBe(event.markets.reduce((sum, m) => sum + m.volume, 0));
      expect(event.openInterest).toBe(event.markets.reduce((sum, m) => sum + m.openInterest, 0));
      expect(event.volume24h).toBe(volume24h);
      expect(event.volumeFp).toBe(`${event.volume}.00`);
      expect(event.volume24hFp).toBe(`${event.volume24h}.00`);
      expect(event.openInterestFp).toBe(`${event.openInterest}.00`);
      expect(Number.isInteger(event.liquidity)).toBe(true);
    }
  });

  it("orders times and matches each status to the catalogue's moment", () => {
    for (const m of markets) {
      expect(m.openTime, m.ticker).toBeLessThan(m.closeTime);
      expect(m.closeTime, m.ticker).toBeLessThanOrEqual(m.expirationTime);
      if (m.status === "initialized") expect(m.openTime, m.ticker).toBeGreaterThan(NOW);
      else expect(m.openTime, m.ticker).toBeLessThanOrEqual(NOW);
      if (m.status === "active" || m.status === "inactive")
        expect(m.closeTime, m.ticker).toBeGreaterThan(NOW);
      if (m.status === "closed" || SETTLED.has(m.status))
        expect(m.closeTime, m.ticker).toBeLessThanOrEqual(NOW);
    }
  });

  it("lists 6-10 temperature strikes per city and day, priced as one distribution", () => {
    const temperature = events.filter(isTemperature);
    expect(new Set(temperature.map((e) => e.seriesTicker)).size).toBeGreaterThanOrEqual(15);
    expect(temperature.map((e) => e.ticker)).toContain("KXHIGHNY-26NOV23");
    for (const event of temperature) {
      expect(event.markets.length, event.ticker).toBeGreaterThanOrEqual(6);
      expect(event.markets.length, event.ticker).toBeLessThanOrEqual(10);
      expect(event.ticker).toMatch(
        /^KXHIGH[A-Z]+-\d{2}(JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)\d{2}$/,
      );
      for (const m of event.markets) {
        expect(m.ticker).toMatch(/-(B-?\d+\.5|T-?\d+)$/);
        expect(m.title).toMatch(/^Will the high temp in .+ be .+° on [A-Z][a-z]{2} \d{1,2}, \d{4}\?$/);
        expect(m.rulesPrimary).toContain("Climatological Report (Daily)");
        expect(Math.abs(strikeOf(m) - 60)).toBeLessThan(60);
      }
      if (event.markets[0]?.status === "active") {
        const mids = event.markets.reduce(
          (sum, m) => sum + (cents(m.yesBid ?? "0") + cents(m.yesAsk ?? "0")) / 200,
          0,
        );
        expect(mids, event.ticker).toBeGreaterThan(0.85);
        expect(mids, event.ticker).toBeLessThan(1.25);
      }
    }
  });

  it("gives an early-close condition exactly to markets that can close early", () => {
    for (const m of markets) expect(m.earlyCloseCondition !== null, m.ticker).toBe(m.canCloseEarly);
    const fractional = markets.filter((m) => m.fractionalTradingEnabled).length;
    expect(fractional).toBeGreaterThan(0);
    expect(fractional / markets.length).toBeLessThan(0.25);
  });

  it("leads the explorer's default listing (active events by volume) with events that trade on the venue and the tape", () => {
    const volumeOf = (e: CatalogueEvent) => e.markets.reduce((sum, m) => sum + m.volume, 0);
    const largest = events
      .filter((e) => e.markets.some((m) => m.status === "active"))
      .sort((a, b) => volumeOf(b) - volumeOf(a))
      .slice(0, 10);
    for (const event of largest) {
      const trading = event.markets.filter((m) => m.status === "active");
      expect(
        trading.some((m) => m.tokenized),
        event.ticker,
      ).toBe(true);
      // The simulator's tape in the hour before the catalogue's moment.
      const trades = trading.flatMap((m) => {
        const dynamics = new MarketDynamics(m, NOW);
        return Array.from({ length: 60 }, (_, k) => dynamics.tradeInMinute(NOW / 60 - 1 - k)).filter(Boolean);
      });
      expect(trades.length, event.ticker).toBeGreaterThanOrEqual(4);
    }
  });

  it("tokenizes a majority of listed markets and never an initialized one", () => {
    const listed = markets.filter((m) => m.status !== "initialized");
    const share = listed.filter((m) => m.tokenized).length / listed.length;
    expect(share).toBeGreaterThan(0.6);
    expect(share).toBeLessThan(0.85);
    expect(markets.filter((m) => m.status === "initialized" && m.tokenized)).toEqual([]);
  });

  it("fills every series field, leads sports tags with the sport, and sets competitions on sports only", () => {
    for (const s of catalogue.series) {
      expect(s.contractUrl).toMatch(/^https:\/\//);
      expect(s.contractTermsUrl).toMatch(/^https:\/\//);
      expect(s.settlementSources.length).toBeGreaterThan(0);
      expect(s.tags.length).toBeGreaterThan(0);
      expect(s.feeType).toBe("quadratic");
      expect(s.feeMultiplier).toBe(1);
    }
    const sports = catalogue.series.filter((s) => s.category === "Sports");
    expect(new Set(sports.map((s) => s.tags[0]))).toEqual(
      new Set(["Basketball", "Football", "Hockey", "Baseball", "Soccer"]),
    );
    for (const event of events) {
      const isSports = seriesByTicker.get(event.seriesTicker)?.category === "Sports";
      expect(event.competition !== null, event.ticker).toBe(isSports);
      expect(event.competitionScope !== null, event.ticker).toBe(isSports);
    }
    expect(new Set(events.map((e) => e.competitionScope))).toEqual(
      new Set([null, "Game", "Total Points", "1st Half", "Total Goals", "Championship"]),
    );
  });

  it("scales to the benchmark size, keeping the events it shares with scale 1 unchanged", () => {
    const large = generateDemoCatalogue({ anchor: ANCHOR, scale: 25 });
    const largeMarkets = large.events.flatMap((e) => e.markets);
    expect(large.events.length).toBeGreaterThanOrEqual(10_000);
    expect(largeMarkets.length).toBeGreaterThanOrEqual(50_000);
    expect(new Set(large.events.map((e) => e.ticker)).size).toBe(large.events.length);
    expect(new Set(largeMarkets.map((m) => m.ticker)).size).toBe(largeMarkets.length);
    const largeByTicker = new Map(large.events.map((e) => [e.ticker, e]));
    for (const event of events) expect(largeByTicker.get(event.ticker), event.ticker).toEqual(event);
  });
});

describe("generateStressCatalogue", () => {
  it("gives about the markets asked in exactly the events asked, from every series, the same every time", () => {
    const options = { anchor: ANCHOR, markets: 12_000, events: 2_000 };
    const stress = generateStressCatalogue(options);
    const stressMarkets = stress.events.flatMap((e) => e.markets);
    expect(() => CatalogueFile.parse(stress)).not.toThrow();
    expect(stress.events).toHaveLength(2_000);
    expect(stressMarkets.length).toBeGreaterThanOrEqual(11_400);
    expect(stressMarkets.length).toBeLessThanOrEqual(12_600);
    // Spread over the whole catalogue, not the first family's history.
    const stressSeries = new Set(stress.events.map((e) => e.seriesTicker));
    expect(events.map((e) => e.seriesTicker).filter((s) => !stressSeries.has(s))).toEqual([]);
    expect(JSON.stringify(generateStressCatalogue(options))).toBe(JSON.stringify(stress));
  });

  it("grows the demo until the markets fit, and refuses events too few to hold them", () => {
    const grown = generateStressCatalogue({ anchor: ANCHOR, markets: 8_000 });
    const grownMarkets = grown.events.reduce((n, e) => n + e.markets.length, 0);
    expect(grownMarkets).toBeGreaterThanOrEqual(7_600);
    expect(grownMarkets).toBeLessThanOrEqual(8_400);
    expect(() => generateStressCatalogue({ anchor: ANCHOR, markets: 30_000, events: 1_000 })).toThrow(
      /1000 events cannot hold 30000 markets/,
    );
    expect(() => generateStressCatalogue({ anchor: ANCHOR, markets: 0 })).toThrow(RangeError);
    expect(() => generateStressCatalogue({ anchor: ANCHOR, markets: 1e9 })).toThrow(/from 1 to 2500000/);
  });
});
