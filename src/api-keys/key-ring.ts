/**
 * The keys a running instance accepts, held in memory so checking a key costs a hash and a map
 * lookup. It follows storage by polling the keys version, so a revocation made anywhere takes effect
 * here within REFRESH_MS, and tells its listeners which secrets stopped being valid then (or when a
 * grace period ran out), so open streams can be closed; key use is remembered in memory and written
 * in batches.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import { readCounter } from "../storage/counters.js";
import type { Tables } from "../storage/database.js";
import {
  hashSecret,
  KEYS_VERSION,
  type KeyGrant,
  loadGrants,
  loadRevokedHashes,
  recordKeyUse,
} from "./store.js";

/** How often the ring checks storage for key changes: revocations land well within a second. */
export const REFRESH_MS = 400;
/** At most this many secrets are remembered between reloads. */
const RECENT_SECRETS = 10_000;
/** How often last-use times are written. */
export const USE_FLUSH_MS = 10_000;
/**
 * Unknown secrets trigger at most one early refresh per this interval, so guessing cannot load the
 * database: the unknown secrets seen meanwhile wait for that one refresh rather than being refused.
 */
export const MISS_REFRESH_MS = 100;

export class KeyRing {
  private grants = new Map<string, KeyGrant>();
  /**
   * Valid secrets seen since the last reload, so a busy key is hashed once, not per request. Only
   * known-good secrets enter (guesses cannot fill it), it lives in this process only, and it is
   * emptied whenever the keys change, so a revoked key leaves it with the reload.
   */
  private readonly recent = new Map<string, KeyGrant>();
  private version = -1;
  private lastMissRefresh = 0;
  /** The early refresh the unknown secrets seen since the last one wait for, until it reads storage. */
  private nextMissRefresh: Promise<void> | undefined;
  /**
   * Secrets a refresh begun after their arrival did not find. Secrets are random and made when a key
   * is created, so one unknown then never becomes a key: a client that sends a foreign key on every
   * request (a DFlow key, in development) waits for one refresh, not one per request.
   */
  private readonly unknown = new LRUCache<string, true>({ max: RECENT_SECRETS });
  private stopped = false;
  private refreshing: Promise<void> | undefined;
  private readonly lastUse = new Map<string, number>();
  private timers: NodeJS.Timeout[] = [];
  /** Hashes of the secrets valid at the last sweep, and when the first of them with a grace period ends. */
  private valid = new Set<string>();
  /** Hashes of secrets that were keys of this deployment and are no longer: revoked, or seen to stop being valid. */
  private ended = new Set<string>();
  private nextExpiry = Number.POSITIVE_INFINITY;
  private readonly invalidationListeners = new Set<(secretHashes: ReadonlySet<string>) => void>();

  private log: FastifyBaseLogger | undefined;

  constructor(private readonly db: Kysely<Tables>) {}

  /** Loads the keys and starts following changes, reporting failures to `log`. */
  async start(log?: FastifyBaseLogger): Promise<void> {
    this.log = log;
    await this.refresh();
    const every = (ms: number, task: () => Promise<void>, what: string) => {
      const timer = setInterval(() => {
        task().catch((error: unknown) => this.log?.error({ err: error }, `${what} failed`));
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(REFRESH_MS, () => this.refresh(), "key refresh");
    every(USE_FLUSH_MS, () => this.flushUse(), "recording key use");
  }

  /** Stops following changes and writes the last-use times still in memory. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await this.flushUse();
  }

  /** What a secret grants from the keys already loaded: undefined for an unknown, revoked or expired one. */
  lookup(secret: string): KeyGrant | undefined {
    let grant = this.recent.get(secret);
    if (grant === undefined) {
      grant = this.grants.get(hashSecret(secret));
      if (grant !== undefined) {
        if (this.recent.size >= RECENT_SECRETS) this.recent.clear();
        this.recent.set(secret, grant);
      }
    }
    if (grant === undefined || (grant.validUntil !== undefined && Date.now() > grant.validUntil)) {
      return undefined;
    }
    this.lastUse.set(grant.id, Date.now());
    return grant;
  }

  /**
   * Whether a secret was a key of this deployment once and is not now (revoked, rotated away as this
   * instance saw, or past its grace): such a secret is refused even where an unknown one is not.
   */
  hasEnded(secret: string): boolean {
    const hash = hashSecret(secret);
    if (this.ended.has(hash)) return true;
    // Known here, but past its grace: a secret rotated away.
    const until = this.grants.get(hash)?.validUntil;
    return until !== undefined && Date.now() > until;
  }

  /**
   * Like lookup, but an unknown secret first makes the ring look for keys created since its last
   * refresh, so a key created a moment ago (on any instance) is accepted at its first use.
   */
  async check(secret: string): Promise<KeyGrant | undefined> {
    const known = this.lookup(secret);
    if (known !== undefined || this.unknown.has(secret)) return known;
    await this.refreshAfterMiss();
    const found = this.lookup(secret);
    if (found === undefined) this.unknown.set(secret, true);
    return found;
  }

  /**
   * One refresh for every unknown secret seen until it starts, started no sooner than MISS_REFRESH_MS
   * after the previous one. Refusing a secret inside that interval instead would refuse a key created
   * just before the request whenever another unknown secret came first.
   */
  private refreshAfterMiss(): Promise<void> {
    this.nextMissRefresh ??= (async () => {
      const wait = this.lastMissRefresh + MISS_REFRESH_MS - Date.now();
      if (wait > 0) await sleep(wait);
      // Storage is being closed: the secrets still waiting are answered from memory.
      if (this.stopped) {
        this.nextMissRefresh = undefined;
        return;
      }
      // A refresh already under way may have read the version before the key existed: wait it out.
      await this.refreshing?.catch(() => undefined); // its own caller hears its failure
      // Secrets seen from here on may be newer than what this refresh reads: they wait for the next.
      this.nextMissRefresh = undefined;
      this.lastMissRefresh = Date.now();
      await this.refresh();
    })();
    return this.nextMissRefresh;
  }

  /**
   * Hears, after a refresh, the hashes of the secrets that were valid and no longer are: revoked,
   * rotated without grace, or past their grace period. Returns a function that stops listening.
   */
  onInvalidated(listener: (secretHashes: ReadonlySet<string>) => void): () => void {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }

  /** Reloads the grants when the keys version moved; concurrent callers share one reload. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const version = await readCounter(this.db, KEYS_VERSION);
        if (version !== this.version) {
          const [grants, revoked] = await Promise.all([loadGrants(this.db), loadRevokedHashes(this.db)]);
          this.grants = grants;
          for (const hash of revoked) this.ended.add(hash);
          this.recent.clear();
          this.version = version;
        } else if (Date.now() <= this.nextExpiry) return;
        this.sweep();
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Works out which secrets are valid now and tells the listeners about those that no longer are. */
  private sweep(): void {
    const now = Date.now();
    const valid = new Set<string>();
    let nextExpiry = Number.POSITIVE_INFINITY;
    for (const [hash, grant] of this.grants) {
      if (grant.validUntil === undefined) valid.add(hash);
      else if (now <= grant.validUntil) {
        valid.add(hash);
        nextExpiry = Math.min(nextExpiry, grant.validUntil);
      }
    }
    const gone = new Set<string>();
    for (const hash of this.valid) if (!valid.has(hash)) gone.add(hash);
    this.valid = valid;
    this.nextExpiry = nextExpiry;
    if (gone.size === 0) return;
    for (const hash of gone) this.ended.add(hash);
    for (const listener of this.invalidationListeners) {
      try {
        listener(gone);
      } catch (error) {
        this.log?.error({ err: error }, "a listener to key invalidations failed");
      }
    }
  }

  private async flushUse(): Promise<void> {
    if (this.lastUse.size === 0) return;
    const batch = new Map(this.lastUse);
    this.lastUse.clear();
    await recordKeyUse(this.db, batch);
  }
}
