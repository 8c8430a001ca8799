import { installResponseSigning, type ResponseSigningKey } from "../../http/response-signing.js";
import { appPlugin } from "./app-plugin.js";

/** Headers every response carries, upgrades' sockets ended, and responses signed for those who ask. */
export const responseHeaders = appPlugin(
  "response-headers",
  async (app, options: { responseSigning?: ResponseSigningKey }) => {
    app.addHook("onRequest", async (request, reply) => {
      reply.header("x-request-id", request.id);
      // Relayed bodies come from another service: never let a browser guess them into something else.
      reply.header("x-content-type-options", "nosniff");
      if (request.headers.upgrade !== undefined) reply.header("connection", "close");
    });
    app.addHook("onResponse", async (request) => {
      // An upgrade refused with a plain HTTP answer leaves a socket Node's HTTP server no longer manages:
      // end it, or it stays half-open and holds up shutdown.
      if (request.headers.upgrade !== undefined) request.raw.socket?.end();
    });
    // Before every other plugin and handler, so that its onSend hook reaches all of them: routes,
    // errors, 404s, and the refusals of access control.
    if (options.responseSigning) installResponseSigning(app, options.responseSigning);
  },
);
