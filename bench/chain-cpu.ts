/**
 * The sandbox chain's own CPU per transfer: USDC transfers handed to `sendTransaction` in this
 * process (256 in flight, durable on SQLite as over JSON-RPC), with no HTTP server, client or load
 * generator sharing the two cores. Each turn prints the process's CPU per transfer, split by thread
 * (the main thread, which executes them; the SQLite writer; the signature worker; the rest, V8's GC
 * helpers mostly), beside raw LiteSVM measured just before it, in the same units.
 *
 * `--against DIR` starts another checkout's chain (its own sources and node_modules) in this same
 * process, and the two take turns: the machine's speed drifts by ±20% within minutes here, so only
 * turns this close together compare. `bench/chain.ts` measures throughput over JSON-RPC; this
 * measures what each transfer costs the chain.
 *
 *   npx tsx bench/chain-cpu.ts    (options: --transactions 12000 --rounds 5 --against ../other)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { findAssociatedTokenPda, getTransferCheckedInstruction } from "@solana-program/token";
import { FailedTransactionMetadata, LiteSvm } from "litesvm/dist/internal.js";
import { percentile, threadsRunNs } from "./support.js";

const { values: args } = parseArgs({
  options: {
    transactions: { type: "string", default: "12000" },
    rounds: { type: "string", default: "5" },
    wallets: { type: "string", default: "64" },
    against: { type: "string" },
  },
});
const TRANSACTIONS = Number(args.transactions);
const ROUNDS = Number(args.rounds);
const WALLETS = Number(args.wallets);
const IN_FLIGHT = 256;

// The modules a checkout's chain is driven through, loaded from that checkout's own sources.
async function modulesOf(tree: string) {
  const load = (file: string) => import(path.join(tree, "src", file));
  return {
    ...(await load("chain/build-transaction.js")),
    ...(await load("chain/faucet.js")),
    ...(await load("chain/programs.js")),
    ...(await load("chain/sandbox/start.js")),
    ...(await load("chain/sandbox/svm.js")),
    ...(await load("chain/venue-keys.js")),
    ...(await load("contract/markets.js")),
    ...(await load("storage/database.js")),
  };
}

interface Turn {
  rate: number;
  cpuUs: number;
  mainUs: number;
  writerUs: number;
  signaturesUs: number;
  restUs: number;
  rawUs: number;
}

interface Subject {
  label: string;
  dataDir: string;
  // biome-ignore lint/suspicious/noExplicitAny: each checkout's modules, loaded by path
  modules: any;
  // biome-ignore lint/suspicious/noExplicitAny: each checkout's own SandboxChain
  chain: any;
  close(): Promise<void>;
  writer: string[];
  signatures: string[];
  turns: Turn[];
}

const wallets: KeyPairSigner[] = await Promise.all(
  Array.from({ length: WALLETS }, () => generateKeyPairSigner()),
);

async function startSubject(label: string, tree: string): Promise<Subject> {
  const modules = await modulesOf(tree);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-bench-chain-cpu-"));
  const storage = await modules.openStorage({ DATA_DIR: dataDir });
  const before = new Set(threadsRunNs().keys());
  const started = await modules.startSandboxChain({
    storage,
    dataDir,
    venueSeed: "bench",
    markets: [],
    rpcPort: 0,
    wsPort: 0,
  });
  // The SQLite writer starts with the chain; the signature worker with its first transaction.
  const withChain = [...threadsRunNs().keys()].filter((tid) => !before.has(tid));
  const signers = await modules.venueSigners(modules.loadVenueKeys(dataDir));
  for (const wallet of wallets) {
    await started.chain.requestAirdrop(wallet.address, 10_000_000_000n);
    await modules.faucet(started.chain, signers, wallet.address, modules.USDC_MINT, 1_000_000_000_000n);
  }
  const withFirstSend = [...threadsRunNs().keys()].filter(
    (tid) => !before.has(tid) && !withChain.includes(tid),
  );
  return {
    label,
    dataDir,
    modules,
    chain: started.chain,
    close: async () => {
      await started.close();
      await storage.close?.();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    writer: withChain,
    signatures: withFirstSend,
    turns: [],
  };
}

let firstAmount = 1;

// Each wallet's USDC account on `subject`'s chain.
async function usdcAccounts(subject: Subject): Promise<Address[]> {
  const { USDC_MINT, TOKEN_PROGRAM } = subject.modules;
  return Promise.all(
    wallets.map(
      async (wallet) =>
        (
          await findAssociatedTokenPda({
            owner: wallet.address,
            mint: USDC_MINT,
            tokenProgram: TOKEN_PROGRAM,
          })
        )[0],
    ),
  );
}

// `count` distinct transfers between the wallets (distinct amounts keep every signature unique).
async function transfers(subject: Subject, count: number, lifetime: unknown): Promise<Uint8Array[]> {
  const { modules } = subject;
  const accounts = await usdcAccounts(subject);
  const built: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const from = i % wallets.length;
    const instruction = getTransferCheckedInstruction({
      source: accounts[from] as Address,
      mint: modules.USDC_MINT,
      destination: accounts[(from + 1) % wallets.length] as Address,
      authority: wallets[from] as KeyPairSigner,
      amount: BigInt(firstAmount++),
      decimals: modules.USDC_DECIMALS,
    });
    built.push(await modules.buildSignedTransaction(wallets[from], [instruction], lifetime));
  }
  return built;
}

// Raw LiteSVM's CPU per transfer: such transfers on a copy of the subject's accounts.
async function rawLiteSvmUs(subject: Subject): Promise<number> {
  const svm = new LiteSvm();
  const addresses: Address[] = [
    subject.modules.USDC_MINT,
    ...wallets.map((wallet) => wallet.address),
    ...(await usdcAccounts(subject)),
  ];
  const accounts = await subject.chain.getMultipleAccounts(addresses);
  accounts.forEach((account: object | null, i: number) => {
    if (account) subject.modules.putAccount(svm, { ...account, address: addresses[i] });
  });
  const lifetime = { blockhash: svm.latestBlockhash(), lastValidBlockHeight: 0n };
  const built = await transfers(subject, Math.min(TRANSACTIONS, 5000), lifetime);
  const before = process.cpuUsage();
  for (const wire of built) {
    if (svm.sendVersionedTransaction(wire) instanceof FailedTransactionMetadata) {
      throw new Error("a raw LiteSVM transfer failed");
    }
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / built.length;
}

async function turn(subject: Subject, rawUs: number): Promise<Turn> {
  const built = await transfers(subject, TRANSACTIONS, await subject.chain.getLatestBlockhash());
  const threadsBefore = threadsRunNs();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < built.length) await subject.chain.sendTransaction(built[next++]);
    }),
  );
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const threadsAfter = threadsRunNs();
  const us = (tids: string[]) =>
    tids.reduce((sum, tid) => sum + ((threadsAfter.get(tid) ?? 0) - (threadsBefore.get(tid) ?? 0)), 0) /
    1000 /
    built.length;
  const cpuUs = (cpu.user + cpu.system) / built.length;
  const mainUs = us([String(process.pid)]);
  const writerUs = us(subject.writer);
  const signaturesUs = us(subject.signatures);
  return {
    rate: (built.length * 1000) / elapsed,
    cpuUs,
    mainUs,
    writerUs,
    signaturesUs,
    restUs: cpuUs - mainUs - writerUs - signaturesUs,
    rawUs,
  };
}

const median = (values: number[]) => percentile(values, 50);
const thisCheckout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const subjects: Subject[] = [];
try {
  subjects.push(await startSubject("this checkout", thisCheckout));
  if (args.against) subjects.push(await startSubject(args.against, path.resolve(args.against)));
  console.log(
    `${TRANSACTIONS} USDC transfers a turn, ${IN_FLIGHT} in flight, in process, ${os.cpus().length} cores` +
      (subjects.length > 1 ? `; ${subjects.map((s) => s.label).join(" and ")} taking turns` : ""),
  );
  // Untimed warm-up of each chain's JIT and caches.
  for (const subject of subjects) await turn(subject, 0);
  for (let round = 0; round < ROUNDS; round++) {
    const rawUs = await rawLiteSvmUs(subjects[0] as Subject);
    console.log(`raw LiteSVM (sigverify on, in process): ${rawUs.toFixed(1)} µs of CPU a transfer`);
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      const measured = await turn(subject, rawUs);
      subject.turns.push(measured);
      console.log(
        `  ${measured.rate.toFixed(0).padStart(6)} tx/s, ${measured.cpuUs.toFixed(0)} µs of CPU a transfer (${(measured.cpuUs / rawUs).toFixed(2)} raw LiteSVM transfers): main thread ${measured.mainUs.toFixed(0)}, SQLite writer ${measured.writerUs.toFixed(0)}, signature worker ${measured.signaturesUs.toFixed(0)}, the rest ${measured.restUs.toFixed(0)} [${subject.label}]`,
      );
    }
  }
  for (const subject of subjects) {
    const of = (pick: (turn: Turn) => number) => median(subject.turns.map(pick)).toFixed(1);
    console.log(
      `${subject.label}: medians ${of((t) => t.cpuUs)} µs a transfer, ${of((t) => t.cpuUs / t.rawUs)} raw LiteSVM transfers; main thread ${of((t) => t.mainUs)}, SQLite writer ${of((t) => t.writerUs)}, signature worker ${of((t) => t.signaturesUs)}, the rest ${of((t) => t.restUs)}`,
    );
  }
  const [own, other] = subjects;
  if (own && other) {
    const paired = own.turns.map((t, i) => t.cpuUs / (other.turns[i] as Turn).cpuUs);
    console.log(
      `CPU a transfer, ${own.label} ÷ ${other.label}, turn by turn: ${paired.map((x) => x.toFixed(2)).join(" ")}, median ${median(paired).toFixed(2)}`,
    );
  }
} finally {
  for (const subject of subjects) await subject.close();
}
process.exit(0);
