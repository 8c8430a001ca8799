/** Helpers for WebSocket tests. */
import { expect } from "vitest";
import WebSocket from "ws";
import { createKey } from "../../src/api-keys/store.js";
import { loadConfig } from "../../src/config.js";
import { openStorage } from "../../src/storage/database.js";
import { startTestServer } from "./server.js";

/** The status an upgrade to `url` gets with `headers`: 101 when the stream opens, else the HTTP refusal. */
export function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise<number>((resolve) => {
    const socket = new WebSocket(url, { headers });
    socket.once("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
    socket.once("open", () => {
      socket.close();
      resolve(101);
    });
  });
}

/**
 * The upgrade check every stream shares, against a production server: no key 401, a key without the
 * streams permission 403, a key in the URL 400, a streams key in the header opens the stream.
 */
export async function expectProductionStreamAccess(path: string): Promise<void> {
  const prod = await startTestServer({ settings: { MODE: "production" } });
  const storage = await openStorage(loadConfig({}, prod.settings));
  try {
    const streams = await createKey(storage.db, { name: "bot", streams: true });
    const noStreams = await createKey(storage.db, { name: "http-only", streams: false });
    const url = `${prod.url.replace("http", "ws")}${path}`;
    const refusal = (headers: Record<string, string>, query = "") => upgradeStatus(`${url}${query}`, headers);
    expect(await refusal({})).toBe(401);
    expect(await refusal({ "x-api-key": noStreams.secret })).toBe(403);
    expect(await refusal({ "x-api-key": streams.secret }, `?api_key=${streams.secret}`)).toBe(400);
    expect(await refusal({ "x-api-key": streams.secret })).toBe(101);
  } finally {
    await storage.close();
    await prod.stop();
  }
}
