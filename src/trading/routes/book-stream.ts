/** WebSocket /book-stream — ten levels a side of direct routes per subscribed pair (reference §8.4). */
import type { ZodApp } from "../../http/types.js";
import type { BookStreamHub } from "../streams/book-stream.js";

/** Registers the `/book-stream` WebSocket. */
export function bookStream(app: ZodApp, hub: BookStreamHub): void {
  // The access control's upgrade check (key in a header, never the URL; the streams permission) runs first.
  app.get("/book-stream", { websocket: true, schema: { hide: true } }, (socket) => hub.accept(socket));
}
