/**
 * Opens the archive when ARCHIVE is on: the Parquet writer under ARCHIVE_DIR, the recorder that hears
 * every fresh upstream answer and every stream frame, and the copier of the venue's own fills. What
 * the recorder hears is written by the deployment's leader only (the instance polling the upstream).
 */
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import { FillCopier } from "../archive/fill-copier.js";
import { ArchiveHistory } from "../archive/history.js";
import { hasFiles } from "../archive/layout.js";
import { ParquetArchive } from "../archive/parquet-archive.js";
import { ArchiveRecorder } from "../archive/recorder.js";
import { archiveDir, type Config } from "../config.js";
import { every } from "../every.js";
import type { Tables } from "../storage/database.js";
import type { UpstreamClient } from "../upstream/client.js";

export interface ArchiveConnection {
  readonly recorder: ArchiveRecorder;
  /** Reads of the archive for the history routes. */
  readonly history: ArchiveHistory;
  readonly writer: ParquetArchive;
  readonly dir: string;
  /** Copies new fills and writes everything buffered (tests, and before a planned stop). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

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
    flushMs,
    retentionDays: config.ARCHIVE_RETENTION_DAYS,
    logger: deps.logger,
  });
  const recorder = new ArchiveRecorder(writer, { leading: deps.leading });
  deps.upstream.observe((path, body) => recorder.upstreamAnswer(path, body));
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
  return {
    recorder,
    history,
    writer,
    dir,
    async flush() {
      await fills.copy();
      await writer.flush();
    },
    async close() {
      copying.stop();
      await fills.copy().catch(() => 0);
      await history.close();
      await writer.close();
    },
  };
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
