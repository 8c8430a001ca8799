/**
 * `/mcp` over streamable HTTP, driven by the MCP SDK's own client against a development venue: it
 * lists its tools, resources and prompts; an agent searches, reads an event and its forecast,
 * previews then confirms a buy with a sandbox wallet, follows it to closed, settles the market with
 * the sandbox tool, redeems, and sees its position and USDC change. The MCP conformance suite's
 * server scenarios pass (those that need its own fixtures or optional capabilities are listed, with
 * why, in conformance/baseline.yml), and a request naming another site (DNS rebinding) is refused.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";
import {
  callFailing,
  callOk,
  connectClient,
  exploreTradeSettleRedeem,
  resourceText,
  SANDBOX_TOOLS,
  TOOLS,
} from "./support.js";

let t: TestServer;
let client: Client;

beforeAll(async () => {
  t = await startTestServer({ settings: { VENUE_SEED: "mcp-http-test" } });
  client = await connectClient(new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`)));
}, 120_000);
afterAll(async () => {
  await client?.close();
  await t?.stop();
});

describe("the MCP server over HTTP (development)", () => {
  it("lists every tool with input and output schemas, the resources and the prompts", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS, ...SANDBOX_TOOLS].sort());
    for (const tool of tools) expect(tool.outputSchema, tool.name).toBeDefined();
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(
      expect.arrayContaining([
        "oddsgate://openapi/markets",
        "oddsgate://openapi/trade",
        "oddsgate://asyncapi",
        "oddsgate://errors",
      ]),
    );
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((r) => r.uriTemplate)).toEqual(["oddsgate://markets/{ticker}/rules"]);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["find_mispriced_market", "place_and_track_order"]);
    const prompt = await client.getPrompt({ name: "find_mispriced_market", arguments: { topic: "CPI" } });
    expect(JSON.stringify(prompt.messages)).toContain("get_forecast_history");
  });

  it("reads the documents, the error catalogue with hints and a market's rules", async () => {
    expect(JSON.parse(await resourceText(client, "oddsgate://openapi/trade")).openapi).toMatch(/^3\.1/);
    expect(JSON.parse(await resourceText(client, "oddsgate://asyncapi")).asyncapi).toMatch(/^3\./);
    const errors = JSON.parse(await resourceText(client, "oddsgate://errors"));
    expect(errors.errors).toContainEqual(expect.objectContaining({ code: "market_not_found", status: 404 }));
    const { markets } = await callOk<{ markets: { ticker: string }[] }>(client, "search_markets", {
      limit: 1,
    });
    const ticker = markets[0]?.ticker as string;
    expect(await resourceText(client, `oddsgate://markets/${ticker}/rules`)).toContain(ticker);
  });

  it("answers a venue error as a tool error with its code and a hint", async () => {
    const failure = await callFailing(client, "get_market", { ticker: "NOPE-1" });
    expect(failure).toMatchObject({ code: "market_not_found" });
    expect(failure.hint).toContain("search_markets");
  });

  it("searches, reads an event and its forecast, buys on the sandbox, settles, redeems", async () => {
    await exploreTradeSettleRedeem(client);
  }, 90_000);

  it("moves the sandbox chain's clock and the exchange's forward, never back", async () => {
    const first = await callOk<{ chainUnixTimestamp: number; exchangeNow: number | null }>(
      client,
      "sandbox_time_travel",
      { seconds: 60 },
    );
    const later = await callOk<{ chainUnixTimestamp: number; exchangeNow: number | null }>(
      client,
      "sandbox_time_travel",
      { seconds: 3_600 },
    );
    expect(later.chainUnixTimestamp - first.chainUnixTimestamp).toBeGreaterThanOrEqual(3_600);
    expect(first.exchangeNow).not.toBeNull();
    expect((later.exchangeNow ?? 0) - (first.exchangeNow ?? 0)).toBeGreaterThanOrEqual(3_600);
    // Back is refused (as input out of bounds, before anything moves).
    const backwards = (await client
      .callTool({ name: "sandbox_time_travel", arguments: { seconds: -60 } })
      .catch((error: unknown) => ({ isError: true, thrown: error }))) as { isError?: boolean };
    expect(backwards.isError).toBe(true);
    const after = await callOk<{ chainUnixTimestamp: number }>(client, "sandbox_time_travel", { seconds: 1 });
    expect(after.chainUnixTimestamp).toBeGreaterThanOrEqual(later.chainUnixTimestamp + 1);
  });

  it("refuses a request whose Host or Origin names another site, as a page rebinding a name to this machine sends", async () => {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } },
    });
    const send = (headers: Record<string, string>) =>
      t.server.app.inject({
        method: "POST",
        url: "/mcp",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        payload: initialize,
      });
    const foreignHost = await send({ host: "evil.example.com" });
    expect(foreignHost.statusCode).toBe(400);
    expect(foreignHost.json()).toMatchObject({ code: "bad_request" });
    expect((await send({ host: "localhost:8080", origin: "http://evil.example.com" })).statusCode).toBe(400);
    expect((await send({ host: "127.0.0.1:8080", origin: "http://localhost:3000" })).statusCode).toBe(200);
    expect((await send({ host: "[::1]:8080" })).statusCode).toBe(200);
  });

  it("passes the MCP conformance suite's server scenarios that apply to it", async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "oddsgate-mcp-conformance-"));
    try {
      const { code, output } = await runConformance(`${t.url}/mcp`, out);
      expect(code, output).toBe(0);
      const passed = new Map<string, boolean>();
      for (const dir of fs.readdirSync(out)) {
        const checks = JSON.parse(fs.readFileSync(path.join(out, dir, "checks.json"), "utf8")) as {
          status: string;
        }[];
        const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
        passed.set(
          scenario,
          checks.every((check) => check.status === "SUCCESS"),
        );
      }
      for (const scenario of [
        "server-initialize",
        "ping",
        "tools-list",
        "tools-call-error",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
      ]) {
        expect(passed.get(scenario), scenario).toBe(true);
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});

/** The conformance package's CLI (it has a bin, no entry point). */
const CONFORMANCE = path.join(
  path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json")),
  "dist/index.js",
);
const CONFORMANCE_DIR = fileURLToPath(new URL("./conformance/", import.meta.url));

/** Runs the conformance CLI's server suite against `url`, its results under `out`; Node 20 gets fs.globSync. */
function runConformance(url: string, out: string): Promise<{ code: number | null; output: string }> {
  const node20 = "globSync" in fs ? [] : ["--import", path.join(CONFORMANCE_DIR, "node20.mjs")];
  const child = spawn(
    process.execPath,
    [
      ...node20,
      CONFORMANCE,
      "server",
      "--url",
      url,
      "--expected-failures",
      path.join(CONFORMANCE_DIR, "baseline.yml"),
      "--output-dir",
      out,
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr.on("data", (chunk) => {
    output += chunk;
  });
  return new Promise((resolve) =>
    child.on("close", (code) => resolve({ code, output: output.slice(-1500) })),
  );
}
