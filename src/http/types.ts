/** Types shared by every route module. */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, RawServerDefault } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";

/** A Fastify instance whose route schemas are zod schemas. */
export type ZodApp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** Sends an already-serialized JSON body, skipping serialization. */
export function sendJson(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type("application/json; charset=utf-8").send(json);
}
