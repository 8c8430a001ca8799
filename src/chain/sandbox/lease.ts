/**
 * One process at a time runs the sandbox chain of a database: the one that holds the single row of
 * `chain_lease`. It is taken when free, expired, or left behind by a crashed predecessor on this
 * host; renewed every few seconds; released on close. Every takeover increments the row's epoch,
 * and every commit of the chain proves, inside its own database transaction, that its holder and
 * epoch still hold the row (`fence`). So a process that lost the lease (paused past its expiry, cut
 * off from the database, or started beside another) stores nothing more, and the holder, which
 * loads the chain's state only after taking the lease, sees every commit of the one before it: two
 * chains can never both spend the same funds. Expiry is judged by the database's clock, which every
 * instance shares.
 *
 * Commits are fenced; reads are not, so the holder also keeps its own count: each proof (the take or
 * a renewal) pushes the row's expiry a TTL past a moment after this process sent it, so until a TTL
 * after sending it, by this process's own clock, no other process can have taken the lease. Past that (the process was paused, storage was out) its standing is `unconfirmed` until the
 * next renewal proves it again or finds it `lost`; the chain serves its state only while `held`.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { type CompiledQuery, type Kysely, type RawBuilder, sql } from "kysely";
import { every, type Repeating } from "../../every.js";
import { type Dialect, dialectOf, type Tables } from "../../storage/database.js";

/** How long a lease lasts without renewal. */
export const LEASE_TTL_MS = 10_000;
/** How often the holder renews it. */
export const LEASE_RENEW_MS = 3_000;

const LEASE_ROW = 1;
// Reads and takeovers tried before giving up when other processes keep taking the lease meanwhile.
const TAKEOVER_ATTEMPTS = 3;

/** Milliseconds since 1970 by SQLite's clock, as SQL (the SQLite commit worker uses it too). */
export const SQLITE_NOW_MS = "cast((julianday('now') - 2440587.5) * 86400000 as integer)";
const POSTGRES_NOW_MS = "cast(floor(extract(epoch from clock_timestamp()) * 1000) as bigint)";

export interface ChainLeaseSettings {
  /** How long the lease lasts without renewal (default 10 s). */
  ttlMs?: number;
  /** How often it is renewed (default 3 s). */
  renewMs?: number;
  /** This process's monotonic clock in ms (default `performance.now`); tests move it instead of waiting. */
  clock?: () => number;
}

/**
 * Whether this process may serve the chain: `held` (proven within the last TTL), `unconfirmed` (not
 * proven for a TTL: maybe taken meanwhile), `lost` (another process took it), `none` (not taken yet,
 * or released).
 */
export type LeaseStanding = "held" | "unconfirmed" | "lost" | "none";

/** The process that holds (or last held) the lease. */
export interface LeaseHolder {
  holder: string;
  /** Its JSON-RPC URL, once it has published it. */
  rpcUrl: string | null;
  epoch: number;
  /** False once the lease has expired or been released. */
  live: boolean;
}

/** What a commit on another connection needs to prove the lease (see sqlite-writer.ts). */
export interface LeaseFence {
  holder: string;
  epoch: number;
  ttlMs: number;
}

interface LeaseLogger {
  error(object: object, message?: string): void;
}

/** Another live process runs the sandbox chain of this database. */
export class ChainLeaseHeldError extends Error {
  override name = "ChainLeaseHeldError";
  constructor(readonly current: LeaseHolder) {
    super(
      `the sandbox chain of this database is run by another instance (holder ${current.holder}, ` +
        `JSON-RPC at ${current.rpcUrl ?? "an address it has not published yet"}); ` +
        `set SOLANA_RPC_URL=${current.rpcUrl ?? "<its JSON-RPC URL>"} to use it, or stop that instance`,
    );
  }
}

/** This process no longer holds the lease: its chain must not commit anything more. */
export class ChainLeaseLostError extends Error {
  override name = "ChainLeaseLostError";
}

// This host as PIDs see it: the hostname and, on Linux, the PID namespace (containers that share a
// hostname each have their own PIDs).
const HOST = hostIdentity();

// The holders this process runs now. A row naming this process's PID but none of them was left by
// a predecessor that had the same PID (a restarted container's process often does).
const heldHere = new Set<string>();

/** The lease of the sandbox chain on one database. */
export class ChainLease {
  /** Random per start of a chain, readable: `hostname/pid/random`. */
  readonly holder = `${os.hostname().slice(0, 64)}/${process.pid}/${randomBytes(4).toString("hex")}`;
  readonly ttlMs: number;
  private readonly renewMs: number;
  private readonly nowMs: RawBuilder<number>;
  private readonly logger: LeaseLogger | undefined;
  private epoch: number | null = null;
  // The statement that proves and extends the lease: the commits' fence and the renewal.
  private fenceQuery: CompiledQuery | null = null;
  private lostError: ChainLeaseLostError | null = null;
  private renewing: Repeating | undefined;
  private renewal: Promise<boolean> | null = null;
  private readonly lostListeners = new Set<(error: ChainLeaseLostError) => void>();
  private readonly now: () => number;
  /** When (by `now`) the last proof that succeeded was sent. */
  private provenAt = Number.NEGATIVE_INFINITY;
  /** When `standing` last started a renewal: reads while storage is out must not each start one. */
  private kickedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Kysely<Tables>,
    options: ChainLeaseSettings & { dialect?: Dialect; logger?: LeaseLogger } = {},
  ) {
    this.ttlMs = options.ttlMs ?? LEASE_TTL_MS;
    this.renewMs = options.renewMs ?? LEASE_RENEW_MS;
    const postgres = (options.dialect ?? dialectOf(db)) === "postgres";
    this.nowMs = sql.raw<number>(postgres ? POSTGRES_NOW_MS : SQLITE_NOW_MS);
    this.logger = options.logger;
    this.now = options.clock ?? (() => performance.now());
  }

  /** The epoch this process holds, or null (not taken yet, released or lost). */
  get heldEpoch(): number | null {
    return this.lostError ? null : this.epoch;
  }

  /** Why the lease was lost, or null while it holds. */
  get lost(): ChainLeaseLostError | null {
    return this.lostError;
  }

  /**
   * Whether this process may serve the chain now (see LeaseStanding). Once `unconfirmed`, a renewal
   * is started at once (one at a time, at most one a second or per `renewMs`), which makes it `held`
   * again or `lost`.
   */
  standing(): LeaseStanding {
    if (this.lostError) return "lost";
    if (this.epoch === null) return "none";
    const now = this.now();
    if (now - this.provenAt < this.ttlMs) return "held";
    if (now - this.kickedAt >= Math.min(this.renewMs, 1_000)) {
      this.kickedAt = now;
      void this.renew();
    }
    return "unconfirmed";
  }

  /**
   * Takes the lease if it is free, expired, or left by a crashed predecessor on this host, and
   * renews it from then on; throws ChainLeaseHeldError when another live process holds it.
   */
  async acquire(): Promise<void> {
    if (this.epoch !== null) throw new Error("the sandbox chain lease is already taken by this holder");
    const mine = {
      holder: this.holder,
      host: HOST,
      pid: process.pid,
      rpc_url: null,
      expires_at: sql<number>`${this.nowMs} + ${this.ttlMs}`,
    };
    for (let attempt = 0; attempt < TAKEOVER_ATTEMPTS; attempt++) {
      const row = await this.db
        .selectFrom("chain_lease")
        .select(["holder", "host", "pid", "rpc_url", "epoch", "expires_at", this.nowMs.as("now")])
        .where("id", "=", LEASE_ROW)
        .executeTakeFirst();
      if (!row) {
        const sent = this.now();
        const inserted = await this.db
          .insertInto("chain_lease")
          .values({ id: LEASE_ROW, ...mine, epoch: 1 })
          .onConflict((oc) => oc.column("id").doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows) === 1) return this.took(1, sent);
        continue;
      }
      const epoch = Number(row.epoch);
      const expired = Number(row.expires_at) <= Number(row.now);
      const predecessor = !expired && leftByCrashedPredecessor(row);
      if (!expired && !predecessor) {
        throw new ChainLeaseHeldError({ holder: row.holder, rpcUrl: row.rpc_url, epoch, live: true });
      }
      // Compare-and-set on the epoch: of processes taking over at once, one wins.
      const sent = this.now();
      const updated = await this.db
        .updateTable("chain_lease")
        .set({ ...mine, epoch: epoch + 1 })
        .where("id", "=", LEASE_ROW)
        .where("epoch", "=", epoch)
        .$if(!predecessor, (qb) => qb.where("expires_at", "<=", this.nowMs))
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 1) return this.took(epoch + 1, sent);
    }
    const current = await this.current();
    throw new ChainLeaseHeldError(current ?? { holder: "unknown", rpcUrl: null, epoch: 0, live: true });
  }

  /** Who holds (or last held) the lease, or null when no process ever took it. */
  async current(): Promise<LeaseHolder | null> {
    const row = await this.db
      .selectFrom("chain_lease")
      .select(["holder", "rpc_url", "epoch", "expires_at", this.nowMs.as("now")])
      .where("id", "=", LEASE_ROW)
      .executeTakeFirst();
    if (!row) return null;
    return {
      holder: row.holder,
      rpcUrl: row.rpc_url,
      epoch: Number(row.epoch),
      live: Number(row.expires_at) > Number(row.now),
    };
  }

  /** Records the holder's JSON-RPC URL, for the error other instances give (see ChainLeaseHeldError). */
  async publishRpcUrl(url: string): Promise<void> {
    const epoch = this.heldEpoch;
    if (epoch === null)
      throw this.lostError ?? new ChainLeaseLostError("the sandbox chain lease is not held");
    const result = await this.db
      .updateTable("chain_lease")
      .set({ rpc_url: url })
      .where("id", "=", LEASE_ROW)
      .where("holder", "=", this.holder)
      .where("epoch", "=", epoch)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) throw this.lose();
  }

  /**
   * Extends the lease by a TTL. False once it is no longer held (lost, or released); true while it
   * holds, and when storage could not be reached (no other process can take it before it expires,
   * and this one commits nothing meanwhile either).
   */
  renew(): Promise<boolean> {
    // One renewal at a time: a slow database must not pile them up.
    this.renewal ??= this.renewOnce().finally(() => {
      this.renewal = null;
    });
    return this.renewal;
  }

  private async renewOnce(): Promise<boolean> {
    const query = this.fenceQuery;
    if (!query || this.lostError) return false;
    const sent = this.now();
    try {
      const result = await this.db.executeQuery(query);
      if (Number(result.numAffectedRows) === 1) return this.proved(sent, query);
    } catch (error) {
      this.logger?.error({ err: error }, "sandbox chain lease could not be renewed; retrying");
      return true;
    }
    this.lose();
    return false;
  }

  /**
   * Proves inside `trx`, the transaction of a commit, that this process still holds the lease (and
   * extends it); throws ChainLeaseLostError otherwise, which rolls the commit back. In PostgreSQL
   * the row stays locked until the commit ends, so a takeover waits for it (and then sees its writes).
   */
  async fence(trx: Kysely<Tables>): Promise<void> {
    const query = this.fenceQuery;
    if (this.lostError) throw this.lostError;
    if (!query) throw new ChainLeaseLostError("the sandbox chain lease is not held");
    const result = await trx.executeQuery(query);
    // Not counted as a proof (see standing): the commit it extends the lease in may yet roll back.
    if (Number(result.numAffectedRows) !== 1) throw this.lose();
  }

  /** The same proof for a commit made on another connection (the SQLite writer's). */
  fenceToken(): LeaseFence {
    const epoch = this.heldEpoch;
    if (epoch === null)
      throw this.lostError ?? new ChainLeaseLostError("the sandbox chain lease is not held");
    return { holder: this.holder, epoch, ttlMs: this.ttlMs };
  }

  /**
   * Records that another process took the lease; the listeners hear of it once. Returns the error
   * every later commit fails with.
   */
  lose(): ChainLeaseLostError {
    if (this.lostError) return this.lostError;
    const error = new ChainLeaseLostError(
      `another instance took over the sandbox chain's lease (this holder ${this.holder}, epoch ${this.epoch})`,
    );
    this.lostError = error;
    this.stopRenewing();
    for (const listener of this.lostListeners) listener(error);
    return error;
  }

  /** Calls `listener` once the lease is lost; returns the function that removes it. */
  onLost(listener: (error: ChainLeaseLostError) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /** Gives the lease up (it expires at once), so that a restart need not wait for it. */
  async release(): Promise<void> {
    const epoch = this.heldEpoch;
    this.stopRenewing();
    // A renewal finishing after the release would hold the lease for another TTL.
    await this.renewal;
    this.fenceQuery = null;
    this.epoch = null;
    if (epoch === null) return;
    try {
      await this.db
        .updateTable("chain_lease")
        .set({ expires_at: 0 })
        .where("id", "=", LEASE_ROW)
        .where("holder", "=", this.holder)
        .where("epoch", "=", epoch)
        .execute();
    } catch (error) {
      this.logger?.error({ err: error }, "sandbox chain lease could not be released; it expires on its own");
    }
  }

  /** Counts a proof sent at `sent` (by `now`), unless the lease was released or lost meanwhile. */
  private proved(sent: number, query: CompiledQuery): true {
    if (this.fenceQuery === query && !this.lostError) this.provenAt = Math.max(this.provenAt, sent);
    return true;
  }

  private took(epoch: number, sent: number): void {
    this.epoch = epoch;
    this.provenAt = sent;
    heldHere.add(this.holder);
    this.fenceQuery = this.db
      .updateTable("chain_lease")
      .set({ expires_at: sql<number>`${this.nowMs} + ${this.ttlMs}` })
      .where("id", "=", LEASE_ROW)
      .where("holder", "=", this.holder)
      .where("epoch", "=", epoch)
      .compile();
    // renew() reports its own failures; `every` keeps a slow database from piling renewals up.
    this.renewing = every(this.renewMs, () => this.renew(), {
      onError: (error) => this.logger?.error({ err: error }, "sandbox chain lease renewal failed"),
    });
  }

  private stopRenewing(): void {
    this.renewing?.stop();
    heldHere.delete(this.holder);
  }
}

// A lease held by a process of this host that is gone: its chain crashed (a clean close releases
// the lease), so there is no need to wait out the TTL.
function leftByCrashedPredecessor(row: { holder: string; host: string; pid: number }): boolean {
  if (row.host !== HOST) return false;
  if (row.pid === process.pid) return !heldHere.has(row.holder);
  return !processAlive(row.pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function hostIdentity(): string {
  let namespace = "";
  try {
    namespace = ` ${fs.readlinkSync("/proc/self/ns/pid")}`;
  } catch {
    // Not Linux: the hostname alone.
  }
  return `${os.hostname()}${namespace}`.slice(0, 255);
}
