/**
 * The archive's benchmark. Replay: an archived day of the demo (its catalogue, and the `/api/v1/ws`
 * frames of `--markets` followed markets: a book change and a price change every `--every` seconds
 * each, a trade every 2 s) is written with the archive's own writer, then `oddsgate replay` serves an
 * hour of it at `--speed` to a client following every channel; it prints the frames a second the
 * client receives, the speed reached (recorded time over wall time; target >= 100x) and the replay
 * server's CPU, beside the same server's `/health-check` req/s. Recording: `/health-check` req/s of a
 * demo venue whose `/api/v1/ws` clients follow every market's book and prices while it records them,
 * alternating with one that does not archive (target: >= 0.95 of it).
 *
 *   npx tsx bench/archive.ts     (options: --markets 200 --every 10 --speed 1000 --only replay|recording)
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { ParquetArchive } from "../src/archive/parquet-archive.js";
import type { ArchiveRow } from "../src/archive/tables.js";
import { generateDemoCatalogue } from "../src/demo/generate.js";
import { bookMessage, priceMessage, tradeMessage } from "../src/markets/ws/frames.js";
import { cpuTimeUs, healthCheckRate, random, startServer, stopServer } from "./support.js";

const { values } = parseArgs({
  options: {
    markets: { type: "string", default: "200" },
    every: { type: "string", default: "10" },
    speed: { type: "string", default: "1000" },
    only: { type: "string" },
  },
});
const MARKETS = Number(values.markets);
const EVERY_S = Number(values.every);
const SPEED = Number(values.speed);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Writes a day of the demo's frames (and its catalogue) into `dir`; answers the day's start and its frame count. */
async function archiveDay(dir: string): Promise<{ start: number; frames: number }> {
  const start = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAY_MS;
  const catalogue = generateDemoCatalogue({ anchor: start / 1000 });
  const archive = await ParquetArchive.open({ dir, flushMs: 3_600_000, maxBufferedRows: 200_000 });
  const markets = catalogue.events.flatMap((event) => event.markets).filter((m) => m.status === "active");
  const ts = start - 1;
  archive.append("catalogue", [
    ...catalogue.series.map((s) => catalogueRow(ts, "series", s.ticker, "", s)),
    ...catalogue.events.map(({ markets: _m, ...e }) => catalogueRow(ts, "event", e.ticker, "", e)),
    ...catalogue.events
      .flatMap((e) => e.markets)
      .map((m) => catalogueRow(ts, "market", m.ticker, m.status, m)),
  ]);
  const followed = markets.slice(0, MARKETS).map((m) => m.ticker);
  const next = random(7);
  const seq = { prices: 0, orderbook: 0, trades: 0 };
  let frames = 0;
  let batch: ArchiveRow<"frames">[] = [];
  const push = (channel: keyof typeof seq, at: number, ticker: string, message: string) => {
    batch.push({ channel, seq: ++seq[channel], ts: at, ticker, message });
    frames++;
  };
  // One second at a time: each market changes with probability 1/EVERY_S a second; a trade every 2 s.
  for (let second = 0; second < DAY_MS / 1000; second++) {
    const at = start + second * 1000;
    for (const ticker of followed) {
      if (next() * EVERY_S >= 1) continue;
      const bid = Math.floor(next() * 90) + 5;
      const price = (cents: number) => (cents / 100).toFixed(4);
      push("orderbook", at, ticker, bookMessage(ticker, bookOf(bid, next)).message);
      push(
        "prices",
        at + 1,
        ticker,
        priceMessage(ticker, {
          yes_bid: price(bid),
          yes_ask: price(bid + 2),
          no_bid: price(98 - bid),
          no_ask: price(100 - bid),
        }).message,
      );
    }
    if (second % 2 === 0) {
      const ticker = followed[Math.floor(next() * followed.length)] as string;
      const yes = Math.floor(next() * 90) + 5;
      const trade = {
        tradeId: `t-${second}`,
        ticker,
        price: yes,
        count: 1 + Math.floor(next() * 50),
        yesPrice: yes,
        noPrice: 100 - yes,
        yesPriceDollars: (yes / 100).toFixed(4),
        noPriceDollars: ((100 - yes) / 100).toFixed(4),
        takerSide: next() < 0.5 ? "yes" : "no",
        createdTime: Math.floor(at / 1000),
      };
      push("trades", at + 2, ticker, tradeMessage(trade, at).message);
    }
    if (batch.length >= 100_000) {
      archive.append("frames", batch);
      batch = [];
      await archive.flush();
    }
  }
  archive.append("frames", batch);
  await archive.close();
  return { start, frames };
}

function bookOf(bid: number, next: () => number) {
  const side = (top: number) =>
    Object.fromEntries(
      Array.from({ length: 5 }, (_, i) => [((top - i) / 100).toFixed(4), 10 + Math.floor(next() * 500)]),
    );
  return { yes_bids: side(bid), no_bids: side(97 - bid), sequence: 0 };
}

function catalogueRow(
  ts: number,
  kind: string,
  ticker: string,
  status: string,
  record: object,
): ArchiveRow<"catalogue"> {
  return { ts, change: "snapshot", kind, ticker, status, record: JSON.stringify(record) };
}

/** Follows every channel of `/api/v1/ws` at `url`; resolves with receipt times once `expected` frames came (or 120 s passed). */
function follow(url: string): { socket: WebSocket; receipts: number[]; recordedTs: number[] } {
  const socket = new WebSocket(`${url.replace("http", "ws")}/api/v1/ws`);
  const receipts: number[] = [];
  const recordedTs: number[] = [];
  socket.on("open", () => {
    for (const channel of ["prices", "orderbook", "trades"])
      socket.send(JSON.stringify({ type: "subscribe", channel, all: true }));
  });
  socket.on("message", (data) => {
    const text = data.toString();
    if (!text.includes('"seq"') || text.includes('"type":"subscribed"')) return;
    receipts.push(performance.now());
    const message = JSON.parse(text) as { created_time?: number };
    if (typeof message.created_time === "number") recordedTs.push(message.created_time);
  });
  return { socket, receipts, recordedTs };
}

async function replayBench(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-bench-archive-"));
  try {
    const written = performance.now();
    const { start, frames } = await archiveDay(dir);
    const bytes = fs
      .readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .reduce((sum, entry) => sum + fs.statSync(path.join(entry.parentPath, entry.name)).size, 0);
    console.log(
      `archived a day: ${frames} frames of ${MARKETS} markets in ${((performance.now() - written) / 1000).toFixed(1)} s, ${(bytes / 1024 / 1024).toFixed(1)} MiB (${(bytes / MARKETS / 1024).toFixed(1)} KiB per market-day)`,
    );
    const from = start + 12 * HOUR_MS;
    const to = from + HOUR_MS;
    const server = await startServer({
      command: [
        "replay",
        "--from",
        new Date(from).toISOString(),
        "--to",
        new Date(to).toISOString(),
        "--speed",
        String(SPEED),
      ],
      env: { ARCHIVE_DIR: dir },
    });
    try {
      const cpuBefore = cpuTimeUs(server.child.pid as number);
      const client = follow(server.url);
      const expectedMs = HOUR_MS / SPEED;
      await new Promise((resolve) => setTimeout(resolve, expectedMs + 3_000));
      const cpuUs = cpuTimeUs(server.child.pid as number) - cpuBefore;
      client.socket.close();
      const { receipts, recordedTs } = client;
      const wallMs = (receipts[receipts.length - 1] ?? 0) - (receipts[0] ?? 0);
      const recordedMs = (recordedTs[recordedTs.length - 1] ?? 0) - (recordedTs[0] ?? 0);
      const health = await healthCheckRate(server.url, 3);
      console.log(
        `replay at --speed ${SPEED}: ${receipts.length} frames in ${(wallMs / 1000).toFixed(2)} s = ${((receipts.length / wallMs) * 1000).toFixed(0)} frames/s; ` +
          `${(recordedMs / Math.max(wallMs, 1)).toFixed(0)}x real time (target >= 100x); server CPU ${(cpuUs / 1000).toFixed(0)} ms ` +
          `(${(cpuUs / Math.max(receipts.length, 1)).toFixed(1)} µs a frame); /health-check ${health.toFixed(0)} req/s on the same server`,
      );
    } finally {
      await stopServer(server);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A demo venue whose stream client follows the books, prices and trades of every market: its server
 * CPU over 10 s of that (ms a second), then its `/health-check` req/s while the client goes on following.
 */
async function recordingRun(archive: boolean): Promise<{ rate: number; cpuMsPerS: number }> {
  const server = await startServer({ env: { ARCHIVE: String(archive) } });
  try {
    const client = follow(server.url);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const pid = server.child.pid as number;
    const before = cpuTimeUs(pid);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const cpuMsPerS = (cpuTimeUs(pid) - before) / 1000 / 10;
    const rate = await healthCheckRate(server.url, 5);
    client.socket.close();
    return { rate, cpuMsPerS };
  } finally {
    await stopServer(server);
  }
}

async function recordingBench(): Promise<void> {
  const on: { rate: number; cpuMsPerS: number }[] = [];
  const off: { rate: number; cpuMsPerS: number }[] = [];
  for (let run = 0; run < 3; run++) {
    off.push(await recordingRun(false));
    on.push(await recordingRun(true));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const rate = (runs: typeof on) => mean(runs.map((r) => r.rate));
  const cpu = (runs: typeof on) => mean(runs.map((r) => r.cpuMsPerS));
  const list = (runs: typeof on) => runs.map((r) => r.rate.toFixed(0)).join(", ");
  console.log(
    `recording: server CPU following every market ${cpu(on).toFixed(1)} ms/s archiving, ${cpu(off).toFixed(1)} ms/s without ` +
      `(recording costs ${(cpu(on) - cpu(off)).toFixed(1)} ms/s, the CPU of ${(((cpu(on) - cpu(off)) / 1000) * rate(off)).toFixed(0)} /health-check answers a second)`,
  );
  console.log(
    `recording: /health-check ${rate(on).toFixed(0)} req/s archiving, ${rate(off).toFixed(0)} req/s without (alternating runs ${list(on)} vs ${list(off)}): ratio ${(rate(on) / rate(off)).toFixed(3)} (target >= 0.95)`,
  );
}

if (values.only !== "recording") await replayBench();
if (values.only !== "replay") await recordingBench();
process.exit(0);
