/**
 * A firm quote's ticket: the account every transaction of one quote family creates, so that only one
 * of them can ever land. A family is one client's live firm quotes for one wallet, pair and route; a
 * re-quote joins it instead of adding a hold of its own. Each transaction opens the same account with
 * `CreateAccountWithSeed` (no data, owned by the System Program), funded and based on the family's
 * first pool authority, which signs the transaction anyway: the first to land creates it, and every
 * other transaction of the family then fails with "account already in use". The rent is the venue's
 * and comes back once no transaction of the family can land any more (`ticket-sweeper.ts`).
 */
import { hash, randomBytes } from "node:crypto";
import { type Address, createNoopSigner, type Instruction } from "@solana/kit";
import {
  getCreateAccountWithSeedInstruction,
  getTransferSolWithSeedInstruction,
} from "@solana-program/system";
import { LRUCache } from "lru-cache";
import { addressBytes, addressOf } from "../../chain/base58.js";
import { SYSTEM_PROGRAM } from "../../chain/programs.js";

/** Rent-exempt minimum of an account without data (Solana's default rent): what a ticket holds. */
export const TICKET_LAMPORTS = 890_880n;

/** A family's ticket: its base (the family's first pool authority, which funds and signs) and its seed. */
export interface QuoteTicket {
  base: Address;
  seed: string;
  address: Address;
}

/** A new family's seed: 96 random bits as 16 base64url characters (a seed may have 32). */
export function newTicketSeed(): string {
  return randomBytes(12).toString("base64url");
}

/** The ticket of `base` and `seed`: Solana's `createWithSeed(base, seed, System Program)`. */
export function quoteTicket(base: Address, seed: string): QuoteTicket {
  const digest = hash(
    "sha256",
    Buffer.concat([addressBytes(base), Buffer.from(seed), addressBytes(SYSTEM_PROGRAM)]),
    "buffer",
  );
  return { base, seed, address: addressOf(digest) };
}

/**
 * The instruction that opens `ticket`: its base pays the rent and signs. Kept for the family's next
 * quotes: every one of them opens it, and the guard builds it again to compare.
 */
export function openTicketInstruction(ticket: QuoteTicket): Instruction {
  let instruction = opening.get(ticket.address);
  if (!instruction) {
    instruction = getCreateAccountWithSeedInstruction({
      payer: createNoopSigner(ticket.base),
      newAccount: ticket.address,
      base: ticket.base,
      seed: ticket.seed,
      amount: TICKET_LAMPORTS,
      space: 0n,
      programAddress: SYSTEM_PROGRAM,
    });
    opening.set(ticket.address, instruction);
  }
  return instruction;
}

// Counted through maxSize, not max, which would allocate every slot at start (as the other caches).
const opening = new LRUCache<string, Instruction>({ maxSize: 10_000, sizeCalculation: () => 1 });

/** The instruction that gives a ticket's `lamports` back to its base, which signs (the ticket then no longer exists). */
export function closeTicketInstruction(ticket: QuoteTicket, lamports: bigint): Instruction {
  return getTransferSolWithSeedInstruction({
    source: ticket.address,
    baseAccount: createNoopSigner(ticket.base),
    destination: ticket.base,
    amount: lamports,
    fromSeed: ticket.seed,
    fromOwner: SYSTEM_PROGRAM,
  });
}
