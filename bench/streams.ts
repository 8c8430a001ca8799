/**
 * Quote-stream benchmark of the built server: `--clients` WebSocket clients (default 2,000) each
 * subscribe to `--pairs` pairs (default 5) of the demo pools' tokens, while a trader moves pools every
 * slot so that quotes change. For every slot it measures how long the server takes to get that slot's
 * frames out to every client that receives one (last receipt − first receipt), and prints the p50 and
 * p99 of that spread over the run (target: p99 <= 100 ms), the frames delivered and the server's CPU.
 *
 *   npm run bench:streams     (options: --clients 2000 --pairs 5 --duration 20)
 */
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { demoTokens } from "../src/chain/demo-tokens.js";
import { generateKeypair } from "../src/chain/ed25519.js";
import { USDC_MINT, WRAPPED_SOL_MINT } from "../src/chain/programs.js";
import { RpcChain } from "../src/chain/rpc-client.js";
import { signOrderTransaction, TradeClient } from "../src/client/trade.js";
import { resolveVenueSeed } from "../src/markets/accounts.js";
import { openStorage } from "../src/storage/database.js";
import { cpuTimeUs, percentile, random, sleep, startServer, stopServer } from "./support.js";

const { values: args } = parseArgs({
  options: {
    clients: { type: "string", default: "2000" },
    pairs: { type: "string", default: "5" },
    duration: { type: "string", default: "20" },
  },
});
const CLIENTS = Number(args.clients);
const PAIRS = Number(args.pairs);
const DURATION_MS = Number(args.duration) * 1000;

async function main(): Promise<void> {
  const server = await startServer();
  try {
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
    const url = `${server.url.replace("http", "ws")}/quote-stream`;
    const opened = performance.now();
    for (let start = 0; start < CLIENTS; start += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, CLIENTS - start) }, async () => {
          const socket = new WebSocket(url);
          socket.on("message", (data) => {
            const frame = JSON.parse(data.toString()) as { u?: number };
            if (frame.u === undefined) return;
            frames += 1;
            const list = arrivals.get(frame.u);
            if (list) list.push(performance.now());
            else arrivals.set(frame.u, [performance.now()]);
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
      `${CLIENTS} clients × ${PAIRS} pairs subscribed in ${((performance.now() - opened) / 1000).toFixed(1)} s`,
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
        await Promise.all(
          [1, 2, 3].map(async () => {
            const output = mints[1 + Math.floor(pick() * (mints.length - 1))] as string;
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
    const started = performance.now();
    await sleep(DURATION_MS);
    const elapsed = performance.now() - started;
    const cpu = cpuTimeUs(server.child.pid as number) - cpuBefore;
    const fanoutAfter = await fanoutHistogram(server.url);
    trading = false;
    await traderLoop;

    // Slots at the edges of the window may be cut; the spread is taken over full ones.
    const slots = [...arrivals.keys()].sort((a, b) => a - b).slice(1, -1);
    const spreads = slots.map((slot) => {
      const times = arrivals.get(slot) as number[];
      return Math.max(...times) - Math.min(...times);
    });
    const receivers = slots.map((slot) => (arrivals.get(slot) as number[]).length);
    console.log(
      `over ${(elapsed / 1000).toFixed(1)} s: ${slots.length} slots with frames, ${trades} trades, ${frames} frames delivered (${(frames / (elapsed / 1000)).toFixed(0)}/s), median ${percentile(receivers, 50)} clients per slot`,
    );
    console.log(
      `  per-slot delivery spread (first to last client): p50 ${percentile(spreads, 50).toFixed(1)} ms, p99 ${percentile(spreads, 99).toFixed(1)} ms (target: p99 <= 100 ms)`,
    );
    const fanout = [...fanoutAfter].map(([le, count]) => [le, count - (fanoutBefore.get(le) ?? 0)] as const);
    console.log(
      `  server side, start of a slot's frames until all were written (oddsgate_quote_stream_fanout_seconds): p50 <= ${bucketPercentile(fanout, 50)} ms, p99 <= ${bucketPercentile(fanout, 99)} ms over ${fanout.at(-1)?.[1] ?? 0} slots (target: p99 <= 100 ms)`,
    );
    console.log(`  server CPU ${((cpu / 1000 / elapsed) * 100).toFixed(0)}% of one core`);
    for (const socket of sockets) socket.terminate();
  } finally {
    await stopServer(server);
  }
}

/** The fan-out histogram's cumulative bucket counts from /metrics: upper bound (ms) → count. */
async function fanoutHistogram(url: string): Promise<Map<number, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const buckets = new Map<number, number>();
  for (const match of text.matchAll(
    /^oddsgate_quote_stream_fanout_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm,
  )) {
    buckets.set(match[1] === "+Inf" ? Number.POSITIVE_INFINITY : Number(match[1]) * 1000, Number(match[2]));
  }
  return buckets;
}

/** The smallest bucket bound holding the p-th percentile of cumulative `buckets`. */
function bucketPercentile(buckets: readonly (readonly [number, number])[], p: number): number {
  const total = buckets.at(-1)?.[1] ?? 0;
  for (const [le, count] of buckets) if (count >= (p / 100) * total) return le;
  return Number.POSITIVE_INFINITY;
}

await main();
