/**
 * `oddsgate mcp` on stdio, as a desktop agent runs it: the built bin, starting its venue in process
 * (the demo catalogue on a fresh DATA_DIR), driven by the MCP SDK's own client over
 * StdioClientTransport through the same round trip as over HTTP; and `oddsgate mcp --url` in front
 * of a venue already running, whose data and sandbox it reaches over HTTP and the chain's RPC.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertFreshBuild, CLI_BIN, childEnv } from "../support/cli.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { callOk, connectClient, exploreTradeSettleRedeem, SANDBOX_TOOLS, TOOLS } from "./support.js";

let dataDir: string;
let client: Client;

beforeAll(async () => {
  assertFreshBuild();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-mcp-stdio-"));
  const env = childEnv({
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    PORT: "0",
    RPC_PORT: "0",
    SIMULATOR_PORT: "0",
    ARCHIVE: "false",
    UPSTREAM_TRADING: "false",
  });
  client = await connectClient(stdioTransport(["mcp"], env));
}, 120_000);
/** The built bin run with `args` and `env`, as an agent's MCP configuration runs it. */
function stdioTransport(args: string[], env: NodeJS.ProcessEnv): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: [CLI_BIN, ...args],
    env: Object.fromEntries(
      Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    stderr: "inherit",
  });
}

afterAll(async () => {
  await client?.close();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("oddsgate mcp (stdio)", () => {
  it("lists the tools, resources and prompts", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS, ...SANDBOX_TOOLS].sort());
    expect((await client.listResources()).resources.length).toBeGreaterThanOrEqual(4);
    expect((await client.listPrompts()).prompts).toHaveLength(2);
  });

  it("searches, reads an event and its forecast, buys on the sandbox, settles, redeems", async () => {
    await exploreTradeSettleRedeem(client);
  }, 90_000);
});

describe("oddsgate mcp --url (stdio, in front of a running venue)", () => {
  let venue: TestServer;
  let remote: Client;

  beforeAll(async () => {
    venue = await startTestServer({ settings: { VENUE_SEED: "mcp-url-test" } });
    const env = childEnv({
      // The venue's own folder: its keys sign the sandbox's grants, and the wallets are kept there.
      DATA_DIR: String(venue.settings.DATA_DIR),
      SOLANA_RPC_URL: venue.server.chain.rpcUrl,
      LOG_LEVEL: "silent",
    });
    remote = await connectClient(stdioTransport(["mcp", "--url", venue.url], env));
  }, 120_000);
  afterAll(async () => {
    await remote?.close();
    await venue?.stop();
  });

  it("reads the venue's markets and funds and quotes for a sandbox wallet it names", async () => {
    const { tools } = await remote.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS, ...SANDBOX_TOOLS].sort());
    const { markets } = await callOk<{ markets: { ticker: string; yesAsk: string | null }[] }>(
      remote,
      "search_markets",
      { status: "active", limit: 50 },
    );
    const market = markets.find((m) => Number(m.yesAsk ?? 0) > 0.05 && Number(m.yesAsk ?? 1) < 0.95);
    if (!market) throw new Error("no active market priced inside 0.05-0.95");
    expect(venue.server.catalog.require().market(market.ticker)).toBeDefined();

    await callOk(remote, "sandbox_fund_wallet", { name: "remote", sol: "1", usdc: "20" });
    expect(await callOk(remote, "get_positions", { wallet: "remote" })).toMatchObject({ usdc: "20" });
    const preview = await callOk<{ status: string; preview: { receive: { amount: string } } }>(
      remote,
      "place_order",
      { ticker: market.ticker, side: "yes", amount: "5", wallet: "remote" },
    );
    expect(preview.status).toBe("preview");
    expect(Number(preview.preview.receive.amount)).toBeGreaterThan(0);
  }, 60_000);
});
