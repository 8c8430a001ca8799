/**
 * The line at one wallet's funds of one mint. Funds back a wallet's firm quotes once, whichever client
 * asks, yet anyone may name any wallet: so a client refused because other clients' quotes hold the
 * funds takes a place in line, and while anyone is ahead of it no other client adds a quote for that
 * wallet and mint. Quotes land or expire within a blockhash lifetime, so a client naming someone
 * else's wallet keeps its funds from it for a turn, never for good. `RedisReservations` keeps the same
 * line in its script.
 */

/** Blocks (about 10 s) a waiting client has to come back once the funds it waits for are free. */
export const TURN_GRACE_BLOCKS = 25n;

interface Place {
  client: string;
  /** The place lapses past this block height unless the client asks again. */
  until: bigint;
}

export class FundsLine {
  private places: Place[] = [];

  /** Whether a client other than `client` is first in line (places lapsed at `blockHeight` dropped first). */
  ahead(client: string, blockHeight: bigint): boolean {
    this.places = this.places.filter((place) => place.until >= blockHeight);
    const first = this.places[0];
    return first !== undefined && first.client !== client;
  }

  /**
   * Keeps `client`'s place, or gives it the last one: it waits until the quotes holding the funds now
   * have ended (`latest`, their last valid block height) and everyone ahead has had a turn.
   */
  wait(client: string, blockHeight: bigint, latest: bigint): void {
    let until = latest > blockHeight ? latest : blockHeight;
    for (const place of this.places) {
      if (place.client === client) {
        if (until + TURN_GRACE_BLOCKS > place.until) place.until = until + TURN_GRACE_BLOCKS;
        return;
      }
      if (place.until > until) until = place.until;
    }
    this.places.push({ client, until: until + TURN_GRACE_BLOCKS });
  }

  /** `client` had its turn: out of line. */
  served(client: string): void {
    this.places = this.places.filter((place) => place.client !== client);
  }

  /** Whether anyone still waits at `blockHeight`. */
  waiting(blockHeight: bigint): boolean {
    return this.places.some((place) => place.until >= blockHeight);
  }
}
