/**
 * The shared upgrade check on a real WebSocket route: the same key rules as HTTP, plus the `streams`
 * permission, enforced before the connection is upgraded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { KeyRing } from "../../src/api-keys/key-ring.js";
import { createKey, type IssuedKey, revokeKey } from "../../src/api-keys/store.js";
import { buildApp } from "../../src/app/build-app.js";
import { loadConfig } from "../../src/config.js";
import { MemoryRateStore } from "../../src/http/rate-limit.js";
import type { ZodApp } from "../../src/http/types.js";
import { CatalogHolder } from "../../src/markets/catalog-holder.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import { tempDir } from "../support/backends.js";

interface Venue {
  url: string;
  close(): Promise<void>;
}

/** A server whose only stream says hello: enough to see who gets upgraded. */
async function startVenue(mode: "development" | "production", storage: Storage): Promise<Venue> {
  const keys = new KeyRing(storage.db);
  await keys.start();
  const rateStore = new MemoryRateStore();
  const app: ZodApp = await buildApp({
    config: loadConfig({}, { MODE: mode, LOG_LEVEL: "silent" }),
    catalog: new CatalogHolder(),
    access: { mode, keys, rateStore, limits: { anonymous: 0, standard: 0, pro: 0 } },
  });
  // No hook of its own: every WebSocket route gets the streams check from the access control.
  app.get("/test-stream", { websocket: true }, (socket) => {
    // Said a moment after the upgrade, so an accepted stream must stay open past the HTTP exchange.
    setTimeout(() => socket.send("hello"), 100);
  });
  const url = (await app.listen({ host: "127.0.0.1", port: 0 })).replace("http", "ws");
  return {
    url,
    async close() {
      await app.close();
      await keys.stop();
      await rateStore.close();
    },
  };
}

/** Opens a stream; resolves with the first message, or the HTTP status and error body of a refusal. */
function connect(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ message?: string; status?: number; body?: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once("message", (data) => {
      resolve({ message: String(data) });
      socket.close();
    });
    socket.once("unexpected-response", (request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk;
      });
      response.on("end", () => {
        // A refused upgrade leaves the TCP connection open; a client would drop it, so do we.
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    socket.once("error", (error) => {
      if (!String(error.message).includes("Unexpected server response")) reject(error);
    });
  });
}

const dir = tempDir();
let storage: Storage;
let production: Venue;
let development: Venue;
let streaming: IssuedKey;
let plain: IssuedKey;
let revoked: IssuedKey;

beforeAll(async () => {
  storage = await openStorage({ DATA_DIR: dir.dir });
  streaming = await createKey(storage.db, { name: "streamer", streams: true });
  plain = await createKey(storage.db, { name: "rest only" });
  revoked = await createKey(storage.db, { name: "gone", streams: true });
  await revokeKey(storage.db, revoked.key.id);
  production = await startVenue("production", storage);
  development = await startVenue("development", storage);
});
afterAll(async () => {
  await production?.close();
  await development?.close();
  await storage?.close();
  await dir.cleanup();
});

describe("WebSocket upgrade check", () => {
  it("upgrades a key with the streams permission", async () => {
    expect(await connect(`${production.url}/test-stream`, { "x-api-key": streaming.secret })).toEqual({
      message: "hello",
    });
  });

  it("refuses a production upgrade without a key: 401", async () => {
    const refused = await connect(`${production.url}/test-stream`);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body ?? "")).toMatchObject({ code: "unauthorized" });
  });

  it("refuses a revoked key: 401", async () => {
    expect((await connect(`${production.url}/test-stream`, { "x-api-key": revoked.secret })).status).toBe(
      401,
    );
  });

  it("refuses a key without the streams permission: 403 stream_not_permitted", async () => {
    const refused = await connect(`${production.url}/test-stream`, { "x-api-key": plain.secret });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body ?? "")).toMatchObject({ code: "stream_not_permitted" });
  });

  it("refuses a key in the URL, even a valid one, in either mode: 400", async () => {
    for (const venue of [production, development]) {
      const refused = await connect(`${venue.url}/test-stream?api_key=${streaming.secret}`);
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.body ?? "")).toMatchObject({ code: "api_key_in_query" });
    }
  });

  it("lets anonymous development callers stream, but not with a key lacking the permission", async () => {
    expect(await connect(`${development.url}/test-stream`)).toEqual({ message: "hello" });
    expect((await connect(`${development.url}/test-stream`, { "x-api-key": plain.secret })).status).toBe(403);
  });
});
