/**
 * `oddsgate chain`: the sandbox chain's clock, a development feature. `time-travel` moves it forward
 * with surfpool's `surfnet_timeTravel` cheatcode and `clock` reads it (`surfnet_getClock`), over the
 * chain's JSON-RPC (SOLANA_RPC_URL, else the local sandbox on RPC_PORT); see
 * src/chain/sandbox/cheatcodes.ts. A production chain knows neither method.
 */
import { isAddress } from "@solana/kit";
import type { Command } from "commander";
import type { ClockSysvar, EpochInfo, TimeTravelTarget } from "../chain/sandbox/cheatcodes.js";
import type { Config } from "../config.js";
import {
  CHAIN_SETTINGS,
  type Cli,
  CliError,
  chainUrlOf,
  configFrom,
  failingAsMessages,
  printJson,
  venueSeedFrom,
  withSettings,
} from "./support.js";

// Bounds on what is read before it is parsed: a u64 in decimal, an ISO 8601 instant, an RPC answer.
const MAX_INTEGER_CHARS = 16;
const MAX_ISO_CHARS = 40;
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_ADDRESS_CHARS = 44;
const MAX_AMOUNT_CHARS = 40;

type TravelOptions = { slot?: string; timestamp?: string; epoch?: string; json?: boolean };

/** A slot or epoch number as given on the command line. */
function wholeNumber(text: string, flag: string): number {
  if (text.length > MAX_INTEGER_CHARS || !/^\d+$/.test(text))
    throw new CliError(
      `${flag} must be a whole number, e.g. ${flag} 500000 (got ${JSON.stringify(text.slice(0, 20))})`,
    );
  return Number(text);
}

/** An instant given as ISO 8601, in milliseconds (what surfnet_timeTravel takes). */
function isoInstant(text: string): number {
  const ms = text.length <= MAX_ISO_CHARS ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms) || ms < 0)
    throw new CliError(
      `--timestamp must be an ISO 8601 instant, e.g. 2030-01-01T00:00:00Z (got ${JSON.stringify(text.slice(0, 40))})`,
    );
  return ms;
}

/** The one target the options name. */
function travelTargetOf(options: TravelOptions): TimeTravelTarget {
  const given = [options.slot, options.timestamp, options.epoch].filter((value) => value !== undefined);
  if (given.length !== 1) throw new CliError("give exactly one of --slot, --timestamp or --epoch");
  if (options.slot !== undefined) return { absoluteSlot: wholeNumber(options.slot, "--slot") };
  if (options.epoch !== undefined) return { absoluteEpoch: wholeNumber(options.epoch, "--epoch") };
  return { absoluteTimestamp: isoInstant(options.timestamp as string) };
}

/** One JSON-RPC call to the chain; its result, or a one-line CliError saying why there is none. */
async function callChain<T>(config: Config, method: string, params: unknown[] = []): Promise<T> {
  const url = chainUrlOf(config);
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  }).catch(() => {
    throw new CliError(
      `no chain at ${url}: start the venue (\`oddsgate serve\`), or set SOLANA_RPC_URL / RPC_PORT`,
    );
  });
  const text = await response.text();
  if (!response.ok || text.length > MAX_ANSWER_BYTES)
    throw new CliError(`the chain at ${url} answered HTTP ${response.status}: ${text.slice(0, 200)}`);
  const answer = JSON.parse(text) as { result?: T; error?: { code: number; message: string } };
  if (answer.error?.code === -32601)
    throw new CliError(
      `the chain at ${url} has no cheatcodes (${method}): it is a production venue's, or not an Oddsgate sandbox`,
    );
  if (answer.error) throw new CliError(`the chain refused: ${answer.error.message}`);
  return answer.result as T;
}

/** The clock for people: slot, epoch and the time programs read. */
function describeClock(clock: ClockSysvar): string {
  const time = new Date(clock.unixTimestamp * 1000).toISOString();
  return `slot ${clock.slot}, epoch ${clock.epoch}, ${time}`;
}

function developmentOnly(config: Config): void {
  if (config.MODE === "production")
    throw new CliError("the chain's cheatcodes are a development feature: MODE is production");
}

/** An address given on the command line. */
function addressArgument(text: string, what: string): string {
  if (text.length > MAX_ADDRESS_CHARS || !isAddress(text))
    throw new CliError(`${what} must be a base58 address (got ${JSON.stringify(text.slice(0, 50))})`);
  return text;
}

/** A positive decimal amount in base units of a token with `decimals`, exactly representable in JSON. */
async function baseUnits(text: string, decimals: number): Promise<number> {
  const { parseUiAmount } = await import("../chain/wallet.js");
  let units: bigint;
  try {
    units = parseUiAmount(text.slice(0, MAX_AMOUNT_CHARS + 1), decimals);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  if (text.length > MAX_AMOUNT_CHARS || units > BigInt(Number.MAX_SAFE_INTEGER))
    throw new CliError(`amount ${text.slice(0, 40)} is too large`);
  return Number(units);
}

/** A mint's decimals and token program, read from the chain. */
async function mintOf(config: Config, mint: string): Promise<{ decimals: number; program: string }> {
  const answer = await callChain<{
    value: { owner: string; data: { parsed?: { info?: { decimals?: number } } } } | null;
  }>(config, "getAccountInfo", [mint, { encoding: "jsonParsed" }]);
  const decimals = answer.value?.data.parsed?.info?.decimals;
  if (!answer.value || typeof decimals !== "number")
    throw new CliError(`${mint} is not a mint on this chain`);
  return { decimals, program: answer.value.owner };
}

/** Adds `chain time-travel`, `chain clock`, `chain set-balance`, `chain set-token-balance`, `chain reset-account`. */
export function registerChainCommands(program: Command, cli: Cli): void {
  const chain = program.command("chain").description("the sandbox chain's clock (development)");

  withSettings(
    chain
      .command("time-travel")
      .option("--slot <n>", "move to this absolute slot")
      .option("--timestamp <iso>", "move to this instant, e.g. 2030-01-01T00:00:00Z")
      .option("--epoch <n>", "move to the first slot of this epoch")
      .option("--json", "print the chain's EpochInfo afterwards as JSON")
      .description(
        "move the sandbox chain's clock forward (never back): blockhashes expire, time-based logic runs",
      ),
    CHAIN_SETTINGS,
  ).action(
    failingAsMessages(async (options: TravelOptions) => {
      const config = configFrom(cli, options as Record<string, string | undefined>);
      developmentOnly(config);
      const info = await callChain<EpochInfo>(config, "surfnet_timeTravel", [travelTargetOf(options)]);
      if (options.json) return printJson(cli, info);
      cli.console.log(
        `the chain's clock is now at ${describeClock(await callChain<ClockSysvar>(config, "surfnet_getClock"))}`,
      );
    }),
  );

  withSettings(
    chain
      .command("clock")
      .option("--json", "print the Clock sysvar's fields as JSON")
      .description("the sandbox chain's clock: slot, epoch and the time programs read"),
    CHAIN_SETTINGS,
  ).action(
    failingAsMessages(async (options: { json?: boolean }) => {
      const config = configFrom(cli, options as Record<string, string | undefined>);
      developmentOnly(config);
      const clock = await callChain<ClockSysvar>(config, "surfnet_getClock");
      if (options.json) return printJson(cli, clock);
      cli.console.log(describeClock(clock));
    }),
  );

  withSettings(
    chain
      .command("set-balance")
      .argument("<address>", "the account's address")
      .argument("<sol>", "its new balance in SOL, e.g. 2.5")
      .description("set an account's SOL balance (surfnet_setAccount; development)"),
    CHAIN_SETTINGS,
  ).action(
    failingAsMessages(async (address: string, sol: string, options) => {
      const config = configFrom(cli, options as Record<string, string | undefined>);
      developmentOnly(config);
      const target = addressArgument(address, "the address");
      await callChain(config, "surfnet_setAccount", [target, { lamports: await baseUnits(sol, 9) }]);
      cli.console.log(`${target} now holds ${sol} SOL`);
    }),
  );

  withSettings(
    chain
      .command("set-token-balance")
      .argument("<owner>", "the wallet's address")
      .argument("<mint>", "USDC, CASH, SOL, a demo token symbol or a mint address")
      .argument("<amount>", "its new balance in whole tokens, e.g. 100 or 0.5")
      .description("set a wallet's token balance in its associated token account (surfnet_setTokenAccount)"),
    [...CHAIN_SETTINGS, "DATABASE_URL", "VENUE_SEED"],
  ).action(
    failingAsMessages(async (owner: string, token: string, amount: string, options) => {
      const config = configFrom(cli, options as Record<string, string | undefined>);
      developmentOnly(config);
      const wallet = addressArgument(owner, "the owner");
      const { resolveMint } = await import("../chain/wallet.js");
      const seed = isAddress(token) ? "" : await venueSeedFrom(config);
      let mint: string;
      try {
        mint = resolveMint(seed, token.slice(0, MAX_ADDRESS_CHARS + 1));
      } catch (error) {
        throw new CliError((error as Error).message);
      }
      const { decimals, program } = await mintOf(config, mint);
      const units = await baseUnits(amount, decimals);
      await callChain(config, "surfnet_setTokenAccount", [wallet, mint, { amount: units }, program]);
      cli.console.log(`${wallet} now holds ${amount} ${token}`);
    }),
  );

  withSettings(
    chain
      .command("reset-account")
      .argument("<address>", "the account's address")
      .description("put an account back as genesis made it, or delete it (surfnet_resetAccount)"),
    CHAIN_SETTINGS,
  ).action(
    failingAsMessages(async (address: string, options) => {
      const config = configFrom(cli, options as Record<string, string | undefined>);
      developmentOnly(config);
      const target = addressArgument(address, "the address");
      await callChain(config, "surfnet_resetAccount", [target]);
      cli.console.log(`${target} is back as genesis made it`);
    }),
  );
}
