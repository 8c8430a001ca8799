/**
 * `oddsgate mcp` on stdio, as a desktop agent runs it: the built bin, starting its venue in process
 * (the demo catalogue on a fresh DATA_DIR), driven by the MCP SDK's own client over
 * StdioClientTransport through the same round trip as over HTTP.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertFreshBuild, CLI_BIN, childEnv } from "../support/cli.js";
import { connectClient, exploreTradeSettleRedeem, SANDBOX_TOOLS, TOOLS } from "./support.js";

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
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_BIN, "mcp"],
    env: Object.fromEntries(
      Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    ),
    stderr: "inherit",
  });
  client = await connectClient(transport);
}, 120_000);
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
