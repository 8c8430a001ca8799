#!/usr/bin/env node
/** The `oddsgate` command: serve the venue, and operate on its state. */
import fs from "node:fs";
import cliProgress from "cli-progress";
import { Command, Option } from "commander";
import { connectUpstream } from "../app/connect-upstream.js";
import { startServer } from "../app/start-server.js";
import { RpcChain } from "../chain/rpc-client.js";
import { ChainLeaseHeldError } from "../chain/sandbox/lease.js";
import { loadVenueKeys, venueSigners } from "../chain/venue-keys.js";
import {
  airdropSol,
  createWallet,
  faucetTokens,
  resolveMint,
  resolveWallet,
  walletBalance,
  walletFile,
} from "../chain/wallet.js";
import {
  type Config,
  ConfigError,
  type ConfigInput,
  ConfigSchema,
  loadConfig,
  SETTING_NAMES,
} from "../config.js";
import { ApiError } from "../contract/errors.js";
import {
  type ApiKey,
  createKey,
  KEY_TIERS,
  KeyError,
  listKeys,
  revokeKey,
  rotateKey,
} from "../keys/store.js";
import { resolveVenueSeed } from "../markets/accounts.js";
import { generateDemoCatalogue } from "../markets/demo/generate.js";
import { ImportFormatError, parseCatalogueInput } from "../markets/import/parse.js";
import { resolveDemoAnchor, saveCatalogue } from "../markets/store.js";
import { syncFromUpstream } from "../markets/sync.js";
import { openStorage, type Storage } from "../storage/database.js";
import {
  type CommandContext,
  createPoolCommand,
  listPoolsCommand,
  quoteCommand,
  removePoolCommand,
  tradeCommand,
} from "../trading/commands.js";

/** Rows above which an import shows a progress bar. */
const PROGRESS_THRESHOLD_ROWS = 5_000;

/** A failure the user can fix, reported as its message alone. */
class CliError extends Error {}

function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

const flagOf = (name: string) => `--${name.toLowerCase().replaceAll("_", "-")}`;
const optionKey = (name: string) =>
  name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** Adds one `--kebab-case <value>` flag per setting (or only the listed ones). */
function withSettings(command: Command, names: readonly (keyof Config)[] = SETTING_NAMES): Command {
  for (const name of names) {
    const description = ConfigSchema.shape[name].description ?? `overrides ${name}`;
    command.addOption(new Option(`${flagOf(name)} <value>`, description));
  }
  return command;
}

function configFrom(options: Record<string, string | undefined>): Config {
  const overrides: ConfigInput = {};
  for (const name of SETTING_NAMES) overrides[name] = options[optionKey(name)];
  return loadConfig(process.env, overrides);
}

const program = new Command()
  .name("oddsgate")
  .description("Self-hostable prediction-market data and trading venue")
  .showHelpAfterError();

withSettings(
  program.command("serve").description("start the venue (HTTP API, demo catalogue on a fresh database)"),
).action(async (options) => {
  const server = await startServer(configFrom(options));
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
});

withSettings(
  program
    .command("import")
    .argument("<file>", "a catalogue in our JSON format or Kalshi trade-api v2 JSON ({events:[...]})")
    .addOption(
      new Option("--tokenize <which>", "which Kalshi markets get outcome tokens")
        .choices(["none", "tradable", "all"])
        .default("none"),
    )
    .description("load series, events and markets into storage in one transaction (idempotent)"),
  ["DATA_DIR", "DATABASE_URL", "VENUE_SEED"],
).action(async (file: string, options) => {
  const config = configFrom(options);
  const catalogue = parseCatalogueInput(readJsonFile(file), {
    tokenize: options.tokenize,
  });
  await withStorage(config, async (storage) => {
    const venueSeed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
    const rows =
      catalogue.series.length +
      catalogue.events.length +
      catalogue.events.reduce((n, e) => n + e.markets.length, 0);
    const bar =
      rows >= PROGRESS_THRESHOLD_ROWS
        ? new cliProgress.SingleBar({ format: "importing [{bar}] {percentage}% {value}/{total} rows" })
        : undefined;
    bar?.start(rows, 0);
    const counts = await saveCatalogue(storage.db, venueSeed, catalogue, (done) => bar?.update(done));
    bar?.stop();
    console.log(
      `imported ${counts.series} series, ${counts.events} events, ${counts.markets} markets into ${storage.location}`,
    );
  });
});

withSettings(
  program
    .command("sync")
    .description(
      "read every series, event and market from the upstream exchange (UPSTREAM_URL, else the demo simulator) and store what changed",
    ),
  [
    "DATA_DIR",
    "DATABASE_URL",
    "VENUE_SEED",
    "HOST",
    "UPSTREAM_URL",
    "UPSTREAM_TIMEOUT_MS",
    "UPSTREAM_KEY_ID",
    "UPSTREAM_PRIVATE_KEY_FILE",
    "SYNC_TOKENIZE",
  ],
).action(async (options) => {
  // Without an upstream, sync from a simulator of the demo catalogue started for this run only.
  const config = { ...configFrom(options), SIMULATOR_PORT: 0 };
  await withStorage(config, async (storage) => {
    const venueSeed = await resolveVenueSeed(storage.db, config.VENUE_SEED);
    const anchor = await resolveDemoAnchor(storage.db);
    const upstream = await connectUpstream(config, () => generateDemoCatalogue({ anchor }));
    const bar = process.stderr.isTTY
      ? new cliProgress.SingleBar({
          format: "syncing from the upstream: {value} events, {markets} markets read ({phase})",
        })
      : undefined;
    bar?.start(0, 0, { markets: 0, phase: "reading" });
    try {
      const result = await syncFromUpstream({
        db: storage.db,
        venueSeed,
        upstream: upstream.client,
        tokenize: config.SYNC_TOKENIZE,
        onProgress: (p) => bar?.update(p.events, { markets: p.markets, phase: p.phase }),
      });
      bar?.stop();
      const { upstream: read, changed } = result;
      console.log(
        `synced from ${upstream.simulator ? "the demo simulator" : upstream.url}: ${read.series} series, ${read.events} events, ${read.markets} markets read; ` +
          `${changed.series} series, ${changed.events} events, ${changed.markets} markets new or changed in ${storage.location}`,
      );
    } finally {
      bar?.stop();
      await upstream.close();
    }
  });
});

const STORAGE_SETTINGS: (keyof Config)[] = ["DATA_DIR", "DATABASE_URL"];

/** Runs `task` against the configured storage, closing it afterwards. */
async function withStorage<T>(config: Config, task: (storage: Storage) => Promise<T>): Promise<T> {
  const storage = await openStorage(config);
  try {
    return await task(storage);
  } finally {
    await storage.close();
  }
}

function describeKey(key: ApiKey): string {
  const status = key.revokedAt ? `revoked ${key.revokedAt}` : "active";
  return `${key.id}  ${JSON.stringify(key.name)}  tier ${key.tier}  streams ${key.streams ? "yes" : "no"}  ${key.secretPrefix}…  ${status}`;
}

function printSecret(secret: string): void {
  console.log(`secret (shown once, store it now; send it as the x-api-key header):\n${secret}`);
}

const keys = program.command("keys").description("issue and manage API keys (stored only as hashes)");

withSettings(
  keys
    .command("create")
    .description("create a key and print its secret once")
    .requiredOption("--name <name>", "who or what the key is for")
    .addOption(new Option("--tier <tier>", "rate tier").choices(KEY_TIERS).default("standard"))
    .option("--streams", "allow WebSocket streams", false),
  STORAGE_SETTINGS,
).action(async (options) => {
  await withStorage(configFrom(options), async (storage) => {
    const issued = await createKey(storage.db, {
      name: options.name,
      tier: options.tier,
      streams: options.streams,
    });
    console.log(`created ${describeKey(issued.key)}`);
    printSecret(issued.secret);
  });
});

withSettings(
  keys
    .command("list")
    .description("list keys (never their secrets)")
    .option("--json", "machine-readable output"),
  STORAGE_SETTINGS,
).action(async (options) => {
  await withStorage(configFrom(options), async (storage) => {
    const all = await listKeys(storage.db);
    if (options.json) console.log(JSON.stringify(all, null, 2));
    else if (all.length === 0) console.log("no keys yet: oddsgate keys create --name NAME");
    else for (const key of all) console.log(`${describeKey(key)}  last used ${key.lastUsedAt ?? "never"}`);
  });
});

withSettings(
  keys
    .command("revoke")
    .argument("<id>", "key id, from keys list")
    .description("revoke a key on every instance"),
  STORAGE_SETTINGS,
).action(async (id: string, options) => {
  await withStorage(configFrom(options), async (storage) => {
    console.log(`revoked ${describeKey(await revokeKey(storage.db, id))}`);
  });
});

withSettings(
  keys
    .command("rotate")
    .argument("<id>", "key id, from keys list")
    .option("--grace <seconds>", "how long the old secret keeps working", "0")
    .description("give a key a new secret"),
  STORAGE_SETTINGS,
).action(async (id: string, options) => {
  const grace = Number(options.grace);
  await withStorage(configFrom(options), async (storage) => {
    const issued = await rotateKey(storage.db, id, grace);
    console.log(
      `rotated ${describeKey(issued.key)}; the old secret ${grace > 0 ? `works for ${grace} s more` : "no longer works"}`,
    );
    printSecret(issued.secret);
  });
});

const CHAIN_SETTINGS: (keyof Config)[] = ["DATA_DIR", "HOST", "SOLANA_RPC_URL", "RPC_PORT"];

/** The chain a wallet command talks to: SOLANA_RPC_URL, else the local venue's sandbox on RPC_PORT. */
function chainFrom(config: Config): RpcChain {
  const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
  return new RpcChain({ url: config.SOLANA_RPC_URL ?? `http://${host}:${config.RPC_PORT}` });
}

/** Runs a wallet command, reporting its failures (bad input, an unreachable chain) as one line. */
function walletAction<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (error) {
      if (error instanceof CliError || !(error instanceof Error)) throw error;
      throw new CliError(error.message);
    }
  };
}

const wallet = program
  .command("wallet")
  .description("wallets (keypair files in DATA_DIR/wallets) on the sandbox chain or SOLANA_RPC_URL");

withSettings(
  wallet
    .command("new")
    .argument("[name]", "wallet name", "default")
    .description("create a wallet keypair file"),
  ["DATA_DIR"],
).action(
  walletAction(async (name: string, options) => {
    const config = configFrom(options);
    const file = walletFile(config.DATA_DIR, name);
    console.log(`created wallet ${name}: ${createWallet(file)} (keypair in ${file})`);
  }),
);

withSettings(
  wallet
    .command("balance")
    .argument("[wallet]", "a wallet name or an address", "default")
    .description("SOL and every token account of a wallet"),
  CHAIN_SETTINGS,
).action(
  walletAction(async (name: string, options) => {
    const config = configFrom(options);
    const balance = await walletBalance(chainFrom(config), resolveWallet(config.DATA_DIR, name));
    console.log(`${balance.address}: ${balance.sol} SOL`);
    for (const token of balance.tokens)
      console.log(`  ${token.uiAmount} of ${token.mint} (${token.tokenAccount})`);
  }),
);

withSettings(
  wallet
    .command("airdrop")
    .argument("<sol>", "SOL to request, e.g. 2.5")
    .argument("[wallet]", "a wallet name or an address", "default")
    .description("request a SOL airdrop and wait until it has landed"),
  CHAIN_SETTINGS,
).action(
  walletAction(async (sol: string, name: string, options) => {
    const config = configFrom(options);
    const owner = resolveWallet(config.DATA_DIR, name);
    const signature = await airdropSol(chainFrom(config), owner, sol);
    console.log(`airdropped ${sol} SOL to ${owner}: ${signature}`);
  }),
);

withSettings(
  wallet
    .command("faucet")
    .argument("<token>", "USDC, SOL, a demo token symbol or a mint address")
    .argument("<amount>", "how much, in whole tokens, e.g. 100 or 0.5")
    .argument("[wallet]", "a wallet name or an address", "default")
    .description("grant sandbox tokens from the local venue's mint authority (DATA_DIR holds its keys)"),
  [...CHAIN_SETTINGS, "DATABASE_URL", "VENUE_SEED"],
).action(
  walletAction(async (token: string, amount: string, name: string, options) => {
    const config = configFrom(options);
    const owner = resolveWallet(config.DATA_DIR, name);
    const venueSeed = await withStorage(config, (storage) => resolveVenueSeed(storage.db, config.VENUE_SEED));
    const signers = await venueSigners(loadVenueKeys(config.DATA_DIR));
    const grant = await faucetTokens(
      chainFrom(config),
      signers,
      owner,
      resolveMint(venueSeed, token),
      amount,
    );
    console.log(`granted ${amount} ${token} to ${owner} (${grant.tokenAccount}): ${grant.signature}`);
  }),
);

/** Runs `task` with storage, the venue seed and the configured chain, as the pools commands need. */
function withChainContext<T>(config: Config, task: (context: CommandContext) => Promise<T>): Promise<T> {
  return withStorage(config, async (storage) =>
    task({
      dataDir: config.DATA_DIR,
      storage,
      venueSeed: await resolveVenueSeed(storage.db, config.VENUE_SEED),
      chain: chainFrom(config),
    }),
  );
}

/** The venue's own base URL, for the commands that use its HTTP API. */
function venueUrl(config: Config): string {
  const host = config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.TRADE_PORT ?? config.PORT}`;
}

const POOL_SETTINGS: (keyof Config)[] = [...CHAIN_SETTINGS, "DATABASE_URL", "VENUE_SEED"];
const TRADE_SETTINGS: (keyof Config)[] = [...POOL_SETTINGS, "PORT", "TRADE_PORT"];

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
  walletAction(async (tokenA: string, amountA: string, tokenB: string, amountB: string, options) => {
    const config = configFrom(options);
    const feeBps = Number(options.feeBps);
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
  walletAction(async (options) => {
    const lines = await withChainContext(configFrom(options), listPoolsCommand);
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
  walletAction(async (address: string, options) => {
    await withStorage(configFrom(options), (storage) => removePoolCommand({ storage }, address));
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
  walletAction(async (input: string, output: string, amount: string, options) => {
    const config = configFrom(options);
    const venueSeed = await withStorage(config, (storage) => resolveVenueSeed(storage.db, config.VENUE_SEED));
    const lines = await quoteCommand({ ...tradeRequest(config, options), venueSeed, input, output, amount });
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
  walletAction(async (input: string, output: string, amount: string, name: string, options) => {
    const config = configFrom(options);
    const venueSeed = await withStorage(config, (storage) => resolveVenueSeed(storage.db, config.VENUE_SEED));
    const lines = await tradeCommand({
      ...tradeRequest(config, options),
      venueSeed,
      input,
      output,
      amount,
      walletFile: walletFile(config.DATA_DIR, name),
      chain: chainFrom(config),
    });
    console.log(lines.join("\n"));
  }),
);

function tradeRequest(config: Config, options: Record<string, string | undefined>) {
  const apiKey = options.apiKey ?? process.env.ODDSGATE_API_KEY;
  const slippage = options.slippageBps;
  if (slippage !== undefined && !/^\d{1,5}$/.test(slippage))
    throw new CliError("--slippage-bps must be an integer");
  return {
    venueUrl: venueUrl(config),
    ...(apiKey ? { apiKey } : {}),
    ...(slippage !== undefined ? { slippageBps: Number(slippage) } : {}),
  };
}

program.parseAsync().catch((error: unknown) => {
  if (
    error instanceof ConfigError ||
    error instanceof ImportFormatError ||
    error instanceof CliError ||
    error instanceof KeyError ||
    error instanceof ApiError ||
    error instanceof ChainLeaseHeldError
  ) {
    console.error(`oddsgate: ${error.message}`);
  } else {
    console.error("oddsgate:", error);
  }
  process.exit(1);
});
