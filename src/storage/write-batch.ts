/**
 * Group commit: small independent writes issued while the database is busy, or in the same turn of
 * the event loop, run together in one transaction. Each caller's promise settles only once that
 * transaction has committed, so nothing is acknowledged before it is durable; the commit itself
 * (SQLite's WAL frames, PostgreSQL's flush) is paid once per group instead of once per write.
 */
import type { Kysely } from "kysely";
import type { Tables } from "./database.js";

/** Writes per transaction at most, so one group never holds the database for long. */
const MAX_GROUP = 256;

interface Queued {
  write: (db: Kysely<Tables>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

const batches = new WeakMap<Kysely<Tables>, WriteBatch>();

/**
 * Runs `write` in the next group commit of `db`; it must be safe to run twice (the group may roll
 * back for another write's failure, and each of its writes is then run again alone). Inside a
 * transaction it runs at once, as part of it.
 */
export function batchedWrite<T>(db: Kysely<Tables>, write: (db: Kysely<Tables>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return write(db);
  let batch = batches.get(db);
  if (!batch) {
    batch = new WriteBatch(db);
    batches.set(db, batch);
  }
  return batch.run(write);
}

class WriteBatch {
  private queue: Queued[] = [];
  private flushing = false;

  constructor(private readonly db: Kysely<Tables>) {}

  run<T>(write: (db: Kysely<Tables>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) {
        this.flushing = true;
        // The writes issued in this turn of the event loop join this one's group.
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Commits groups until the queue is empty; writes queued meanwhile form the next group. */
  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP);
        if (group.length === 1) {
          // Alone, it commits by itself: no transaction to begin and end around it.
          await this.alone(group[0] as Queued);
          continue;
        }
        let results: unknown[];
        try {
          results = await this.db.transaction().execute(async (trx) => {
            const done: unknown[] = [];
            for (const queued of group) done.push(await queued.write(trx));
            return done;
          });
        } catch {
          // One write failed and rolled the whole group back: run each alone, so only it fails.
          for (const queued of group) await this.alone(queued);
          continue;
        }
        for (const [index, queued] of group.entries()) queued.resolve(results[index]);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Runs one write in its own commit and settles its caller's promise, whatever it throws. */
  private alone(queued: Queued): Promise<void> {
    return Promise.resolve()
      .then(() => queued.write(this.db))
      .then(queued.resolve, queued.reject);
  }
}
