/**
 * The SQLite commit worker takes several commits in flight and writes them in order; once one
 * fails, those sent after it are refused (they were executed on top of its effects) until it is
 * told to resume; and it writes nothing once another process has taken the chain's lease.
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CommitBatch, StoredTransaction } from "../../src/chain/sandbox/commit-batch.js";
import { ChainLease, ChainLeaseLostError } from "../../src/chain/sandbox/lease.js";
import { SqliteWriter } from "../../src/chain/sandbox/sqlite-writer.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { tempDir } from "../support/backends.js";

function transaction(signature: string): StoredTransaction {
  return {
    signature,
    slot: 1n,
    blockTime: 0,
    err: null,
    fee: 5000n,
    computeUnits: 100n,
    logs: [],
    preBalances: [],
    postBalances: [],
    wire: new Uint8Array([1, 2, 3]),
    messageHash: `hash of ${signature}`,
  };
}

function batch(address: string, lamports: bigint, signature: string): CommitBatch {
  const owner = "11111111111111111111111111111111";
  return {
    accounts: new Map([[address, { address, lamports, owner, executable: false, data: new Uint8Array(0) }]]),
    transactions: [transaction(signature)],
  };
}

describe("SQLite commit worker", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it("writes pipelined commits in order and refuses those behind a failed one until resumed", async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const storage: Storage = await openStorage({ DATA_DIR: dir.dir });
    cleanups.push(() => storage.close());
    const lease = new ChainLease(storage.db);
    await lease.acquire();
    cleanups.push(() => lease.release());
    const fence = lease.fenceToken();
    const writer = new SqliteWriter(path.join(dir.dir, "oddsgate.db"));
    cleanups.push(() => writer.close());
    const lamportsOf = async (address: string) =>
      (
        await storage.db
          .selectFrom("chain_accounts")
          .select("lamports")
          .where("address", "=", address)
          .executeTakeFirst()
      )?.lamports;

    // Sent together: the second overwrites the first, as it would when executed after it.
    await Promise.all([
      writer.commit(batch("A", 10n, "s1"), fence),
      writer.commit(batch("A", 20n, "s2"), fence),
    ]);
    expect(String(await lamportsOf("A"))).toBe("20");

    // The first of three clashes on a stored signature; the two behind it are refused unwritten.
    const outcomes = await Promise.allSettled([
      writer.commit(batch("B", 1n, "s1"), fence),
      writer.commit(batch("B", 2n, "s3"), fence),
      writer.commit(batch("C", 3n, "s4"), fence),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(await lamportsOf("B")).toBeUndefined();
    expect(await lamportsOf("C")).toBeUndefined();
    await expect(writer.commit(batch("C", 3n, "s4"), fence)).rejects.toThrow(/earlier commit failed/);

    writer.resume();
    await writer.commit(batch("C", 3n, "s4"), fence);
    expect(String(await lamportsOf("C"))).toBe("3");
    expect(writer.usable).toBe(true);

    // Another process takes the lease over (this one's has expired): the next commit is refused unwritten.
    await storage.db.updateTable("chain_lease").set({ expires_at: 0 }).execute();
    const successor = new ChainLease(storage.db);
    await successor.acquire();
    cleanups.push(() => successor.release());
    await expect(writer.commit(batch("D", 4n, "s5"), fence)).rejects.toBeInstanceOf(ChainLeaseLostError);
    expect(await lamportsOf("D")).toBeUndefined();
    // The holder's own proof passes.
    writer.resume();
    await writer.commit(batch("D", 4n, "s5"), successor.fenceToken());
    expect(String(await lamportsOf("D"))).toBe("4");
  });
});
