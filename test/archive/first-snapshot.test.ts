import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ArchiveReader } from "../../src/archive/archive-reader.js";
import { startTestServer, type TestServer } from "../support/server.js";

// A venue that syncs records its first catalogue snapshot once that first sync has ended, not in
// the moment it turns ready, where it competed with the first probes and the sync.
let t: TestServer;
const archiveDir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-first-snapshot-"));

beforeAll(async () => {
  t = await startTestServer({
    settings: {
      ARCHIVE: "true",
      ARCHIVE_DIR: archiveDir,
      ARCHIVE_FLUSH_SECONDS: "3600",
      // A sync at start (against the embedded simulator), then not again during the test.
      SYNC_INTERVAL: "3600",
    },
  });
}, 120_000);

afterAll(async () => {
  await t?.stop();
  fs.rmSync(archiveDir, { recursive: true, force: true });
});

describe("the archive's first catalogue snapshot", () => {
  it("is recorded when the venue syncs at start, with every market of the catalogue", async () => {
    const snapshotRows = async () => {
      await t.server.archive?.flush();
      const reader = await ArchiveReader.open(archiveDir);
      try {
        return (await reader.rows("catalogue", {})).filter(
          (row) => row.change === "snapshot" && row.kind === "market",
        );
      } finally {
        reader.close();
      }
    };
    const markets = await vi.waitFor(
      async () => {
        const rows = await snapshotRows();
        expect(rows.length).toBeGreaterThan(0);
        return rows;
      },
      { timeout: 30_000, interval: 200 },
    );
    const catalog = t.server.catalog.require();
    expect(new Set(markets.map((row) => row.ticker))).toEqual(
      new Set(catalog.markets.map((m) => m.record.ticker)),
    );
  });
});
