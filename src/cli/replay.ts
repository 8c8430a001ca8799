/**
 * `oddsgate replay --from ISO --to ISO --speed N`: serves a recorded window of the archive again as a
 * whole venue on the usual ports: a client written for the live venue works on it by changing its URL.
 * Runs until stopped (SIGINT or SIGTERM); after the window's end it goes on serving its last moment.
 */
import type { Command } from "commander";
import { instant } from "./archive.js";
import { portTaken } from "./serve.js";
import { type Cli, CliError, configFrom, withSettings } from "./support.js";

const REPLAY_SETTINGS = [
  "HOST",
  "PORT",
  "MARKETS_PORT",
  "TRADE_PORT",
  "RPC_PORT",
  "MODE",
  "DATA_DIR",
  "ARCHIVE_DIR",
  "VENUE_SEED",
  "LOG_LEVEL",
  "LOG_FORMAT",
] as const;

/** Adds `replay`. */
export function registerReplayCommand(program: Command, cli: Cli): void {
  withSettings(
    program
      .command("replay")
      .description("serve a recorded window of the archive again as a venue, N times faster")
      .requiredOption("--from <iso>", "start of the window (RFC 3339, or a UTC date: 2026-12-01)")
      .requiredOption("--to <iso>", "end of the window, excluded")
      .option("--speed <n>", "how many times faster than it happened (default 1)", "1"),
    REPLAY_SETTINGS,
  ).action(async (options) => {
    const from = instant(options.from, "--from");
    const to = instant(options.to, "--to");
    if (to <= from) throw new CliError("--to must be after --from");
    const speed = Number(options.speed);
    if (!Number.isFinite(speed) || speed <= 0 || speed > 100_000)
      throw new CliError(`--speed must be a number above 0 and at most 100000, got ${options.speed}`);
    const config = configFrom(cli, options);
    const { startReplay } = await import("../app/start-replay.js");
    const { NoCatalogueSnapshotError } = await import("../markets/replay-catalogue.js");
    const replay = await startReplay(config, { from, to, speed }).catch((error: unknown) => {
      if (error instanceof NoCatalogueSnapshotError) throw new CliError(error.message);
      throw portTaken(config, error) ?? error;
    });
    cli.console.log(
      `replaying ${new Date(from).toISOString()} to ${new Date(to).toISOString()} at ${speed}x on ${replay.server.url}`,
    );
    void replay.finished.then(() =>
      cli.console.log("replay: every recorded frame of the window has been sent"),
    );
    try {
      await cli.io.untilStopped();
    } finally {
      await replay.close();
    }
  });
}
