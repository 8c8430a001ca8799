/** WebSocket /quote-stream — per-slot best bid and ask of subscribed pairs (interface operation 6). */
import type { ZodApp } from "../../http/types.js";
import type { QuoteStreamHub } from "../streams/quote-stream.js";

/** Registers the `/quote-stream` WebSocket. */
export function quoteStream(app: ZodApp, hub: QuoteStreamHub): void {
  // The access control's upgrade check (key in a header, never the URL; the streams permission) runs first.
  app.get("/quote-stream", { websocket: true, schema: { hide: true } }, (socket) => hub.accept(socket));
}
