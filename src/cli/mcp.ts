/**
 * `oddsgate mcp`: the Model Context Protocol server on stdio, for desktop agents. By default it
 * starts the venue in process, as `serve` does (logs on stderr: stdout carries the protocol), and
 * serves the same tools as its `/mcp` route; with `--url` it talks to a running venue over HTTP.
 */
import type { Readable, Writable } from "node:stream";
import type { Command } from "commander";
import type { Config } from "../config.js";
import type { VenueAccess } from "../mcp/venue-access.js";
import { type Cli, CliError, chainFrom, chainUrlOf, configFrom, withSettings } from "./support.js";

/** Adds `mcp`. */
export function registerMcpCommand(program: Command, cli: Cli): void {
  withSettings(
    program
      .command("mcp")
      .option(
        "--url <url>",
        "a running venue's base URL to talk to, instead of starting one (or ODDSGATE_URL)",
      )
      .option("--api-key <key>", "x-api-key for a production venue (or ODDSGATE_API_KEY)")
      .description(
        "the MCP server on stdio for agents: the venue's market, trading and (development) sandbox tools",
      ),
  ).action(async (options) => {
    const config = configFrom(cli, options);
    const apiKey: string | undefined = options.apiKey ?? cli.io.env.ODDSGATE_API_KEY;
    const url: string | undefined = options.url ?? cli.io.env.ODDSGATE_URL;
    const { serveStdio } = await import("../mcp/stdio.js");
    const stdio = {
      stdin: cli.io.stdin as unknown as Readable,
      stdout: cli.io.stdout as unknown as Writable,
      stopped: cli.io.untilStopped(),
    };
    if (url) return serveStdio(await remoteVenue(config, url, apiKey), stdio);
    const [{ startServer }, { createLogger }, { mcpAccessOf }, { portTaken }] = await Promise.all([
      import("../app/start-server.js"),
      import("../app/logger.js"),
      import("../mcp/http-route.js"),
      import("./serve.js"),
    ]);
    const logger = createLogger(
      config,
      false,
      cli.io.stderr as unknown as Parameters<typeof createLogger>[2],
    );
    const server = await startServer(config, { logger }).catch((error: unknown) => {
      throw portTaken(config, error) ?? error;
    });
    try {
      const access = mcpAccessOf(server.app, apiKey);
      if (!access)
        throw new CliError("this venue serves no MCP tools (its trade API has a port of its own): use --url");
      await serveStdio(access, stdio);
    } finally {
      await server.close();
    }
  });
}

/** The tools' access to the venue at `url`, its chain from the settings, and its sandbox in development. */
async function remoteVenue(config: Config, url: string, apiKey: string | undefined): Promise<VenueAccess> {
  const [{ venueAccess }, { sandboxControls, simulatorViaVenue }, { loadVenueKeys, venueSigners }] =
    await Promise.all([
      import("../mcp/venue-access.js"),
      import("../mcp/sandbox.js"),
      import("../chain/venue-keys.js"),
    ]);
  const chain = await chainFrom(config);
  const sandbox =
    config.MODE === "development"
      ? sandboxControls({
          dataDir: config.DATA_DIR,
          chain,
          rpcUrl: chainUrlOf(config),
          venueSigners: () => venueSigners(loadVenueKeys(config.DATA_DIR)),
          simulator: simulatorViaVenue(url),
        })
      : undefined;
  return venueAccess(
    { baseUrl: url, ...(apiKey ? { apiKey } : {}) },
    { mode: config.MODE, chain, ...(sandbox ? { sandbox } : {}) },
  );
}
