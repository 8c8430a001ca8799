/**
 * Sandbox chain benchmark: USDC transfers sent with `sendTransaction` over JSON-RPC to the sandbox
 * (a separate process, durable on SQLite, so the load generator does not share its event loop),
 * against the same transfers executed by a bare LiteSVM in this process, in one run. Prints both
 * rates and their ratio (target >= 0.4).
 *
 *   npx tsx bench/chain.ts            (options: --transactions 4000 --connections 64 --batch 16)
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { findAssociatedTokenPda, getTransferCheckedInstruction } from "@solana-program/token";
import { FailedTransactionMetadata, LiteSvm } from "litesvm/dist/internal.js";
import { Agent, request } from "undici";
import { buildSignedTransaction } from "../src/chain/build-transaction.js";
import type { LatestBlockhash } from "../src/chain/chain.js";
import { faucet } from "../src/chain/faucet.js";
import { TOKEN_PROGRAM, USDC_DECIMALS, USDC_MINT } from "../src/chain/programs.js";
import { RpcChain } from "../src/chain/rpc-client.js";
import { startSandboxChain } from "../src/chain/sandbox/start.js";
import { putAccount } from "../src/chain/sandbox/svm.js";
import { loadVenueKeys, venueSigners } from "../src/chain/sandbox/venue-keys.js";
import { openStorage } from "../src/storage/database.js";

const { values: args } = parseArgs({
  options: {
    transactions: { type: "string", default: "4000" },
    connections: { type: "string", default: "64" },
    batch: { type: "string", default: "16" },
    wallets: { type: "string", default: "64" },
    serve: { type: "string" },
  },
});

// The sandbox node this bench starts as its own child process: `--serve DATA_DIR`.
if (args.serve) {
  const storage = await openStorage({ DATA_DIR: args.serve });
  const started = await startSandboxChain({
    storage,
    dataDir: args.serve,
    venueSeed: "bench",
    markets: [],
    rpcPort: 0,
    wsPort: 0,
  });
  process.stdout.write(`READY ${started.rpcUrl}\n`);
  // SIGINT ends the node cleanly (so that --cpu-prof can write its profile).
  process.once("SIGINT", () => process.exit(0));
  await new Promise(() => {});
}

const TRANSACTIONS = Number(args.transactions);
const CONNECTIONS = Number(args.connections);
const BATCH = Number(args.batch);
const WALLETS = Number(args.wallets);

function startNode(dataDir: string): Promise<{ child: ChildProcess; rpcUrl: string }> {
  const self = fileURLToPath(import.meta.url);
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeFlags, "--import", "tsx", self, "--serve", dataDir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      if (line.startsWith("READY ")) resolve({ child, rpcUrl: line.slice("READY ".length) });
    });
    child.once("exit", (code) => reject(new Error(`sandbox node exited (${code})`)));
  });
}

async function usdcAccount(owner: Address): Promise<Address> {
  return (await findAssociatedTokenPda({ owner, mint: USDC_MINT, tokenProgram: TOKEN_PROGRAM }))[0];
}

// N distinct transfers between the wallets (distinct amounts keep every signature unique).
async function buildTransfers(wallets: KeyPairSigner[], lifetime: LatestBlockhash): Promise<Uint8Array[]> {
  const accounts = await Promise.all(wallets.map((wallet) => usdcAccount(wallet.address)));
  const transfers: Uint8Array[] = [];
  for (let i = 0; i < TRANSACTIONS; i++) {
    const from = i % wallets.length;
    const to = (from + 1) % wallets.length;
    const instruction = getTransferCheckedInstruction({
      source: accounts[from] as Address,
      mint: USDC_MINT,
      destination: accounts[to] as Address,
      authority: wallets[from] as KeyPairSigner,
      amount: BigInt(1 + Math.floor(i / wallets.length)),
      decimals: USDC_DECIMALS,
    });
    transfers.push(await buildSignedTransaction(wallets[from] as KeyPairSigner, [instruction], lifetime));
  }
  return transfers;
}

// CPU seconds (user + system) a process has used so far, from /proc (Linux).
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rate(count: number, ms: number): number {
  return (count * 1000) / ms;
}

async function rawLiteSvm(chain: RpcChain, wallets: KeyPairSigner[]): Promise<number> {
  const svm = new LiteSvm();
  const addresses = [
    USDC_MINT,
    ...wallets.map((wallet) => wallet.address),
    ...(await Promise.all(wallets.map((wallet) => usdcAccount(wallet.address)))),
  ];
  const accounts = await chain.getMultipleAccounts(addresses);
  accounts.forEach((account, i) => {
    if (account) putAccount(svm, { ...account, address: addresses[i] as string });
  });
  const transfers = await buildTransfers(wallets, {
    blockhash: svm.latestBlockhash() as LatestBlockhash["blockhash"],
    lastValidBlockHeight: 0n,
  });
  const started = performance.now();
  for (const wire of transfers) {
    if (svm.sendVersionedTransaction(wire) instanceof FailedTransactionMetadata) {
      throw new Error("a raw LiteSVM transfer failed");
    }
  }
  return rate(transfers.length, performance.now() - started);
}

async function overJsonRpc(
  node: { child: ChildProcess; rpcUrl: string },
  transfers: Uint8Array[],
  perRequest: number,
): Promise<{ rate: number; nodeCpuUs: number }> {
  const rpcUrl = node.rpcUrl;
  const dispatcher = new Agent({ connections: CONNECTIONS, pipelining: 1 });
  const bodies: string[] = [];
  for (let i = 0; i < transfers.length; i += perRequest) {
    const calls = transfers.slice(i, i + perRequest).map((wire, j) => ({
      jsonrpc: "2.0",
      id: i + j,
      method: "sendTransaction",
      params: [Buffer.from(wire).toString("base64"), { encoding: "base64" }],
    }));
    bodies.push(JSON.stringify(perRequest === 1 ? calls[0] : calls));
  }
  let next = 0;
  let failures = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++] as string;
      const response = await request(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        dispatcher,
      });
      const answer = (await response.body.json()) as { error?: unknown } | { error?: unknown }[];
      failures += (Array.isArray(answer) ? answer : [answer]).filter((one) => one.error).length;
    }
  };
  const cpuBefore = cpuSeconds(node.child.pid as number);
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const elapsed = performance.now() - started;
  const nodeCpuUs = ((cpuSeconds(node.child.pid as number) - cpuBefore) * 1e6) / transfers.length;
  await dispatcher.close();
  if (failures > 0) throw new Error(`${failures} sendTransaction calls failed`);
  return { rate: rate(transfers.length, elapsed), nodeCpuUs };
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-bench-chain-"));
const node = await startNode(dataDir);
try {
  const chain = new RpcChain({ url: node.rpcUrl, pollIntervalMs: 20 });
  const signers = await venueSigners(loadVenueKeys(dataDir));
  const wallets = await Promise.all(Array.from({ length: WALLETS }, () => generateKeyPairSigner()));
  await Promise.all(
    wallets.map(async (wallet) => {
      await chain.requestAirdrop(wallet.address, 10_000_000_000n);
      await faucet(chain, signers, wallet.address, USDC_MINT, 1_000_000_000_000n);
    }),
  );

  const raw = await rawLiteSvm(chain, wallets);
  const single = await overJsonRpc(node, await buildTransfers(wallets, await chain.getLatestBlockhash()), 1);
  const batched = await overJsonRpc(
    node,
    await buildTransfers(wallets.slice().reverse(), await chain.getLatestBlockhash()),
    BATCH,
  );
  const line = (label: string, measured: { rate: number; nodeCpuUs: number }) =>
    console.log(
      `${label.padEnd(44)} ${measured.rate.toFixed(0).padStart(7)} tx/s   ratio ${(measured.rate / raw).toFixed(2)}   node CPU ${measured.nodeCpuUs.toFixed(0)} µs/tx`,
    );
  console.log(
    `${TRANSACTIONS} USDC transfers each, ${CONNECTIONS} connections, node ${os.cpus().length} cores`,
  );
  console.log(`${"raw LiteSVM (sigverify on, in process)".padEnd(44)} ${raw.toFixed(0).padStart(7)} tx/s`);
  line("sendTransaction over JSON-RPC, durable", single);
  line(`sendTransaction over JSON-RPC, batches of ${BATCH}`, batched);
  console.log(
    `target: sendTransaction / raw LiteSVM >= 0.40 -> ${single.rate / raw >= 0.4 ? "met" : "NOT met"}`,
  );
} finally {
  node.child.kill(process.env.BENCH_NODE_FLAGS ? "SIGINT" : "SIGKILL");
  fs.rmSync(dataDir, { recursive: true, force: true });
}
