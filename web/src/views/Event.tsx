/**
 * One event: its forecast fan chart (or, without a numeric forecast, its leading outcomes' chances
 * over time), every market by its chance of yes, most likely first (yes bid/ask kept live from the
 * `prices` stream, last price from the trade tape, volume, open interest, status, result), its rules
 * and outcome mints.
 */
import { useEffect, useState } from "preact/hooks";
import { type Candle, count, getJson, type Market, type MarketEvent } from "../api";
import { byChance, chanceOf, dateTime, orderOf, percent, price } from "../format";
import { webHref } from "../links";
import { link } from "../router";
import { follow } from "../stream";
import { FanChart, prefetchForecast } from "./FanChart";

interface Quote {
  yesBid: string | null;
  yesAsk: string | null;
}

/** The event page. */
export function EventView({ ticker }: { ticker: string }) {
  const [event, setEvent] = useState<MarketEvent | null>(null);
  const [error, setError] = useState("");
  const [quotes, setQuotes] = useState<Record<string, Quote>>({});
  const [last, setLast] = useState<Record<string, string>>({});

  useEffect(() => {
    // The forecast is asked for alongside the event, not after it: the chart draws a round trip sooner.
    prefetchForecast(ticker);
    setEvent(null);
    setError("");
    getJson<MarketEvent>(`/api/v1/event/${encodeURIComponent(ticker)}`, { withNestedMarkets: true }).then(
      setEvent,
      (failure: Error) => setError(failure.message),
    );
  }, [ticker]);

  const markets = event?.markets ?? [];
  const tickers = markets.map((market) => market.ticker).join(",");

  useEffect(() => {
    if (!tickers) return;
    const stops = tickers.split(",").map((market) =>
      follow("prices", market, (message) =>
        setQuotes((previous) => ({
          ...previous,
          [market]: { yesBid: message.yes_bid as string | null, yesAsk: message.yes_ask as string | null },
        })),
      ),
    );
    // Last prices: the latest traded close of each market over the past day, in one request, then
    // each trade the stream brings.
    let stopped = false;
    const endTs = Math.floor(Date.now() / 1000);
    getJson<{ market_tickers: string[]; market_candlesticks: Candle[][] }>(
      `/api/v1/event/${encodeURIComponent(ticker)}/candlesticks`,
      { startTs: endTs - 86_400, endTs, periodInterval: 60 },
    ).then(
      (body) => {
        if (stopped) return;
        const found: Record<string, string> = {};
        body.market_tickers.forEach((market, index) => {
          const close = (body.market_candlesticks[index] ?? [])
            .map((candle) => candle.price.close)
            .filter((value) => value !== null)
            .at(-1);
          if (close !== undefined && close !== null) found[market] = (close / 100).toFixed(4);
        });
        setLast((previous) => ({ ...found, ...previous }));
      },
      () => {},
    );
    const trades = tickers
      .split(",")
      .map((market) =>
        follow("trades", market, (message) =>
          setLast((previous) => ({ ...previous, [market]: String(message.yes_price_dollars) })),
        ),
      );
    stops.push(...trades);
    return () => {
      stopped = true;
      for (const stop of stops) stop();
    };
  }, [ticker, tickers]);

  if (error) return <p class="error">{error}</p>;
  if (!event) return <p class="muted">Loading…</p>;
  const first: Market | undefined = markets[0];
  const chances = new Map(
    markets.map((market) => {
      const quote = quotes[market.ticker] ?? market;
      return [market.ticker, chanceOf({ ...quote, result: market.result, last: last[market.ticker] })];
    }),
  );
  const ranked = byChance(markets, (market) => chances.get(market.ticker) ?? null);
  const label = (market: Market) => market.yesSubTitle || market.title;
  return (
    <article aria-labelledby="event-title">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href={link("/")}>Markets</a> ›{" "}
        <a href={link(`/?series=${encodeURIComponent(event.seriesTicker)}&status=any`)}>
          {event.seriesTicker}
        </a>
      </nav>
      <h1 id="event-title">{event.title}</h1>
      <p class="muted">
        {event.subtitle} · {event.ticker} · volume {count(event.volume)} · open interest{" "}
        {count(event.openInterest)}
        {event.strikeDate ? ` · strike ${dateTime(event.strikeDate)}` : ""}
      </p>
      <FanChart
        key={event.ticker}
        seriesTicker={event.seriesTicker}
        eventTicker={event.ticker}
        outcomes={ranked.map((market) => ({ ticker: market.ticker, label: label(market) }))}
      />
      <section class="card" aria-labelledby="markets-of-event">
        <h2 id="markets-of-event">Markets</h2>
        <div class="table-wrap">
          <table data-testid="event-markets">
            <thead>
              <tr>
                <th scope="col">Market</th>
                <th scope="col" class="num">
                  Chance
                </th>
                <th scope="col" class="num">
                  Yes bid
                </th>
                <th scope="col" class="num">
                  Yes ask
                </th>
                <th scope="col" class="num">
                  Last
                </th>
                <th scope="col" class="num opt">
                  Volume
                </th>
                <th scope="col" class="num opt">
                  Open int.
                </th>
                <th scope="col" class="opt">
                  Status
                </th>
                <th scope="col" class="opt">
                  Result
                </th>
              </tr>
            </thead>
            <tbody key={orderOf(ranked)}>
              {ranked.map((market) => {
                const quote = quotes[market.ticker] ?? market;
                const chance = chances.get(market.ticker) ?? null;
                return (
                  <tr key={market.ticker} data-chance={chance ?? ""}>
                    <td class="market-name">
                      <a href={link(`/market/${market.ticker}`)} data-testid="market-link">
                        {label(market)}
                      </a>
                      <div class="muted small ticker">{market.ticker}</div>
                    </td>
                    <td class="num chance-cell">
                      <strong class="chance" data-testid="market-chance">
                        {percent(chance)}
                      </strong>
                      <span class="chance-bar" aria-hidden="true">
                        <span style={{ width: `${Math.round((chance ?? 0) * 100)}%` }} />
                      </span>
                    </td>
                    <td class="num">{price(quote.yesBid)}</td>
                    <td class="num">{price(quote.yesAsk)}</td>
                    <td class="num">{price(last[market.ticker])}</td>
                    <td class="num opt">{count(market.volume)}</td>
                    <td class="num opt">{count(market.openInterest)}</td>
                    <td class="opt">
                      <span class={`badge status-${market.status}`}>{market.status}</span>
                    </td>
                    <td class="opt">{market.result || "—"}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      </section>
      <section class="card" aria-labelledby="rules-title">
        <h2 id="rules-title">Rules</h2>
        {first && <p>{first.rulesPrimary}</p>}
        {first?.rulesSecondary && <p class="muted">{first.rulesSecondary}</p>}
        {(event.settlementSources ?? []).length > 0 && (
          <p class="small">
            Settlement sources:{" "}
            {(event.settlementSources ?? []).map((source) => {
              // Catalogue data: only a web page's URL becomes a link, anything else (javascript:) is text.
              const href = webHref(source.url);
              return href ? (
                <a key={source.url} href={href} rel="noopener noreferrer" target="_blank">
                  {source.name}{" "}
                </a>
              ) : (
                <span key={source.url}>{source.name} </span>
              );
            })}
          </p>
        )}
      </section>
      <details class="card">
        <summary>
          <h2 class="inline">Outcome mints</h2>
        </summary>
        <div class="table-wrap">
          <table class="mono small">
            <thead>
              <tr>
                <th scope="col">Market</th>
                <th scope="col">Settles in</th>
                <th scope="col">Yes mint</th>
                <th scope="col">No mint</th>
                <th scope="col">Redemption</th>
              </tr>
            </thead>
            <tbody>
              {markets.flatMap((market) =>
                Object.entries(market.accounts).map(([settlement, account]) => (
                  <tr key={`${market.ticker}-${settlement}`}>
                    <td>{market.ticker}</td>
                    <td>
                      {settlement.startsWith("EPjF")
                        ? "USDC"
                        : settlement.startsWith("CASH")
                          ? "CASH"
                          : settlement}
                    </td>
                    <td class="addr">{account.yesMint}</td>
                    <td class="addr">{account.noMint}</td>
                    <td>{account.redemptionStatus ?? "—"}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </div>
      </details>
    </article>
  );
}
