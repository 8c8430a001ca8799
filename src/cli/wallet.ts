/** `oddsgate wallet`: keypair files in DATA_DIR/wallets, on the sandbox chain or SOLANA_RPC_URL. */
import fs from "node:fs";
import type { Command } from "commander";
import type { RpcChain } from "../chain/rpc-client.js";
import { type Config, sqlitePath } from "../config.js";
import {
  CHAIN_SETTINGS,
  type Cli,
  CliError,
  chainFrom,
  chainUrlOf,
  configFrom,
  failingAsMessages,
  printJson,
  venueSeedFrom,
  withSettings,
} from "./support.js";

/**
 * Funding wallets is a development feature: a production venue's chain refuses airdrops, and its
 * tokens are not handed out. So funding is refused at once when MODE is production, it never sends
 * SOLANA_RPC_KEY (a production venue's chain then refuses the first call with 401), and a refusal
 * that says the chain is a production venue's is reported as this one line.
 */
async function funding<T>(config: Config, owner: string, fund: (chain: RpcChain) => Promise<T>): Promise<T> {
  const refused = (why: string) =>
    new CliError(
      `funding wallets (wallet airdrop, wallet faucet) is a development feature: ${why}; fund ${owner} with a transfer from a funded wallet instead`,
    );
  if (config.MODE === "production") throw refused("MODE is production");
  const url = chainUrlOf(config);
  try {
    return await fund(await chainFrom(config, { sendKey: false }));
  } catch (error) {
    const { ChainError, RPC_ERROR } = await import("../chain/errors.js");
    if (!(error instanceof ChainError)) throw error;
    // kit's words for an HTTP refusal: a development chain never asks for a key.
    if (/\bHTTP error \((401|403)\)/.test(error.message))
      throw refused(`the chain at ${url} is a production venue's (it asks for an API key)`);
    // A production venue's chain without a key check: it answers requestAirdrop as an unknown method.
    if (error.code === RPC_ERROR.methodNotFound)
      throw refused(`the chain at ${url} refuses it (${error.message})`);
    throw error;
  }
}

/** Adds `wallet new`, `wallet balance`, `wallet airdrop` and `wallet faucet`. */
export function registerWalletCommands(program: Command, cli: Cli): void {
  const wallet = program
    .command("wallet")
    .description("wallets (keypair files in DATA_DIR/wallets) on the sandbox chain or SOLANA_RPC_URL");

  withSettings(
    wallet
      .command("new")
      .argument("[name]", "wallet name", "default")
      .option("--json", "print the wallet's name, address and keypair file as JSON")
      .description("create a wallet keypair file"),
    ["DATA_DIR"],
  ).action(
    failingAsMessages(async (name: string, options) => {
      const config = configFrom(cli, options);
      const { createWallet, walletFile } = await import("../chain/wallet.js");
      const file = walletFile(config.DATA_DIR, name);
      const address = createWallet(file);
      if (options.json) return printJson(cli, { name, address, file });
      cli.console.log(`created wallet ${name}: ${address} (keypair in ${file})`);
    }),
  );

  withSettings(
    wallet
      .command("balance")
      .argument("[wallet]", "a wallet name or an address", "default")
      .option("--json", "print the balances as JSON")
      .description("SOL and every token account of a wallet"),
    CHAIN_SETTINGS,
  ).action(
    failingAsMessages(async (name: string, options) => {
      const config = configFrom(cli, options);
      const [{ resolveWallet, walletBalance }, { demoTokens }, { USDC_MINT, CASH_MINT }] = await Promise.all([
        import("../chain/wallet.js"),
        import("../chain/demo-tokens.js"),
        import("../contract/markets.js"),
      ]);
      const balance = await walletBalance(await chainFrom(config), resolveWallet(config.DATA_DIR, name));
      // The venue's tokens by symbol: the demo's (from the venue seed, when storage names one) and the rails'.
      // Storage is only read where it exists: a balance creates no database.
      const stored = config.DATABASE_URL !== undefined || fs.existsSync(sqlitePath(config));
      const venueSeed = stored ? await venueSeedFrom(config).catch(() => undefined) : undefined;
      const symbols = new Map<string, string>([
        [USDC_MINT, "USDC"],
        [CASH_MINT, "CASH"],
        ...(venueSeed ? demoTokens(venueSeed) : []).map((t): [string, string] => [t.address, t.symbol]),
      ]);
      const tokens = balance.tokens.map((token) => ({ ...token, symbol: symbols.get(token.mint) ?? null }));
      if (options.json) return printJson(cli, { ...balance, tokens });
      cli.console.log(`${balance.address}: ${balance.sol} SOL`);
      for (const token of tokens)
        cli.console.log(
          token.symbol
            ? `  ${token.uiAmount} ${token.symbol} (${token.mint}, account ${token.tokenAccount})`
            : `  ${token.uiAmount} of ${token.mint} (${token.tokenAccount})`,
        );
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
    failingAsMessages(async (sol: string, name: string, options) => {
      const config = configFrom(cli, options);
      const { airdropSol, resolveWallet } = await import("../chain/wallet.js");
      const owner = resolveWallet(config.DATA_DIR, name);
      const signature = await funding(config, owner, (chain) => airdropSol(chain, owner, sol));
      cli.console.log(`airdropped ${sol} SOL to ${owner}: ${signature}`);
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
    failingAsMessages(async (token: string, amount: string, name: string, options) => {
      const config = configFrom(cli, options);
      const [{ faucetTokens, resolveMint, resolveWallet }, { loadVenueKeys, venueSigners }] =
        await Promise.all([import("../chain/wallet.js"), import("../chain/venue-keys.js")]);
      const owner = resolveWallet(config.DATA_DIR, name);
      const grant = await funding(config, owner, async (chain) => {
        const venueSeed = await venueSeedFrom(config);
        const signers = await venueSigners(loadVenueKeys(config.DATA_DIR));
        return faucetTokens(chain, signers, owner, resolveMint(venueSeed, token), amount);
      });
      cli.console.log(`granted ${amount} ${token} to ${owner} (${grant.tokenAccount}): ${grant.signature}`);
    }),
  );
}
