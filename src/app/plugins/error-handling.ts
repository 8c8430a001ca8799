import type { FastifyError, FastifyInstance, FastifyRequest } from "fastify";
import FindMyWay, { type HTTPMethod } from "find-my-way";
import { ApiError, ERRORS, isErrorCode } from "../../contract/errors.js";
import { toWireError, validationMessage } from "../../http/errors.js";
import { marketsApiError } from "../../markets/routes/errors.js";
import { tradeApiError, tradeValidationError } from "../../trading/routes/errors.js";
import { appPlugin } from "./app-plugin.js";

const ALL_METHODS: HTTPMethod[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/** Every error, unknown path and wrong method answered with a catalogue error's `{code,msg}` body. */
export const errorHandling = appPlugin("error-handling", async (app) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const wire = toWireError(catalogueError(error, request));
    // Every 500 is unexpected (on the trade routes it carries the reference's name for one).
    if (wire.status === 500) request.log.error({ err: error }, "request failed");
    else request.log.info({ code: wire.body.code }, wire.body.msg);
    // What the catalogue says may succeed later, a 503 says when: at once, the next second.
    if (wire.status === 503 && isErrorCode(wire.body.code) && ERRORS[wire.body.code].retryable)
      reply.header("retry-after", "1");
    return reply.code(wire.status).send(wire.body);
  });
  installNotFoundHandler(app);
});

/**
 * An error as the catalogue error its route answers with. A schema failure (a parameter missing,
 * repeated, of the wrong type) is the trade route's reference code for that parameter, else
 * `bad_request`; a domain module's error is what its route group maps it to (each group's
 * `routes/errors.ts`, which also gives the trade routes' other errors their reference names); any
 * other error is as it is.
 */
function catalogueError(error: FastifyError, request: FastifyRequest): unknown {
  if (error.validation) {
    return (
      tradeValidationError(request.routeOptions.url, error) ??
      new ApiError(
        "bad_request",
        validationMessage(error, request.routeOptions.schema?.[error.validationContext ?? "querystring"]),
      )
    );
  }
  return marketsApiError(error) ?? tradeApiError(error, request) ?? error;
}

/**
 * Answers unknown paths with 404 and known paths with the wrong method with 405 (Fastify alone
 * answers both with 404), using a shadow router of every registered route.
 */
function installNotFoundHandler(app: FastifyInstance): void {
  const known = FindMyWay({ ignoreTrailingSlash: false });
  const noop = () => {};
  app.addHook("onRoute", (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (ALL_METHODS.includes(method as HTTPMethod) && !known.hasRoute(method as HTTPMethod, route.url)) {
        known.on(method as HTTPMethod, route.url, noop);
      }
    }
  });
  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = ALL_METHODS.filter((method) => method !== request.method && known.find(method, path));
    if (allowed.length > 0) {
      reply.header("allow", allowed.join(", "));
      const wire = toWireError(
        new ApiError(
          "method_not_allowed",
          `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}`,
        ),
      );
      return reply.code(wire.status).send(wire.body);
    }
    const wire = toWireError(new ApiError("not_found", `no route ${request.method} ${path}`));
    return reply.code(wire.status).send(wire.body);
  });
}
