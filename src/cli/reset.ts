/**
 * `oddsgate reset`: deletes the data dir (the SQLite database, the sandbox chain and its keys, the
 * wallets), so the next `npm start` begins afresh with the demo. It asks first; `--yes` skips the
 * question, and without a terminal to ask on it refuses unless given `--yes`.
 */
import fs from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { type Cli, CliError, configFrom, withSettings } from "./support.js";

/** What a data dir of ours holds: a directory holding none of these is not deleted. */
const OURS = ["oddsgate.db", "chain", "wallets"];

/** Adds `reset`. */
export function registerResetCommand(program: Command, cli: Cli): void {
  withSettings(
    program
      .command("reset")
      .option("-y, --yes", "delete without asking (needed without a terminal)")
      .description(
        "delete the data dir (SQLite database, sandbox chain and keys, wallets) after asking; stop the venue first",
      ),
    ["DATA_DIR", "DATABASE_URL"],
  ).action(async (options) => {
    const config = configFrom(cli, options);
    const dir = path.resolve(config.DATA_DIR);
    if (!fs.existsSync(dir)) {
      cli.console.log(`nothing to reset: ${dir} does not exist`);
      return;
    }
    const entries = fs.readdirSync(dir);
    if (entries.length > 0 && !entries.some((entry) => OURS.includes(entry)))
      throw new CliError(
        `${dir} does not look like an oddsgate data dir (no ${OURS.join(", ")}): not deleting it`,
      );
    const postgres = config.DATABASE_URL
      ? " (the PostgreSQL database at DATABASE_URL is not touched: drop it yourself)"
      : "";
    if (!options.yes) {
      if (!cli.io.stdin.isTTY)
        throw new CliError(
          `reset deletes ${dir} and asks first, but there is no terminal to ask on: pass --yes to delete it`,
        );
      const prompt = createInterface({ input: cli.io.stdin, output: cli.io.stderr });
      const answer = await prompt.question(
        `delete ${dir}, with its database, chain, keys and wallets${postgres}? type yes to confirm: `,
      );
      prompt.close();
      if (answer.trim().toLowerCase() !== "yes") {
        cli.console.log("reset cancelled: nothing deleted");
        return;
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
    cli.console.log(`deleted ${dir}${postgres}; the next \`npm start\` begins afresh with the demo`);
  });
}
