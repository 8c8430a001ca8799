/**
 * Wallet verification (the reference's Proof check): the verified wallets, kept in storage
 * (verified-wallets.ts), and whether prediction-market buys require one. The set is held in memory,
 * since it is read on the order path; it follows storage by polling the list's version every
 * POLL_MS, so a change made through any instance or `oddsgate wallets` is seen everywhere within a
 * second, at the cost of reading one row per poll.
 */
import type { Address } from "@solana/kit";
import type { Kysely } from "kysely";
import { every, type Repeating } from "../../every.js";
import type { Tables } from "../../storage/database.js";
import { loadVerifiedAddresses, verifiedWalletsVersion } from "./verified-wallets.js";

/** How often an instance checks the list's version: a change lands well within a second. */
export const POLL_MS = 250;

/** Where a failing poll is reported (the venue's logger). */
export interface VerificationLogger {
  error(object: object, message: string): void;
  info(object: object, message: string): void;
}

/** The verified wallets as this instance last read them. */
export class WalletVerification {
  private verified: ReadonlySet<string> = new Set();
  /** The version the set was read at; -1 before the first read. */
  private version = -1;
  private polling: Repeating | undefined;
  private refreshing: Promise<void> | undefined;
  /** Whether the last poll failed, so an outage is logged once, not every POLL_MS. */
  private failing = false;

  constructor(
    readonly deps: {
      db: Kysely<Tables>;
      required: boolean;
      /** Milliseconds between checks of the list's version (default POLL_MS). */
      pollMs?: number;
      logger?: VerificationLogger;
    },
  ) {}

  /** Whether prediction-market buys must go to a verified wallet. */
  get required(): boolean {
    return this.deps.required;
  }

  /** Whether `wallet` is verified, from memory (false for every wallet until start has read the list). */
  isVerified(wallet: Address): boolean {
    return this.verified.has(wallet);
  }

  /** Loads the list and starts following changes made by any instance. */
  async start(): Promise<void> {
    await this.refresh();
    this.polling ??= every(this.deps.pollMs ?? POLL_MS, () => this.poll(), {
      // poll reports its own failures; nothing else can throw.
      onError: () => {},
    });
  }

  /** Stops following changes; a reload in progress finishes first. */
  async stop(): Promise<void> {
    this.polling?.stop();
    this.polling = undefined;
    await this.refreshing?.catch(() => {});
  }

  /** Rereads the list when its version moved; concurrent callers share one read. */
  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const version = await verifiedWalletsVersion(this.deps.db);
        if (version === this.version) return;
        // Read after the version: a change committed in between moves the version again, and the
        // next poll rereads the list.
        this.verified = await loadVerifiedAddresses(this.deps.db);
        this.version = version;
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** One scheduled refresh; while storage fails, the last list read stays in force. */
  private async poll(): Promise<void> {
    try {
      await this.refresh();
      if (this.failing) this.deps.logger?.info({}, "verified wallets are being read again");
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.deps.logger?.error({ err: error }, "reading the verified wallets failed");
      this.failing = true;
    }
  }
}
