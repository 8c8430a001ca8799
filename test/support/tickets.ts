/** Reading the quote ticket (src/trading/quotes/quote-ticket.ts) out of a transaction the venue issued. */
import type { Address } from "@solana/kit";
import { addressOf } from "../../src/chain/base58.js";
import { SYSTEM_PROGRAM } from "../../src/chain/programs.js";
import { parseWireTransaction } from "../../src/chain/wire.js";

/** System Program `CreateAccountWithSeed`'s tag. */
const CREATE_ACCOUNT_WITH_SEED = 3;

/** The ticket a base64 transaction opens (the new account of its `CreateAccountWithSeed`), or undefined. */
export function ticketOf(transaction: string): Address | undefined {
  const tx = parseWireTransaction(Buffer.from(transaction, "base64"));
  const keys = tx.accountKeys.map(addressOf);
  const opening = tx.instructions.find(
    (instruction) =>
      keys[instruction.programIdIndex] === SYSTEM_PROGRAM && instruction.data[0] === CREATE_ACCOUNT_WITH_SEED,
  );
  return opening && keys[opening.accounts[1] as number];
}
