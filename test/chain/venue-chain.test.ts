/**
 * The chain as part of the whole venue: `serve` starts the sandbox, creates every tokenized market's
 * ledger and outcome mints at the addresses the catalogue shows, and offers `POST /dev/faucet` in
 * development mode only.
 */
import { generateKeyPairSigner } from "@solana/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey } from "../../src/api-keys/store.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { startTestServer, type TestServer } from "../support/server.js";

async function rpc(url: string, method: string, params: unknown[] = []) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return ((await response.json()) as { result: unknown }).result;
}

describe("development venue", () => {
  let t: TestServer;
  let rpcUrl: string;

  beforeAll(async () => {
    t = await startTestServer();
    rpcUrl = t.server.chain.rpcUrl;
  });
  afterAll(async () => t?.stop());

  it("creates the outcome mints of tokenized markets, and only theirs", async () => {
    const markets = (await t.client.listMarkets({ status: "active", limit: 200 })).markets;
    const tokenized = markets.find((m) => Object.values(m.accounts)[0]?.isInitialized);
    const untokenized = markets.find((m) => !Object.values(m.accounts)[0]?.isInitialized);
    const accounts = Object.values(tokenized!.accounts)[0]!;
    const mint = (await rpc(rpcUrl, "getAccountInfo", [accounts.yesMint, { encoding: "jsonParsed" }])) as {
      value: { owner: string; data: { parsed: { type: string; info: { decimals: number } } } };
    };
    expect(mint.value.owner).toBe("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb");
    expect(mint.value.data.parsed.type).toBe("mint");
    expect(mint.value.data.parsed.info.decimals).toBe(6);
    const missing = (await rpc(rpcUrl, "getAccountInfo", [
      Object.values(untokenized!.accounts)[0]!.yesMint,
      { encoding: "base64" },
    ])) as { value: unknown };
    expect(missing.value).toBeNull();
  });

  it("funds a wallet through POST /dev/faucet, and refuses bad input with {code, msg}", async () => {
    const wallet = (await generateKeyPairSigner()).address;
    const response = await fetch(`${t.url}/dev/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wallet, mint: USDC_MINT, amount: "12500000" }),
    });
    expect(response.status).toBe(200);
    const grant = (await response.json()) as { tokenAccount: string; amount: string };
    expect(grant.amount).toBe("12500000");
    const chain = new RpcChain({ url: rpcUrl });
    const [account] = await chain.getTokenAccountsByOwner(wallet, { mint: USDC_MINT });
    expect(account?.amount).toBe(12_500_000n);

    const refused = await fetch(`${t.url}/dev/faucet`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wallet: "not-an-address", mint: USDC_MINT, amount: "1" }),
    });
    expect(refused.status).toBe(400);
    expect(Object.keys((await refused.json()) as object).sort()).toEqual(["code", "msg"]);
  });
});

describe("production venue", () => {
  it("has no faucet, even for a valid key", async () => {
    const t = await startTestServer({ settings: { MODE: "production" } });
    try {
      const { openStorage } = await import("../../src/storage/database.js");
      const { loadConfig } = await import("../../src/config.js");
      const storage = await openStorage(loadConfig({}, t.settings));
      const { secret } = await createKey(storage.db, { name: "ops" });
      await storage.close();
      const wallet = (await generateKeyPairSigner()).address;
      const response = await fetch(`${t.url}/dev/faucet`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": secret },
        body: JSON.stringify({ wallet, mint: USDC_MINT, amount: "1" }),
      });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { code: string }).code).toBe("not_found");
      const anonymous = await fetch(`${t.url}/dev/faucet`, { method: "POST" });
      expect(anonymous.status).toBe(401);
    } finally {
      await t.stop();
    }
  });
});
