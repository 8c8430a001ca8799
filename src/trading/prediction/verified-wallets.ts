/**
 * The verified wallets in storage (the reference's Proof check): `oddsgate wallets` writes them, and
 * every instance's WalletVerification reads them. Each change bumps one counter in `meta` in the same
 * transaction, so an instance learns of it by polling that single row and rereads the list only then.
 */
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import { isAddressText } from "../../chain/base58.js";
import { bumpCounter, readCounter } from "../../storage/counters.js";
import type { Tables, VerifiedWalletsTable } from "../../storage/database.js";

/** Bumped whenever a wallet is verified or unverified; instances poll it. */
export const VERIFIED_WALLETS_VERSION = "verified_wallets_version";

/** The longest note an operator may keep with a verification. */
export const MAX_NOTE_CHARS = 200;

/** How much of a rejected address is echoed back: enough to recognise it, never a flood. */
const ECHO_CHARS = 60;

/** A verified wallet as the operator sees it. */
export interface VerifiedWallet {
  address: string;
  /** Why it was verified; null without a note. */
  note: string | null;
  /** ISO time it was verified. */
  verifiedAt: string;
}

/** An operator mistake with the list (a malformed address or note, a wallet not on it); the message says which. */
export class WalletListError extends Error {
  override name = "WalletListError";
}

/** `text` as a wallet address; a WalletListError when it is not base58 of 32 bytes. */
export function walletAddress(text: string): Address {
  // isAddressText bounds the length before it decodes anything.
  if (!isAddressText(text)) {
    const echo = text.length > ECHO_CHARS ? `${text.slice(0, ECHO_CHARS)}…` : text;
    throw new WalletListError(`${JSON.stringify(echo)} is not a wallet address (base58 of 32 bytes)`);
  }
  return text;
}

/** Refuses a note too long for the list or with control characters (one wallet is one line of `wallets list`). */
function checkNote(note: string): void {
  if (note.length > MAX_NOTE_CHARS)
    throw new WalletListError(`the note has ${note.length} characters; at most ${MAX_NOTE_CHARS} are kept`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\u0000-\u001f\u007f]/.test(note))
    throw new WalletListError("the note may not contain control characters (newlines, tabs, ...)");
}

function toWallet(row: VerifiedWalletsTable): VerifiedWallet {
  return { address: row.address, note: row.note, verifiedAt: row.verified_at };
}

/**
 * Verifies `wallet`; `added` is false when it already was (its note is then replaced when one is
 * given, and it keeps the time it was first verified).
 */
export async function verifyWallet(
  db: Kysely<Tables>,
  wallet: Address,
  note?: string,
): Promise<{ wallet: VerifiedWallet; added: boolean }> {
  if (note !== undefined) checkNote(note);
  return db.transaction().execute(async (trx) => {
    // Insert-or-nothing, so two operators verifying the same wallet at once both succeed.
    const inserted = await trx
      .insertInto("verified_wallets")
      .values({ address: wallet, note: note ?? null, verified_at: new Date().toISOString() })
      .onConflict((oc) => oc.column("address").doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) {
      await bumpCounter(trx, VERIFIED_WALLETS_VERSION);
      return { wallet: toWallet(inserted), added: true };
    }
    const existing = await trx
      .selectFrom("verified_wallets")
      .selectAll()
      .where("address", "=", wallet)
      .executeTakeFirstOrThrow();
    // Only the note changes, which no instance holds in memory: no need to bump the version.
    if (note !== undefined && note !== existing.note)
      await trx.updateTable("verified_wallets").set({ note }).where("address", "=", wallet).execute();
    return { wallet: toWallet({ ...existing, note: note ?? existing.note }), added: false };
  });
}

/** Removes `wallet` from the list and returns what it was; a WalletListError when it is not on it. */
export async function unverifyWallet(db: Kysely<Tables>, wallet: Address): Promise<VerifiedWallet> {
  return db.transaction().execute(async (trx) => {
    const removed = await trx
      .deleteFrom("verified_wallets")
      .where("address", "=", wallet)
      .returningAll()
      .executeTakeFirst();
    if (!removed) throw new WalletListError(`${wallet} is not verified (see: oddsgate wallets list)`);
    await bumpCounter(trx, VERIFIED_WALLETS_VERSION);
    return toWallet(removed);
  });
}

/** Every verified wallet, the most recently verified first. */
export async function listVerifiedWallets(db: Kysely<Tables>): Promise<VerifiedWallet[]> {
  const rows = await db
    .selectFrom("verified_wallets")
    .selectAll()
    .orderBy("verified_at", "desc")
    .orderBy("address")
    .execute();
  return rows.map(toWallet);
}

/** The list's version: it moves with every verification and unverification, by any process. */
export function verifiedWalletsVersion(db: Kysely<Tables>): Promise<number> {
  return readCounter(db, VERIFIED_WALLETS_VERSION);
}

/** The addresses of every verified wallet. */
export async function loadVerifiedAddresses(db: Kysely<Tables>): Promise<Set<string>> {
  const rows = await db.selectFrom("verified_wallets").select("address").execute();
  return new Set(rows.map((row) => row.address));
}
