/**
 * `/mcp` on a production venue: no key, a key in the URL and an unknown key are refused as on every
 * route; with a key the tools answer, the sandbox tools are neither listed nor callable, and trading
 * returns a transaction to sign elsewhere. Each tool call, and each venue request it makes, counts
 * against the caller's key's rate limit.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { generateKeyPairSigner, getTransactionDecoder, type KeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createKey } from "../../src/api-keys/store.js";
import { faucetTokens } from "../../src/chain/wallet.js";
import { loadConfig } from "../../src/config.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { openStorage } from "../../src/storage/database.js";
import { verifyWallet } from "../../src/trading/prediction/verified-wallets.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { callFailing, callOk, connectClient, TOOLS } from "./support.js";

let t: TestServer;
let secret: string;
let limitedSecret: string;
/** A wallet the operator verified, as production asks of every wallet that buys. */
let verified: KeyPairSigner;
let client: Client;
/** The standard tier's requests a minute here: few enough to spend in one test. */
const STANDARD_LIMIT = 30;

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
};

function post(path: string, headers: Record<string, string> = {}) {
  return fetch(`${t.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(INITIALIZE),
  });
}

beforeAll(async () => {
  t = await startTestServer({
    settings: { MODE: "production", RATE_LIMIT_STANDARD: String(STANDARD_LIMIT) },
  });
  const storage = await openStorage(loadConfig({}, t.settings));
  try {
    secret = (await createKey(storage.db, { name: "agent" })).secret;
    limitedSecret = (await createKey(storage.db, { name: "busy agent" })).secret;
    verified = await generateKeyPairSigner();
    await verifyWallet(storage.db, verified.address, "mcp test");
  } finally {
    await storage.close();
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
    requestInit: { headers: { "x-api-key": secret } },
  });
  client = await connectClient(transport);
}, 120_000);
afterAll(async () => {
  await client?.close();
  await t?.stop();
});

describe("the MCP server over HTTP (production)", () => {
  it("refuses a call without a key, with an unknown key, and with a key in the URL", async () => {
    const none = await post("/mcp");
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: "unauthorized" });
    expect((await post("/mcp", { "x-api-key": "not-a-key" })).status).toBe(401);
    const inUrl = await post(`/mcp?api_key=${secret}`, { "x-api-key": secret });
    expect(inUrl.status).toBe(400);
    expect(await inUrl.json()).toMatchObject({ code: "api_key_in_query" });
    expect((await post("/mcp", { "x-api-key": secret })).status).toBe(200);
  });

  it("lists no sandbox tool and refuses calling one", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS].sort());
    const refused = await client.callTool({ name: "sandbox_fund_wallet", arguments: { name: "agent" } }).then(
      (result) => (result as CallToolResult).isError,
      () => true,
    );
    expect(refused).toBe(true);
  });

  it("trades for a wallet address only, returning the transaction to sign", async () => {
    const failure = await callFailing(client, "place_order", {
      ticker: "ANY",
      side: "yes",
      amount: "5",
      wallet: "alice",
    });
    expect(failure.code).toBe("invalid_user_public_key");
  });

  it("returns a confirmed order as a transaction the wallet signs: the venue's signature on it, the wallet's missing", async () => {
    const wallet = verified;
    // Production has no faucet: the operator's own keys give the wallet its USDC (as a deposit would).
    const sandbox = t.server.chain.sandbox;
    if (!sandbox) throw new Error("the test venue runs no sandbox chain");
    await faucetTokens(t.server.chain.chain, sandbox.signers, wallet.address, USDC_MINT, "20");
    // The venue follows the verified list by polling it.
    await vi.waitFor(
      async () => {
        const answer = await fetch(`${t.url}/verify/${wallet.address}`, { headers: { "x-api-key": secret } });
        expect(await answer.json()).toEqual({ verified: true });
      },
      { timeout: 15_000, interval: 50 },
    );
    const { markets } = await callOk<{ markets: { ticker: string; yesAsk: string | null }[] }>(
      client,
      "search_markets",
      { status: "active", limit: 50 },
    );
    const market = markets.find((m) => Number(m.yesAsk ?? 0) > 0.05 && Number(m.yesAsk ?? 1) < 0.95);
    if (!market) throw new Error("no active market priced inside 0.05-0.95");
    const placed = await callOk<{ status: string; transaction: string; wallet: string }>(
      client,
      "place_order",
      {
        ticker: market.ticker,
        side: "yes",
        amount: "5",
        wallet: wallet.address,
        confirm: true,
      },
    );
    expect(placed).toMatchObject({ status: "to_sign", wallet: wallet.address });
    const { signatures } = getTransactionDecoder().decode(Buffer.from(placed.transaction, "base64"));
    expect(Object.keys(signatures)).toContain(wallet.address);
    expect(signatures[wallet.address]).toBeNull();
    // Any other signer is the venue's, and has signed; only the wallet's key is missing.
    for (const [signer, signature] of Object.entries(signatures)) {
      if (signer !== wallet.address) expect(signature, signer).not.toBeNull();
    }
  });

  it("answers reads with the caller's key", async () => {
    const result = (await client.callTool({
      name: "search_markets",
      arguments: { limit: 2 },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { markets: unknown[] }).markets).toHaveLength(2);
  });

  it("counts each tool call, and each venue request it makes, against the key's rate limit", async () => {
    const busy = await connectClient(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), {
        requestInit: { headers: { "x-api-key": limitedSecret } },
      }),
    );
    let calls = 0;
    let refused: unknown;
    try {
      // Each call is the POST to /mcp and the venue's GET of the market it makes.
      for (; calls < STANDARD_LIMIT && refused === undefined; calls++) {
        const result = (await busy
          .callTool({ name: "get_market", arguments: { ticker: "NOPE-1" } })
          .catch((error: unknown) => ({ thrown: error }))) as CallToolResult | { thrown: unknown };
        if ("thrown" in result) refused = result.thrown;
        else if (JSON.stringify(result.content).includes("rate_limit_exceeded")) refused = result;
      }
    } finally {
      await busy.close().catch(() => {});
    }
    expect(String(refused)).not.toBe("undefined");
    // Three requests connected (initialize, initialized, tools/list); two a call spend the rest.
    expect(calls).toBeGreaterThanOrEqual(12);
    expect(calls).toBeLessThanOrEqual(16);
    const rest = await fetch(`${t.url}/api/v1/markets?limit=1`, { headers: { "x-api-key": limitedSecret } });
    expect(rest.status).toBe(429);
  });
});
