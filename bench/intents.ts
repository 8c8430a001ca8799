/**
 * `POST /submit-intent` end to end, durable: intents submitted and then settled (filled on the
 * chain, closed in /order-status), per second, sustained over waves (design.md: >= 500/s).
 *
 * Off the clock: each wave's intents are prepared before its timed window (`GET /intent` and the
 * wallet's signature on the open transaction), because a `GET /intent` derives a fresh escrow key
 * and address and costs about as much server CPU as the submission itself. The output says so, and
 * prints that preparation's server CPU beside the timed figures and their sum per intent.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  type Address,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
  type Signature,
} from "@solana/kit";
import { Agent, request } from "undici";
import { demoTokens } from "../src/chain/demo-tokens.js";
import { WRAPPED_SOL_MINT } from "../src/chain/programs.js";
import { RpcChain } from "../src/chain/rpc-client.js";
import { USDC_MINT } from "../src/contract/markets.js";
import type { OrderStatusResponse } from "../src/contract/trade.js";
import { resolveVenueSeed } from "../src/markets/accounts.js";
import { openStorage } from "../src/storage/database.js";
import type { IntentQuoteResponse, SubmitIntentResponse } from "../src/trading/prediction/intents.js";
import {
  cpuTimeUs,
  machineHealthRate,
  random,
  rawLiteSvmRate,
  type StartedServer,
  sleep,
  startServer,
  stopServer,
} from "./support.js";

const { values: args } = parseArgs({
  options: {
    intents: { type: "string", default: "3000" },
    wallets: { type: "string", default: "200" },
    connections: { type: "string", default: "64" },
    wave: { type: "string", default: "1000" },
  },
});
const INTENTS = Number(args.intents);
const WALLETS = Math.min(Number(args.wallets), INTENTS);
const CONNECTIONS = Number(args.connections);
/** Intents prepared and then submitted together (all of one wave must be sent before they expire). */
const WAVE = Number(args.wave);
/** Target of design.md: intents settled per second, sustained. */
const TARGET_PER_S = 500;
/** Requests in flight at once while preparing (funding, `GET /intent`) and while polling statuses. */
const PREPARE_CONCURRENCY = 32;
const POLL_CONCURRENCY = 16;
/** Lamports airdropped to each wallet: open fees, fee budgets in flight, output token accounts' rent. */
const WALLET_LAMPORTS = 1_000_000_000n;
/** Preparation longer than this leaves too little of the intents' ~60 s lifetime to submit them. */
const MAX_PREPARE_S = 30;
/** How long after the last submission every order must have reached an end. */
const SETTLE_TIMEOUT_MS = 120_000;
/** Share of failed submissions above which the figures are refused. */
const MAX_ERROR_SHARE = 0.01;
const MAIN = path.resolve("dist/cli/main.js");

/** The outputs intents buy with USDC: every demo token with a direct USDC pool, and wrapped SOL. */
const OUTPUT_SYMBOLS = [
  "SOL",
  "dBTC",
  "dETH",
  "dUSDT",
  "dJUP",
  "dBONK",
  "dJTO",
  "dPYTH",
  "dRAY",
  "dORCA",
  "dmSOL",
];

/** This process's CPU time so far, in microseconds. */
function ownCpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** Runs `work` over `items` with at most `concurrency` in flight; results keep the items' order. */
async function pool<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** The `q` quantile (0..1) of ascending `sorted`, nearest rank. */
function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** The demo tokens' addresses on this venue: they derive from its seed, stored in DATA_DIR's database. */
async function outputMints(dataDir: string): Promise<Map<string, Address>> {
  const storage = await openStorage({ DATA_DIR: dataDir, DATABASE_URL: undefined });
  try {
    const venueSeed = await resolveVenueSeed(storage.db, undefined);
    const all = new Map<string, Address>([
      ["SOL", WRAPPED_SOL_MINT],
      ...demoTokens(venueSeed).map((token) => [token.symbol, token.address] as const),
    ]);
    return new Map(OUTPUT_SYMBOLS.map((symbol) => [symbol, all.get(symbol) as Address]));
  } finally {
    await storage.close();
  }
}

interface Planned {
  wallet: number;
  outputSymbol: string;
  amount: bigint;
}

interface Prepared {
  symbol: string;
  /** The whole `POST /submit-intent` body, serialized before the clock starts. */
  body: string;
  lastValidBlockHeight: number;
}

async function httpJson<T>(
  dispatcher: Agent,
  url: string,
  method: "GET" | "POST",
  body?: unknown,
): Promise<{ status: number; body: T; text: string }> {
  const response = await request(url, {
    method,
    dispatcher,
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  const text = await response.body.text();
  return { status: response.statusCode, body: JSON.parse(text) as T, text };
}

/** Funds the wallets: SOL by airdrop through the sandbox's JSON-RPC, USDC through /dev/faucet. */
async function fundWallets(
  server: StartedServer,
  dispatcher: Agent,
  wallets: KeyPairSigner[],
  usdcOf: bigint[],
): Promise<void> {
  const chain = new RpcChain({ url: server.rpcUrl, pollIntervalMs: 100 });
  await pool(wallets, PREPARE_CONCURRENCY, async (wallet, index) => {
    await chain.requestAirdrop(wallet.address, WALLET_LAMPORTS);
    const grant = await httpJson<unknown>(dispatcher, `${server.url}/dev/faucet`, "POST", {
      wallet: wallet.address,
      mint: USDC_MINT,
      amount: (usdcOf[index] as bigint).toString(),
    });
    if (grant.status !== 200) throw new Error(`/dev/faucet answered ${grant.status}: ${grant.text}`);
  });
}

/** `GET /intent` for every planned intent, and the wallet's signature on its open transaction. */
async function prepareIntents(
  server: StartedServer,
  dispatcher: Agent,
  wallets: KeyPairSigner[],
  mints: Map<string, Address>,
  plan: Planned[],
): Promise<Prepared[]> {
  const decoder = getTransactionDecoder();
  return pool(plan, PREPARE_CONCURRENCY, async (planned) => {
    const wallet = wallets[planned.wallet] as KeyPairSigner;
    const outputMint = mints.get(planned.outputSymbol) as Address;
    const quote = await httpJson<IntentQuoteResponse>(
      dispatcher,
      `${server.url}/intent?inputMint=${USDC_MINT}&outputMint=${outputMint}&amount=${planned.amount}&userPublicKey=${wallet.address}&slippageBps=300`,
      "GET",
    );
    if (quote.status !== 200 || !quote.body.openTransaction)
      throw new Error(`GET /intent USDC -> ${planned.outputSymbol} answered ${quote.status}: ${quote.text}`);
    const decoded = decoder.decode(Buffer.from(quote.body.openTransaction, "base64"));
    const signed = getBase64EncodedWireTransaction(await partiallySignTransaction([wallet.keyPair], decoded));
    return {
      symbol: planned.outputSymbol,
      body: JSON.stringify({ quoteResponse: quote.body, signedOpenTransaction: signed }),
      lastValidBlockHeight: quote.body.lastValidBlockHeight ?? 0,
    };
  });
}

interface Submitted {
  status: number;
  latencyMs: number;
  text: string;
  signature?: string;
}

/** Sends every prepared intent once, `CONNECTIONS` at a time over keep-alive connections. */
async function submitAll(url: string, prepared: Prepared[]): Promise<Submitted[]> {
  const dispatcher = new Agent({ connections: CONNECTIONS, pipelining: 1 });
  try {
    return await pool(prepared, CONNECTIONS, async (intent) => {
      const started = performance.now();
      try {
        const response = await request(`${url}/submit-intent`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: intent.body,
          dispatcher,
        });
        const text = await response.body.text();
        const latencyMs = performance.now() - started;
        if (response.statusCode !== 200) return { status: response.statusCode, latencyMs, text };
        const answer = JSON.parse(text) as SubmitIntentResponse;
        return { status: 200, latencyMs, text, signature: answer.openTransactionSignature };
      } catch (error) {
        return { status: 0, latencyMs: performance.now() - started, text: String(error) };
      }
    });
  } finally {
    await dispatcher.close();
  }
}

interface Settled {
  status: OrderStatusResponse["status"] | "unknown";
  fills: number;
  reverts: number;
  fillSignatures: string[];
  /** When this bench first saw the order at an end (closed, expired, failed), ms on its clock. */
  seenAt: number;
}

const FINAL = new Set(["closed", "expired", "failed"]);

/**
 * Polls `/order-status` for every signature until each is at an end or the timeout passes: passes
 * over the orders still open, `POLL_CONCURRENCY` requests at a time, 100 ms apart.
 */
async function pollUntilSettled(url: string, signatures: string[]): Promise<Map<string, Settled>> {
  const dispatcher = new Agent({ connections: POLL_CONCURRENCY, pipelining: 1 });
  const settled = new Map<string, Settled>();
  const deadline = performance.now() + SETTLE_TIMEOUT_MS;
  let pending = signatures;
  try {
    while (pending.length > 0) {
      const answers = await pool(pending, POLL_CONCURRENCY, async (signature) => {
        const answer = await httpJson<OrderStatusResponse>(
          dispatcher,
          `${url}/order-status?signature=${signature}`,
          "GET",
        );
        return { signature, answer, at: performance.now() };
      });
      const still: string[] = [];
      for (const { signature, answer, at } of answers) {
        const body = answer.body;
        const record: Settled = {
          status: answer.status === 200 ? body.status : "unknown",
          fills: body.fills?.length ?? 0,
          reverts: body.reverts?.length ?? 0,
          fillSignatures: body.fills?.map((fill) => fill.signature) ?? [],
          seenAt: at,
        };
        settled.set(signature, record);
        if (!FINAL.has(record.status)) still.push(signature);
      }
      pending = still;
      if (pending.length === 0 || performance.now() > deadline) break;
      await sleep(100);
    }
  } finally {
    await dispatcher.close();
  }
  return settled;
}

interface Wave {
  intents: number;
  prepareS: number;
  /** Server CPU per `GET /intent` while preparing, in microseconds. */
  prepareCpuUs: number;
  submitted: Submitted[];
  submitS: number;
  submitCpuUs: number;
  clientCpuUs: number;
  settled: Settled[];
  /** First submission until the last order was seen at an end. */
  e2eS: number;
  /** Server CPU from the first submission until then (submissions, settling, status polls). */
  e2eCpuUs: number;
  /** Last submission until the last order was seen at an end. */
  drainS: number;
}

/**
 * One wave: its intents prepared (off the clock, and refused if that takes so long that the first
 * could expire), then submitted, then followed until every accepted order is at an end.
 */
async function runWave(
  server: StartedServer,
  dispatcher: Agent,
  wallets: KeyPairSigner[],
  mints: Map<string, Address>,
  plan: Planned[],
): Promise<Wave> {
  const pid = server.child.pid as number;
  let started = performance.now();
  const prepareCpu = cpuTimeUs(pid);
  const prepared = await prepareIntents(server, dispatcher, wallets, mints, plan);
  const prepareS = (performance.now() - started) / 1000;
  const prepareCpuUs = (cpuTimeUs(pid) - prepareCpu) / prepared.length;
  if (prepareS > MAX_PREPARE_S)
    throw new Error(
      `preparing a wave of ${plan.length} took ${prepareS.toFixed(1)} s (> ${MAX_PREPARE_S} s): its first intents could expire before they are sent; lower --wave`,
    );

  const cpuBefore = cpuTimeUs(pid);
  const clientCpuBefore = ownCpuUs();
  started = performance.now();
  const monotonicStart = process.hrtime.bigint() / 1000n;
  const submitted = await submitAll(server.url, prepared);
  const submitEnd = performance.now();
  // The same clock as a --cpu-prof profile's timestamps, to pick the submission phase out of it.
  if (process.env.BENCH_NODE_FLAGS)
    console.log(`  submission window (monotonic us): ${monotonicStart} ${process.hrtime.bigint() / 1000n}`);
  const submitCpuUs = cpuTimeUs(pid) - cpuBefore;
  const clientCpuUs = ownCpuUs() - clientCpuBefore;

  const signatures = submitted.flatMap((one) => (one.signature ? [one.signature] : []));
  const settled = [...(await pollUntilSettled(server.url, signatures)).values()];
  const lastSeen = Math.max(submitEnd, ...settled.map((one) => one.seenAt));
  return {
    intents: plan.length,
    prepareS,
    prepareCpuUs,
    submitted,
    submitS: (submitEnd - started) / 1000,
    submitCpuUs,
    clientCpuUs,
    settled,
    e2eS: (lastSeen - started) / 1000,
    e2eCpuUs: cpuTimeUs(pid) - cpuBefore,
    drainS: (lastSeen - submitEnd) / 1000,
  };
}

const filledOf = (one: Settled) => one.status === "closed" && one.fills === 1;
const revertedOf = (one: Settled) => one.status === "closed" && one.fills === 0 && one.reverts > 0;

/** "code x count, ..." of the answers that were not 200, and the first few bodies. */
function failureSummary(failures: Submitted[]): string {
  const codes = new Map<string, number>();
  for (const failure of failures) {
    let code = String(failure.status);
    try {
      code += ` ${(JSON.parse(failure.text) as { code?: string }).code ?? ""}`;
    } catch {
      // Not JSON: a connection error.
    }
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  return [...codes].map(([code, count]) => `${code} x${count}`).join(", ");
}

async function main(): Promise<void> {
  if (!fs.existsSync(MAIN)) throw new Error("dist/cli/main.js is missing: run `npm run build` first");
  if (!(INTENTS > 0 && WALLETS > 0 && CONNECTIONS > 0 && WAVE > 0))
    throw new Error("--intents, --wallets, --connections and --wave must be positive");
  let measured: { perSecond: number; cpuUsPerIntent: number } | undefined;
  let server: StartedServer | undefined;
  const dispatcher = new Agent({ connections: PREPARE_CONCURRENCY, pipelining: 1 });
  try {
    server = await startServer();
    const { dataDir } = server;
    const mints = await outputMints(dataDir);

    // The plan: intent i belongs to wallet i mod W, buys one of the outputs with 1-5 USDC.
    const next = random(20_250_101);
    const plan: Planned[] = Array.from({ length: INTENTS }, (_, index) => ({
      wallet: index % WALLETS,
      outputSymbol: OUTPUT_SYMBOLS[Math.floor(next() * OUTPUT_SYMBOLS.length)] as string,
      amount: 1_000_000n + BigInt(Math.floor(next() * 4_000_001)),
    }));
    const usdcOf = Array.from({ length: WALLETS }, () => 0n);
    for (const planned of plan) usdcOf[planned.wallet] = (usdcOf[planned.wallet] as bigint) + planned.amount;

    console.log(
      `\nintents: ${INTENTS} from ${WALLETS} wallets (USDC -> ${OUTPUT_SYMBOLS.join("/")}, 1-5 USDC, slippageBps=300), ${CONNECTIONS} connections, waves of ${WAVE}`,
    );
    const started = performance.now();
    const wallets = await Promise.all(Array.from({ length: WALLETS }, () => generateKeyPairSigner()));
    await fundWallets(server, dispatcher, wallets, usdcOf);
    console.log(
      `  funded ${WALLETS} wallets (${Number(WALLET_LAMPORTS) / 1e9} SOL by airdrop, their intents' USDC by /dev/faucet) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const waves: Wave[] = [];
    for (let first = 0; first < INTENTS; first += WAVE) {
      const wave = await runWave(server, dispatcher, wallets, mints, plan.slice(first, first + WAVE));
      waves.push(wave);
      const accepted = wave.submitted.filter((one) => one.status === 200).length;
      console.log(
        `  wave ${waves.length}: prepared ${wave.intents} (off the clock) in ${wave.prepareS.toFixed(1)} s (${(wave.intents / wave.prepareS).toFixed(0)}/s, server CPU ${wave.prepareCpuUs.toFixed(0)} us per GET /intent);` +
          ` submitted ${accepted}/${wave.intents} ok in ${wave.submitS.toFixed(2)} s (${(accepted / wave.submitS).toFixed(0)}/s);` +
          ` all at an end ${wave.e2eS.toFixed(2)} s after its first submission, ${wave.settled.filter(filledOf).length} filled; load ${os.loadavg()[0]?.toFixed(2)}`,
      );
    }

    // Submissions, over every wave.
    const submitted = waves.flatMap((wave) => wave.submitted);
    const submitS = waves.reduce((sum, wave) => sum + wave.submitS, 0);
    const submitCpu = waves.reduce((sum, wave) => sum + wave.submitCpuUs, 0);
    const clientCpu = waves.reduce((sum, wave) => sum + wave.clientCpuUs, 0);
    const accepted = submitted.filter((one) => one.status === 200);
    const latencies = accepted.map((one) => one.latencyMs).sort((a, b) => a - b);
    const failures = submitted.filter((one) => one.status !== 200);
    console.log(`\nPOST /submit-intent (each intent once, ${CONNECTIONS} connections)`);
    console.log(
      `  ${accepted.length}/${submitted.length} answered 200 in ${submitS.toFixed(2)} s: ${(accepted.length / submitS).toFixed(0)} submissions/s, p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, max ${quantile(latencies, 1).toFixed(1)} ms`,
    );
    console.log(
      `  server CPU ${(submitCpu / submitted.length).toFixed(0)} us per submission (${((submitCpu / 1e6 / submitS) * 100).toFixed(0)}% of one core); this client ${(clientCpu / submitted.length).toFixed(0)} us per submission`,
    );
    if (failures.length > 0) {
      console.log(`  not 200: ${failureSummary(failures)}; first bodies:`);
      for (const failure of failures.slice(0, 5))
        console.log(`    ${failure.status} ${failure.text.slice(0, 300)}`);
    }

    // End to end, over every wave: from each wave's first submission until its last order was at an end.
    const records = waves.flatMap((wave) => wave.settled);
    const filled = records.filter(filledOf);
    const reverted = records.filter(revertedOf);
    const allFinal = records.every((one) => FINAL.has(one.status));
    const others = new Map<string, number>();
    for (const one of records) {
      if (filledOf(one) || revertedOf(one)) continue;
      const kind = `${one.status} with ${one.fills} fills and ${one.reverts} reverts`;
      others.set(kind, (others.get(kind) ?? 0) + 1);
    }
    const e2eS = waves.reduce((sum, wave) => sum + wave.e2eS, 0);
    const drainS = waves.reduce((sum, wave) => sum + wave.drainS, 0);
    const e2eCpu = waves.reduce((sum, wave) => sum + wave.e2eCpuUs, 0);
    const sustained = filled.length / e2eS;
    measured = { perSecond: sustained, cpuUsPerIntent: e2eCpu / accepted.length };
    const prepareCpu = waves.reduce((sum, wave) => sum + wave.prepareCpuUs * wave.intents, 0);
    console.log(
      "\nend to end (first submission -> every order at an end in /order-status, summed over the waves)",
    );
    console.log(
      `  ${filled.length} closed with one fill, ${reverted.length} closed with a revert, ${records.length - filled.length - reverted.length} other` +
        `${others.size ? ` (${[...others].map(([kind, count]) => `${kind} x${count}`).join(", ")})` : ""}` +
        `${allFinal ? "" : `; NOT ALL AT AN END ${SETTLE_TIMEOUT_MS / 1000} s after the last submission`}`,
    );
    console.log(
      `  ${e2eS.toFixed(2)} s: submissions ${submitS.toFixed(2)} s, then ${drainS.toFixed(2)} s until the last order was seen at an end (status polls included)`,
    );
    console.log(
      `  sustained: ${sustained.toFixed(0)} intents settled with a fill per second; server CPU ${(e2eCpu / accepted.length).toFixed(0)} us per intent (submission + settling + status polls)`,
    );
    console.log(
      `  not timed: preparing each intent (GET /intent, before its wave's window) took ${(prepareCpu / submitted.length).toFixed(0)} us of server CPU more; ${((e2eCpu + prepareCpu) / accepted.length).toFixed(0)} us per intent in all`,
    );

    // The chain's view: the settling transactions, named by the fills, each its own transaction.
    const signatures = accepted.map((one) => one.signature as string);
    const fillSignatures = [...new Set(records.flatMap((one) => one.fillSignatures))];
    const chain = new RpcChain({ url: server.rpcUrl });
    const [opens, settles] = await Promise.all([
      chain.getSignatureStatuses(signatures as Signature[]),
      chain.getSignatureStatuses(fillSignatures as Signature[]),
    ]);
    const landed = (statuses: typeof opens) => statuses.filter((status) => status && !status.err);
    const settleSlots = landed(settles).map((status) => Number(status?.slot));
    const slotCount = new Set(settleSlots).size;
    const openSet = new Set(signatures);
    console.log("\nthe chain's view");
    console.log(
      `  open transactions: ${landed(opens).length}/${signatures.length} landed without error; settling transactions: ${fillSignatures.length} distinct fill signatures` +
        ` (${fillSignatures.filter((signature) => openSet.has(signature)).length} equal to an open signature), ${landed(settles).length} landed without error`,
    );
    if (settleSlots.length > 0)
      console.log(
        `  settles landed in ${slotCount} slots (${Math.min(...settleSlots)}..${Math.max(...settleSlots)}), ${(settleSlots.length / slotCount).toFixed(1)} per slot on average`,
      );

    const verdict = sustained >= TARGET_PER_S && allFinal;
    console.log(
      `\nverdict: ${sustained.toFixed(0)} intents/s sustained end to end, GET /intent prepared off the clock (target >= ${TARGET_PER_S}): ${verdict ? "MET" : "MISSED"}` +
        `; submissions alone ${(accepted.length / submitS).toFixed(0)}/s; load ${os
          .loadavg()
          .map((value) => value.toFixed(2))
          .join(" ")}`,
    );
    if (failures.length > submitted.length * MAX_ERROR_SHARE)
      throw new Error(
        `${failures.length} of ${submitted.length} submissions (more than 1%) were not answered 200: ${failureSummary(failures)}`,
      );
  } finally {
    await dispatcher.close();
    if (server) await stopServer(server);
  }
  if (!measured) return;
  // The machine's baselines, measured now that the venue is stopped: the figures above as ratios.
  const health = await machineHealthRate();
  const rawTxUs = 1e6 / (await rawLiteSvmRate());
  console.log(
    `
baselines: /health-check ${health.toFixed(0)} req/s, raw LiteSVM ${(1e6 / rawTxUs).toFixed(0)} tx/s` +
      `
  ${measured.perSecond.toFixed(0)} intents/s = ${((measured.perSecond * rawTxUs) / 1e6).toFixed(4)} of raw LiteSVM's rate;` +
      ` server CPU per intent = ${(measured.cpuUsPerIntent / rawTxUs).toFixed(1)} raw LiteSVM transactions (issue 43: <= 15)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
