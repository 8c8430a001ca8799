/** What a client of the market-data stream may ask, checked before any state changes. */
import type { WebSocket } from "ws";
import { z } from "zod";
import { badRequest } from "../../http/stream-peers.js";
import type { Catalog } from "../catalog.js";
import { MARKET_CHANNELS, type MarketChannel } from "../market-feed.js";
import type { Subscriber } from "./subscriber.js";

const ClientMessage = z
  .object({
    type: z.enum(["subscribe", "unsubscribe"]),
    channel: z.enum(MARKET_CHANNELS),
    all: z.literal(true).optional(),
    tickers: z.array(z.string().min(1).max(200)).min(1).max(1_000).optional(),
    since: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .refine((m) => (m.all === true) !== (m.tickers !== undefined), "give either all:true or tickers, not both");

export type ClientRequest = z.infer<typeof ClientMessage>;

/** The request a client sent, or undefined once it was told why it is refused. */
export function readClientRequest(socket: WebSocket, parsed: unknown): ClientRequest | undefined {
  const message = ClientMessage.safeParse(parsed);
  if (message.success) return message.data;
  const issue = message.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
  badRequest(
    socket,
    `expected {"type":"subscribe"|"unsubscribe","channel":"prices"|"trades"|"orderbook","all":true,"since"?:seq} or {...,"tickers":[...]}: ${where}${issue?.message ?? "invalid"}`,
  );
  return undefined;
}

/**
 * The tickers of `wanted` the subscriber does not follow on `channel` yet, when all are markets of the
 * catalog and they keep it within `maxSubscriptions`; else undefined, once the client was told why.
 */
export function newTickers(
  subscriber: Subscriber,
  channel: MarketChannel,
  wanted: readonly string[],
  catalog: Catalog | undefined,
  maxSubscriptions: number,
): string[] | undefined {
  const { socket } = subscriber;
  if (!catalog) {
    badRequest(socket, "the market catalog is still loading; retry shortly");
    return undefined;
  }
  const unknown = wanted.filter((ticker) => !catalog.market(ticker));
  if (unknown.length > 0) {
    badRequest(socket, `unknown tickers: ${unknown.join(", ")}`);
    return undefined;
  }
  const added = wanted.filter((ticker) => !subscriber.channels[channel].tickers.has(ticker));
  if (subscriber.subscriptions + added.length > maxSubscriptions) {
    badRequest(socket, `at most ${maxSubscriptions} subscriptions per connection`);
    return undefined;
  }
  return added;
}
