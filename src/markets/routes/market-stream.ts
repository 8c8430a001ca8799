/** WebSocket /api/v1/ws — prices, trades and order books of subscribed markets (contract §5). */
import type { ZodApp } from "../../http/types.js";
import type { MarketStreamHub } from "../ws.js";

/** Registers the market-data stream; the access control's upgrade check runs before it. */
export function marketStream(app: ZodApp, hub: MarketStreamHub): void {
  // The shared upgrade check (key in a header, never the URL; the streams permission) runs first.
  app.get("/ws", { websocket: true, schema: { hide: true } }, (socket) => hub.accept(socket));
}
