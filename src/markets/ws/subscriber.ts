/**
 * One connection of the market-data stream: what it follows per channel, the position it has had,
 * the entries held while its subscriptions are answered, and its outbox.
 */
import type { WebSocket } from "ws";
import { isRestartMark, MARKET_CHANNELS, type MarketChannel } from "../market-feed.js";
import { type Framed, messageKey } from "./frames.js";
import { Outbox, type OutboxLimits } from "./outbox.js";

type Channel = MarketChannel;

interface ChannelState {
  all: boolean;
  tickers: Set<string>;
  /** The last position sent on this channel: later entries only go out. */
  position: number;
  /** Entries heard while subscriptions are being answered, sent after the last answer. */
  held: Framed[] | undefined;
  /** Subscriptions of this channel being answered. */
  answering: number;
  /** Per market answered meanwhile (`*`: every market), the position its snapshot or replay covers. */
  covered: Map<string, number>;
  /** What the channel followed before the pending answers: its entries heard meanwhile all go out. */
  liveBefore: { all: boolean; tickers: Set<string> } | undefined;
}

export class Subscriber {
  readonly channels: Record<Channel, ChannelState> = {
    prices: channelState(),
    trades: channelState(),
    orderbook: channelState(),
  };
  readonly outbox: Outbox;
  /** Subscriptions are answered one after another, in the order they came. */
  work: Promise<void> = Promise.resolve();

  constructor(
    readonly socket: WebSocket,
    limits: OutboxLimits,
    tooSlow: (subscriber: Subscriber) => void,
  ) {
    this.outbox = new Outbox(socket, limits, () => tooSlow(this));
  }

  /** Whether this connection follows `ticker` on `channel`. */
  wants(channel: Channel, ticker: string): boolean {
    const state = this.channels[channel];
    return state.all || state.tickers.has(ticker);
  }

  /** Whether this connection follows anything on `channel`. */
  follows(channel: Channel): boolean {
    const state = this.channels[channel];
    return state.all || state.tickers.size > 0;
  }

  /** Tickers followed, summed over the channels. */
  get subscriptions(): number {
    return MARKET_CHANNELS.reduce((sum, channel) => sum + this.channels[channel].tickers.size, 0);
  }

  /** Unsubscribing from all ends the channel; from tickers, just those. */
  unsubscribe(channel: Channel, all: boolean, tickers: readonly string[]): void {
    const state = this.channels[channel];
    if (all) {
      state.all = false;
      state.tickers.clear();
    } else for (const ticker of tickers) state.tickers.delete(ticker);
    // Held-back messages of channels and tickers no longer followed are dropped.
    this.outbox.retain((key) => {
      const [keyChannel, ticker] = key.split("|") as [Channel | "control", string];
      return keyChannel === "control" || this.wants(keyChannel, ticker);
    });
  }

  /** Remembers what the channel follows before a batch of answers begins (see `answered`). */
  noteLiveBefore(channel: Channel): void {
    const state = this.channels[channel];
    if (state.answering === 0) state.liveBefore = { all: state.all, tickers: new Set(state.tickers) };
  }

  /** Entries of the channel are heard from now on, but sent after the answer to this subscription. */
  holdForAnswer(channel: Channel): void {
    const state = this.channels[channel];
    state.held ??= [];
    state.answering += 1;
  }

  /**
   * Once the last pending subscription of a channel is answered, sends what was heard meanwhile: all
   * of it for markets followed before, what lies beyond each answer's position for the markets answered.
   */
  answered(channel: Channel): void {
    const state = this.channels[channel];
    state.answering -= 1;
    if (state.answering > 0) return;
    const held = state.held ?? [];
    const covered = state.covered;
    const before = state.liveBefore;
    state.held = undefined;
    state.covered = new Map();
    state.liveBefore = undefined;
    const answeredUpTo = Math.max(0, ...covered.values());
    for (const entry of held) {
      const live = before !== undefined && (before.all || before.tickers.has(entry.ticker));
      // A restart of the tape before an answer's position came before that subscription.
      const upTo = isRestartMark(entry) ? answeredUpTo : (covered.get(entry.ticker) ?? covered.get("*"));
      if (!live && upTo !== undefined && entry.seq <= upTo) continue;
      this.offer(channel, entry);
    }
    state.position = Math.max(state.position, answeredUpTo);
  }

  /** Takes an entry heard on the feed: held while answering, else offered. */
  hear(channel: Channel, entry: Framed): void {
    const state = this.channels[channel];
    if (state.held) state.held.push(entry);
    else this.offer(channel, entry);
  }

  /** Sends an entry the connection follows and has not had yet (a restart mark after its position is a gap). */
  offer(channel: Channel, entry: Framed): void {
    if (entry.seq <= this.channels[channel].position) return;
    if (isRestartMark(entry)) {
      if (this.follows(channel)) this.sendGap(channel, entry.seq);
      return;
    }
    if (!this.wants(channel, entry.ticker)) return;
    this.channels[channel].position = entry.seq;
    this.outbox.deliver(messageKey(channel, entry), entry.frame);
  }

  sendGap(channel: Channel, head: number): void {
    const state = this.channels[channel];
    // Never behind what the connection already has (it resumed into a reset log this instance had not
    // heard of yet): a client continuing from an earlier position would be sent those frames again.
    state.position = Math.max(state.position, head);
    this.sendControl({ channel, type: "gap", seq: state.position, ts: Date.now() });
  }

  /** Control frames (`subscribed`, `gap`, `stale`, `recovered`) are never coalesced away. */
  sendControl(frame: object): void {
    this.outbox.deliver(`control|${Math.random()}`, JSON.stringify(frame));
  }
}

function channelState(): ChannelState {
  return {
    all: false,
    tickers: new Set(),
    position: 0,
    held: undefined,
    answering: 0,
    covered: new Map(),
    liveBefore: undefined,
  };
}
