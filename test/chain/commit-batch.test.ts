/**
 * A commit's rows as the store and the SQLite writer bind them: the columns that are written as
 * text by hand must read back as the JSON they stand for.
 */
import { describe, expect, it } from "vitest";
import {
  type CommitBatch,
  encodeBatch,
  type StoredTransaction,
  TRANSACTION_COLUMNS,
} from "../../src/chain/sandbox/commit-batch.js";

function landed(overrides: Partial<StoredTransaction>): StoredTransaction {
  return {
    signature: "sig",
    messageHash: "hash",
    slot: 7n,
    blockTime: 1_700_000_000,
    err: null,
    fee: 5000n,
    computeUnits: 150n,
    logs: [],
    preBalances: [],
    postBalances: [],
    wire: new Uint8Array([1, 2, 3]),
    ...overrides,
  };
}

const column = (name: (typeof TRANSACTION_COLUMNS)[number]) => TRANSACTION_COLUMNS.indexOf(name);

describe("a commit's encoded rows", () => {
  it("stores lamports before and after as JSON string lists, u64 max included", () => {
    const max = 18_446_744_073_709_551_615n;
    const batch: CommitBatch = {
      accounts: new Map(),
      transactions: [
        landed({ preBalances: [max, 0n], postBalances: [max - 5000n, 1n] }),
        landed({ signature: "other", preBalances: [], postBalances: [] }),
      ],
    };
    const { transactions } = encodeBatch(batch);
    const perRow = TRANSACTION_COLUMNS.length;
    expect(JSON.parse(transactions[column("balances")] as string)).toEqual({
      pre: [String(max), "0"],
      post: [String(max - 5000n), "1"],
    });
    expect(JSON.parse(transactions[perRow + column("balances")] as string)).toEqual({ pre: [], post: [] });
  });

  it("files a transaction under each of its account keys once", () => {
    const keys = ["A1", "B2", "C3"];
    const batch: CommitBatch = {
      accounts: new Map(),
      transactions: [
        landed({ accountKeys: keys }),
        landed({ signature: "twice", accountKeys: ["A1", "B2", "A1"] }),
      ],
      firstPosition: 10,
    };
    const { history } = encodeBatch(batch);
    expect(history).toEqual([10, JSON.stringify(keys), 7, 11, JSON.stringify(["A1", "B2"]), 7]);
  });
});
