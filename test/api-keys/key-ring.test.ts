/**
 * The key ring accepts a key at its first use however soon after its creation, even while other
 * unknown secrets are arriving, and unknown secrets cannot make it read storage more than once per
 * MISS_REFRESH_MS.
 */
import type { KyselyPlugin, RootOperationNode } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyRing, MISS_REFRESH_MS, REFRESH_MS } from "../../src/api-keys/key-ring.js";
import { createKey } from "../../src/api-keys/store.js";
import { loadConfig } from "../../src/config.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { tempDir } from "../support/backends.js";

const home = tempDir();
let storage: Storage;
let ring: KeyRing;
/** Reads of the `meta` table (where the keys version lives) the ring made. */
let versionReads = 0;

const countVersionReads: KyselyPlugin = {
  transformQuery({ node }): RootOperationNode {
    if (node.kind === "SelectQueryNode" && JSON.stringify(node.from).includes('"meta"')) versionReads += 1;
    return node;
  },
  transformResult: async ({ result }) => result,
};

beforeAll(async () => {
  storage = await openStorage(loadConfig({}, { DATA_DIR: home.dir, LOG_LEVEL: "silent" }));
  ring = new KeyRing(storage.db.withPlugin(countVersionReads));
  await ring.start();
});
afterAll(async () => {
  await ring?.stop();
  await storage?.close();
  await home.cleanup();
});

describe("KeyRing.check", () => {
  it("accepts a key created just after another unknown secret made the ring look", async () => {
    const first = await createKey(storage.db, { name: "first" });
    expect((await ring.check(first.secret))?.id).toBe(first.key.id);
    // Well inside MISS_REFRESH_MS of the look the first key caused.
    const second = await createKey(storage.db, { name: "second" });
    expect((await ring.check(second.secret))?.id).toBe(second.key.id);
  });

  it("accepts keys used at once alongside a stream of guesses", async () => {
    const keys = await Promise.all([1, 2, 3].map((n) => createKey(storage.db, { name: `k${n}` })));
    const guesses = Array.from({ length: 20 }, (_, n) => ring.check(`og_guess_${n}`));
    const granted = await Promise.all(keys.map((key) => ring.check(key.secret)));
    expect(granted.map((grant) => grant?.id)).toEqual(keys.map((issued) => issued.key.id));
    expect(await Promise.all(guesses)).toEqual(guesses.map(() => undefined));
  });

  it("asks storage about an unknown secret once, however often a client sends it", async () => {
    expect(await ring.check("og_foreign_dflow_key")).toBeUndefined();
    const before = versionReads;
    for (let n = 0; n < 20; n += 1) expect(await ring.check("og_foreign_dflow_key")).toBeUndefined();
    // Answered from memory: at most a periodic refresh falls inside these checks.
    expect(versionReads - before).toBeLessThanOrEqual(1);
  });

  it("reads storage once per interval however many unknown secrets arrive", async () => {
    await ring.check("og_guess_settle");
    const before = versionReads;
    const started = Date.now();
    for (let round = 0; round < 3; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, n) => ring.check(`og_guess_${round}_${n}`)),
      );
      expect(answers.every((answer) => answer === undefined)).toBe(true);
    }
    // 300 guesses: one read per round, at most, plus the ring's own periodic refreshes.
    const periodic = Math.ceil((Date.now() - started) / REFRESH_MS) + 1;
    expect(versionReads - before).toBeLessThanOrEqual(3 + periodic);
    // And the rounds were spaced by the interval, not answered by reading at once.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * MISS_REFRESH_MS);
  });
});
