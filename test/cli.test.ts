/** The `oddsgate` command as a user runs it: a separate process over real storage. */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nodeSetsHeapGrowth, SERVE_NODE_FLAGS } from "../src/cli/serve.js";
import { MarketsClient } from "../src/client/markets.js";
import { TradeClient } from "../src/client/trade.js";
import { loadConfig } from "../src/config.js";
import { loadCatalogue } from "../src/markets/store.js";
import { openStorage } from "../src/storage/database.js";
import { BACKENDS, tempDir } from "./support/backends.js";
import { CLI_MAIN, childEnv, oddsgate } from "./support/cli.js";
import { miniCatalogue } from "./support/fixtures.js";

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
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const child = spawn(process.execPath, ["--import", "tsx", CLI_MAIN, "serve", "--port", String(port)], {
      env: childEnv({ DATA_DIR: dir, LOG_LEVEL: "warn" }),
      stdio: "ignore",
    });
    cleanups.push(async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    });
    const url = `http://127.0.0.1:${port}`;
    let healthy = false;
    for (let i = 0; i < 150 && !healthy && child.exitCode === null; i++) {
      healthy = await fetch(`${url}/health-check`).then(
        (r) => r.ok,
        () => false,
      );
      if (!healthy) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(healthy).toBe(true);
    const client = new MarketsClient({ baseUrl: url });
    const page = await client.listEvents({ limit: 200, withNestedMarkets: true });
    expect(page.cursor).not.toBeNull();
    expect(
      page.events.some((e) => e.seriesTicker.startsWith("KXHIGH") && (e.markets?.length ?? 0) >= 6),
    ).toBe(true);
    expect(fs.existsSync(path.join(dir, "oddsgate.db"))).toBe(true);

    // The sandbox chain came up on :8899 with the venue: a wallet funded from the CLI.
    const env = { DATA_DIR: dir };
    const created = await oddsgate(["wallet", "new", "alice"], env);
    const address = /created wallet alice: (\w+)/.exec(created.stdout)?.[1];
    expect(address, created.stdout).toBeDefined();
    expect((await oddsgate(["wallet", "airdrop", "1.5", "alice"], env)).stdout).toContain(`to ${address}`);
    expect((await oddsgate(["wallet", "faucet", "USDC", "25", "alice"], env)).stdout).toContain(
      "granted 25 USDC",
    );
    const balance = (await oddsgate(["wallet", "balance", "alice"], env)).stdout;
    expect(balance).toContain(`${address}: 1.5 SOL`);
    expect(balance).toContain("25 of EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
    const refused = (await oddsgate(["wallet", "faucet", "USDC", "-3", "alice"], env).catch(
      (error: unknown) => error,
    )) as { code: number; stderr: string };
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^oddsgate: amount must be a positive decimal number/m);

    // Trading from the CLI against the demo pools: a quote, then a trade alice's keypair signs.
    const tradeEnv = { ...env, PORT: String(port) };
    const quoted = (await oddsgate(["quote", "USDC", "SOL", "10"], tradeEnv)).stdout;
    expect(quoted).toMatch(/^10 EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v -> 0\.05\d+ So1+2$/m);
    const traded = (await oddsgate(["trade", "USDC", "SOL", "10", "alice"], tradeEnv)).stdout;
    expect(traded).toMatch(/^landed: \w{64,88}$/m);
    expect(traded).toContain("  15 of EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
    expect(traded).toMatch(new RegExp(`^${address}: 1\\.55\\d+ SOL$`, "m"));

    // A new pool, which the running venue routes through within a few slots, then removed.
    const pool = (await oddsgate(["pools", "create", "dBTC", "2", "dJUP", "237500", "--fee-bps", "10"], env))
      .stdout;
    const [, poolAddress, mintA, mintB] = /created pool (\w+) \(10 bps\): (\w+) \/ (\w+)/.exec(pool) ?? [];
    expect(poolAddress, pool).toBeDefined();
    expect((await oddsgate(["pools", "list"], env)).stdout).toContain(
      `${poolAddress}  cpmm 10 bps  2 of ${mintA}`,
    );
    const trade = new TradeClient({ baseUrl: url });
    let marketKey: string | undefined;
    for (let i = 0; i < 50 && marketKey !== poolAddress; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const order = await trade
        .order({
          inputMint: mintA as string,
          outputMint: mintB as string,
          amount: 1000,
          onlyDirectRoutes: true,
        })
        .catch(() => undefined);
      marketKey = order?.routePlan[0]?.marketKey;
    }
    expect(marketKey).toBe(poolAddress);
    expect((await oddsgate(["pools", "remove", poolAddress as string], env)).stdout).toContain(
      "removed pool",
    );
    expect((await oddsgate(["pools", "list"], env)).stdout).not.toContain(poolAddress as string);
  }, 120_000);
});

describe("oddsgate sync", () => {
  it.each(BACKENDS)(
    "copies the upstream catalogue (the demo simulator) into $name storage",
    async (backend) => {
      const created = await backend.create();
      cleanups.push(created.cleanup);
      const { stdout } = await oddsgate(["sync"], { ...created.settings });
      const read = /(\d+) series, (\d+) events, (\d+) markets read/.exec(stdout);
      expect(read, stdout).not.toBeNull();
      const storage = await openStorage(loadConfig({}, created.settings));
      try {
        const stored = await loadCatalogue(storage.db);
        expect(stored.events.length).toBe(Number(read?.[2]));
        expect(stored.markets.length).toBe(Number(read?.[3]));
        expect(stored.markets.length).toBeGreaterThan(1_000);
      } finally {
        await storage.close();
      }
      // A second sync reads the same catalogue and succeeds; only moving prices may differ.
      const again = await oddsgate(["sync"], { ...created.settings });
      expect(again.stdout).toContain(`${read?.[2]} events`);
    },
  );

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
