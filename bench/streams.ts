/**
 * Pair-stream benchmark of the built server, `/quote-stream` or (`--stream book`) `/book-stream`:
 * `--clients` WebSocket clients (default 2,000) each subscribe to `--pairs` pairs (default 5) of the
 * demo pools' tokens, while a trader moves pools every slot so that quotes and books change. For every frame pass (one per slot) it measures how long the server takes
 * to get the pass's frames out to every client that receives one (last receipt − first receipt), and
 * prints the p50 and p99 of that spread over the run (target: p99 <= 100 ms; with fewer than 100 passes
 * the p99 is the worst pass), the server's own fan-out metric (which also counts the quoting before the
 * first frame), the frames delivered, and the CPU of the server and of this load generator (they share
 * the machine's cores; a busy load generator would delay the receipts it times).
 *
 *   npm run bench:streams     (options: --clients 2000 --pairs 5 --duration 20)
 *
 * A pass's CPU is also printed as issue 43 measures it: the server's CPU over the window less what the
 * trader alone cost it in a window before the clients connected, per pass, in idle `/health-check`
 * answers (the baseline's rate, taken on an idle server).
 *
 * `--stream market` measures `/api/v1/ws` instead (issue 22): the servers' upstream is a small tape
 * server on a worker thread that records a trade every 250 ms (timed now) and counts the requests it gets.
 * `--clients` clients follow every trade, first on one instance, then split over two instances sharing
 * one Redis (`--redis`, default redis://127.0.0.1:6379): for each it prints the trade-to-frame latency
 * (receipt − the trade's time: the poll interval, 1 s, plus the stream's delay; target p99 <= 1,100 ms),
 * the frames per trade per client (1), and the upstream's request rate (the same with 1 and 2 instances).
 *   BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench:streams    (profile the server)
 */
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import WebSocket from "ws";
import { demoTokens } from "../src/chain/demo-tokens.js";
import { generateKeypair } from "../src/chain/ed25519.js";
import { WRAPPED_SOL_MINT } from "../src/chain/programs.js";
import { RpcChain } from "../src/chain/rpc-client.js";
import { signOrderTransaction, TradeClient } from "../src/client/trade.js";
import { USDC_MINT } from "../src/contract/markets.js";
import { resolveVenueSeed } from "../src/markets/accounts.js";
import { openStorage } from "../src/storage/database.js";
import {
  cpuTimeUs,
  healthCheckRate,
  percentile,
  random,
  rawLiteSvmRate,
  type StartedServer,
  sleep,
  startServer,
  stopServer,
} from "./support.js";

const { values: args } = parseArgs({
  options: {
    stream: { type: "string", default: "quote" },
    clients: { type: "string", default: "2000" },
    pairs: { type: "string", default: "5" },
    duration: { type: "string", default: "20" },
    redis: { type: "string", default: "redis://127.0.0.1:6379" },
  },
});
const CLIENTS = Number(args.clients);
const PAIRS = Number(args.pairs);
const DURATION_MS = Number(args.duration) * 1000;
/** How long the trader runs alone, for its own server CPU. */
const CONTROL_MS = 5_000;
if (args.stream !== "quote" && args.stream !== "book" && args.stream !== "market")
  throw new Error("--stream is quote, book or market");
/** The stream measured: `/quote-stream` or `/book-stream`. */
const STREAM = `${args.stream}-stream`;

async function main(): Promise<void> {
  const server = await startServer();
  try {
    const health = await healthCheckRate(server.url);
    const liteSvm = await rawLiteSvmRate();
    console.log(
      `baselines, server idle: GET /health-check ${health.toFixed(0)} req/s; raw LiteSVM (sigverify on, in process) ${liteSvm.toFixed(0)} SOL transfers/s`,
    );
    const storage = await openStorage({ DATA_DIR: server.dataDir });
    const venueSeed = await resolveVenueSeed(storage.db, undefined);
    await storage.close();
    const mints = [USDC_MINT, WRAPPED_SOL_MINT, ...demoTokens(venueSeed).map((token) => token.address)];
    const pairs = mints.flatMap((base) =>
      mints.filter((quote) => quote !== base).map((quote) => [base, quote] as const),
    );
    const pick = random(7);

    // A trader moves three pools every slot, so that quotes change. Its own random numbers: the
    // clients' pairs are the same whatever the trader's timing.
    const tradePick = random(11);
    const chain = new RpcChain({ url: server.rpcUrl });
    const trade = new TradeClient({ baseUrl: server.url });
    const trader = generateKeypair();
    await chain.requestAirdrop(trader.address, 1_000_000_000_000n);
    await fetch(`${server.url}/dev/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wallet: trader.address, mint: USDC_MINT, amount: "100000000000000" }),
    });
    let trades = 0;
    let trading = true;
    const traderLoop = (async () => {
      while (trading) {
        const slotStart = performance.now();
        // Three different outputs: two identical orders in one slot are one transaction, sent twice.
        const outputs = new Set<string>();
        while (outputs.size < Math.min(3, mints.length - 1))
          outputs.add(mints[1 + Math.floor(tradePick() * (mints.length - 1))] as string);
        await Promise.all(
          [...outputs].map(async (output) => {
            const order = await trade.order({
              inputMint: USDC_MINT,
              outputMint: output,
              amount: 1_000_000_000n,
              userPublicKey: trader.address,
              priceImpactTolerancePct: 100,
              slippageBps: 10_000,
            });
            await chain.sendTransaction(signOrderTransaction(order.transaction as string, trader));
            trades += 1;
          }),
        ).catch((error: unknown) => console.error(`trade failed: ${(error as Error).message}`));
        await sleep(Math.max(0, 400 - (performance.now() - slotStart)));
      }
    })();

    // The trader alone first: its server CPU a second, taken from the run's so that what is left is
    // the stream's (its passes, with the clients' connections open).
    await sleep(2_000);
    const controlCpuBefore = cpuTimeUs(server.child.pid as number);
    const controlStarted = performance.now();
    await sleep(CONTROL_MS);
    const traderCpuPerMs =
      (cpuTimeUs(server.child.pid as number) - controlCpuBefore) / (performance.now() - controlStarted);

    // The clients, each with its pairs; every frame's slot and arrival time is recorded.
    const arrivals = new Map<number, number[]>();
    let frames = 0;
    const sockets: WebSocket[] = [];
    const url = `${server.url.replace("http", "ws")}/${STREAM}`;
    const opened = performance.now();
    for (let start = 0; start < CLIENTS; start += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, CLIENTS - start) }, async () => {
          const socket = new WebSocket(url);
          socket.on("message", (data: Buffer) => {
            // The time first; the slot is read from the frame's start (`{"u":123,...`) rather than by
            // parsing all of it, so that the load generator's own work delays the receipts it times little.
            const at = performance.now();
            const slot = frameSlot(data);
            if (slot === undefined) return;
            frames += 1;
            const list = arrivals.get(slot);
            if (list) list.push(at);
            else arrivals.set(slot, [at]);
          });
          await new Promise((resolve, reject) => {
            socket.once("open", resolve);
            socket.once("error", reject);
          });
          for (let i = 0; i < PAIRS; i++) {
            const [base, quote] = pairs[Math.floor(pick() * pairs.length)] as readonly [string, string];
            socket.send(JSON.stringify({ op: "subscribe", base_mint: base, quote_mint: quote }));
          }
          sockets.push(socket);
        }),
      );
    }
    console.log(
      `/${STREAM}: ${CLIENTS} clients × ${PAIRS} pairs subscribed in ${((performance.now() - opened) / 1000).toFixed(1)} s (WebSocket extensions negotiated: ${sockets[0]?.extensions || "none"})`,
    );

    await sleep(2_000);
    arrivals.clear();
    frames = 0;
    const controlTrades = trades;
    trades = 0;
    const fanoutBefore = await fanoutHistogram(server.url);
    const cpuBefore = cpuTimeUs(server.child.pid as number);
    const loadCpuBefore = process.cpuUsage();
    const started = performance.now();
    await sleep(DURATION_MS);
    const elapsed = performance.now() - started;
    const cpu = cpuTimeUs(server.child.pid as number) - cpuBefore;
    const loadCpu = process.cpuUsage(loadCpuBefore);
    const fanoutAfter = await fanoutHistogram(server.url);
    trading = false;
    await traderLoop;

    // Slots at the edges of the window may be cut; the spread is taken over full ones. The server's
    // frame timer is not tied to the chain's slots, so two passes may carry the same slot: each burst of
    // receipts is one pass.
    const slots = [...arrivals.keys()].sort((a, b) => a - b).slice(1, -1);
    const passes = slots.flatMap((slot) => bursts(arrivals.get(slot) as number[]));
    const spreads = passes.map((times) => (times.at(-1) as number) - (times[0] as number));
    const receivers = passes.map((times) => times.length);
    console.log(
      `over ${(elapsed / 1000).toFixed(1)} s: ${passes.length} frame passes in ${slots.length} slots, ${trades} trades, ${frames} frames delivered (${(frames / (elapsed / 1000)).toFixed(0)}/s), median ${percentile(receivers, 50)} clients per pass`,
    );
    console.log(
      `  per-pass delivery spread (first to last client): p50 ${percentile(spreads, 50).toFixed(1)} ms, p99 ${percentile(spreads, 99).toFixed(1)} ms, max ${Math.max(...spreads).toFixed(1)} ms (target: p99 <= 100 ms)`,
    );
    const fanout = [...fanoutAfter.buckets].map(
      ([le, count]) => [le, count - (fanoutBefore.buckets.get(le) ?? 0)] as const,
    );
    const fanoutCount = fanoutAfter.count - fanoutBefore.count;
    const fanoutMeanMs = ((fanoutAfter.sum - fanoutBefore.sum) / fanoutCount) * 1000;
    console.log(
      fanoutCount > 0
        ? `  server side, start of a pass until all its frames were written (${fanoutMetric}): mean ${fanoutMeanMs.toFixed(1)} ms, p50 <= ${bucketPercentile(fanout, 50)} ms, p99 <= ${bucketPercentile(fanout, 99)} ms (bucket bounds) over ${fanoutCount} passes (target: p99 <= 100 ms)`
        : `  server side: ${fanoutMetric} is not exported by this server`,
    );
    console.log(
      `  server CPU ${((cpu / 1000 / elapsed) * 100).toFixed(0)}% of one core; load generator (clients and trader) ${(((loadCpu.user + loadCpu.system) / 1000 / elapsed) * 100).toFixed(0)}%`,
    );
    // Issue 43's measure: the CPU of a pass beyond the trader's, in idle /health-check answers (the
    // server answers them on one core, so one costs about a second over the baseline's rate).
    const passCpuMs = (cpu - traderCpuPerMs * elapsed) / 1000 / Math.max(1, fanoutCount || passes.length);
    console.log(
      `  a pass's server CPU beyond the trader's (${(traderCpuPerMs / 10).toFixed(0)}% of a core alone, ${controlTrades} trades in ${CONTROL_MS / 1000} s): ${passCpuMs.toFixed(1)} ms = ${((passCpuMs / 1000) * health).toFixed(0)} idle /health-check answers at ${health.toFixed(0)} req/s (issue 43: <= 300)`,
    );
    for (const socket of sockets) socket.terminate();
  } finally {
    await stopServer(server);
  }
}

const SLOT_PREFIX = Buffer.from('{"u":');

/** The slot of a stream frame (`{"u":123,...`); undefined for other messages (e.g. bad_request). */
function frameSlot(data: Buffer): number | undefined {
  if (data.compare(SLOT_PREFIX, 0, SLOT_PREFIX.length, 0, SLOT_PREFIX.length) !== 0) return undefined;
  let slot = 0;
  for (let i = SLOT_PREFIX.length; i < data.length; i++) {
    const digit = (data[i] as number) - 48;
    if (digit < 0 || digit > 9) return i > SLOT_PREFIX.length ? slot : undefined;
    slot = slot * 10 + digit;
  }
  return undefined;
}

/** One pass's receipts apart from another's: longer than any pass takes, well under a slot. */
const PASS_GAP_MS = 200;

/** Receipt times split into bursts (one per frame pass), each sorted. */
function bursts(times: readonly number[]): number[][] {
  const sorted = [...times].sort((a, b) => a - b);
  const groups: number[][] = [];
  for (const time of sorted) {
    const group = groups.at(-1);
    if (group && time - (group.at(-1) as number) <= PASS_GAP_MS) group.push(time);
    else groups.push([time]);
  }
  return groups;
}

/** The server's fan-out histogram of the stream measured. */
const fanoutMetric = `oddsgate_${args.stream}_stream_fanout_seconds`;

/** The fan-out histogram from /metrics: cumulative bucket counts (upper bound in ms → count), sum and count. */
async function fanoutHistogram(
  url: string,
): Promise<{ buckets: Map<number, number>; sum: number; count: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(new RegExp(`^${fanoutMetric}_bucket\\{le="([^"]+)"\\} (\\d+)$`, "gm"))) {
    buckets.set(match[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(match[1]) * 1000, Number(match[2]));
  }
  const value = (name: string) =>
    Number(text.match(new RegExp(`^${fanoutMetric}_${name} (\\S+)$`, "m"))?.[1] ?? 0);
  return { buckets, sum: value("sum"), count: value("count") };
}

/** The smallest bucket bound holding the p-th percentile of cumulative `buckets`. */
function bucketPercentile(buckets: readonly (readonly [number, number])[], p: number): number {
  const total = buckets.at(-1)?.[1] ?? 0;
  for (const [le, count] of buckets) if (count >= (p / 100) * total) return le;
  return Number.POSITIVE_INFINITY;
}

/**
 * A trade tape standing in for the upstream exchange: one trade every `everyMs`, timed now; requests
 * counted per path. It runs on a worker thread, so that the clients' receipts in this thread neither
 * delay its answers nor are delayed by them.
 */
async function startTape(everyMs: number) {
  const worker = new Worker(TAPE_WORKER, { eval: true, workerData: { everyMs } });
  const url = await new Promise<string>((resolve) => worker.once("message", resolve));
  return {
    url,
    /** Requests received so far, per path. */
    requests: () =>
      new Promise<Map<string, number>>((resolve) => {
        worker.once("message", (counts: [string, number][]) => resolve(new Map(counts)));
        worker.postMessage("counts");
      }),
    close: () => worker.terminate(),
  };
}

const TAPE_WORKER = `
const http = require("node:http");
const { parentPort, workerData } = require("node:worker_threads");
const trades = [];
const requests = new Map();
let id = 0;
setInterval(() => {
  const now = Date.now();
  id += 1;
  trades.push({ trade_id: "B" + id, created_time: new Date(now).toISOString(), ms: now });
}, workerData.everyMs);
const server = http.createServer((request, response) => {
  const url = new URL(request.url || "/", "http://tape");
  requests.set(url.pathname, (requests.get(url.pathname) || 0) + 1);
  response.setHeader("content-type", "application/json");
  if (url.pathname.endsWith("/markets/trades")) {
    const since = Number(url.searchParams.get("min_ts") || 0) * 1000;
    const limit = Number(url.searchParams.get("limit") || 100);
    const page = trades.filter((t) => t.ms >= since).reverse().slice(0, limit).map((t) => ({
      trade_id: t.trade_id, ticker: "BENCH-1", created_time: t.created_time,
      yes_price: 40, no_price: 60, count: 1, taker_side: "yes",
    }));
    response.end(JSON.stringify({ trades: page, cursor: "" }));
  } else if (url.pathname.endsWith("/markets")) response.end('{"markets":[],"cursor":""}');
  else { response.statusCode = 404; response.end("{}"); }
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage("http://127.0.0.1:" + server.address().port + "/trade-api/v2"));
parentPort.on("message", () => parentPort.postMessage([...requests]));
`;

/** How often the tape records a trade: 4 a second, 8,000 frames a second to 2,000 clients. */
const TRADE_EVERY_MS = 250;

/** `/api/v1/ws` with `CLIENTS` clients following every trade, on one instance and then on two sharing Redis. */
async function marketMain(): Promise<void> {
  const tape = await startTape(TRADE_EVERY_MS);
  try {
    for (const instances of [1, 2]) {
      const prefix = `oddsgate-bench:${process.pid}:${instances}:`;
      const env = {
        UPSTREAM_URL: tape.url,
        SYNC_INTERVAL: "0",
        REDIS_URL: args.redis as string,
        REDIS_PREFIX: prefix,
      };
      const servers = [];
      for (let i = 0; i < instances; i++) servers.push(await startServer({ env }));
      try {
        await measureMarketStream(servers, tape.requests);
      } finally {
        for (const server of servers) await stopServer(server);
      }
    }
  } finally {
    await tape.close();
  }
}

async function measureMarketStream(
  servers: readonly StartedServer[],
  requests: () => Promise<Map<string, number>>,
) {
  const latencies: number[] = [];
  let frames = 0;
  let repeats = 0;
  let measuring = false;
  const sockets: WebSocket[] = [];
  const opened = performance.now();
  for (let start = 0; start < CLIENTS; start += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, CLIENTS - start) }, async (_, i) => {
        const server = servers[(start + i) % servers.length] as StartedServer;
        const socket = new WebSocket(`${server.url.replace("http", "ws")}/api/v1/ws`);
        const seen = new Set<string>();
        socket.on("message", (data: Buffer) => {
          const at = Date.now();
          const text = data.toString();
          // Read by pattern rather than parsed whole, so that the load generator delays its receipts little.
          const created = /"created_time":(\d+)/.exec(text)?.[1];
          const id = /"trade_id":"([^"]+)"/.exec(text)?.[1];
          if (!created || !id || !measuring) return;
          frames += 1;
          if (seen.has(id)) repeats += 1;
          seen.add(id);
          latencies.push(at - Number(created));
        });
        await new Promise((resolve, reject) => {
          socket.once("open", resolve);
          socket.once("error", reject);
        });
        socket.send(JSON.stringify({ type: "subscribe", channel: "trades", all: true }));
        sockets.push(socket);
      }),
    );
  }
  console.log(
    `/api/v1/ws on ${servers.length} instance(s): ${CLIENTS} clients following every trade, connected in ${((performance.now() - opened) / 1000).toFixed(1)} s`,
  );
  // The first poll after the subscriptions starts the tape; the window starts after it.
  await sleep(3_000);
  const before = await requests();
  const cpuBefore = servers.map((server) => cpuTimeUs(server.child.pid as number));
  measuring = true;
  const started = performance.now();
  await sleep(DURATION_MS);
  measuring = false;
  const elapsed = performance.now() - started;
  const cpu = servers.map((server, i) => cpuTimeUs(server.child.pid as number) - (cpuBefore[i] as number));
  const after = await requests();
  const rate = (path: string) =>
    (((after.get(path) ?? 0) - (before.get(path) ?? 0)) / (elapsed / 1000)).toFixed(2);
  const tradesSeen = frames / CLIENTS;
  console.log(
    `  trade-to-frame latency: p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies.reduce((a, b) => Math.max(a, b), 0).toFixed(0)} ms over ${frames} frames (target: p99 <= poll 1,000 ms + 100 ms)`,
  );
  console.log(
    `  ${tradesSeen.toFixed(1)} trades per client, ${repeats} repeated; upstream requests/s: trade tape ${rate("/trade-api/v2/markets/trades")}, markets ${rate("/trade-api/v2/markets")}; server CPU ${cpu.map((us) => `${((us / 1000 / elapsed) * 100).toFixed(0)}%`).join(" + ")} of one core`,
  );
  for (const socket of sockets) socket.terminate();
}

await (args.stream === "market" ? marketMain() : main());
