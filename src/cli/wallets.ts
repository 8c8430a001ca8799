/**
 * `oddsgate wallets`: the verified wallets (the reference's Proof check), which prediction-market buys
 * must go to when WALLET_VERIFICATION is on. The list is in storage; every running instance follows
 * a change within a second. (`oddsgate wallet`, singular, manages local keypair files.)
 */
import type { Command } from "commander";
import type { VerifiedWallet } from "../trading/prediction/verified-wallets.js";
import { type Cli, CliError, configFrom, STORAGE_SETTINGS, withSettings, withStorage } from "./support.js";

/** Adds `wallets verify`, `wallets unverify` and `wallets list`. */
export function registerWalletsCommands(program: Command, cli: Cli): void {
  const wallets = program
    .command("wallets")
    .description(
      "verified wallets: where prediction-market buys may go when WALLET_VERIFICATION is on (every instance follows within a second)",
    );

  withSettings(
    wallets
      .command("verify")
      .argument("<address>", "the wallet's address, base58")
      .option("--note <text>", "why it is verified, e.g. a KYC reference (at most 200 characters)")
      .description("verify a wallet (again: replaces its note)"),
    STORAGE_SETTINGS,
  ).action(
    listErrorsAsMessages(async (address: string, options) => {
      const config = configFrom(cli, options);
      const { verifyWallet, walletAddress } = await import("../trading/prediction/verified-wallets.js");
      // Checked before storage is opened: a typo costs nothing.
      const wallet = walletAddress(address);
      await withStorage(config, async (storage) => {
        const { wallet: verified, added } = await verifyWallet(storage.db, wallet, options.note);
        cli.console.log(`${added ? "verified" : "already verified"} ${describeWallet(verified)}`);
      });
    }),
  );

  withSettings(
    wallets
      .command("unverify")
      .argument("<address>", "the wallet's address, base58")
      .description("remove a wallet from the verified list"),
    STORAGE_SETTINGS,
  ).action(
    listErrorsAsMessages(async (address: string, options) => {
      const config = configFrom(cli, options);
      const { unverifyWallet, walletAddress } = await import("../trading/prediction/verified-wallets.js");
      const wallet = walletAddress(address);
      await withStorage(config, async (storage) => {
        cli.console.log(`unverified ${describeWallet(await unverifyWallet(storage.db, wallet))}`);
      });
    }),
  );

  withSettings(
    wallets
      .command("list")
      .description("list the verified wallets, the most recently verified first")
      .option("--json", "machine-readable output"),
    STORAGE_SETTINGS,
  ).action(async (options) => {
    const config = configFrom(cli, options);
    const { listVerifiedWallets } = await import("../trading/prediction/verified-wallets.js");
    await withStorage(config, async (storage) => {
      const all = await listVerifiedWallets(storage.db);
      if (options.json) cli.console.log(JSON.stringify(all, null, 2));
      else if (all.length === 0) cli.console.log("no verified wallets yet: oddsgate wallets verify ADDRESS");
      else for (const wallet of all) cli.console.log(describeWallet(wallet));
    });
  });
}

/**
 * Wraps a command so that an operator mistake with the list (WalletListError: a malformed address or
 * note, a wallet not on it) is reported as its message alone; anything else keeps its stack.
 */
function listErrorsAsMessages<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await action(...args);
    } catch (error) {
      const { WalletListError } = await import("../trading/prediction/verified-wallets.js");
      throw error instanceof WalletListError ? new CliError(error.message) : error;
    }
  };
}

function describeWallet(wallet: VerifiedWallet): string {
  const note = wallet.note === null ? "" : `  ${JSON.stringify(wallet.note)}`;
  return `${wallet.address}  verified ${wallet.verifiedAt}${note}`;
}
