/**
 * A replay: a whole venue serving a recorded window again, `speed` times faster, from the archive.
 * Its upstream is the archive (books, trades, forecasts and live data as they were at the replay's
 * moment), its `/api/v1/ws` plays the recorded frames with their sequence numbers, its catalogue
 * changes when the recording's did, and its sandbox chain fills orders against the recorded books. It
 * runs in a data directory of its own, removed when it closes: nothing of the live venue is touched.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FastifyServerOptions } from "fastify";
import { ArchiveReader } from "../archive/archive-reader.js";
import { ReplayClock } from "../archive/replay/clock.js";
import { startReplayUpstream } from "../archive/replay/replay-upstream.js";
import { archiveDir, type Config } from "../config.js";
import { every } from "../every.js";
import { ReplayCatalogue } from "../markets/replay-catalogue.js";
import { ReplayFeed } from "../markets/replay-feed.js";
import { openStorage } from "../storage/database.js";
import { createLogger } from "./logger.js";
import { type RunningServer, startServer } from "./start-server.js";

export interface ReplayWindow {
  /** Unix milliseconds of the recording. */
  from: number;
  to: number;
  speed: number;
}

export interface RunningReplay {
  readonly server: RunningServer;
  readonly clock: ReplayClock;
  /** Resolves once every recorded frame of the window has been sent. */
  readonly finished: Promise<void>;
  /** Starts the replay's clock (at once unless started paused); later calls change nothing. */
  start(): void;
  close(): Promise<void>;
}

/** How often the replay stores the catalogue changes whose moment has come (wall-clock ms). */
const CATALOGUE_EVERY_MS = 250;

export async function startReplay(
  config: Config,
  window: ReplayWindow,
  options: {
    logger?: FastifyServerOptions["loggerInstance"];
    /** Wait for start() (say, until clients have subscribed) instead of starting at once. */
    paused?: boolean;
  } = {},
): Promise<RunningReplay> {
  const log = options.logger ?? createLogger(config, Boolean(process.stdout.isTTY));
  const reader = await ArchiveReader.open(archiveDir(config));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-replay-"));
  const closers: (() => Promise<void> | void)[] = [
    () => reader.close(),
    () => fs.rmSync(dataDir, { recursive: true, force: true }),
  ];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    const clock = new ReplayClock(window.from, window.to, window.speed);
    const venueSeed = config.VENUE_SEED ?? randomBytes(16).toString("hex");
    const catalogue = new ReplayCatalogue(reader, clock, venueSeed);
    const seeded = await openStorage({ DATA_DIR: dataDir, DATABASE_URL: undefined });
    try {
      await catalogue.seed(seeded.db);
    } finally {
      await seeded.close();
    }
    const upstream = await startReplayUpstream({ reader, clock, host: config.HOST, port: 0 });
    closers.push(() => upstream.close());
    const feed = new ReplayFeed(reader, clock, (error) =>
      log.error({ err: error }, "replay: reading recorded frames failed; retrying"),
    );
    const server = await startServer(
      {
        ...config,
        DATA_DIR: dataDir,
        DATABASE_URL: undefined,
        REDIS_URL: undefined,
        SOLANA_RPC_URL: undefined,
        UPSTREAM_URL: upstream.url,
        UPSTREAM_TRADING: false,
        SYNC_INTERVAL: 0,
        DEMO_CATALOGUE: false,
        ARCHIVE: false,
        VENUE_SEED: venueSeed,
      },
      { marketFeed: feed, logger: log, upstreamNowSeconds: () => Math.floor(clock.now() / 1000) },
    );
    closers.push(() => server.close());
    const changes = every(CATALOGUE_EVERY_MS, () => catalogue.catchUp(server.storage.db), {
      onError: (error) => log.error({ err: error }, "replay: storing a recorded catalogue change failed"),
    });
    closers.push(() => changes.stop());
    if (!options.paused) clock.start();
    return { server, clock, finished: feed.finished, start: () => clock.start(), close };
  } catch (error) {
    await close();
    throw error;
  }
}
