import websocket from "@fastify/websocket";
import { HTTP_LIMITS } from "../../limits.js";
import { appPlugin } from "./app-plugin.js";

/** WebSocket upgrades for the streams, with a client's protocol errors logged as the client's fault. */
export const websocketStreams = appPlugin("websocket-streams", async (app) => {
  await app.register(websocket, {
    options: { maxPayload: HTTP_LIMITS.apiBodyBytes },
    errorHandler: (error, socket, request) => {
      const code = (error as { code?: unknown }).code;
      if (typeof code === "string" && code.startsWith("WS_ERR_")) {
        // A client breaking the protocol (a frame over maxPayload, bad UTF-8, ...): ws has already
        // closed the connection with the matching code (1009 for size). It is the client's fault, so
        // one line and no stack.
        request.log.warn({ code }, `stream closed: ${error.message}`);
        return;
      }
      request.log.error({ err: error }, "stream handler failed");
      socket.terminate();
    },
  });
});
