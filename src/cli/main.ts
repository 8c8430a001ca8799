#!/usr/bin/env node
/**
 * The `oddsgate` command: serve the venue, and operate on its state. Each command group loads the
 * modules it needs only when one of its commands runs, so a command answers without loading the rest.
 * `runCli` runs one command line against the I/O it is given: the process's when this file is the
 * bin, a test's when the tests run it in process.
 */
import { Console } from "node:console";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Command, CommanderError, type OutputConfiguration } from "commander";
import { registerArchiveCommands } from "./archive.js";
import { registerCatalogueCommands } from "./catalogue.js";
import { registerChainCommands } from "./chain.js";
import { registerKeysCommands } from "./keys.js";
import { registerMarketsCommands } from "./markets.js";
import { registerMcpCommand } from "./mcp.js";
import { registerReplayCommand } from "./replay.js";
import { registerResetCommand } from "./reset.js";
import { registerServeCommand } from "./serve.js";
import { registerSimCommands } from "./sim.js";
import { type Cli, type CliIo, packageVersion, reportFailure } from "./support.js";
import { registerTradingCommands } from "./trading.js";
import { registerWalletCommands } from "./wallet.js";
import { registerWalletsCommands } from "./wallets.js";

/** The `oddsgate` program, its commands printing to `cli`'s streams and throwing instead of exiting. */
export function buildProgram(cli: Cli): Command {
  const program = new Command()
    .name("oddsgate")
    .description("Self-hostable prediction-market data and trading venue")
    // Before any command is added: subcommands copy these settings when they are created.
    .exitOverride()
    .configureOutput(outputTo(cli.io))
    .version(packageVersion(), "-V, --version", "print the version")
    .showHelpAfterError();

  registerServeCommand(program, cli);
  registerCatalogueCommands(program, cli);
  registerKeysCommands(program, cli);
  registerWalletCommands(program, cli);
  registerWalletsCommands(program, cli);
  registerChainCommands(program, cli);
  registerTradingCommands(program, cli);
  registerMarketsCommands(program, cli);
  registerResetCommand(program, cli);
  registerSimCommands(program, cli);
  registerArchiveCommands(program, cli);
  registerReplayCommand(program, cli);
  registerMcpCommand(program, cli);
  return program;
}

/**
 * Runs `oddsgate ...argv` to its end and returns its exit status: 0, 1 for a failed command (reported
 * on stderr), or commander's own for a usage error, help or the version.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const cli: Cli = { io, console: new Console({ stdout: io.stdout, stderr: io.stderr }) };
  try {
    await buildProgram(cli).parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    // Commander has already printed its message (or the help, or the version).
    if (error instanceof CommanderError) return error.exitCode;
    return reportFailure(cli, error);
  }
}

/** Commander's help, version and usage errors, written to the run's streams. */
function outputTo(io: CliIo): OutputConfiguration {
  return { writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) };
}

/** The process's own I/O; `serve` stops on SIGINT or SIGTERM. */
function processIo(): CliIo {
  return {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    get stdin() {
      return process.stdin;
    },
    untilStopped: () =>
      new Promise((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      }),
  };
}

/** Whether node was asked to run this file (the bin, through any symlink), rather than a test importing it. */
function isProcessEntry(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  const self = fileURLToPath(import.meta.url);
  let ran = path.resolve(entry);
  try {
    ran = fs.realpathSync(ran);
  } catch {
    // `node dist/cli/main`: node added the extension itself.
  }
  return ran === self || ran === self.replace(/\.[jt]s$/, "");
}

if (isProcessEntry()) process.exitCode = await runCli(process.argv.slice(2), processIo());
