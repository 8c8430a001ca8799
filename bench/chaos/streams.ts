/**
 * `/api/v1/ws` clients (`MarketStreamClient`, which reconnects and resumes from its last `seq`), half
 * on each instance, all following every trade. Each client's trades channel is checked frame by frame:
 * a trade whose `seq` skips past the last position seen, or a `subscribed` frame claiming a position
 * past it, without a `gap` frame in between, is a hole nobody told the client about. The trade ids each
 * received are kept to compare with the upstream's own tape at the end (see `audit.ts`).
 */
import { MarketStreamClient, type MarketStreamMessage } from "../../src/client/streams.js";
import { sleep } from "../support.js";
import type { Cluster, InstanceName } from "./cluster.js";

/** Something a client's trades channel showed, at a time: a gap frame, or a hole without one. */
export interface StreamEvent {
  at: number;
  client: number;
  kind: "gap" | "hole" | "backwards";
  /** Positions it spans (a hole: the seqs never seen). */
  size: number;
}

export interface TrackedClient {
  index: number;
  instance: InstanceName;
  client: MarketStreamClient;
  /** The last position accounted for on the trades channel (undefined before the first `subscribed`). */
  position: number | undefined;
  /** When the first `subscribed` frame arrived. */
  subscribedAt: number | undefined;
  /** Trade id -> when it arrived. */
  trades: Map<string, number>;
  duplicates: number;
  /** When each gap frame arrived. */
  gapsAt: number[];
}

export class StreamClients {
  readonly clients: TrackedClient[] = [];
  readonly events: StreamEvent[] = [];

  /** Opens `count` clients in batches, half on each instance, each following every trade. */
  static async open(cluster: Cluster, count: number): Promise<StreamClients> {
    const made = new StreamClients();
    for (let index = 0; index < count; index++) {
      const instance: InstanceName = index % 2 === 0 ? "A" : "B";
      // Reconnections back off up to 2 s (default 10 s), so a restarted instance's clients return within a phase.
      const client = MarketStreamClient.connect(cluster.instances[instance].url, { maxBackoffMs: 2_000 });
      const tracked: TrackedClient = {
        index,
        instance,
        client,
        position: undefined,
        subscribedAt: undefined,
        trades: new Map(),
        duplicates: 0,
        gapsAt: [],
      };
      client.onMessage((message) => made.observe(tracked, message));
      client.subscribe("trades", "all");
      made.clients.push(tracked);
      if (index % 50 === 49) await sleep(100);
    }
    const deadline = Date.now() + 60_000;
    while (made.clients.some((c) => c.subscribedAt === undefined)) {
      if (Date.now() > deadline)
        throw new Error("stream clients did not all get their `subscribed` frame in 60 s");
      await sleep(100);
    }
    return made;
  }

  /** How many clients are connected now. */
  connected(): number {
    return this.clients.filter((c) => c.client.connected).length;
  }

  close(): void {
    for (const tracked of this.clients) tracked.client.close();
  }

  private observe(tracked: TrackedClient, message: MarketStreamMessage): void {
    if (!("channel" in message) || message.channel !== "trades") return;
    const now = Date.now();
    const position = tracked.position;
    switch (message.type) {
      case "subscribed":
        tracked.subscribedAt ??= now;
        // A resume answered past what arrived: the frames in between were never sent.
        if (position !== undefined && message.seq > position)
          this.events.push({ at: now, client: tracked.index, kind: "hole", size: message.seq - position });
        tracked.position = Math.max(position ?? 0, message.seq);
        return;
      case "gap":
        tracked.gapsAt.push(now);
        this.events.push({
          at: now,
          client: tracked.index,
          kind: "gap",
          size: message.seq - (position ?? 0),
        });
        tracked.position = Math.max(position ?? 0, message.seq);
        return;
      case "trade": {
        if (tracked.trades.has(message.trade_id)) {
          tracked.duplicates += 1;
          return;
        }
        tracked.trades.set(message.trade_id, now);
        if (position === undefined) return;
        if (message.seq <= position) {
          // An older position again: the channel's numbering went back (its log was lost).
          this.events.push({ at: now, client: tracked.index, kind: "backwards", size: 1 });
          return;
        }
        if (message.seq > position + 1)
          this.events.push({
            at: now,
            client: tracked.index,
            kind: "hole",
            size: message.seq - position - 1,
          });
        tracked.position = message.seq;
        return;
      }
    }
  }
}
