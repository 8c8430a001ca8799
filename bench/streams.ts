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
 *   BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench:streams    (profile the server)
 */
import { parseArgs } from "node:util";
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
  },
});
const CLIENTS = Number(args.clients);
const PAIRS = Number(args.pairs);
const DURATION_MS = Number(args.duration) * 1000;
if (args.stream !== "quote" && args.stream !== "book") throw new Error("--stream is quote or book");
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

    // A trader moves three pools every slot, so that quotes change.
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
          outputs.add(mints[1 + Math.floor(pick() * (mints.length - 1))] as string);
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

    await sleep(2_000);
    arrivals.clear();
    frames = 0;
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

await main();
