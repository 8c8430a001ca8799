/**
 * Events: free-text search, filters (category, series, status), sorting and paging. The filters
 * live in the URL's hash, so a filtered list can be bookmarked and the back button works.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { count, type EventPage, getJson, type Market, type Series } from "../api";
import { byChance, chanceOf, dateTime, orderOf, percent } from "../format";
import { link, navigate, type Route } from "../router";

const STATUSES = ["", "active", "initialized", "inactive", "closed", "determined", "finalized"];
const SORTS = [
  ["volume", "Volume"],
  ["volume24h", "24h volume"],
  ["openInterest", "Open interest"],
  ["liquidity", "Liquidity"],
  ["startDate", "Start date"],
] as const;
const PAGE = 25;
/** Outcomes shown for each event in the list: its most likely ones. */
const LEADING = 2;

let seriesCache: Promise<Series[]> | undefined;
let sportsCache: Promise<[string, string[]][]> | undefined;
let categoriesCache: Promise<string[]> | undefined;

/** The series list (for the filter and for each event's category), loaded once per page load. */
function allSeries(): Promise<Series[]> {
  seriesCache ??= getJson<{ series: Series[] }>("/api/v1/series").then((body) => body.series);
  return seriesCache;
}

function allCategories(): Promise<string[]> {
  categoriesCache ??= getJson<{ tagsByCategories: Record<string, string[]> }>(
    "/api/v1/tags_by_categories",
  ).then((body) => Object.keys(body.tagsByCategories).sort());
  return categoriesCache;
}

/** Each sport with its competitions, in the venue's order, for the sports filter. */
function allSports(): Promise<[string, string[]][]> {
  sportsCache ??= getJson<{
    filtersBySports: Record<string, { competitions: string[] }>;
    sportOrdering: string[];
  }>("/api/v1/filters_by_sports").then((body) =>
    body.sportOrdering.map((sport): [string, string[]] => [
      sport,
      body.filtersBySports[sport]?.competitions ?? [],
    ]),
  );
  return sportsCache;
}

/** The events list. */
export function Markets({ route }: { route: Route }) {
  const params = route.params;
  const q = params.get("q") ?? "";
  const category = params.get("category") ?? "";
  const series = params.get("series") ?? "";
  // A sport or one of its competitions: both are series tags in the catalogue.
  const sport = params.get("sport") ?? "";
  const status = params.get("status") ?? "active";
  const sort = params.get("sort") ?? "volume";
  const order = params.get("order") ?? "desc";
  const cursor = Number(params.get("cursor") ?? 0);
  const [page, setPage] = useState<EventPage | null>(null);
  const [error, setError] = useState("");
  const [seriesList, setSeriesList] = useState<Series[]>([]);
  const [categories, setCategories] = useState<string[]>([]);
  const [sports, setSports] = useState<[string, string[]][]>([]);
  const [text, setText] = useState(q);
  const search = useRef<HTMLInputElement>(null);

  useEffect(() => {
    allSeries().then(setSeriesList, () => {});
    allCategories().then(setCategories, () => {});
    allSports().then(setSports, () => {});
  }, []);
  useEffect(() => setText(q), [q]);

  useEffect(() => {
    const controller = new AbortController();
    setError("");
    // With their markets: each event leads with its outcomes' chances.
    const query = {
      limit: PAGE,
      cursor,
      sort,
      order,
      status: status === "any" ? undefined : status,
      withNestedMarkets: true,
    };
    const request = q
      ? getJson<EventPage>("/api/v1/search", { ...query, q }, controller.signal)
      : getJson<EventPage>(
          "/api/v1/events",
          {
            ...query,
            category: category || undefined,
            seriesTickers: series || undefined,
            tags: sport || undefined,
          },
          controller.signal,
        );
    request.then(setPage, (failure: Error) => {
      if (failure.name !== "AbortError") setError(failure.message);
    });
    return () => controller.abort();
  }, [q, category, series, sport, status, sort, order, cursor]);

  const go = (changes: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    if (!("cursor" in changes)) next.delete("cursor");
    navigate(`/?${next}`);
  };

  const seriesByTicker = new Map(seriesList.map((entry) => [entry.ticker, entry]));
  // Search answers by text and status only; the other filters narrow its page here.
  const events = (page?.events ?? []).filter(
    (event) =>
      !q ||
      ((!series || event.seriesTicker === series) &&
        (!category || seriesByTicker.get(event.seriesTicker)?.category === category) &&
        (!sport || (seriesByTicker.get(event.seriesTicker)?.tags ?? []).includes(sport))),
  );

  return (
    <section aria-labelledby="markets-title">
      <h1 id="markets-title">Markets</h1>
      <form
        class="filters"
        aria-label="Search and filter events"
        onSubmit={(event) => {
          event.preventDefault();
          go({ q: text.trim() });
        }}
      >
        <label class="grow">
          <span>Search</span>
          <input
            ref={search}
            type="search"
            name="q"
            placeholder="ticker, title, market…"
            value={text}
            onInput={(event) => setText((event.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          <span>Category</span>
          <select value={category} onChange={(e) => go({ category: (e.target as HTMLSelectElement).value })}>
            <option value="">All</option>
            {categories.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          <span>Series</span>
          <select value={series} onChange={(e) => go({ series: (e.target as HTMLSelectElement).value })}>
            <option value="">All</option>
            {seriesList
              .filter((entry) => !category || entry.category === category)
              .map((entry) => (
                <option key={entry.ticker} value={entry.ticker}>
                  {entry.title}
                </option>
              ))}
          </select>
        </label>
        <label>
          <span>Sport</span>
          <select value={sport} onChange={(e) => go({ sport: (e.target as HTMLSelectElement).value })}>
            <option value="">All</option>
            {sports.map(([name, competitions]) => (
              <optgroup key={name} label={name}>
                <option value={name}>All {name.toLowerCase()}</option>
                {competitions.map((competition) => (
                  <option key={competition} value={competition}>
                    {competition}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </label>
        <label>
          <span>Status</span>
          <select
            value={status}
            onChange={(e) => go({ status: (e.target as HTMLSelectElement).value || "any" })}
          >
            {STATUSES.map((name) => (
              <option key={name} value={name || "any"}>
                {name || "any"}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Sort</span>
          <select value={sort} onChange={(e) => go({ sort: (e.target as HTMLSelectElement).value })}>
            {SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Order</span>
          <select value={order} onChange={(e) => go({ order: (e.target as HTMLSelectElement).value })}>
            <option value="desc">High first</option>
            <option value="asc">Low first</option>
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      {error && <p class="error">{error}</p>}
      <div class="table-wrap">
        <table class="events" aria-busy={page === null}>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col" class="chance-col">
                Chance
              </th>
              <th scope="col" class="opt">
                Series
              </th>
              <th scope="col" class="num opt">
                Volume
              </th>
              <th scope="col" class="num opt">
                Open interest
              </th>
              <th scope="col" class="opt">
                Strike
              </th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.ticker}>
                <td>
                  <a href={link(`/event/${event.ticker}`)} data-testid="event-link">
                    {event.title}
                  </a>
                  <div class="muted small">
                    {event.ticker}
                    {event.subtitle ? ` · ${event.subtitle}` : ""}
                  </div>
                </td>
                <td class="chance-col">
                  <Leading markets={event.markets ?? []} />
                </td>
                <td class="opt">
                  <span class="muted">{seriesByTicker.get(event.seriesTicker)?.category ?? ""}</span>
                  <div class="small">{event.seriesTicker}</div>
                </td>
                <td class="num opt">{count(event.volume)}</td>
                <td class="num opt">{count(event.openInterest)}</td>
                <td class="opt">{dateTime(event.strikeDate)}</td>
              </tr>
            ))}
            {page && events.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  No events match.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={cursor === 0}
          onClick={() => go({ cursor: String(Math.max(0, cursor - PAGE)) })}
        >
          ← Previous
        </button>
        <span class="muted">{page ? `${cursor + 1}–${cursor + (page.events.length || 0)}` : "…"}</span>
        <button
          type="button"
          disabled={page?.cursor === null || page?.cursor === undefined}
          onClick={() => go({ cursor: String(page?.cursor ?? 0) })}
        >
          Next →
        </button>
      </nav>
    </section>
  );
}

/** An event's most likely outcomes with their chances (a one-market event: its chance of yes). */
function Leading({ markets }: { markets: Market[] }) {
  const ranked = byChance(markets, (market) => chanceOf(market));
  if (ranked.length === 0) return <span class="muted">—</span>;
  const only = ranked.length === 1;
  return (
    <ul class="leading" data-testid="event-chances" key={orderOf(ranked.slice(0, LEADING))}>
      {ranked.slice(0, LEADING).map((market) => {
        const chance = chanceOf(market);
        return (
          <li key={market.ticker} data-chance={chance ?? ""}>
            <span class="outcome">{only ? "Yes" : market.yesSubTitle || market.title}</span>
            <strong class="chance">{percent(chance)}</strong>
          </li>
        );
      })}
      {ranked.length > LEADING && <li class="muted small">+{ranked.length - LEADING} more</li>}
    </ul>
  );
}
