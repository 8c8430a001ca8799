/** A small hand-written catalogue, for tests that need to know every record they read. */
import {
  CATALOGUE_FORMAT,
  type CatalogueEvent,
  type CatalogueFile,
  type MarketRecord,
  type Series,
} from "../../src/contract/markets.js";

export function series(ticker: string, overrides: Partial<Series> = {}): Series {
  return {
    ticker,
    title: `Series ${ticker}`,
    category: "Climate and Weather",
    tags: ["Weather"],
    frequency: "daily",
    feeType: "quadratic",
    feeMultiplier: 1,
    contractUrl: `https://example.test/contracts/${ticker}.pdf`,
    contractTermsUrl: "https://example.test/terms.pdf",
    settlementSources: [{ name: "National Weather Service", url: "https://www.weather.gov/" }],
    additionalProhibitions: null,
    productMetadata: null,
    ...overrides,
  };
}

export function market(
  ticker: string,
  eventTicker: string,
  overrides: Partial<MarketRecord> = {},
): MarketRecord {
  return {
    ticker,
    eventTicker,
    marketType: "binary",
    title: `Will ${ticker} happen?`,
    subtitle: "",
    yesSubTitle: `${ticker} yes`,
    noSubTitle: `${ticker} no`,
    openTime: 1_795_219_200,
    closeTime: 1_795_305_600,
    expirationTime: 1_795_392_000,
    status: "active",
    result: "",
    volume: 100,
    openInterest: 40,
    canCloseEarly: false,
    fractionalTradingEnabled: false,
    rulesPrimary: "Resolves yes if it happens.",
    earlyCloseCondition: null,
    rulesSecondary: null,
    yesBid: "0.4100",
    yesAsk: "0.4300",
    noBid: "0.5700",
    noAsk: "0.5900",
    volumeFp: "100.00",
    volume24hFp: "10.00",
    openInterestFp: "40.00",
    tokenized: true,
    scalarOutcomePct: null,
    ...overrides,
  };
}

export function event(
  ticker: string,
  seriesTicker: string,
  markets: MarketRecord[],
  overrides: Partial<CatalogueEvent> = {},
): CatalogueEvent {
  const volume = markets.reduce((sum, m) => sum + m.volume, 0);
  return {
    ticker,
    seriesTicker,
    title: `Event ${ticker}`,
    subtitle: "On Nov 23, 2026",
    competition: null,
    competitionScope: null,
    imageUrl: null,
    liquidity: 5_000,
    openInterest: 40,
    openInterestFp: "40.00",
    settlementSources: null,
    strikeDate: 1_795_392_000,
    strikePeriod: "day",
    volume,
    volume24h: 10,
    volume24hFp: "10.00",
    volumeFp: `${volume}.00`,
    markets,
    ...overrides,
  };
}

/** Two series, three events, five markets, across several statuses. */
export function miniCatalogue(): CatalogueFile {
  return {
    format: CATALOGUE_FORMAT,
    series: [
      series("KXHIGHNY"),
      series("KXNBAGAME", { category: "Sports", tags: ["Basketball", "NBA"], frequency: "custom" }),
    ],
    events: [
      event("KXHIGHNY-26NOV23", "KXHIGHNY", [
        market("KXHIGHNY-26NOV23-B47.5", "KXHIGHNY-26NOV23", { yesSubTitle: "47° to 48°" }),
        market("KXHIGHNY-26NOV23-T52", "KXHIGHNY-26NOV23", {
          tokenized: false,
          yesBid: null,
          yesAsk: null,
          noBid: null,
          noAsk: null,
        }),
      ]),
      event(
        "KXHIGHNY-26NOV21",
        "KXHIGHNY",
        [
          market("KXHIGHNY-26NOV21-B45.5", "KXHIGHNY-26NOV21", {
            status: "determined",
            result: "yes",
            volume: 900,
          }),
        ],
        { liquidity: 0 },
      ),
      event(
        "KXNBAGAME-26NOV23BOSLAL",
        "KXNBAGAME",
        [
          market("KXNBAGAME-26NOV23BOSLAL-BOS", "KXNBAGAME-26NOV23BOSLAL", { title: "Boston Celtics win?" }),
          market("KXNBAGAME-26NOV23BOSLAL-LAL", "KXNBAGAME-26NOV23BOSLAL", {
            status: "initialized",
            tokenized: false,
          }),
        ],
        { competition: "NBA", competitionScope: "Game", liquidity: 20_000 },
      ),
    ],
  };
}

/**
 * `file` with each market's rules ten times as long: in a real catalogue (seven markets an event)
 * markets' own bytes are most of every chunk of the catalog's JSON, which is what lets a reload keep
 * an unchanged market's JSON where it is rather than copy it out of a mostly dead chunk.
 */
export function withLongRules(file: CatalogueFile): CatalogueFile {
  for (const event of file.events)
    for (const market of event.markets) market.rulesPrimary = `${market.rulesPrimary} `.repeat(10);
  return file;
}
