/**
 * One WebSocket to `/api/v1/ws` for the whole page: views follow channels of tickers, the socket
 * keeps every subscription across reconnections, and its state is shown in the header. A browser
 * cannot put a key header on a WebSocket upgrade, so with an API key (production) the stream is not
 * opened and views poll the HTTP API instead (state "polling").
 *
 * The server's `stale` frames (the upstream has given a channel nothing, with the age) and
 * `recovered` frames are the stream's witness of the upstream's health (see health.ts): the header's
 * badge stops saying "live" while any followed channel is stale.
 */
import { signal } from "@preact/signals";
import { apiKey, settings, settingsReady } from "./api";
import { reportUpstream } from "./health";

export type Channel = "prices" | "trades" | "orderbook";
export type StreamState = "connecting" | "live" | "offline" | "polling";

/** What the header shows. */
export const streamState = signal<StreamState>("connecting");

export interface StreamMessage {
  channel?: Channel;
  type: string;
  market_ticker?: string;
  [field: string]: unknown;
}

type Listener = (message: StreamMessage) => void;

interface Follow {
  channel: Channel;
  ticker: string;
  listener: Listener;
}

const follows = new Set<Follow>();
let socket: WebSocket | undefined;
let retryMs = 500;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
/** Channels the server says are stale, with since when (server time, ms). */
const staleChannels = new Map<string, number>();

/** Follows a control frame's word on the upstream: `stale` (since `ts - age_ms`) or `recovered`. */
function noteControl(message: StreamMessage): void {
  const channel = String(message.channel);
  if (message.type === "stale") {
    const since = Number(message.ts) - Number(message.age_ms);
    const known = staleChannels.get(channel);
    staleChannels.set(channel, known === undefined ? since : Math.min(known, since));
  } else if (message.type === "recovered") staleChannels.delete(channel);
  else return;
  if (staleChannels.size === 0) reportUpstream("stream", false);
  else {
    const since = Math.min(...staleChannels.values());
    reportUpstream("stream", true, Number.isFinite(since) ? since : Date.now(), "the stream is stale");
  }
}

/** Whether views should poll over HTTP instead of following the stream. */
export function streamUnavailable(): boolean {
  return apiKey.value !== "" || settings.value.mode === "production";
}

function subscribeAll(ws: WebSocket): void {
  const byChannel = new Map<Channel, Set<string>>();
  for (const follow of follows) {
    const tickers = byChannel.get(follow.channel) ?? new Set<string>();
    tickers.add(follow.ticker);
    byChannel.set(follow.channel, tickers);
  }
  for (const [channel, tickers] of byChannel) {
    ws.send(JSON.stringify({ type: "subscribe", channel, tickers: [...tickers] }));
  }
}

let opening = false;

/** Opens the socket once the settings say whether it may be (production streams need a header). */
function open(): void {
  if (opening || socket) return;
  opening = true;
  void settingsReady.then(() => {
    opening = false;
    connect();
  });
}

function connect(): void {
  if (streamUnavailable()) {
    streamState.value = "polling";
    return;
  }
  if (socket) return;
  streamState.value = "connecting";
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/api/v1/ws`;
  const ws = new WebSocket(url);
  socket = ws;
  ws.onopen = () => {
    retryMs = 500;
    // The server says again, per channel, whether it is stale once subscribed.
    staleChannels.clear();
    reportUpstream("stream", false);
    streamState.value = "live";
    subscribeAll(ws);
  };
  ws.onmessage = (event) => {
    let message: StreamMessage;
    try {
      message = JSON.parse(String(event.data)) as StreamMessage;
    } catch {
      return;
    }
    if (message.type === "stale" || message.type === "recovered") {
      noteControl(message);
      return;
    }
    for (const follow of follows) {
      if (follow.channel === message.channel && follow.ticker === message.market_ticker)
        follow.listener(message);
    }
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = undefined;
    streamState.value = "offline";
    // Back off up to 10 s, so a stopped server is not hammered.
    retryTimer = setTimeout(open, retryMs);
    retryMs = Math.min(retryMs * 2, 10_000);
  };
}

/** Delivers `channel` messages of `ticker` to `listener` until the returned function is called. */
export function follow(channel: Channel, ticker: string, listener: Listener): () => void {
  const entry: Follow = { channel, ticker, listener };
  follows.add(entry);
  if (socket?.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify({ type: "subscribe", channel, tickers: [ticker] }));
  } else {
    clearTimeout(retryTimer);
    open();
  }
  return () => {
    follows.delete(entry);
    const still = [...follows].some((other) => other.channel === channel && other.ticker === ticker);
    if (!still && socket?.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ type: "unsubscribe", channel, tickers: [ticker] }));
    }
  };
}

/** Opens the stream when the page starts, so its state shows before any view follows. */
export function startStream(): void {
  open();
}
