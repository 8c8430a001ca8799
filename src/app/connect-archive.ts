/**
 * Opens the archive when ARCHIVE is on: the Parquet writer under ARCHIVE_DIR, the recorder that hears
 * every fresh upstream answer and every stream frame, and the copier of the venue's own fills. What
 * the recorder hears is written by the deployment's leader only (the instance polling the upstream).
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import { FillCopier } from "../archive/fill-copier.js";
import { ArchiveHistory } from "../archive/history.js";
import { hasFiles } from "../archive/layout.js";
import { ParquetArchive } from "../archive/parquet-archive.js";
import { ArchiveRecorder } from "../archive/recorder.js";
import { archiveDir, type Config } from "../config.js";
import type { EventRecord, Series } from "../contract/markets.js";
import { every, type Repeating } from "../every.js";
import type { Tables } from "../storage/database.js";
import type { UpstreamClient } from "../upstream/client.js";

export interface ArchiveConnection {
  readonly recorder: ArchiveRecorder;
  /** Reads of the archive for the history routes. */
  readonly history: ArchiveHistory;
  readonly writer: ParquetArchive;
  readonly dir: string;
  /**
   * Records the whole catalogue now and once a day (on the leader): a replay starts from the last such
   * snapshot before its window and applies the changes recorded since.
   */
  snapshotDaily(read: CatalogueReader): void;
  /** Copies new fills and writes everything buffered, the first catalogue snapshot included (tests, and before a planned stop). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Reads the whole catalogue: the series and events, and the markets in chunks as stored (JSON text). */
export type CatalogueReader = (
  onMarkets: (markets: readonly { ticker: string; data: string }[]) => void,
) => Promise<{ series: Series[]; events: EventRecord[] }>;

const DAY_MS = 86_400_000;

type ArchiveSettings = Pick<
  Config,
  "ARCHIVE" | "ARCHIVE_DIR" | "DATA_DIR" | "ARCHIVE_FLUSH_SECONDS" | "ARCHIVE_RETENTION_DAYS"
>;

export async function connectArchive(
  config: ArchiveSettings,
  deps: {
    db: Kysely<Tables>;
    upstream: UpstreamClient;
    /** Whether this instance leads the deployment's upstream polling now. */
    leading: () => boolean;
    logger: FastifyBaseLogger;
  },
): Promise<ArchiveConnection | undefined> {
  if (!config.ARCHIVE) return undefined;
  const dir = archiveDir(config);
  const flushMs = config.ARCHIVE_FLUSH_SECONDS * 1000;
  const writer = await ParquetArchive.open({
    dir,
    instance: instanceName(config.DATA_DIR),
    flushMs,
    retentionDays: config.ARCHIVE_RETENTION_DAYS,
    logger: deps.logger,
  });
  const recorder = new ArchiveRecorder(writer, { leading: deps.leading });
  deps.upstream.observe((path, _body, json) => recorder.upstreamAnswer(path, json));
  const fills = new FillCopier(deps.db, writer, {
    leading: deps.leading,
    archivedUpTo: () => newestArchivedFill(dir),
  });
  await fills.start();
  const copying = every(flushMs, () => fills.copy(), {
    onError: (error) =>
      deps.logger.error({ err: error }, "archive: copying the venue's fills failed; retrying"),
  });
  const history = new ArchiveHistory(dir);
  let snapshots: Repeating | undefined;
  let firstSnapshot: Promise<void> = Promise.resolve();
  let closed = false;
  return {
    recorder,
    history,
    writer,
    dir,
    snapshotDaily(read) {
      // Asked once the first sync has ended, which may be after the archive closed.
      if (snapshots || closed) return;
      snapshots = every(
        DAY_MS,
        async () => {
          const snapshot = recorder.catalogueSnapshot();
          if (!snapshot) return;
          const { series, events } = await read((markets) => snapshot.markets(markets));
          snapshot.head(series, events);
        },
        {
          immediately: true,
          onError: (error) => deps.logger.error({ err: error }, "archive: recording the catalogue failed"),
        },
      );
      firstSnapshot = snapshots.nextRun();
    },
    async flush() {
      await firstSnapshot;
      await fills.copy();
      await writer.flush();
    },
    async close() {
      closed = true;
      copying.stop();
      snapshots?.stop();
      await fills.copy().catch(() => 0);
      await history.close();
      await writer.close();
    },
  };
}

/**
 * This instance's name in the archive's file names, kept in its DATA_DIR: stable across restarts, so
 * an instance compacts the small files its earlier runs left, and distinct from every other instance
 * sharing ARCHIVE_DIR (each has a data dir of its own).
 */
function instanceName(dataDir: string): string {
  const file = path.join(dataDir, "archive-instance");
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    const name = randomBytes(6).toString("hex");
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, `${name}\n`, { flag: "wx" });
    return name;
  }
}

/** The newest fill id the archive's files hold. */
async function newestArchivedFill(dir: string): Promise<number | undefined> {
  if (!(await hasFiles(dir, "fills"))) return undefined;
  // Loaded when first read: DuckDB costs start-up time and memory a venue that archives nothing need not pay.
  const { ArchiveReader } = await import("../archive/archive-reader.js");
  const reader = await ArchiveReader.open(dir);
  try {
    const [newest] = await reader.rows("fills", { orderBy: "id", descending: true, limit: 1 });
    return newest?.id;
  } finally {
    reader.close();
  }
}
