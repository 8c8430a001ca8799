/**
 * Takes back the rent of quote tickets (`quote-ticket.ts`) once no transaction of their family can
 * land any more: a ticket closed earlier could be opened again by a quote still live. Each pool
 * authority pays for and signs the return of its own tickets, several to a transaction. Every
 * instance sweeps; the store hands each ended ticket to one of them.
 */
import type { Address } from "@solana/kit";
import type { Chain } from "../../chain/chain.js";
import type { Keypair } from "../../chain/ed25519.js";
import { every, type Repeating } from "../../every.js";
import type { TradingBook } from "../spot/trading-book.js";
import { compileMessage, signedTransaction } from "../tx/transaction.js";
import type { ReservationStore } from "./firm-quotes.js";
import { closeTicketInstruction, type QuoteTicket } from "./quote-ticket.js";

/** Tickets closed per transaction: each takes three accounts and about 100 bytes. */
const TICKETS_PER_TRANSACTION = 8;
/** How often ended tickets are looked for. */
const SWEEP_INTERVAL_MS = 2_000;

export interface TicketSweeperOptions {
  store: Pick<ReservationStore, "takeEndedTickets">;
  chain: Chain;
  book: Pick<TradingBook, "clock" | "pool">;
  logger?: { error(object: object, message: string): void };
}

export class TicketSweeper {
  private schedule: Repeating | undefined;

  constructor(private readonly options: TicketSweeperOptions) {}

  start(): void {
    this.schedule = every(SWEEP_INTERVAL_MS, () => this.sweep(), {
      onError: (error) => this.options.logger?.error({ err: error }, "sweeping quote tickets failed"),
    });
  }

  stop(): void {
    this.schedule?.stop();
  }

  /** Closes the tickets of families ended before the chain's current block height; returns how many it closed. */
  async sweep(): Promise<number> {
    const { store, chain, book } = this.options;
    const clock = book.clock;
    const ended = await store.takeEndedTickets(clock.blockHeight);
    if (ended.length === 0) return 0;
    const accounts = await chain.getMultipleAccounts(ended.map((entry) => entry.ticket.address));
    const byBase = new Map<Address, { authority: Keypair; tickets: [QuoteTicket, bigint][] }>();
    ended.forEach(({ ticket }, i) => {
      const lamports = accounts[i]?.lamports ?? 0n;
      const authority = book.pool(ticket.base)?.authority;
      if (lamports === 0n || !authority) return;
      let group = byBase.get(ticket.base);
      if (!group) {
        group = { authority, tickets: [] };
        byBase.set(ticket.base, group);
      }
      group.tickets.push([ticket, lamports]);
    });
    let closed = 0;
    for (const { authority, tickets } of byBase.values()) {
      for (let start = 0; start < tickets.length; start += TICKETS_PER_TRANSACTION) {
        const batch = tickets.slice(start, start + TICKETS_PER_TRANSACTION);
        const message = compileMessage(
          authority.address,
          batch.map(([ticket, lamports]) => closeTicketInstruction(ticket, lamports)),
          clock.latest.blockhash,
        );
        try {
          await chain.sendTransaction(signedTransaction(message, [authority]));
          closed += batch.length;
        } catch (error) {
          this.options.logger?.error(
            { err: error, tickets: batch.map(([ticket]) => ticket.address) },
            "closing quote tickets failed: their rent stays in them",
          );
        }
      }
    }
    return closed;
  }
}
