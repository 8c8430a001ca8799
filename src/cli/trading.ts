/**
 * `oddsgate pools`, `quote` and `trade`: the venue's constant-product pools, and trading through its
 * HTTP API like any client. What each command does is in trading-operations.ts.
 */
import type { Command } from "commander";
import type { Config } from "../config.js";
import {
  CHAIN_SETTINGS,
  CliError,
  chainFrom,
  configFrom,
  failingAsMessages,
  hostOf,
  venueSeedFrom,
  withSettings,
  withStorage,
} from "./support.js";
import type { CommandContext } from "./trading-operations.js";

const POOL_SETTINGS: (keyof Config)[] = [...CHAIN_SETTINGS, "DATABASE_URL", "VENUE_SEED"];
const TRADE_SETTINGS: (keyof Config)[] = [...POOL_SETTINGS, "PORT", "TRADE_PORT"];

/** Adds `pools create`, `pools list`, `pools remove`, `quote` and `trade`. */
export function registerTradingCommands(program: Command): void {
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
      .description("create a pool and fund its vaults; a running venue trades it within a few slots"),
    POOL_SETTINGS,
  ).action(
    failingAsMessages(async (tokenA: string, amountA: string, tokenB: string, amountB: string, options) => {
      const config = configFrom(options);
      const feeBps = Number(options.feeBps);
      const { createPoolCommand } = await import("./trading-operations.js");
      const pool = await withChainContext(config, (context) =>
        createPoolCommand(context, { tokenA, amountA, tokenB, amountB, feeBps }),
      );
      console.log(`created pool ${pool.address} (${pool.feeBps} bps): ${pool.mintA} / ${pool.mintB}`);
    }),
  );

  withSettings(
    pools.command("list").description("the pools in service and their reserves"),
    POOL_SETTINGS,
  ).action(
    failingAsMessages(async (options) => {
      const config = configFrom(options);
      const { listPoolsCommand } = await import("./trading-operations.js");
      const lines = await withChainContext(config, listPoolsCommand);
      console.log(lines.length > 0 ? lines.join("\n") : "no pools");
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
      const config = configFrom(options);
      const { removePoolCommand } = await import("./trading-operations.js");
      await withStorage(config, (storage) => removePoolCommand({ storage }, address));
      console.log(`removed pool ${address}`);
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
      .description("quote a trade on the running venue"),
    TRADE_SETTINGS,
  ).action(
    failingAsMessages(async (input: string, output: string, amount: string, options) => {
      const config = configFrom(options);
      const { quoteCommand } = await import("./trading-operations.js");
      const venueSeed = await venueSeedFrom(config);
      const lines = await quoteCommand({
        ...tradeRequest(config, options),
        venueSeed,
        input,
        output,
        amount,
      });
      console.log(lines.join("\n"));
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
      .description("quote, sign with the wallet, send to the chain, wait until it lands, print balances"),
    TRADE_SETTINGS,
  ).action(
    failingAsMessages(async (input: string, output: string, amount: string, name: string, options) => {
      const config = configFrom(options);
      const [{ tradeCommand }, { walletFile }] = await Promise.all([
        import("./trading-operations.js"),
        import("../chain/wallet.js"),
      ]);
      const venueSeed = await venueSeedFrom(config);
      const lines = await tradeCommand({
        ...tradeRequest(config, options),
        venueSeed,
        input,
        output,
        amount,
        walletFile: walletFile(config.DATA_DIR, name),
        chain: await chainFrom(config),
      });
      console.log(lines.join("\n"));
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
function tradeRequest(config: Config, options: Record<string, string | undefined>) {
  const apiKey = options.apiKey ?? process.env.ODDSGATE_API_KEY;
  const slippage = options.slippageBps;
  if (slippage !== undefined && !/^\d{1,5}$/.test(slippage))
    throw new CliError("--slippage-bps must be an integer");
  return {
    venueUrl: `http://${hostOf(config)}:${config.TRADE_PORT ?? config.PORT}`,
    ...(apiKey ? { apiKey } : {}),
    ...(slippage !== undefined ? { slippageBps: Number(slippage) } : {}),
  };
}
