/**
 * The process the crash test kills: a sandbox chain with its RPC on SQLite in DATA_DIR. With
 * FUND_WALLETS set it first gives each listed wallet SOL and FUND_USDC units of USDC. Prints
 * `READY <rpcUrl>` when serving.
 */
import type { Address } from "@solana/kit";
import { faucet } from "../../src/chain/faucet.js";
import { startSandboxChain } from "../../src/chain/sandbox/start.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { openStorage } from "../../src/storage/database.js";

const dataDir = process.env.DATA_DIR;
if (!dataDir) throw new Error("DATA_DIR is required");
const storage = await openStorage({ DATA_DIR: dataDir });
const started = await startSandboxChain({
  storage,
  dataDir,
  venueSeed: "crash-test-venue-seed",
  markets: [],
  rpcPort: 0,
  wsPort: 0,
});
const wallets = (process.env.FUND_WALLETS ?? "").split(",").filter(Boolean) as Address[];
for (const wallet of wallets) {
  await started.chain.requestAirdrop(wallet, 1_000_000_000n);
  await faucet(started.chain, started.signers, wallet, USDC_MINT, BigInt(process.env.FUND_USDC ?? "0"));
}
process.stdout.write(`READY ${started.rpcUrl}\n`);
