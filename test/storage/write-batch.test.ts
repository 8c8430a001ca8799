import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { batchedWrite } from "../../src/storage/write-batch.js";
import { BACKENDS, type BackendSettings } from "../support/backends.js";

describe.each(BACKENDS)("group commit on $name", (backend) => {
  let settings: BackendSettings;
  let cleanup: () => Promise<void>;
  let storage: Storage;

  beforeEach(async (context) => {
    if (!backend.available) return context.skip(`${backend.name} is not available here`);
    ({ settings, cleanup } = await backend.create());
    storage = await openStorage(loadConfig({}, settings));
  });
  afterEach(async () => {
    await storage?.close();
    await cleanup?.();
  });

  const insertMeta = (key: string, value: string) => (db: Storage["db"]) =>
    db.insertInto("meta").values({ key, value }).execute();

  /** The meta rows whose key starts with `prefix`, as another connection sees them. */
  async function committed(prefix: string): Promise<Record<string, string>> {
    const other = await openStorage(loadConfig({}, settings));
    try {
      const rows = await other.db.selectFrom("meta").selectAll().where("key", "like", `${prefix}%`).execute();
      return Object.fromEntries(rows.map((row) => [row.key, row.value]));
    } finally {
      await other.close();
    }
  }

  it("commits every write issued together before any of them resolves", async () => {
    const keys = Array.from({ length: 40 }, (_, index) => `batch-${index}`);
    await Promise.all(keys.map((key) => batchedWrite(storage.db, insertMeta(key, key.toUpperCase()))));
    expect(await committed("batch-")).toEqual(
      Object.fromEntries(keys.map((key) => [key, key.toUpperCase()])),
    );
  });

  it("fails only the write that failed; the others in its group commit", async () => {
    await storage.db.insertInto("meta").values({ key: "taken", value: "first" }).execute();
    const results = await Promise.allSettled([
      batchedWrite(storage.db, insertMeta("group-a", "a")),
      batchedWrite(storage.db, insertMeta("taken", "second")),
      batchedWrite(storage.db, insertMeta("group-b", "b")),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await committed("group-")).toEqual({ "group-a": "a", "group-b": "b" });
    expect(await committed("taken")).toEqual({ taken: "first" });
  });

  it("runs inside a caller's transaction as part of it", async () => {
    await expect(
      storage.db.transaction().execute(async (trx) => {
        await batchedWrite(trx, insertMeta("inside", "x"));
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(await committed("inside")).toEqual({});
  });
});
