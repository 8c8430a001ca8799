/** Helpers for WebSocket tests. */
import WebSocket from "ws";

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
