import { answerJson } from "../../upstream/client.js";
import { toReferenceTrades, tradeTimeMs } from "../../upstream/relay.js";
import type { Following, Publication } from "../market-feed.js";
import { type ReferenceTrade, tradeMessage } from "./frames.js";
import type { UpstreamReading } from "./options.js";

/**
 * Reads the trade tape for the leader since the deployment's cursor (one call, more only when a page
 * is full) and publishes its trades in the order they happened; the feed sends each trade id once,
 * whichever leader read it, so the overlap read again each period (and a new leader's first read)
 * repeats nothing.
 */
export class TradeReader {
  constructor(private readonly reading: UpstreamReading) {}

  async poll(followed: Following["trades"]): Promise<void> {
    if (!followed.all && followed.tickers.length === 0) return;
    const { deps, feed, options } = this.reading;
    let since = await feed.tradesCursor();
    if (since === undefined) {
      // Followed, but the cursor was dropped meanwhile (an unfollow raced a subscribe): read from now, marked.
      await feed.startTrades(Math.floor(Date.now() / 1000));
      since = await feed.tradesCursor();
      if (since === undefined) return;
    }
    const startedAt = Date.now();
    const fresh = new Map<string, { publication: Publication; ms: number; order: number }>();
    let cursor = "";
    for (let pages = 0; pages < options.maxTradePages; pages++) {
      const query = new URLSearchParams({ limit: String(options.tradesPageSize), min_ts: String(since) });
      if (cursor) query.set("cursor", cursor);
      const answer = await deps.upstream.get("markets/trades", query);
      if (answer.status !== 200) throw new Error(`the upstream trade tape answered ${answer.status}`);
      const body = answerJson(answer) as { trades?: unknown };
      // The reference shape checks and normalizes each trade; the raw time keeps its milliseconds.
      const page = toReferenceTrades(body);
      const raw = body.trades as { created_time?: unknown }[];
      page.trades.forEach((trade, index) => {
        const t = trade as ReferenceTrade;
        if (fresh.has(t.tradeId)) return;
        const createdMs = tradeTimeMs(raw[index]?.created_time, t.createdTime);
        fresh.set(t.tradeId, { ms: createdMs, order: fresh.size, publication: tradeMessage(t, createdMs) });
      });
      if (!page.cursor) break;
      cursor = page.cursor;
    }
    if (this.reading.stopped()) return;
    // The tape comes newest first; subscribers get it in the order it happened (the tape's, within a millisecond).
    const ordered = [...fresh.values()]
      .sort((a, b) => a.ms - b.ms || b.order - a.order)
      .map((trade) => trade.publication);
    await feed.publish("trades", ordered);
    await feed.healthy("trades", Date.now());
    const next = Math.floor(startedAt / 1000) - options.tradeOverlapSeconds;
    if (next > since) await feed.setTradesCursor(next);
  }
}
