/**
 * API keys (contract §4): issued by the operator, shown once, stored only as a SHA-256 hash. A key
 * has a name, a rate tier and a `streams` permission; rotation keeps the old secret valid for a grace
 * period; revocation is final.
 */
import { hash, randomBytes } from "node:crypto";
import { getBase58Decoder } from "@solana/kit";
import type { Kysely } from "kysely";
import { bumpCounter } from "../storage/counters.js";
import type { ApiKeysTable, Tables } from "../storage/database.js";
import type { KeyTier } from "./tiers.js";

/** Secrets start with this, so secret scanners and people recognise a leaked key. */
export const SECRET_PREFIX = "og_";
/** Bumped whenever a key is created, revoked or rotated; instances poll it. */
export const KEYS_VERSION = "keys_version";

export interface ApiKey {
  id: string;
  name: string;
  tier: KeyTier;
  streams: boolean;
  /** The first characters of the secret, to tell keys apart without revealing them. */
  secretPrefix: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export interface IssuedKey {
  key: ApiKey;
  /** The secret itself: shown to the operator once, never stored. */
  secret: string;
}

/** SHA-256 of a secret. Secrets carry 256 random bits, so a fast hash is enough to make leaks useless. */
export function hashSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

// Base58 text of random bytes; kit's codec, since api-keys lies below chain/ (and its base58.ts) in
// the floor plan, and a key is made rarely enough that the hot-path encoder would buy nothing.
const base58 = getBase58Decoder();

function newSecret(): string {
  return `${SECRET_PREFIX}${base58.decode(randomBytes(32))}`;
}

function toApiKey(row: ApiKeysTable): ApiKey {
  return {
    id: row.id,
    name: row.name,
    tier: row.tier as KeyTier,
    streams: Number(row.streams) === 1,
    secretPrefix: row.secret_prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Raised for an operator mistake (unknown or revoked key id); the message says which. */
export class KeyError extends Error {
  override name = "KeyError";
}

/** Creates a key and returns its secret, which exists nowhere else afterwards. */
export async function createKey(
  db: Kysely<Tables>,
  options: { name: string; tier?: KeyTier; streams?: boolean },
): Promise<IssuedKey> {
  const secret = newSecret();
  const row: ApiKeysTable = {
    id: `key_${base58.decode(randomBytes(8))}`,
    name: options.name,
    tier: options.tier ?? "standard",
    streams: options.streams ? 1 : 0,
    secret_prefix: secret.slice(0, 8),
    hash: hashSecret(secret),
    previous_hash: null,
    previous_valid_until: null,
    created_at: new Date().toISOString(),
    revoked_at: null,
    last_used_at: null,
  };
  await db.transaction().execute(async (trx) => {
    await trx.insertInto("api_keys").values(row).execute();
    await bumpCounter(trx, KEYS_VERSION);
  });
  return { key: toApiKey(row), secret };
}

/** Every key, newest first, revoked ones included. */
export async function listKeys(db: Kysely<Tables>): Promise<ApiKey[]> {
  const rows = await db.selectFrom("api_keys").selectAll().orderBy("created_at", "desc").execute();
  return rows.map(toApiKey);
}

async function activeKeyRow(db: Kysely<Tables>, id: string): Promise<ApiKeysTable> {
  const row = await db.selectFrom("api_keys").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) throw new KeyError(`no key with id ${id} (see: oddsgate keys list)`);
  if (row.revoked_at) throw new KeyError(`key ${id} was revoked at ${row.revoked_at}`);
  return row;
}

/** Revokes a key for good; every instance refuses it within a second. */
export async function revokeKey(db: Kysely<Tables>, id: string): Promise<ApiKey> {
  return db.transaction().execute(async (trx) => {
    const row = await activeKeyRow(trx, id);
    const revoked = { ...row, revoked_at: new Date().toISOString() };
    await trx.updateTable("api_keys").set({ revoked_at: revoked.revoked_at }).where("id", "=", id).execute();
    await bumpCounter(trx, KEYS_VERSION);
    return toApiKey(revoked);
  });
}

/** The longest a pre-rotation secret may keep working. */
export const MAX_GRACE_SECONDS = 30 * 86_400;

/**
 * Gives a key a new secret; the old one keeps working for `graceSeconds` (0: it stops now). Only the
 * secret just replaced gets a grace period: one still in grace from an earlier rotation stops now.
 */
export async function rotateKey(db: Kysely<Tables>, id: string, graceSeconds = 0): Promise<IssuedKey> {
  if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_GRACE_SECONDS) {
    throw new KeyError(
      `the grace period must be whole seconds from 0 to ${MAX_GRACE_SECONDS}, got ${graceSeconds}`,
    );
  }
  const secret = newSecret();
  return db.transaction().execute(async (trx) => {
    const row = await activeKeyRow(trx, id);
    const change = {
      secret_prefix: secret.slice(0, 8),
      hash: hashSecret(secret),
      previous_hash: graceSeconds > 0 ? row.hash : null,
      previous_valid_until:
        graceSeconds > 0 ? new Date(Date.now() + graceSeconds * 1000).toISOString() : null,
    };
    await trx.updateTable("api_keys").set(change).where("id", "=", id).execute();
    await bumpCounter(trx, KEYS_VERSION);
    return { key: toApiKey({ ...row, ...change }), secret };
  });
}

/** A key as request checks see it: what it may do, and until when this secret is valid. */
export interface KeyGrant {
  id: string;
  tier: KeyTier;
  streams: boolean;
  /** Epoch ms after which this secret stops working (a pre-rotation secret), else undefined. */
  validUntil?: number;
}

/** Every usable secret hash, mapped to what it grants. */
export async function loadGrants(db: Kysely<Tables>): Promise<Map<string, KeyGrant>> {
  const rows = await db.selectFrom("api_keys").selectAll().where("revoked_at", "is", null).execute();
  const grants = new Map<string, KeyGrant>();
  for (const row of rows) {
    const grant: KeyGrant = { id: row.id, tier: row.tier as KeyTier, streams: Number(row.streams) === 1 };
    grants.set(row.hash, grant);
    if (row.previous_hash && row.previous_valid_until) {
      grants.set(row.previous_hash, { ...grant, validUntil: Date.parse(row.previous_valid_until) });
    }
  }
  return grants;
}

/** The secret hashes of revoked keys (their last secret and one still in grace when revoked). */
export async function loadRevokedHashes(db: Kysely<Tables>): Promise<Set<string>> {
  const rows = await db
    .selectFrom("api_keys")
    .select(["hash", "previous_hash"])
    .where("revoked_at", "is not", null)
    .execute();
  const hashes = new Set<string>();
  for (const row of rows) {
    hashes.add(row.hash);
    if (row.previous_hash) hashes.add(row.previous_hash);
  }
  return hashes;
}

/** Records when keys were last used, in one statement per key, for a batch collected in memory. */
export async function recordKeyUse(db: Kysely<Tables>, lastUse: ReadonlyMap<string, number>): Promise<void> {
  for (const [id, at] of lastUse) {
    await db
      .updateTable("api_keys")
      .set({ last_used_at: new Date(at).toISOString() })
      .where("id", "=", id)
      .execute();
  }
}
