/**
 * `oddsgate pools`, `quote` and `trade`: the venue's constant-product pools, and trading through its
 * HTTP API like any client. What each command does is in trading-operations.ts.
 */
import type { Command } from "commander";
import type { Config } from "../config.js";
import {
  CHAIN_SETTINGS,
  type Cli,
  CliError,
  chainFrom,
  configFrom,
  failingAsMessages,
  hostOf,
  printJson,
  venueSeedFrom,
  withSettings,
  withStorage,
} from "./support.js";
import type { CommandContext } from "./trading-operations.js";

const POOL_SETTINGS: (keyof Config)[] = [...CHAIN_SETTINGS, "DATABASE_URL", "VENUE_SEED"];
export const TRADE_SETTINGS: (keyof Config)[] = [...POOL_SETTINGS, "PORT", "TRADE_PORT", "MARKETS_PORT"];

/** Adds `pools create`, `pools list`, `pools remove`, `quote` and `trade`. */
export function registerTradingCommands(program: Command, cli: Cli): void {
  const pools = program
    .command("pools")
    .description("constant-product pools of the venue (funded by its keys in DATA_DIR on the sandbox chain)");

  withSettings(
    pools
      .command("create")
      .argument("<tokenA>", "USDC, SOL, a demo token symbol or a mint address")
      .argument("<amountA>", "initial reserve of tokenA, in whole tokens, e.g. 1000 or 0.5")
      .argument("<tokenB>", "the other token")
      .argument("<amountB>", "initial reserve of tokenB, in whole tokens")
      .option("--fee-bps <bps>", "swap fee in basis points (0-1000)", "30")
      .option("--json", "print the pool as JSON")
      .description("create a pool and fund its vaults; a running venue trades it within a few slots"),
    POOL_SETTINGS,
  ).action(
    failingAsMessages(async (tokenA: string, amountA: string, tokenB: string, amountB: string, options) => {
      const config = configFrom(cli, options);
      const feeBps = Number(options.feeBps);
      const { createPoolCommand } = await import("./trading-operations.js");
      const pool = await withChainContext(config, (context) =>
        createPoolCommand(context, { tokenA, amountA, tokenB, amountB, feeBps }),
      );
      if (options.json) return printJson(cli, pool);
      cli.console.log(`created pool ${pool.address} (${pool.feeBps} bps): ${pool.mintA} / ${pool.mintB}`);
    }),
  );

  withSettings(
    pools
      .command("list")
      .option("--json", "print the pools and their reserves as JSON")
      .description("the pools in service and their reserves"),
    POOL_SETTINGS,
  ).action(
    failingAsMessages(async (options) => {
      const config = configFrom(cli, options);
      const { listPoolsCommand } = await import("./trading-operations.js");
      const pools = await withChainContext(config, listPoolsCommand);
      if (options.json) printJson(cli, pools);
      else cli.console.log(pools.length > 0 ? pools.map((pool) => pool.line).join("\n") : "no pools");
    }),
  );

  withSettings(
    pools
      .command("remove")
      .argument("<address>", "the pool's address")
      .description("take a pool out of service (its mints stay listed)"),
    ["DATA_DIR", "DATABASE_URL"],
  ).action(
    failingAsMessages(async (address: string, options) => {
      const config = configFrom(cli, options);
      const { removePoolCommand } = await import("./trading-operations.js");
      await withStorage(config, (storage) => removePoolCommand({ storage }, address));
      cli.console.log(`removed pool ${address}`);
    }),
  );

  withSettings(
    program
      .command("quote")
      .argument("<input>", "token given: USDC, SOL, a demo token symbol or a mint address")
      .argument("<output>", "token received")
      .argument("<amount>", "amount of the input, in whole tokens")
      .option("--slippage-bps <bps>", "allowed slippage in basis points (default: auto)")
      .option("--api-key <key>", "x-api-key for a production venue (or ODDSGATE_API_KEY)")
      .option("--json", "print the venue's quote as JSON, with each mint's symbol")
      .description("quote a trade on the running venue"),
    TRADE_SETTINGS,
  ).action(
    failingAsMessages(async (input: string, output: string, amount: string, options) => {
      const config = configFrom(cli, options);
      const { describeOrder, quoteCommand, quoteJson } = await import("./trading-operations.js");
      const venueSeed = await venueSeedFrom(config);
      const quoted = await quoteCommand({
        ...tradeRequest(cli, config, options),
        venueSeed,
        input,
        output,
        amount,
      });
      if (options.json) printJson(cli, quoteJson(quoted));
      else cli.console.log(describeOrder(quoted).join("\n"));
    }),
  );

  withSettings(
    program
      .command("trade")
      .argument("<input>", "token given: USDC, SOL, a demo token symbol or a mint address")
      .argument("<output>", "token received")
      .argument("<amount>", "amount of the input, in whole tokens")
      .argument("[wallet]", "the wallet (name in DATA_DIR/wallets) that signs and pays", "default")
      .option("--slippage-bps <bps>", "allowed slippage in basis points (default: auto)")
      .option("--api-key <key>", "x-api-key for a production venue (or ODDSGATE_API_KEY)")
      .option("--json", "print the order, its fill and the balances as JSON")
      .description(
        "quote, sign with the wallet, send to the chain, wait until it lands (a prediction-market order: until it fills), print balances",
      ),
    TRADE_SETTINGS,
  ).action(
    failingAsMessages(async (input: string, output: string, amount: string, name: string, options) => {
      const config = configFrom(cli, options);
      const [{ describeTrade, tradeCommand, tradeJson }, { walletFile }] = await Promise.all([
        import("./trading-operations.js"),
        import("../chain/wallet.js"),
      ]);
      const venueSeed = await venueSeedFrom(config);
      const outcome = await tradeCommand({
        ...tradeRequest(cli, config, options),
        venueSeed,
        input,
        output,
        amount,
        walletFile: walletFile(config.DATA_DIR, name),
        chain: await chainFrom(config),
      });
      if (options.json) printJson(cli, tradeJson(outcome));
      else cli.console.log(describeTrade(outcome).join("\n"));
    }),
  );
}

/** Runs `task` with storage, the venue seed and the configured chain, as the pools commands need. */
async function withChainContext<T>(
  config: Config,
  task: (context: CommandContext) => Promise<T>,
): Promise<T> {
  const [{ resolveVenueSeed }, chain] = await Promise.all([
    import("../markets/accounts.js"),
    chainFrom(config),
  ]);
  return withStorage(config, async (storage) =>
    task({
      dataDir: config.DATA_DIR,
      storage,
      venueSeed: await resolveVenueSeed(storage.db, config.VENUE_SEED),
      chain,
    }),
  );
}

/** Where a quote or trade goes (the venue's own HTTP API), with the key and slippage the user gave. */
export function tradeRequest(cli: Cli, config: Config, options: Record<string, string | undefined>) {
  const apiKey = options.apiKey ?? cli.io.env.ODDSGATE_API_KEY;
  const slippage = options.slippageBps;
  if (slippage !== undefined && !/^\d{1,5}$/.test(slippage))
    throw new CliError("--slippage-bps must be an integer");
  return {
    venueUrl: `http://${hostOf(config)}:${config.TRADE_PORT ?? config.PORT}`,
    marketsUrl: `http://${hostOf(config)}:${config.MARKETS_PORT ?? config.PORT}`,
    ...(apiKey ? { apiKey } : {}),
    ...(slippage !== undefined ? { slippageBps: Number(slippage) } : {}),
  };
}
