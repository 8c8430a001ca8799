/**
 * "Production leaves the chain open" (issue 15): in production the sandbox chain's JSON-RPC and
 * PubSub take only requests with an API key the venue accepts (never one in the URL), refuse
 * `requestAirdrop`, and without a key check bind to loopback only.
 */
import type http from "node:http";
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { encodeBase58 } from "../../src/chain/base58.js";
import { RPC_ERROR } from "../../src/chain/errors.js";
import { RPC_UNAUTHORIZED } from "../../src/chain/sandbox/rpc-server.js";
import { startTestChain, type TestChain, type TestChainOptions } from "../chain/harness.js";
import { tempDir } from "../support/backends.js";

const GOOD_KEY = "og_test_good_key";

interface Started {
  chain: TestChain;
  stop(): Promise<void>;
}

async function start(options: TestChainOptions): Promise<Started> {
  const dir = tempDir();
  const chain = await startTestChain({ DATA_DIR: dir.dir }, { markets: [], ...options });
  return {
    chain,
    async stop() {
      await chain.stop();
      await dir.cleanup();
    },
  };
}

interface RpcBody {
  result?: unknown;
  error?: { code: number; message: string };
  id: unknown;
}

async function rpc(
  url: string,
  method: string,
  params: unknown[] = [],
  headers: Record<string, string> = {},
): Promise<{ status: number; body: RpcBody }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: response.status, body: (await response.json()) as RpcBody };
}

/** Opens a PubSub socket; resolves "open", or the status and body of a refused upgrade. */
function upgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once("open", () => {
      socket.close();
      resolve({ status: 101, body: "" });
    });
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once("error", reject);
  });
}

describe("production with an API key check", () => {
  let started: Started;
  const offered: (string | string[] | undefined)[] = [];

  beforeAll(async () => {
    started = await start({
      mode: "production",
      authorize: async (headers: http.IncomingHttpHeaders) => {
        offered.push(headers["x-api-key"]);
        return headers["x-api-key"] === GOOD_KEY;
      },
    });
  });
  afterAll(async () => started?.stop());

  it("refuses JSON-RPC without a key, or with one it does not accept, with 401 and a JSON-RPC error", async () => {
    for (const headers of [{}, { "x-api-key": "og_wrong" }] as Record<string, string>[]) {
      const answer = await rpc(started.chain.rpcUrl, "getSlot", [], headers);
      expect(answer.status).toBe(401);
      expect(answer.body.id).toBeNull();
      expect(answer.body.error?.code).toBe(RPC_UNAUTHORIZED);
      expect(answer.body.error?.message).toMatch(/^unauthorized: /);
      expect(answer.body.result).toBeUndefined();
    }
    const accepted = await rpc(started.chain.rpcUrl, "getSlot", [], { "x-api-key": GOOD_KEY });
    expect(accepted.status).toBe(200);
    expect(typeof accepted.body.result).toBe("number");
  });

  it("refuses a key in the URL under every usual name, even a good one, without checking it", async () => {
    const names = ["api_key", "apiKey", "x-api-key", "key", "api-key", "token", "access_token", "API_KEY"];
    // Spellings that normalize to a key name, and names that carry a secret's word.
    names.push("api+key", "api%20key", "api_key[]", "apikey%00", "api.key", "api_token", "auth", "password");
    for (const name of names) {
      offered.length = 0;
      const url = `${started.chain.rpcUrl}/?${name}=${GOOD_KEY}`;
      const answer = await rpc(url, "getSlot", [], { "x-api-key": GOOD_KEY });
      expect(answer.status, name).toBe(401);
      expect(answer.body.error?.message).toMatch(/never in the URL/);
      const refused = await upgrade(`${started.chain.wsUrl}/?${name}=${GOOD_KEY}`, { "x-api-key": GOOD_KEY });
      expect(refused.status, name).toBe(401);
      expect(offered).toEqual([]);
    }
  });

  it("refuses a PubSub upgrade without an accepted key with 401 and a {code,msg} body", async () => {
    for (const headers of [{}, { "x-api-key": "og_wrong" }] as Record<string, string>[]) {
      const refused = await upgrade(started.chain.wsUrl, headers);
      expect(refused.status).toBe(401);
      const body = JSON.parse(refused.body) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(["code", "msg"]);
      expect(body.code).toBe("unauthorized");
    }
    expect((await upgrade(started.chain.wsUrl, { "x-api-key": GOOD_KEY })).status).toBe(101);
  });

  it("refuses requestAirdrop even with a good key, and pays nothing", async () => {
    const recipient = encodeBase58(new Uint8Array(32).fill(42));
    const treasury = started.chain.signers.treasury.address;
    const before = await started.chain.chain.getBalance(treasury);
    const answer = await rpc(started.chain.rpcUrl, "requestAirdrop", [recipient, 5_000_000_000], {
      "x-api-key": GOOD_KEY,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.error).toEqual({
      code: RPC_ERROR.methodNotFound,
      message: "requestAirdrop is not available in production mode",
    });
    expect(await started.chain.chain.getBalance(recipient as never)).toBe(0n);
    expect(await started.chain.chain.getBalance(treasury)).toBe(before);
  });

  it("still serves /health to load balancers without a key", async () => {
    const response = await fetch(`${started.chain.rpcUrl}/health`);
    expect(response.status).toBe(200);
  });
});

describe("production without an API key check", () => {
  it("binds to 127.0.0.1 whatever host was asked, and says so", async () => {
    const logged: { object: object; message?: string }[] = [];
    const started = await start({
      mode: "production",
      host: "0.0.0.0",
      logger: {
        info: (object, message) => logged.push({ object, message }),
        error: (object, message) => logged.push({ object, message }),
      },
    });
    try {
      expect(new URL(started.chain.rpcUrl).hostname).toBe("127.0.0.1");
      expect(new URL(started.chain.wsUrl).hostname).toBe("127.0.0.1");
      expect(logged.some((line) => /127\.0\.0\.1 only/.test(line.message ?? ""))).toBe(true);
      // Loopback answers without a key; requestAirdrop stays refused.
      expect((await rpc(started.chain.rpcUrl, "getSlot")).status).toBe(200);
      const airdrop = await rpc(started.chain.rpcUrl, "requestAirdrop", [
        encodeBase58(new Uint8Array(32).fill(5)),
        1,
      ]);
      expect(airdrop.body.error?.code).toBe(RPC_ERROR.methodNotFound);
      // Another address of this machine, if it has one, reaches nothing.
      const external = Object.values(os.networkInterfaces())
        .flat()
        .find((entry) => entry && entry.family === "IPv4" && !entry.internal);
      if (external) {
        const port = new URL(started.chain.rpcUrl).port;
        await expect(fetch(`http://${external.address}:${port}/health`)).rejects.toThrow();
      }
    } finally {
      await started.stop();
    }
  });
});

describe("development", () => {
  it("needs no key and keeps requestAirdrop", async () => {
    const started = await start({ authorize: async () => false });
    try {
      const recipient = encodeBase58(new Uint8Array(32).fill(6));
      const answer = await rpc(started.chain.rpcUrl, "requestAirdrop", [recipient, 1_000_000]);
      expect(typeof answer.body.result).toBe("string");
      expect((await upgrade(started.chain.wsUrl)).status).toBe(101);
    } finally {
      await started.stop();
    }
  });
});
