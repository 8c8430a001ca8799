/** `oddsgate serve`: the venue itself. */
import type { Command } from "commander";
import { configFrom, withSettings } from "./support.js";

/** Adds `serve`, which runs until SIGINT or SIGTERM and then closes the venue cleanly. */
export function registerServeCommand(program: Command): void {
  withSettings(
    program.command("serve").description("start the venue (HTTP API, demo catalogue on a fresh database)"),
  ).action(async (options) => {
    const config = configFrom(options);
    const { startServer } = await import("../app/start-server.js");
    const server = await startServer(config);
    const stop = () => {
      server.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
