import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  type KeyPairSigner,
  type Signature,
} from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { encodeBase58 } from "../../src/chain/base58.js";
import type { LatestBlockhash } from "../../src/chain/chain.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { openStorage } from "../../src/storage/database.js";
import { tempDir } from "../support/backends.js";
import { rpcSend, storedSupplies, usdcAccountOf, usdcTransfer } from "./harness.js";

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "crash-child.ts");
const WALLETS = 6;
const INITIAL_USDC = 100_000_000n;
const SENDS = 400;
const KILL_AFTER_ACKS = 120;
const IN_FLIGHT = 24;

interface Transfer {
  from: number;
  to: number;
  amount: bigint;
  signature: Signature;
  base64: string;
}

function startChild(
  dataDir: string,
  fundWallets: readonly Address[],
): Promise<{ child: ChildProcess; rpcUrl: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      FUND_WALLETS: fundWallets.join(","),
      FUND_USDC: String(INITIAL_USDC),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on("line", (line) => {
      if (line.startsWith("READY ")) resolve({ child, rpcUrl: line.slice("READY ".length) });
    });
    child.once("exit", (code, signal) => reject(new Error(`chain process exited early (${code ?? signal})`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

// One raw JSON-RPC sendTransaction: true when the node acknowledged it with its signature.
async function sendRaw(rpcUrl: string, transfer: Transfer): Promise<boolean> {
  return (await rpcSend(rpcUrl, transfer.base64)).result === transfer.signature;
}

describe("sandbox chain crash safety", () => {
  const children: ChildProcess[] = [];
  const dir = tempDir();
  afterEach(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await Promise.all(children.map(exited));
    await dir.cleanup();
  });

  it("keeps every acknowledged transfer and applies none halfway after kill -9 mid-load", async () => {
    const wallets: KeyPairSigner[] = [];
    for (let i = 0; i < WALLETS; i++) wallets.push(await generateKeyPairSigner());
    const first = await startChild(
      dir.dir,
      wallets.map((wallet) => wallet.address),
    );
    children.push(first.child);

    const { value: lifetime } = await createSolanaRpc(first.rpcUrl).getLatestBlockhash().send();
    const chainView = { getLatestBlockhash: async (): Promise<LatestBlockhash> => lifetime };
    const transfers: Transfer[] = [];
    for (let i = 0; i < SENDS; i++) {
      const from = i % WALLETS;
      const to = (from + 1 + (i % (WALLETS - 1))) % WALLETS;
      const amount = BigInt(1 + i);
      const wire = await usdcTransfer(
        chainView,
        wallets[from] as KeyPairSigner,
        (wallets[to] as KeyPairSigner).address,
        amount,
      );
      transfers.push({
        from,
        to,
        amount,
        signature: encodeBase58(wire.subarray(1, 65)) as Signature,
        base64: Buffer.from(wire).toString("base64"),
      });
    }

    const acknowledged = new Set<Signature>();
    let next = 0;
    let killed = false;
    const worker = async () => {
      while (next < transfers.length && !killed) {
        const transfer = transfers[next++] as Transfer;
        // A send whose connection died with the process was not acknowledged.
        const ok = await sendRaw(first.rpcUrl, transfer).catch(() => false);
        if (ok) acknowledged.add(transfer.signature);
        if (acknowledged.size >= KILL_AFTER_ACKS && !killed) {
          killed = true;
          first.child.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    expect(killed).toBe(true);
    await exited(first.child);

    const second = await startChild(dir.dir, []);
    children.push(second.child);
    const rpc = createSolanaRpc(second.rpcUrl);
    const statuses: unknown[] = [];
    for (let i = 0; i < transfers.length; i += 256) {
      const page = transfers.slice(i, i + 256).map((transfer) => transfer.signature);
      statuses.push(...(await rpc.getSignatureStatuses(page).send()).value);
    }
    const landed = transfers.filter((_, i) => statuses[i] !== null);
    const landedSignatures = new Set(landed.map((transfer) => transfer.signature));
    const lost = [...acknowledged].filter((signature) => !landedSignatures.has(signature));
    expect(lost).toEqual([]);
    expect(landed.length).toBeLessThan(transfers.length);

    // Balances equal the grants moved by exactly the landed transfers: nothing lost, nothing half-applied.
    const expected = wallets.map(() => INITIAL_USDC);
    for (const transfer of landed) {
      expected[transfer.from] = (expected[transfer.from] ?? 0n) - transfer.amount;
      expected[transfer.to] = (expected[transfer.to] ?? 0n) + transfer.amount;
    }
    const balances: bigint[] = [];
    for (const wallet of wallets) {
      const { value } = await rpc.getTokenAccountBalance(await usdcAccountOf(wallet.address)).send();
      balances.push(BigInt(value.amount));
    }
    expect(balances).toEqual(expected);
    const { value: supply } = await rpc.getTokenSupply(USDC_MINT).send();
    expect(BigInt(supply.amount)).toBe(INITIAL_USDC * BigInt(WALLETS));

    // Every mint's supply equals the sum of its token accounts, read straight from the durable state.
    second.child.kill("SIGKILL");
    await exited(second.child);
    const storage = await openStorage({ DATA_DIR: dir.dir });
    try {
      const { supplies, held } = await storedSupplies(storage);
      expect(supplies.size).toBeGreaterThan(2);
      for (const [mint, supply] of supplies) expect(held.get(mint) ?? 0n, mint).toBe(supply);
    } finally {
      await storage.close();
    }
  }, 90_000);
});
