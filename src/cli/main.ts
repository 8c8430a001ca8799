#!/usr/bin/env node
/**
 * The `oddsgate` command: serve the venue, and operate on its state. Each command group loads the
 * modules it needs only when one of its commands runs, so a command answers without loading the rest.
 */
import { Command } from "commander";
import { registerCatalogueCommands } from "./catalogue.js";
import { registerChainCommands } from "./chain.js";
import { registerKeysCommands } from "./keys.js";
import { registerMarketsCommands } from "./markets.js";
import { registerResetCommand } from "./reset.js";
import { registerServeCommand } from "./serve.js";
import { packageVersion, reportFailure } from "./support.js";
import { registerTradingCommands } from "./trading.js";
import { registerWalletCommands } from "./wallet.js";
import { registerWalletsCommands } from "./wallets.js";

const program = new Command()
  .name("oddsgate")
  .description("Self-hostable prediction-market data and trading venue")
  .version(packageVersion(), "-V, --version", "print the version")
  .showHelpAfterError();

registerServeCommand(program);
registerCatalogueCommands(program);
registerKeysCommands(program);
registerWalletCommands(program);
registerWalletsCommands(program);
registerChainCommands(program);
registerTradingCommands(program);
registerMarketsCommands(program);
registerResetCommand(program);

program.parseAsync().catch(reportFailure);
