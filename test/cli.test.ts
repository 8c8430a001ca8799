/**
 * The `oddsgate` command over real storage: run in this process (what the bin runs, against captured
 * streams), except where the test is about the process: `serve` and its ports, and the built bin.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { nodeSetsHeapGrowth, SERVE_NODE_FLAGS } from "../src/cli/serve.js";
import { venueFailure } from "../src/cli/support.js";
import { OddsgateApiError } from "../src/client/http.js";
import { MarketsClient } from "../src/client/markets.js";
import { TradeClient } from "../src/client/trade.js";
import { loadConfig } from "../src/config.js";
import { generateDemoCatalogue } from "../src/demo/generate.js";
import { resolveVenueSeed } from "../src/markets/accounts.js";
import { loadCatalogue, resolveDemoAnchor, saveCatalogue } from "../src/markets/store.js";
import { startSimulator } from "../src/simulator/index.js";
import { openStorage } from "../src/storage/database.js";
import { BACKENDS, tempDir } from "./support/backends.js";
import { assertFreshBuild, CLI_BIN, childEnv, oddsgate, oddsgateProcess } from "./support/cli.js";
import { miniCatalogue } from "./support/fixtures.js";
import { freePortRun } from "./support/ports.js";
import { TEST_ANCHOR } from "./support/server.js";

/** A Kalshi trade-api v2 `GET /events?with_nested_markets=true` body. */
const KALSHI_EVENTS = {
  cursor: "",
  events: [
    {
      event_ticker: "KXHIGHCHI-26NOV24",
      series_ticker: "KXHIGHCHI",
      sub_title: "On Nov 24, 2026",
      title: "Highest temperature in Chicago on Nov 24, 2026?",
      category: "Climate and Weather",
      mutually_exclusive: true,
      strike_date: "2026-11-25T05:59:00Z",
      strike_period: "",
      markets: [
        {
          ticker: "KXHIGHCHI-26NOV24-B40.5",
          event_ticker: "KXHIGHCHI-26NOV24",
          market_type: "binary",
          title: "Will the high temp in Chicago be 40-41° on Nov 24, 2026?",
          subtitle: "40° to 41°",
          yes_sub_title: "40° to 41°",
          no_sub_title: "40° to 41°",
          open_time: "2026-11-22T15:00:00Z",
          close_time: "2026-11-25T04:59:00Z",
          expiration_time: "2026-12-02T15:00:00Z",
          status: "active",
          result: "",
          can_close_early: true,
          early_close_condition: "This market will close and expire early if the event occurs.",
          fractional_trading_enabled: false,
          rules_primary:
            "If the highest temperature recorded in Chicago Midway, IL is between 40-41°, then the market resolves to Yes.",
          rules_secondary: "",
          yes_bid_dollars: "0.2100",
          yes_ask_dollars: "0.2400",
          no_bid_dollars: "0.7600",
          no_ask_dollars: "0.7900",
          volume_fp: "1520.00",
          volume_24h_fp: "310.00",
          open_interest_fp: "880.00",
          liquidity_dollars: "1234.5600",
        },
      ],
    },
  ],
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe.each(BACKENDS)("oddsgate import on $name", (backend) => {
  it.skipIf(!backend.available)("loads our format and Kalshi JSON, idempotently", async () => {
    const { settings, cleanup } = await backend.create();
    cleanups.push(cleanup);
    const env = { ...settings } as Record<string, string>;
    const ours = path.join(settings.DATA_DIR, "ours.json");
    fs.writeFileSync(ours, JSON.stringify(miniCatalogue()));
    const kalshi = path.join(settings.DATA_DIR, "kalshi.json");
    fs.writeFileSync(kalshi, JSON.stringify(KALSHI_EVENTS));

    const first = await oddsgate(["import", ours], env);
    expect(first.stdout).toContain("imported 2 series, 3 events, 5 markets");
    await oddsgate(["import", ours], env);
    const fromKalshi = await oddsgate(["import", kalshi, "--tokenize", "tradable"], env);
    expect(fromKalshi.stdout).toContain("1 events, 1 markets");

    const storage = await openStorage(loadConfig({}, settings));
    try {
      const stored = await loadCatalogue(storage.db);
      expect(stored.events).toHaveLength(4);
      expect(stored.markets).toHaveLength(6);
      const imported = stored.markets.find((m) => m.record.ticker === "KXHIGHCHI-26NOV24-B40.5")!;
      expect(imported.record).toMatchObject({
        closeTime: 1_795_582_740,
        yesBid: "0.2100",
        volume: 1520,
        volumeFp: "1520.00",
        tokenized: true,
        status: "active",
      });
    } finally {
      await storage.close();
    }
  });
});

describe("oddsgate import errors", () => {
  it("names the bad record and field, and imports nothing", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const bad = structuredClone(KALSHI_EVENTS);
    (bad.events[0]!.markets[0] as Record<string, unknown>).close_time = "tomorrow";
    const file = path.join(dir, "bad.json");
    fs.writeFileSync(file, JSON.stringify(bad));
    const failure = await oddsgate(["import", file], { DATA_DIR: dir }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("KXHIGHCHI-26NOV24-B40.5");
    expect(failure?.stderr).toContain("close_time");
    expect(failure?.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    const storage = await openStorage({ DATA_DIR: dir });
    try {
      expect((await loadCatalogue(storage.db)).events).toHaveLength(0);
    } finally {
      await storage.close();
    }
  });

  it("says which file is not JSON", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const file = path.join(dir, "broken.json");
    fs.writeFileSync(file, "{ not json");
    const failure = (await oddsgate(["import", file], { DATA_DIR: dir }).catch(
      (error: unknown) => error,
    )) as {
      stderr: string;
    };
    expect(failure.stderr).toContain("broken.json");
    expect(failure.stderr).toMatch(/JSON/);
  });

  it("stops on a bad setting with a message naming it", async () => {
    const failure = (await oddsgate(["serve"], { PORT: "http" }).catch((error: unknown) => error)) as {
      stderr: string;
      code: number;
    };
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain("PORT");
    expect(failure.stderr).toContain("--port");
  });
});

describe("oddsgate serve", () => {
  beforeAll(assertFreshBuild);
  it("is started by npm start with the node flags that bound V8's young generation", () => {
    const manifest = JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: { start: string } };
    expect(manifest.scripts.start).toContain(`node ${SERVE_NODE_FLAGS.join(" ")} dist/cli/main.js serve`);
  });

  it("leaves the heap's growth to node when its command line or NODE_OPTIONS sets it", () => {
    expect(nodeSetsHeapGrowth([], "")).toBe(false);
    expect(nodeSetsHeapGrowth(["--max-semi-space-size=4"], "--max-old-space-size=2048")).toBe(false);
    expect(nodeSetsHeapGrowth(["--heap-growing-percent=50"], "")).toBe(true);
    expect(nodeSetsHeapGrowth([], "--max-semi-space-size=4  --heap_growing_percent=10")).toBe(true);
  });

  it("serves the demo catalogue from a fresh data dir with no configuration", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const port = await freePortRun(1);
    const child = spawn(process.execPath, [CLI_BIN, "serve", "--port", String(port)], {
      env: childEnv({ DATA_DIR: dir, LOG_LEVEL: "warn" }),
      stdio: "ignore",
    });
    cleanups.push(async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    });
    const url = `http://127.0.0.1:${port}`;
    await vi.waitFor(
      async () => {
        expect(child.exitCode, "the venue exited").toBeNull();
        expect((await fetch(`${url}/health-check`)).ok).toBe(true);
      },
      { timeout: 30_000, interval: 100 },
    );
    const client = new MarketsClient({ baseUrl: url });
    const page = await client.listEvents({ limit: 200, withNestedMarkets: true });
    expect(page.cursor).not.toBeNull();
    expect(
      page.events.some((e) => e.seriesTicker.startsWith("KXHIGH") && (e.markets?.length ?? 0) >= 6),
    ).toBe(true);
    expect(fs.existsSync(path.join(dir, "oddsgate.db"))).toBe(true);

    // The sandbox chain came up on :8899 with the venue: a wallet funded from the CLI.
    const env = { DATA_DIR: dir };
    const created = JSON.parse((await oddsgate(["wallet", "new", "alice", "--json"], env)).stdout);
    expect(created).toEqual({
      name: "alice",
      address: expect.any(String),
      file: path.join(dir, "wallets", "alice.json"),
    });
    const address = created.address as string;
    expect((await oddsgate(["wallet", "airdrop", "1.5", "alice"], env)).stdout).toContain(`to ${address}`);
    expect((await oddsgate(["wallet", "faucet", "USDC", "25", "alice"], env)).stdout).toContain(
      "granted 25 USDC",
    );
    const balance = (await oddsgate(["wallet", "balance", "alice"], env)).stdout;
    expect(balance).toContain(`${address}: 1.5 SOL`);
    expect(balance).toContain("  25 USDC (EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v, account ");
    const refused = (await oddsgate(["wallet", "faucet", "USDC", "-3", "alice"], env).catch(
      (error: unknown) => error,
    )) as { code: number; stderr: string };
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^oddsgate: amount must be a positive decimal number/m);

    // Trading from the CLI against the demo pools: a quote, then a trade alice's keypair signs. The
    // symbols typed are the symbols printed.
    const tradeEnv = { ...env, PORT: String(port) };
    const quoted = (await oddsgate(["quote", "USDC", "SOL", "10"], tradeEnv)).stdout;
    expect(quoted).toMatch(/^10 USDC -> 0\.05\d+ SOL$/m);
    const traded = (await oddsgate(["trade", "USDC", "SOL", "10", "alice"], tradeEnv)).stdout;
    expect(traded).toMatch(/^landed: \w{64,88}$/m);
    expect(traded).toContain("  15 USDC");
    expect(traded).toMatch(new RegExp(`^${address}: 1\\.55\\d+ SOL$`, "m"));

    // Prediction markets by ticker: browse, buy (waiting for the fill), sell as JSON.
    const listed = JSON.parse(
      (await oddsgate(["markets", "high", "temp", "--limit", "50", "--json"], tradeEnv)).stdout,
    ) as { ticker: string; status: string; title: string; yesAsk: string | null }[];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((m) => m.status === "active" && /high/i.test(m.title))).toBe(true);
    const pick = listed.find((m) => m.yesAsk !== null && Number(m.yesAsk) > 0 && Number(m.yesAsk) < 0.8);
    expect(pick, JSON.stringify(listed.slice(0, 3))).toBeDefined();
    const ticker = pick?.ticker as string;
    const bought = (await oddsgate(["buy", ticker, "yes", "5", "alice"], tradeEnv)).stdout;
    const fill = new RegExp(
      `^filled \\(closed\\): bought (\\d+) ${ticker} YES contracts? at an average (0\\.\\d+) USDC, paying ([\\d.]+) USDC; fees 0 USDC$`,
      "m",
    ).exec(bought);
    expect(fill, bought).not.toBeNull();
    const contracts = Number(fill?.[1]);
    expect(contracts).toBeGreaterThan(0);
    // The average is printed in USDC's 6 decimals, cut off: within a millionth a contract of the payment.
    const paid = Number(fill?.[3]);
    expect(Math.abs(paid - contracts * Number(fill?.[2]))).toBeLessThanOrEqual(contracts * 1e-6 + 1e-9);
    // In whole micro-USDC: 2.28 against 5 × 0.456 in floating point is 2.2800000000000002.
    expect(Math.round(paid * 1e6)).toBeGreaterThanOrEqual(contracts * Math.round(Number(fill?.[2]) * 1e6));
    expect(bought).toContain(`  ${contracts} ${ticker} YES`);
    expect(bought).not.toMatch(/^landed/m);
    const sold = JSON.parse(
      (await oddsgate(["sell", ticker, "yes", "1", "alice", "--json"], tradeEnv)).stdout,
    );
    expect(sold.fill).toMatchObject({ status: "closed", contracts: "1", fees: "0" });
    expect(sold.order.symbols).toMatchObject({ EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v: "USDC" });
    expect(sold.balance.tokens).toContainEqual(
      expect.objectContaining({ symbol: `${ticker} YES`, uiAmount: String(contracts - 1) }),
    );

    // A settled market: the CLI and the API's /order both say what it is and how to redeem.
    const markets = new MarketsClient({ baseUrl: url });
    const settled = (await markets.listMarkets({ status: "determined", limit: 100 })).markets.find(
      (m) => m.result === "yes" && Object.values(m.accounts)[0]?.redemptionStatus === "open",
    );
    expect(settled).toBeDefined();
    const settledTicker = settled?.ticker as string;
    const refusedBuy = (await oddsgate(["buy", settledTicker, "yes", "5", "alice"], tradeEnv).catch(
      (error: unknown) => error,
    )) as { code: number; stderr: string };
    expect(refusedBuy.code).toBe(1);
    expect(refusedBuy.stderr).toBe(
      `oddsgate: market ${settledTicker} is determined with result yes: it no longer trades; redeem contracts you hold with \`oddsgate sell ${settledTicker} yes CONTRACTS\`\n`,
    );
    const yesMint = Object.values(settled?.accounts ?? {})[0]?.yesMint as string;
    const apiBuy = await fetch(
      `${url}/order?inputMint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&outputMint=${yesMint}&amount=5000000`,
    );
    expect(apiBuy.status).toBe(400);
    const refusal = (await apiBuy.json()) as { code: string; msg: string };
    expect(refusal.code).toBe("route_not_found");
    expect(refusal.msg).toBe(
      `market ${settledTicker} is determined with result yes: it no longer trades; redeem with ` +
        `/order?inputMint=${yesMint}&outputMint=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v&amount=UNITS ` +
        `(1000000 per contract), or \`oddsgate sell ${settledTicker} yes CONTRACTS\``,
    );

    // A new pool, which the running venue routes through within a few slots, then removed.
    const pool = (await oddsgate(["pools", "create", "dBTC", "2", "dJUP", "237500", "--fee-bps", "10"], env))
      .stdout;
    const [, poolAddress, mintA, mintB] = /created pool (\w+) \(10 bps\): (\w+) \/ (\w+)/.exec(pool) ?? [];
    expect(poolAddress, pool).toBeDefined();
    expect((await oddsgate(["pools", "list"], env)).stdout).toContain(
      `${poolAddress}  cpmm 10 bps  2 dBTC (${mintA}) / 237500 dJUP (${mintB})`,
    );
    const trade = new TradeClient({ baseUrl: url });
    const directRoute = async () => {
      const order = await trade
        .order({
          inputMint: mintA as string,
          outputMint: mintB as string,
          amount: 1000,
          onlyDirectRoutes: true,
        })
        .catch(() => undefined);
      return order?.routePlan[0]?.marketKey;
    };
    await expect.poll(directRoute, { timeout: 10_000, interval: 200 }).toBe(poolAddress);
    expect((await oddsgate(["pools", "remove", poolAddress as string], env)).stdout).toContain(
      "removed pool",
    );
    const left = JSON.parse((await oddsgate(["pools", "list", "--json"], env)).stdout) as {
      address: string;
    }[];
    expect(left.length).toBeGreaterThan(0);
    expect(left.map((p) => p.address)).not.toContain(poolAddress as string);
  }, 120_000);
});

describe("oddsgate sync", () => {
  it.each(BACKENDS)(
    "copies the running venue's upstream (its simulator on SIMULATOR_PORT) into $name storage, and never turns a determined market back",
    async (backend) => {
      const created = await backend.create();
      cleanups.push(created.cleanup);
      // The upstream a running venue serves: its simulator, on the port SIMULATOR_PORT names.
      const catalogue = generateDemoCatalogue({ anchor: TEST_ANCHOR });
      const simulator = await startSimulator({ catalogue, port: 0 });
      cleanups.push(() => simulator.close());
      const simulatorPort = new URL(simulator.url).port;
      // The venue had settled one market the simulator (restarted since, say) lists active again.
      const active = catalogue.events.flatMap((e) => e.markets).find((m) => m.status === "active");
      const storage = await openStorage(loadConfig({}, created.settings));
      try {
        await resolveDemoAnchor(storage.db, TEST_ANCHOR * 1000);
        const settled = structuredClone(catalogue);
        for (const event of settled.events)
          for (const market of event.markets)
            if (market.ticker === active?.ticker)
              Object.assign(market, { status: "determined", result: "no" });
        await saveCatalogue(storage.db, await resolveVenueSeed(storage.db, undefined), settled);
      } finally {
        await storage.close();
      }
      const env = { ...created.settings, SIMULATOR_PORT: simulatorPort };
      const { stdout, stderr } = await oddsgate(["sync"], env);
      expect(stdout).toContain(`synced from ${simulator.url}:`);
      const read = /(\d+) series, (\d+) events, (\d+) markets read/.exec(stdout);
      expect(read, stdout).not.toBeNull();
      expect(stderr).toContain(
        `kept 1 settled market as stored, refusing to turn it back: ${active?.ticker} (determined, the upstream says active)`,
      );
      const reopened = await openStorage(loadConfig({}, created.settings));
      try {
        const stored = await loadCatalogue(reopened.db);
        expect(stored.events.length).toBe(Number(read?.[2]));
        expect(stored.markets.length).toBe(Number(read?.[3]));
        expect(stored.markets.length).toBeGreaterThan(1_000);
        const kept = stored.markets.find((m) => m.record.ticker === active?.ticker);
        expect(kept?.record).toMatchObject({ status: "determined", result: "no" });
      } finally {
        await reopened.close();
      }
      // Again, as JSON: the same catalogue read, the same market refused again.
      const again = JSON.parse((await oddsgate(["sync", "--json"], env)).stdout);
      expect(again.upstream.events).toBe(Number(read?.[2]));
      expect(again.refused).toEqual([{ ticker: active?.ticker, stored: "determined", offered: "active" }]);
    },
  );

  it("refuses without UPSTREAM_URL when no venue's simulator answers, rather than starting its own", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(async () => cleanup());
    const failure = (await oddsgate(["sync"], { DATA_DIR: dir, SIMULATOR_PORT: "9" }).catch(
      (error: unknown) => error,
    )) as { code: number; stderr: string };
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(
      /^oddsgate: no upstream to sync from: UPSTREAM_URL is not set, and no running venue's simulator answers at http:\/\/127\.0\.0\.1:9\/trade-api\/v2\..*start it with `npm start`.*set UPSTREAM_URL\n$/,
    );
    const storage = await openStorage({ DATA_DIR: dir });
    try {
      expect((await loadCatalogue(storage.db)).events).toHaveLength(0);
    } finally {
      await storage.close();
    }
  });

  it("fails with a clear message when the upstream cannot be reached, storing nothing", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(async () => cleanup());
    const failure = (await oddsgate(["sync"], {
      DATA_DIR: dir,
      UPSTREAM_URL: "http://127.0.0.1:9/trade-api/v2",
      UPSTREAM_TIMEOUT_MS: "500",
    }).catch((error: unknown) => error)) as { code: number; stderr: string };
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain("upstream");
    expect(failure.stderr).not.toMatch(/\n\s+at /);
  });
});

describe("oddsgate for people", () => {
  beforeAll(assertFreshBuild);
  it("prints its version, in process and from the built bin", async () => {
    const manifest = JSON.parse(fs.readFileSync("package.json", "utf8")) as { version: string };
    expect((await oddsgate(["--version"], {})).stdout).toBe(`${manifest.version}\n`);
    // The bin end to end: the bundle runs the command when node runs it (and only then).
    expect(fs.existsSync(CLI_BIN), `${CLI_BIN} is missing: run npm run build`).toBe(true);
    expect((await oddsgateProcess(["--version"], {})).stdout).toBe(`${manifest.version}\n`);
  });

  it("says there is no venue, rather than 'fetch failed', when none listens", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const failure = (await oddsgate(["markets", "--port", "9"], { DATA_DIR: dir }).catch(
      (error: unknown) => error,
    )) as { code: number; stderr: string };
    expect(failure.code).toBe(1);
    expect(failure.stderr).toMatch(
      /^oddsgate: no venue at http:\/\/127\.0\.0\.1:9: start it with `npm start`/,
    );
    expect(failure.stderr).not.toContain("fetch failed");
  });

  it("names a wrong or missing API key", () => {
    const refusal = new OddsgateApiError(401, "unauthorized", "unknown API key", null);
    expect((venueFailure("http://v:1", refusal, "og_wrong") as Error).message).toBe(
      "the venue at http://v:1 refused the API key (401: unknown API key): check --api-key or ODDSGATE_API_KEY (`oddsgate keys list` on the venue)",
    );
    expect((venueFailure("http://v:1", refusal) as Error).message).toMatch(
      /^the venue at http:\/\/v:1 asks for an API key .*: pass --api-key or set ODDSGATE_API_KEY$/,
    );
  });

  // A process of its own, as every `serve` here: it sets V8's heap flags for the process it runs in.
  it("names a port that is taken and the setting to change, in one line", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(() => resolve())));
    const taken = (holder.address() as net.AddressInfo).port;
    const failure = (await oddsgateProcess(["serve"], {
      DATA_DIR: dir,
      PORT: String(taken),
      RPC_PORT: "0",
      SIMULATOR_PORT: "0",
    }).catch((error: unknown) => error)) as { code: number; stderr: string };
    expect(failure.code).toBe(1);
    expect(failure.stderr).toBe(
      `oddsgate: port ${taken} on 127.0.0.1 is taken (another venue running?): stop it, or set PORT (or --port) to a free port\n`,
    );
  });

  it("resets the data dir only when told to: never without a terminal unless --yes", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const data = path.join(dir, "data");
    fs.mkdirSync(path.join(data, "wallets"), { recursive: true });
    fs.writeFileSync(path.join(data, "oddsgate.db"), "");
    const refused = (await oddsgate(["reset"], { DATA_DIR: data }).catch((error: unknown) => error)) as {
      code: number;
      stderr: string;
    };
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `oddsgate: reset deletes ${data} and asks first, but there is no terminal to ask on: pass --yes to delete it\n`,
    );
    expect(fs.existsSync(path.join(data, "oddsgate.db"))).toBe(true);
    const done = await oddsgate(["reset", "--yes"], { DATA_DIR: data });
    expect(done.stdout).toContain(`deleted ${data}`);
    expect(fs.existsSync(data)).toBe(false);
  });
});

describe("oddsgate keys", () => {
  it("creates a key shown once, lists it without the secret, rotates and revokes it", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const env = { DATA_DIR: dir };
    const created = await oddsgate(["keys", "create", "--name", "ci bot", "--tier", "pro", "--streams"], env);
    const secret = /^(og_[1-9A-HJ-NP-Za-km-z]{40,})$/m.exec(created.stdout)?.[1];
    expect(secret).toBeDefined();
    const id = /(key_[1-9A-HJ-NP-Za-km-z]+)/.exec(created.stdout)?.[1] as string;
    expect(created.stdout).toContain("tier pro");
    expect(created.stdout).toContain("streams yes");

    const listed = await oddsgate(["keys", "list"], env);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('"ci bot"');
    expect(listed.stdout).not.toContain(secret);
    const asJson = JSON.parse((await oddsgate(["keys", "list", "--json"], env)).stdout);
    expect(asJson).toEqual([expect.objectContaining({ id, tier: "pro", streams: true, revokedAt: null })]);

    const rotated = await oddsgate(["keys", "rotate", id, "--grace", "60"], env);
    expect(rotated.stdout).toContain("works for 60 s more");
    const newSecret = /^(og_[1-9A-HJ-NP-Za-km-z]{40,})$/m.exec(rotated.stdout)?.[1];
    expect(newSecret).toBeDefined();
    expect(newSecret).not.toBe(secret);

    const revoked = await oddsgate(["keys", "revoke", id], env);
    expect(revoked.stdout).toContain("revoked");
    const again = (await oddsgate(["keys", "revoke", id], env).catch((error: unknown) => error)) as {
      code: number;
      stderr: string;
    };
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`key ${id} was revoked`);
  });

  it("refuses a bad tier and a negative grace with messages", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const badTier = (await oddsgate(["keys", "create", "--name", "x", "--tier", "gold"], {
      DATA_DIR: dir,
    }).catch((error: unknown) => error)) as { stderr: string };
    expect(badTier.stderr).toContain("gold");
    const badGrace = (await oddsgate(["keys", "rotate", "key_x", "--grace", "-5"], { DATA_DIR: dir }).catch(
      (error: unknown) => error,
    )) as { stderr: string };
    expect(badGrace.stderr).toContain("grace period must be whole seconds");
  });
});
