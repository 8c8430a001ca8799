/**
 * The `oddsgate wallet` commands against a production venue's chain (JSON-RPC behind an API key):
 * `wallet balance` sends SOLANA_RPC_KEY as `x-api-key` and is answered; `wallet airdrop` and
 * `wallet faucet` say in one line that funding is a development feature, with or without the key,
 * and fund nothing (the faucet never sends the key, nor mints, even with the venue's keys at hand).
 */
import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeBase58 } from "../src/chain/base58.js";
import { startTestChain, type TestChain } from "./chain/harness.js";
import { tempDir } from "./support/backends.js";
import { oddsgate } from "./support/cli.js";

const GOOD_KEY = "og_test_cli_funding_key";
const OWNER = encodeBase58(new Uint8Array(32).fill(7));
const FUNDING = /^oddsgate: funding wallets \(wallet airdrop, wallet faucet\) is a development feature: /;

const dir = tempDir();
let chain: TestChain;
const offered: (string | string[] | undefined)[] = [];

beforeAll(async () => {
  chain = await startTestChain(
    { DATA_DIR: dir.dir },
    {
      markets: [],
      mode: "production",
      authorize: async (headers: http.IncomingHttpHeaders) => {
        offered.push(headers["x-api-key"]);
        return headers["x-api-key"] === GOOD_KEY;
      },
    },
  );
});
afterAll(async () => {
  await chain?.stop();
  await dir.cleanup();
});

/** A command expected to fail: its exit code and stderr. */
async function failing(args: string[], env: Record<string, string>) {
  const failure = (await oddsgate(args, env).then(
    (result) => {
      throw new Error(`oddsgate ${args.join(" ")} succeeded: ${result.stdout}`);
    },
    (error: unknown) => error,
  )) as { code: number; stderr: string };
  return { code: failure.code, stderr: failure.stderr };
}

describe("oddsgate wallet against a production venue", () => {
  it("reads a balance with SOLANA_RPC_KEY sent as x-api-key", async () => {
    const env = { DATA_DIR: dir.dir, SOLANA_RPC_URL: chain.rpcUrl, SOLANA_RPC_KEY: GOOD_KEY };
    expect((await oddsgate(["wallet", "balance", OWNER], env)).stdout).toContain(`${OWNER}: 0 SOL`);
  }, 60_000);

  it("says in one line that funding is a development feature, with or without the key, and funds nothing", async () => {
    const treasury = chain.signers.treasury.address;
    const before = await chain.chain.getBalance(treasury);
    for (const key of [{ SOLANA_RPC_KEY: GOOD_KEY }, {}] as Record<string, string>[]) {
      const env = { DATA_DIR: dir.dir, SOLANA_RPC_URL: chain.rpcUrl, ...key };
      for (const args of [
        ["wallet", "airdrop", "1", OWNER],
        ["wallet", "faucet", "USDC", "25", OWNER],
      ]) {
        const refused = await failing(args, env);
        expect(refused.code, args.join(" ")).toBe(1);
        expect(refused.stderr, args.join(" ")).toMatch(FUNDING);
        expect(refused.stderr.trimEnd().split("\n"), args.join(" ")).toHaveLength(1);
      }
    }
    expect(await chain.chain.getBalance(OWNER as never)).toBe(0n);
    expect(await chain.chain.getTokenAccountsByOwner(OWNER as never, { mint: USDC })).toEqual([]);
    expect(await chain.chain.getBalance(treasury)).toBe(before);
  }, 120_000);

  it("refuses funding before any call when its own MODE is production", async () => {
    offered.length = 0;
    const env = {
      DATA_DIR: dir.dir,
      SOLANA_RPC_URL: chain.rpcUrl,
      SOLANA_RPC_KEY: GOOD_KEY,
      MODE: "production",
    };
    for (const args of [
      ["wallet", "airdrop", "1", OWNER],
      ["wallet", "faucet", "USDC", "25", OWNER],
    ]) {
      expect((await failing(args, env)).stderr, args.join(" ")).toMatch(FUNDING);
    }
    expect(offered).toEqual([]);
  }, 60_000);
});

const USDC = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" as never;
