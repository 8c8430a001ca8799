/**
 * The archive records a live window of a whole venue: a client follows the stream while the
 * simulator's markets move and trade, the venue fills an order on its chain, and a forecast is read.
 * Every data frame the client received is in the archive byte for byte (rebuilt from its row), each
 * trade of the tape once, the books as they changed, the forecast's periods and the venue's own fill;
 * `oddsgate archive export` writes them as Parquet that DuckDB reads back with the declared types,
 * and `oddsgate archive stats` counts them.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { ArchiveReader } from "../../src/archive/archive-reader.js";
import { ARCHIVE_TABLES, type ArchiveTable } from "../../src/archive/tables.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { OrderStatusResponse } from "../../src/contract/trade.js";
import { framed } from "../../src/markets/ws/frames.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { oddsgate } from "../support/cli.js";
import { newFundedWallet, signAndSendWithKit } from "../support/kit.js";
import { settledOrder } from "../support/orders.js";
import { startTestServer, type TestServer, testCatalogue } from "../support/server.js";
import { readForecast } from "./support.js";

/** The simulator's clock runs this much faster than the real one, so its markets trade every second or so. */
const SPEED = 30;
const started = Date.now() / 1000;
const simulatorNow = () => Math.floor(started + (Date.now() / 1000 - started) * SPEED);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-archive-"));
const archiveDir = path.join(dir, "archive");
let simulator: RunningSimulator;
let t: TestServer;
/** Every data frame the client received, as received, by channel and seq. */
const received = new Map<string, string>();
let fill: NonNullable<OrderStatusResponse["fills"]>[number];
let forecastPoints = 0;
let followed: string[] = [];

beforeAll(async () => {
  simulator = await startSimulator({ catalogue: await testCatalogue(), port: 0, now: simulatorNow });
  t = await startTestServer({
    settings: {
      UPSTREAM_URL: simulator.url,
      ARCHIVE: "true",
      ARCHIVE_DIR: archiveDir,
      // Flushed by the test when it reads; the interval's own flushes are the writer's tests'.
      ARCHIVE_FLUSH_SECONDS: "3600",
    },
  });
  const active = t.server.catalog.require().markets.filter((m) => m.record.status === "active");
  followed = active.slice(0, 3).map((m) => m.record.ticker);

  const socket = new WebSocket(`${t.url.replace("http", "ws")}/api/v1/ws`);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  let trades = 0;
  let books = 0;
  const enough = new Promise<void>((resolve) => {
    socket.on("message", (data) => {
      const text = data.toString();
      const message = JSON.parse(text) as { channel: string; type: string; seq?: number };
      if (!["orderbook", "ticker", "trade"].includes(message.type)) return;
      received.set(`${message.channel}|${message.seq}`, text);
      if (message.type === "trade") trades++;
      if (message.type === "orderbook") books++;
      if (trades >= 3 && books >= 6) resolve();
    });
  });
  socket.send(JSON.stringify({ type: "subscribe", channel: "trades", all: true }));
  socket.send(JSON.stringify({ type: "subscribe", channel: "orderbook", tickers: followed }));
  socket.send(JSON.stringify({ type: "subscribe", channel: "prices", tickers: followed }));

  const forecast = await readForecast(t.url);
  forecastPoints = forecast;
  fill = await buyOnTheVenue(active.map((m) => m.addresses.yesMint));
  await enough;
  // Frames published after the flush below are in the next one: the client stops counting first.
  socket.removeAllListeners("message");
  socket.close();
  await t.server.archive?.flush();
}, 180_000);

afterAll(async () => {
  await t?.stop();
  await simulator?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Buys the first of `yesMints` the venue quotes, as a wallet does, and waits for the fill. */
async function buyOnTheVenue(yesMints: string[]) {
  const rpcUrl = t.server.chain.rpcUrl;
  const chain = new RpcChain({ url: rpcUrl });
  const wallet = await newFundedWallet(t.url, chain, 2_000_000_000n, [[USDC_MINT, 100_000_000n]]);
  for (const yes of yesMints) {
    const query = new URLSearchParams({
      inputMint: USDC_MINT,
      outputMint: yes,
      amount: "2000000",
      userPublicKey: wallet.address,
      priceImpactTolerancePct: "100",
      slippageBps: "2000",
    });
    const response = await fetch(`${t.url}/order?${query}`);
    if (response.status !== 200) continue;
    const order = (await response.json()) as { transaction: string };
    const signature = await signAndSendWithKit(rpcUrl, chain, wallet, order.transaction);
    const settled = await settledOrder(t.url, signature);
    expect(settled.status, JSON.stringify(settled)).toBe("closed");
    return (settled.fills ?? [])[0] as NonNullable<OrderStatusResponse["fills"]>[number];
  }
  throw new Error("the venue quoted none of the active markets");
}

describe("the archive of a live window", () => {
  it("holds every data frame the client received, byte for byte", async () => {
    const reader = await ArchiveReader.open(archiveDir);
    try {
      const rows = await reader.rows("frames", {});
      const archived = new Map(
        rows.map((row) => [
          `${row.channel}|${row.seq}`,
          framed({ seq: row.seq, ts: row.ts, ticker: row.ticker, message: row.message }).frame,
        ]),
      );
      expect(received.size).toBeGreaterThanOrEqual(9);
      for (const [key, frame] of received) expect(archived.get(key), key).toBe(frame);
      // Each frame once: (channel, seq) names one.
      expect(archived.size).toBe(rows.length);
    } finally {
      reader.close();
    }
  });

  it("holds the tape's trades once, the books of followed markets, the forecast and the venue's fill", async () => {
    const reader = await ArchiveReader.open(archiveDir);
    try {
      const trades = await reader.rows("trades", {});
      expect(new Set(trades.map((trade) => trade.trade_id)).size).toBe(trades.length);
      const streamed = [...received.values()]
        .map((text) => JSON.parse(text))
        .filter((m) => m.type === "trade");
      const ids = new Set(trades.map((trade) => trade.trade_id));
      for (const trade of streamed) expect(ids.has(trade.trade_id), trade.trade_id).toBe(true);

      const books = await reader.rows("orderbooks", {});
      for (const ticker of followed)
        expect(
          books.some((book) => book.ticker === ticker),
          ticker,
        ).toBe(true);

      const forecasts = await reader.rows("forecasts", {});
      expect(forecastPoints).toBeGreaterThan(0);
      expect(forecasts).toHaveLength(forecastPoints);

      const fills = await reader.rows("fills", {});
      expect(fills.map((row) => row.signature)).toEqual([fill.signature]);
      expect(fills[0]?.input_amount).toBe(Number(fill.inAmount));
      expect(fills[0]?.output_amount).toBe(Number(fill.outAmount));
    } finally {
      reader.close();
    }
  });

  it("exports a window as Parquet that DuckDB reads with the declared types, and counts it in stats", async () => {
    const out = path.join(dir, "export");
    const env = { ARCHIVE_DIR: archiveDir, DATA_DIR: dir };
    const day = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.parse(day) - 86_400_000 * 400).toISOString().slice(0, 10);
    const to = new Date(Date.parse(day) + 86_400_000 * 2).toISOString().slice(0, 10);
    const printed = await oddsgate(["archive", "export", "--from", from, "--to", to, "--out", out], env);
    const reader = await ArchiveReader.open(archiveDir);
    const duck = await (await DuckDBInstance.create(":memory:")).connect();
    try {
      for (const table of Object.keys(ARCHIVE_TABLES) as ArchiveTable[]) {
        const file = path.join(out, `${table}.parquet`);
        const expected = (await reader.rows(table, {})).length;
        expect(printed.stdout).toContain(`${table}: ${expected} rows`);
        const counted = await duck.runAndReadAll(
          `SELECT count(*)::INTEGER AS n FROM read_parquet('${file}')`,
        );
        expect(counted.getRowObjects()[0]?.n, table).toBe(expected);
        const described = await duck.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
        const types = Object.fromEntries(
          described.getRowObjects().map((row) => [String(row.column_name), String(row.column_type)]),
        );
        const declared = ARCHIVE_TABLES[table].columns as Record<string, string>;
        expect(Object.keys(types)).toEqual(Object.keys(declared));
        for (const [column, kind] of Object.entries(declared)) {
          expect(types[column], `${table}.${column}`).toBe(DUCKDB_TYPES[kind]);
        }
      }
      const stats = await oddsgate(["archive", "stats"], env);
      expect(stats.stdout).toContain("frames");
      expect(stats.stdout).toMatch(/fills\b.*\b1 rows?\b/);
    } finally {
      reader.close();
      duck.closeSync();
    }
  });

  it("refuses an unknown table and a window that ends before it starts", async () => {
    const env = { ARCHIVE_DIR: archiveDir, DATA_DIR: dir };
    const out = path.join(dir, "refused");
    await expect(
      oddsgate(
        [
          "archive",
          "export",
          "--from",
          "2026-01-01",
          "--to",
          "2026-01-02",
          "--out",
          out,
          "--tables",
          "frames,books",
        ],
        env,
      ),
    ).rejects.toThrow(/no archive table books/);
    await expect(
      oddsgate(["archive", "export", "--from", "2026-01-02", "--to", "2026-01-01", "--out", out], env),
    ).rejects.toThrow(/--to must be after --from/);
    expect(fs.existsSync(out)).toBe(false);
  });
});

const DUCKDB_TYPES: Record<string, string> = {
  text: "VARCHAR",
  json: "VARCHAR",
  int: "BIGINT",
  float: "DOUBLE",
  time: "TIMESTAMP",
};
