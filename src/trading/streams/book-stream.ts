/**
 * The book stream (`/book-stream`, reference §8.4): ten levels a side of a pair's direct pools, one
 * frame per slot, on the rules of every pair stream (`pair-stream.ts`: subscribe and unsubscribe as on
 * `/quote-stream`, changes only, slow consumers coalesced then closed, Redis fan-out under
 * `book-stream:` keys). A frame is `{"u","ts","subscribe"?,"unsubscribe"?,"updates":[...],"skipped"}`;
 * an update is `{"sb","sq","mid","tick","crossed","b":[{"price","cumulative_size_human"}...],"a":[...]}`
 * (what the levels are: `book-levels.ts`), or `{"sb","sq","e":"no_market"}` for a pair without a
 * direct pool. `skipped` counts the slots this connection missed since its previous frame because it,
 * or the server, fell behind (0 when it kept up). Frames carry `seq`, and subscriptions resume from
 * it (`since`, `gap`), and a chain whose slot stands still is told with `stale`/`recovered` frames, as
 * on every pair stream.
 */
import type { Address } from "@solana/kit";
import type { WebSocket } from "ws";
import type { TradingBook } from "../spot/trading-book.js";
import type { CpmmPool } from "../spot/venues/cpmm-pool.js";
import { type PairBook, pairBook } from "./book-levels.js";
import {
  PAIR_MESSAGE_USAGE,
  PairMessage,
  PairPeer,
  PairStreamHub,
  type PairStreamOptions,
} from "./pair-stream.js";

type BookUpdate = ({ sb: string; sq: string } & PairBook) | { sb: string; sq: string; e: "no_market" };

export type BookStreamOptions = PairStreamOptions;

/** Accepts `/book-stream` connections and sends their frames every slot. */
export class BookStreamHub extends PairStreamHub<PairPeer> {
  /** The pools of each mint pair (`base|quote`, both orders), rebuilt whenever the book's graph is. */
  private poolsByPair = new Map<string, CpmmPool[]>();
  /** The graph `poolsByPair` was built from: the book replaces it whenever its pools change. */
  private indexedGraph: object | undefined;

  constructor(book: TradingBook, options: BookStreamOptions = {}) {
    super(book, options, { schema: PairMessage, usage: PAIR_MESSAGE_USAGE });
  }

  protected createPeer(socket: WebSocket): PairPeer {
    return new PairPeer(socket);
  }

  protected acknowledgement(base: Address, quote: Address): string {
    return JSON.stringify({ sb: base, sq: quote });
  }

  protected override frameTail(_peer: PairPeer, skipped: number): string {
    return `,"skipped":${skipped}`;
  }

  protected price(base: Address, quote: Address): string {
    return JSON.stringify(this.levels(base, quote));
  }

  /** The pair's ten levels a side, from every direct pool with both sides available. */
  private levels(base: Address, quote: Address): BookUpdate {
    const pools = this.directPools(base, quote).filter(
      (pool) => pool.available(0) > 0n && pool.available(1) > 0n,
    );
    const first = pools[0];
    if (!first) return { sb: base, sq: quote, e: "no_market" };
    const baseSide = first.sideOf(base);
    const decimals = {
      base: first.tokens[baseSide].decimals,
      quote: first.tokens[baseSide === 0 ? 1 : 0].decimals,
    };
    const reserves = pools.map((pool) => {
      const side = pool.sideOf(base);
      return {
        base: pool.available(side),
        quote: pool.available(side === 0 ? 1 : 0),
        feeBps: pool.record.feeBps,
      };
    });
    return { sb: base, sq: quote, ...pairBook(reserves, decimals) };
  }

  /** The pools trading `base` against `quote`, in the router's order (the book's). */
  private directPools(base: Address, quote: Address): readonly CpmmPool[] {
    const { graph } = this.book;
    if (this.indexedGraph !== graph) {
      const pools = new Map<string, CpmmPool[]>();
      for (const pool of this.book.allPools()) {
        for (const key of [`${pool.mints[0]}|${pool.mints[1]}`, `${pool.mints[1]}|${pool.mints[0]}`]) {
          const list = pools.get(key);
          if (list) list.push(pool);
          else pools.set(key, [pool]);
        }
      }
      this.poolsByPair = pools;
      this.indexedGraph = graph;
    }
    return this.poolsByPair.get(`${base}|${quote}`) ?? [];
  }
}
