/** Import: Kalshi trade-api v2 JSON mapped into our records, our own format validated, errors located. */
import { describe, expect, it } from "vitest";
import { CATALOGUE_FORMAT, CatalogueFile, type MarketRecord } from "../../src/contract/markets.js";
import {
  KalshiEvent,
  KalshiMarket,
  KalshiSeries,
  kalshiEventToRecord,
  kalshiMarketToRecord,
  kalshiSeriesToRecord,
} from "../../src/markets/import/kalshi.js";
import { ImportFormatError, KalshiPages, parseCatalogueInput } from "../../src/markets/import/parse.js";
import { miniCatalogue } from "../support/fixtures.js";

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------
// Fixtures in the shapes Kalshi's GET /series, /events?with_nested_markets=true and /events/{t} return.

const highNySeries = (): Json => ({
  ticker: "KXHIGHNY",
  frequency: "daily",
  title: "Highest temperature in NYC",
  category: "Climate and Weather",
  tags: ["Daily temperature"],
  settlement_sources: [
    { name: "National Weather Service", url: "https://www.weather.gov/wrh/Climate?wfo=okx" },
  ],
  contract_url: "https://kalshi-public-docs.s3.amazonaws.com/contract_terms/NHIGH.pdf",
  contract_terms_url:
    "https://kalshi-public-docs.s3.amazonaws.com/regulatory/product-certifications/NHIGH.pdf",
  product_metadata: null,
  fee_type: "quadratic",
  fee_multiplier: 1,
  additional_prohibitions: [],
});

/** A current market carrying integers, `*_fp` and `*_dollars` side by side. */
const bracketMarket = (): Json => ({
  ticker: "KXHIGHNY-26NOV23-B47.5",
  event_ticker: "KXHIGHNY-26NOV23",
  market_type: "binary",
  title: "Will the **high temp in NYC** be 47-48° on Nov 23, 2026?",
  subtitle: "47° to 48°",
  yes_sub_title: "47° to 48°",
  no_sub_title: "47° to 48°",
  created_time: "2026-11-21T14:55:12.402871Z",
  open_time: "2026-11-21T15:00:00Z",
  close_time: "2026-11-24T04:59:00Z",
  expected_expiration_time: "2026-11-24T15:00:00Z",
  expiration_time: "2026-11-30T15:00:00Z",
  latest_expiration_time: "2026-11-30T15:00:00Z",
  settlement_timer_seconds: 1800,
  status: "active",
  response_price_units: "usd_cent",
  yes_bid: 41,
  yes_bid_dollars: "0.4100",
  yes_ask: 43,
  yes_ask_dollars: "0.4300",
  no_bid: 57,
  no_bid_dollars: "0.5700",
  no_ask: 59,
  no_ask_dollars: "0.5900",
  last_price: 42,
  last_price_dollars: "0.4200",
  previous_yes_bid: 38,
  previous_yes_bid_dollars: "0.3800",
  volume: 18234,
  volume_fp: "18234.00",
  volume_24h: 9120,
  volume_24h_fp: "9120.00",
  liquidity: 1534200,
  liquidity_dollars: "15342.0000",
  open_interest: 7781,
  open_interest_fp: "7781.00",
  result: "",
  can_close_early: true,
  fractional_trading_enabled: false,
  expiration_value: "",
  rules_primary:
    "If the highest temperature recorded in Central Park, New York for November 23, 2026 as reported by the National Weather Service's Climatological Report (Daily), is between 47-48°, then the market resolves to Yes.",
  rules_secondary:
    "Not all weather data is the same. While checking a source like Google or your phone's weather app may show a high temperature, it may differ from the final NWS report.",
  early_close_condition:
    "This market will close and expire after the National Weather Service's Climatological Report (Daily) is released.",
  tick_size: 1,
  strike_type: "between",
  floor_strike: 47,
  cap_strike: 48,
  price_level_structure: "linear_cent",
  price_ranges: [{ start: "0.0000", end: "1.0000", step: "0.0100" }],
});

/** A newer payload: no integer counts or cents at all, only `*_fp` and `*_dollars`. */
const fixedPointOnlyMarket = (): Json => ({
  ticker: "KXHIGHNY-26NOV23-T49",
  event_ticker: "KXHIGHNY-26NOV23",
  market_type: "binary",
  title: "Will the **high temp in NYC** be >49° on Nov 23, 2026?",
  subtitle: "",
  yes_sub_title: "50° or above",
  no_sub_title: "49° or below",
  open_time: "2026-11-21T15:00:00Z",
  close_time: "2026-11-24T04:59:00Z",
  latest_expiration_time: "2026-11-30T15:00:00Z",
  status: "active",
  yes_bid_dollars: "0.125",
  yes_ask_dollars: "0.1375",
  no_bid_dollars: "0.0000",
  last_price_dollars: "0.1300",
  volume_fp: "1250.5",
  volume_24h_fp: "17",
  open_interest_fp: "310.129",
  liquidity_dollars: "812.34",
  result: "",
  can_close_early: true,
  fractional_trading_enabled: true,
  rules_primary:
    "If the highest temperature recorded in Central Park ... is greater than 49°, then the market resolves to Yes.",
  rules_secondary: "",
  strike_type: "greater",
  floor_strike: 49,
});

const lowTailMarket = (): Json => ({
  ...bracketMarket(),
  ticker: "KXHIGHNY-26NOV23-T46",
  title: "Will the **high temp in NYC** be <46° on Nov 23, 2026?",
  subtitle: "45° or below",
  yes_sub_title: "45° or below",
  no_sub_title: "46° or above",
  volume: 402,
  volume_fp: "402.00",
  volume_24h: 35,
  volume_24h_fp: "35.00",
  open_interest: 150,
  open_interest_fp: "150.00",
  liquidity: 20000,
  liquidity_dollars: "200.0000",
  strike_type: "less",
  floor_strike: undefined,
  cap_strike: 46,
});

const highNyEvent = (markets: Json[] = [lowTailMarket(), bracketMarket(), fixedPointOnlyMarket()]): Json => ({
  event_ticker: "KXHIGHNY-26NOV23",
  series_ticker: "KXHIGHNY",
  sub_title: "On Nov 23, 2026",
  title: "Highest temperature in NYC on Nov 23, 2026?",
  collateral_return_type: "",
  mutually_exclusive: true,
  category: "Climate and Weather",
  strike_date: "2026-11-24T04:59:00Z",
  strike_period: "",
  available_on_brokers: true,
  product_metadata: {},
  markets,
});

/** From an export of the pre-2025 API: legacy statuses, integer cents, no `*_fp` and no `*_dollars`. */
const legacyEvent = (): Json => ({
  event_ticker: "HIGHNY-23NOV23",
  series_ticker: "HIGHNY",
  sub_title: "On Nov 23, 2023",
  title: "Highest temperature in NYC on Nov 23, 2023?",
  mutually_exclusive: true,
  category: "Climate and Weather",
  strike_date: "2023-11-24T04:59:00Z",
  strike_period: null,
  markets: [
    {
      ticker: "HIGHNY-23NOV23-B51.5",
      event_ticker: "HIGHNY-23NOV23",
      market_type: "binary",
      title: "Will the high temp in NYC be 51-52° on Nov 23, 2023?",
      subtitle: "51° to 52°",
      yes_sub_title: "51° to 52°",
      no_sub_title: "51° to 52°",
      open_time: "2023-11-22T15:00:00Z",
      close_time: "2023-11-24T04:59:00Z",
      expiration_time: "2023-11-24T15:00:00Z",
      status: "settled",
      result: "yes",
      yes_bid: 99,
      yes_ask: 100,
      no_bid: 0,
      no_ask: 1,
      last_price: 99,
      volume: 5012,
      volume_24h: 0,
      open_interest: 0,
      liquidity: 0,
      can_close_early: true,
      rules_primary:
        "If the highest temperature recorded in Central Park ... is between 51-52°, then the market resolves to Yes.",
      rules_secondary: "",
      settlement_value: 100,
    },
  ],
});

/** A finalized scalar market: Kalshi reports result "scalar" and the payout to YES. */
const scalarEvent = (): Json => ({
  event_ticker: "KXEGGS-26OCT",
  series_ticker: "KXEGGS",
  sub_title: "In Oct 2026",
  title: "Average price of a dozen eggs in October 2026",
  category: "Economics",
  strike_date: "2026-11-13T13:30:00Z",
  strike_period: "month",
  markets: [
    {
      ticker: "KXEGGS-26OCT-S",
      event_ticker: "KXEGGS-26OCT",
      market_type: "scalar",
      title: "Average price of a dozen eggs in October 2026",
      subtitle: "",
      yes_sub_title: "Long",
      no_sub_title: "Short",
      open_time: "2026-09-15T14:00:00Z",
      close_time: "2026-11-13T13:25:00Z",
      expiration_time: "2026-11-13T13:30:00Z",
      status: "finalized",
      result: "scalar",
      yes_bid_dollars: "0.0000",
      yes_ask_dollars: "0.0000",
      no_bid_dollars: "0.0000",
      no_ask_dollars: "0.0000",
      volume_fp: "642.00",
      volume_24h_fp: "0.00",
      open_interest_fp: "0.00",
      can_close_early: false,
      fractional_trading_enabled: false,
      rules_primary:
        "The market pays out in proportion to the BLS average price of a dozen eggs in October 2026.",
      settlement_value: 47,
      settlement_value_dollars: "0.4700",
    },
  ],
});

const kalshiFile = (events: Json[] = [highNyEvent()], series: Json[] = [highNySeries()]): Json => ({
  events,
  cursor: "",
  series,
});

/** The error parseCatalogueInput throws for `json`. */
function importError(json: unknown): ImportFormatError {
  try {
    parseCatalogueInput(json);
  } catch (error) {
    if (error instanceof ImportFormatError) return error;
    throw error;
  }
  throw new Error("expected an ImportFormatError");
}

function withMarket(event: Json, index: number, overrides: Json): Json {
  const markets = [...(event.markets as Json[])];
  markets[index] = { ...markets[index], ...overrides };
  return { ...event, markets };
}

function mapMarket(overrides: Json, options?: Parameters<typeof kalshiMarketToRecord>[1]): MarketRecord {
  return kalshiMarketToRecord(KalshiMarket.parse({ ...bracketMarket(), ...overrides }), options);
}

// ---------------------------------------------------------------------------------------------------

describe("Kalshi mapping", () => {
  it("maps every market field", () => {
    expect(kalshiMarketToRecord(KalshiMarket.parse(bracketMarket()))).toEqual({
      ticker: "KXHIGHNY-26NOV23-B47.5",
      eventTicker: "KXHIGHNY-26NOV23",
      marketType: "binary",
      title: "Will the **high temp in NYC** be 47-48° on Nov 23, 2026?",
      subtitle: "47° to 48°",
      yesSubTitle: "47° to 48°",
      noSubTitle: "47° to 48°",
      openTime: 1_795_273_200,
      closeTime: 1_795_496_340,
      expirationTime: 1_796_050_800,
      status: "active",
      result: "",
      volume: 18_234,
      openInterest: 7_781,
      canCloseEarly: true,
      fractionalTradingEnabled: false,
      rulesPrimary: bracketMarket().rules_primary,
      earlyCloseCondition: bracketMarket().early_close_condition,
      rulesSecondary: bracketMarket().rules_secondary,
      yesBid: "0.4100",
      yesAsk: "0.4300",
      noBid: "0.5700",
      noAsk: "0.5900",
      volumeFp: "18234.00",
      volume24hFp: "9120.00",
      openInterestFp: "7781.00",
      tokenized: false,
      scalarOutcomePct: null,
    });
  });

  it("reads a market that carries only *_fp and *_dollars fields", () => {
    const record = kalshiMarketToRecord(KalshiMarket.parse(fixedPointOnlyMarket()));
    expect(record).toMatchObject({
      volume: 1250,
      volumeFp: "1250.50",
      volume24hFp: "17.00",
      openInterest: 310,
      openInterestFp: "310.12",
      yesBid: "0.1250",
      yesAsk: "0.1375",
      noBid: "0.0000",
      noAsk: null,
      expirationTime: 1_796_050_800,
      rulesSecondary: "",
      earlyCloseCondition: null,
      fractionalTradingEnabled: true,
    });
  });

  it("reads a legacy market with integer cents and old status names", () => {
    const [market] = KalshiEvent.parse(legacyEvent()).markets ?? [];
    if (!market) throw new Error("fixture has a market");
    expect(kalshiMarketToRecord(market)).toMatchObject({
      status: "finalized",
      result: "yes",
      yesBid: "0.9900",
      yesAsk: "1.0000",
      noBid: "0.0000",
      noAsk: "0.0100",
      volume: 5012,
      volumeFp: "5012.00",
      volume24hFp: "0.00",
      openInterestFp: "0.00",
      expirationTime: 1_700_838_000,
      fractionalTradingEnabled: false,
      earlyCloseCondition: null,
      // A binary market's settlement value is not a scalar payout.
      scalarOutcomePct: null,
    });
  });

  it("prefers *_dollars over cents when both are present", () => {
    expect(
      mapMarket({ yes_bid: 41, yes_bid_dollars: "0.4150", no_ask: 59, no_ask_dollars: null }),
    ).toMatchObject({
      yesBid: "0.4150",
      noAsk: "0.5900",
    });
  });

  it("prefers integer counts, deriving them from *_fp only when absent", () => {
    expect(
      mapMarket({ volume: undefined, volume_fp: "99.99", open_interest: 3, open_interest_fp: null }),
    ).toMatchObject({ volume: 99, volumeFp: "99.99", openInterest: 3, openInterestFp: "3.00" });
    expect(
      mapMarket({ volume: undefined, volume_fp: undefined, volume_24h: undefined, volume_24h_fp: undefined }),
    ).toMatchObject({ volume: 0, volumeFp: null, volume24hFp: null });
  });

  it.each([
    ["1250", "1250.00"],
    ["1250.5", "1250.50"],
    ["1250.129", "1250.12"],
    ["1250.999", "1250.99"],
    ["0", "0.00"],
    [1250, "1250.00"],
    [12.5, "12.50"],
  ])("normalises volume_fp %j to %s", (volumeFp, expected) => {
    expect(mapMarket({ volume_fp: volumeFp }).volumeFp).toBe(expected);
  });

  it.each([
    ["initialized", "initialized"],
    ["active", "active"],
    ["inactive", "inactive"],
    ["closed", "closed"],
    ["determined", "determined"],
    ["finalized", "finalized"],
    ["unopened", "initialized"],
    ["open", "active"],
    ["paused", "inactive"],
    ["settled", "finalized"],
    ["disputed", "determined"],
    ["amended", "determined"],
  ])("maps status %s to %s", (status, expected) => {
    expect(mapMarket({ status }).status).toBe(expected);
  });

  it.each([
    ["yes", "yes"],
    ["no", "no"],
    ["", ""],
    [null, ""],
    [undefined, ""],
    ["void", ""],
    ["all_no", ""],
    ["all_yes", ""],
    ["scalar", ""],
  ])("maps result %j to %j", (result, expected) => {
    expect(mapMarket({ status: "finalized", result }).result).toBe(expected);
  });

  it("turns a scalar settlement into scalarOutcomePct in basis points", () => {
    const [scalar] = KalshiEvent.parse(scalarEvent()).markets ?? [];
    if (!scalar) throw new Error("fixture has a market");
    expect(kalshiMarketToRecord(scalar)).toMatchObject({
      marketType: "scalar",
      result: "",
      scalarOutcomePct: 4700,
    });
    const settled = { status: "determined", result: "" };
    expect(mapMarket({ ...settled, settlement_value: 47 }).scalarOutcomePct).toBe(4700);
    expect(
      mapMarket({ ...settled, settlement_value_dollars: "0.4725", settlement_value: 47 }).scalarOutcomePct,
    ).toBe(4725);
    expect(mapMarket(settled).scalarOutcomePct).toBeNull();
    expect(mapMarket({ status: "active", settlement_value: 47 }).scalarOutcomePct).toBeNull();
  });

  it.each([
    ["ISO with Z", "2026-11-24T04:59:00Z", 1_795_496_340],
    ["ISO with microseconds", "2026-11-24T04:59:00.750123Z", 1_795_496_340],
    ["ISO with an offset", "2026-11-23T19:30:00-05:00", 1_795_480_200],
    ["ISO without a zone, read as UTC", "2026-11-24T04:59:00", 1_795_496_340],
    ["Unix seconds", 1_795_496_340, 1_795_496_340],
    ["Unix milliseconds", 1_795_496_340_123, 1_795_496_340],
  ])("reads close_time given as %s", (_, closeTime, expected) => {
    expect(mapMarket({ close_time: closeTime }).closeTime).toBe(expected);
  });

  it("tokenizes none, the tradable, or all markets", () => {
    const initialized = { status: "initialized" };
    expect(mapMarket({}).tokenized).toBe(false);
    expect(mapMarket({}, { tokenize: "none" }).tokenized).toBe(false);
    expect(mapMarket({}, { tokenize: "tradable" }).tokenized).toBe(true);
    expect(mapMarket({ status: "settled" }, { tokenize: "tradable" }).tokenized).toBe(true);
    expect(mapMarket(initialized, { tokenize: "tradable" }).tokenized).toBe(false);
    expect(mapMarket(initialized, { tokenize: "all" }).tokenized).toBe(true);
  });

  it("maps an event, summing what Kalshi leaves out over its markets", () => {
    expect(kalshiEventToRecord(KalshiEvent.parse(highNyEvent()))).toEqual({
      ticker: "KXHIGHNY-26NOV23",
      seriesTicker: "KXHIGHNY",
      title: "Highest temperature in NYC on Nov 23, 2026?",
      subtitle: "On Nov 23, 2026",
      competition: null,
      competitionScope: null,
      imageUrl: null,
      // Cents: 1,534,200 + 20,000 + $812.34.
      liquidity: 1_635_434,
      openInterest: 8241,
      openInterestFp: "8241.12",
      settlementSources: null,
      strikeDate: 1_795_496_340,
      strikePeriod: "",
      volume: 19_886,
      volume24h: 9172,
      volume24hFp: "9172.00",
      volumeFp: "19886.50",
    });
  });

  it("prefers an event's own totals, and has none without markets", () => {
    const own = { volume: 5, volume_24h_fp: "2.50", open_interest: 1, liquidity_dollars: "12.5" };
    expect(kalshiEventToRecord(KalshiEvent.parse({ ...highNyEvent(), ...own }))).toMatchObject({
      volume: 5,
      volumeFp: "5.00",
      volume24h: 2,
      volume24hFp: "2.50",
      openInterest: 1,
      openInterestFp: "1.00",
      liquidity: 1250,
    });
    expect(kalshiEventToRecord(KalshiEvent.parse({ ...highNyEvent(), markets: undefined }))).toMatchObject({
      volume: null,
      volumeFp: null,
      volume24h: null,
      openInterest: null,
      liquidity: null,
    });
  });

  it("takes competition and scope from product_metadata", () => {
    const game = {
      event_ticker: "KXNBAGAME-26NOV23BOSLAL",
      series_ticker: "KXNBAGAME",
      title: "Boston at Los Angeles L",
      sub_title: "BOS at LAL (Nov 23)",
      category: "Sports",
      product_metadata: { competition: "NBA", competition_scope: "Game" },
    };
    expect(kalshiEventToRecord(KalshiEvent.parse(game))).toMatchObject({
      competition: "NBA",
      competitionScope: "Game",
      strikeDate: null,
      strikePeriod: null,
    });
  });

  it("maps a series", () => {
    expect(kalshiSeriesToRecord(KalshiSeries.parse(highNySeries()))).toEqual({
      ticker: "KXHIGHNY",
      title: "Highest temperature in NYC",
      category: "Climate and Weather",
      tags: ["Daily temperature"],
      frequency: "daily",
      feeType: "quadratic",
      feeMultiplier: 1,
      contractUrl: "https://kalshi-public-docs.s3.amazonaws.com/contract_terms/NHIGH.pdf",
      contractTermsUrl:
        "https://kalshi-public-docs.s3.amazonaws.com/regulatory/product-certifications/NHIGH.pdf",
      settlementSources: [
        { name: "National Weather Service", url: "https://www.weather.gov/wrh/Climate?wfo=okx" },
      ],
      additionalProhibitions: [],
      productMetadata: null,
    });
  });
});

describe("parseCatalogueInput: Kalshi files", () => {
  it("reads GetEvents with nested markets and a series list into a valid catalogue", () => {
    const catalogue = parseCatalogueInput(kalshiFile(), { tokenize: "tradable" });
    expect(CatalogueFile.parse(catalogue)).toEqual(catalogue);
    expect(catalogue.format).toBe(CATALOGUE_FORMAT);
    expect(catalogue.series.map((s) => s.ticker)).toEqual(["KXHIGHNY"]);
    const [event] = catalogue.events;
    expect(event?.markets.map((m) => m.ticker)).toEqual([
      "KXHIGHNY-26NOV23-T46",
      "KXHIGHNY-26NOV23-B47.5",
      "KXHIGHNY-26NOV23-T49",
    ]);
    expect(event?.markets.every((m) => m.tokenized)).toBe(true);
    // Kalshi keeps settlement sources on the series.
    expect(event?.settlementSources).toEqual([
      { name: "National Weather Service", url: "https://www.weather.gov/wrh/Climate?wfo=okx" },
    ]);
    expect(event).toMatchObject({ volume: 19_886, volumeFp: "19886.50" });
  });

  it("synthesizes the series an input leaves out, once per series", () => {
    const nextDay = { ...highNyEvent([]), event_ticker: "KXHIGHNY-26NOV24" };
    const catalogue = parseCatalogueInput(
      kalshiFile([legacyEvent(), highNyEvent(), nextDay, scalarEvent()], []),
    );
    expect(catalogue.series.map((s) => s.ticker)).toEqual(["HIGHNY", "KXHIGHNY", "KXEGGS"]);
    expect(catalogue.series[0]).toEqual({
      ticker: "HIGHNY",
      title: "HIGHNY",
      category: "Climate and Weather",
      tags: [],
      frequency: "custom",
      feeType: "quadratic",
      feeMultiplier: 1,
      contractUrl: "",
      contractTermsUrl: "",
      settlementSources: [],
      additionalProhibitions: null,
      productMetadata: null,
    });
    // A synthesized series has no sources to lend its events.
    expect(catalogue.events.map((e) => e.settlementSources)).toEqual([null, null, null, null]);
    const uncategorized = { ...highNyEvent([]), series_ticker: "KXMYSTERY", category: undefined };
    expect(parseCatalogueInput({ events: [uncategorized] }).series[0]?.category).toBe("Other");
  });

  it("reads GetEvent's {event, markets}, where the top-level markets repeat the nested ones", () => {
    const nested = highNyEvent([bracketMarket()]);
    const catalogue = parseCatalogueInput({
      event: nested,
      markets: [bracketMarket(), fixedPointOnlyMarket()],
    });
    expect(catalogue.events[0]?.markets.map((m) => m.ticker)).toEqual([
      "KXHIGHNY-26NOV23-B47.5",
      "KXHIGHNY-26NOV23-T49",
    ]);
  });

  it("accepts events without markets", () => {
    const { markets: _, ...bare } = highNyEvent();
    const catalogue = parseCatalogueInput({ events: [bare] });
    expect(catalogue.events[0]).toMatchObject({ markets: [], volume: 0, volumeFp: "0.00", liquidity: 0 });
  });

  it("round-trips through our own format", () => {
    const catalogue = parseCatalogueInput(kalshiFile([highNyEvent(), legacyEvent(), scalarEvent()]));
    expect(parseCatalogueInput(JSON.parse(JSON.stringify(catalogue)))).toEqual(catalogue);
  });
});

describe("KalshiPages: a catalogue read page by page (a sync)", () => {
  it("maps each page as parseCatalogueInput maps the whole, lending declared series' sources", async () => {
    const pages = new KalshiPages([highNySeries()], { tokenize: "tradable" });
    const whole = parseCatalogueInput(kalshiFile([legacyEvent(), highNyEvent(), scalarEvent()]), {
      tokenize: "tradable",
    });
    const read = [
      ...(await pages.page([legacyEvent()])),
      ...(await pages.page([highNyEvent(), scalarEvent()])),
    ];
    expect(read).toEqual(whole.events);
    expect(pages.allSeries()).toEqual(whole.series);
    expect(read[1]?.settlementSources).toEqual([
      { name: "National Weather Service", url: "https://www.weather.gov/wrh/Climate?wfo=okx" },
    ]);
  });

  it("refuses an event or a market listed on two pages, naming the page", async () => {
    const events = new KalshiPages([], {});
    await events.page([highNyEvent()]);
    await expect(events.page([scalarEvent(), highNyEvent([])])).rejects.toThrow(
      'page 2: events[1]: event "KXHIGHNY-26NOV23" is on an earlier page too',
    );
    const markets = new KalshiPages([], {});
    await markets.page([highNyEvent([bracketMarket()])]);
    const moved = {
      ...highNyEvent([{ ...bracketMarket(), event_ticker: "KXHIGHNY-26NOV24" }]),
      event_ticker: "KXHIGHNY-26NOV24",
    };
    const error = await rejectionOf(markets.page([moved]));
    expect(error).toBeInstanceOf(ImportFormatError);
    expect(error.message).toContain('page 2: events[0].markets[0]: market "KXHIGHNY-26NOV23-B47.5"');
  });

  it("names the page and the record of a field that fails validation", async () => {
    const pages = new KalshiPages([], {});
    await pages.page([highNyEvent()]);
    const broken = { ...scalarEvent(), title: 42 };
    const error = await rejectionOf(pages.page([broken]));
    expect(error).toBeInstanceOf(ImportFormatError);
    expect((error as ImportFormatError).path).toBe("page 2: events[0].title");
  });

  it("validates a long page in slices and names a field that fails past the first slice as the whole page would", async () => {
    const page = Array.from({ length: 45 }, (_, i) => ({
      ...scalarEvent(),
      event_ticker: `KXSCALAR-${i}`,
      markets: [],
    }));
    const pages = new KalshiPages([], {});
    expect((await pages.page(page)).map((event) => event.ticker)).toEqual(page.map((e) => e.event_ticker));
    const broken = page.map((event, i) =>
      i === 33
        ? { ...event, event_ticker: "KXSCALAR-X", title: 42 }
        : { ...event, event_ticker: `${event.event_ticker}-B` },
    );
    const error = await rejectionOf(new KalshiPages([], {}).page(broken));
    expect(error).toBeInstanceOf(ImportFormatError);
    expect((error as ImportFormatError).path).toBe("page 1: events[33].title");
  });
});

describe("parseCatalogueInput: our format", () => {
  it("accepts a valid catalogue unchanged", () => {
    const catalogue = miniCatalogue();
    expect(parseCatalogueInput(JSON.parse(JSON.stringify(catalogue)))).toEqual(catalogue);
  });

  it("ignores the tokenize option", () => {
    const catalogue = miniCatalogue();
    expect(parseCatalogueInput(catalogue, { tokenize: "all" })).toEqual(catalogue);
  });
});

describe("import errors name the record and the field", () => {
  it("a bad time", () => {
    const error = importError(
      kalshiFile([highNyEvent([lowTailMarket(), { ...bracketMarket(), close_time: "tomorrow" }])]),
    );
    expect(error.message).toBe(
      'events[0] (KXHIGHNY-26NOV23) markets[1] (KXHIGHNY-26NOV23-B47.5): close_time: expected an ISO time or Unix seconds, got "tomorrow"',
    );
    expect(error.path).toBe("events[0].markets[1].close_time");
  });

  it("a missing ticker or required time", () => {
    const { ticker: _, ...anonymous } = fixedPointOnlyMarket();
    expect(importError(kalshiFile([highNyEvent([bracketMarket(), anonymous])])).message).toBe(
      "events[0] (KXHIGHNY-26NOV23) markets[1]: ticker: missing (expected string)",
    );
    const { open_time: __, ...unopened } = bracketMarket();
    expect(importError(kalshiFile([highNyEvent([unopened])])).message).toBe(
      "events[0] (KXHIGHNY-26NOV23) markets[0] (KXHIGHNY-26NOV23-B47.5): open_time: missing (expected an ISO time or Unix seconds)",
    );
    expect(importError({ events: [{ ...highNyEvent(), event_ticker: "" }] }).message).toBe(
      'events[0]: event_ticker: expected a non-empty ticker, got ""',
    );
  });

  it("a price out of range", () => {
    const event = withMarket(highNyEvent(), 2, { yes_ask_dollars: "1.0500" });
    expect(importError(kalshiFile([legacyEvent(), event])).message).toBe(
      'events[1] (KXHIGHNY-26NOV23) markets[2] (KXHIGHNY-26NOV23-T49): yes_ask_dollars: expected a dollar price from 0 to 1, got "1.0500"',
    );
    expect(importError(kalshiFile([withMarket(highNyEvent(), 0, { no_bid: 150 })])).message).toBe(
      "events[0] (KXHIGHNY-26NOV23) markets[0] (KXHIGHNY-26NOV23-T46): no_bid: expected a price in cents from 0 to 100, got 150",
    );
  });

  it("a bad count, fixed-point count or status", () => {
    expect(importError(kalshiFile([withMarket(highNyEvent(), 1, { volume: -3 })])).message).toMatch(
      /markets\[1\] \(KXHIGHNY-26NOV23-B47\.5\): volume: expected a non-negative whole number, got -3$/,
    );
    expect(
      importError(kalshiFile([withMarket(highNyEvent(), 1, { open_interest_fp: "1,250.00" })])).message,
    ).toMatch(/: open_interest_fp: expected a non-negative decimal contract count, got "1,250.00"$/);
    expect(importError(kalshiFile([withMarket(highNyEvent(), 1, { status: "halted" })])).message).toMatch(
      /: status: expected a market status \(initialized, active, .*\), got "halted"$/,
    );
  });

  it("a series field", () => {
    expect(importError(kalshiFile([highNyEvent()], [{ ...highNySeries(), tags: "weather" }])).message).toBe(
      'series[0] (KXHIGHNY): tags: expected array, got "weather"',
    );
  });

  it("counts further problems", () => {
    const event = withMarket(withMarket(highNyEvent(), 0, { close_time: "soon" }), 2, { open_time: "later" });
    expect(importError(kalshiFile([event])).message).toMatch(/close_time: .* \(and 1 more problem\)$/);
  });

  it("duplicate tickers", () => {
    const twice = highNyEvent([bracketMarket(), bracketMarket()]);
    expect(importError(kalshiFile([twice])).message).toBe(
      'events[0] (KXHIGHNY-26NOV23) markets[1] (KXHIGHNY-26NOV23-B47.5): ticker: duplicate market ticker "KXHIGHNY-26NOV23-B47.5", first seen at events[0] (KXHIGHNY-26NOV23) markets[0] (KXHIGHNY-26NOV23-B47.5)',
    );
    expect(importError(kalshiFile([legacyEvent(), highNyEvent(), highNyEvent()])).message).toBe(
      'events[2] (KXHIGHNY-26NOV23): event_ticker: duplicate event ticker "KXHIGHNY-26NOV23", first seen at events[1] (KXHIGHNY-26NOV23)',
    );
    const otherDay = { ...highNyEvent([]), event_ticker: "KXHIGHNY-26NOV24" };
    const refiled = { ...bracketMarket(), event_ticker: "KXHIGHNY-26NOV24" };
    expect(
      importError({ events: [highNyEvent([bracketMarket()]), otherDay], markets: [refiled] }).message,
    ).toBe(
      'markets[0] (KXHIGHNY-26NOV23-B47.5): ticker: duplicate market ticker "KXHIGHNY-26NOV23-B47.5", first seen at events[0] (KXHIGHNY-26NOV23) markets[0] (KXHIGHNY-26NOV23-B47.5)',
    );
    expect(importError(kalshiFile([highNyEvent()], [highNySeries(), highNySeries()])).message).toBe(
      'series[1] (KXHIGHNY): ticker: duplicate series ticker "KXHIGHNY", first seen at series[0] (KXHIGHNY)',
    );
  });

  it("a market filed under another event", () => {
    const stray = { ...fixedPointOnlyMarket(), event_ticker: "KXHIGHNY-26NOV24" };
    expect(importError(kalshiFile([highNyEvent([bracketMarket(), stray])])).message).toBe(
      'events[0] (KXHIGHNY-26NOV23) markets[1] (KXHIGHNY-26NOV23-T49): event_ticker: "KXHIGHNY-26NOV24" differs from its event\'s ticker "KXHIGHNY-26NOV23"',
    );
    expect(importError({ event: highNyEvent([]), markets: [stray] }).message).toBe(
      'markets[0] (KXHIGHNY-26NOV23-T49): event_ticker: no event "KXHIGHNY-26NOV24" in this file',
    );
    expect(importError({ event: { ...highNyEvent(), title: 7 } }).message).toBe(
      "event (KXHIGHNY-26NOV23): title: expected string, got 7",
    );
  });

  it("a file in neither format", () => {
    expect(importError([highNyEvent()]).message).toMatch(/^expected our catalogue .* got an array$/);
    expect(importError({ markets: [bracketMarket()], cursor: "" }).message).toMatch(
      /^expected our catalogue .*, got an object with keys "markets", "cursor"$/,
    );
    expect(importError({ events: "none" }).message).toBe('events: expected array, got "none"');
    const future = { ...miniCatalogue(), format: "oddsgate-catalogue/2" };
    expect(importError(future).message).toBe(
      'format: expected "oddsgate-catalogue/1", got "oddsgate-catalogue/2"',
    );
  });

  it("our format: a bad field, a duplicate, a misfiled market", () => {
    const catalogue = miniCatalogue();
    const [first, second] = catalogue.events;
    if (!first?.markets[1] || !second?.markets[0]) throw new Error("fixture shape changed");
    first.markets[1].yesBid = "0.42";
    expect(importError(catalogue).message).toBe(
      'events[0] (KXHIGHNY-26NOV23) markets[1] (KXHIGHNY-26NOV23-T52): yesBid: must be a dollar price like 0.4200 in [0,1], got "0.42"',
    );
    first.markets[1].yesBid = null;
    first.markets[1].closeTime = 1_795_496_340_000;
    expect(importError(catalogue).message).toMatch(
      /^events\[0\] \(KXHIGHNY-26NOV23\) markets\[1\] \(KXHIGHNY-26NOV23-T52\): closeTime: too big: .*, got 1795496340000$/,
    );
    first.markets[1].closeTime = 1_795_496_340;
    second.markets[0].ticker = "KXHIGHNY-26NOV23-B47.5";
    second.markets[0].eventTicker = "KXHIGHNY-26NOV23";
    expect(importError(catalogue).message).toBe(
      'events[1] (KXHIGHNY-26NOV21) markets[0] (KXHIGHNY-26NOV23-B47.5): eventTicker: "KXHIGHNY-26NOV23" differs from its event\'s ticker "KXHIGHNY-26NOV21"',
    );
    second.markets[0].eventTicker = "KXHIGHNY-26NOV21";
    expect(importError(catalogue).message).toBe(
      'events[1] (KXHIGHNY-26NOV21) markets[0] (KXHIGHNY-26NOV23-B47.5): ticker: duplicate market ticker "KXHIGHNY-26NOV23-B47.5", first seen at events[0] (KXHIGHNY-26NOV23) markets[0] (KXHIGHNY-26NOV23-B47.5)',
    );
    const { series: _, ...seriesless } = miniCatalogue();
    expect(importError(seriesless).message).toBe("series: missing (expected array)");
  });
});

/** What `work` rejects with (it must reject). */
async function rejectionOf(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}
