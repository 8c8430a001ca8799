/** One API group's OpenAPI document, served at `/openapi.json` within the group's prefix. */
import swagger from "@fastify/swagger";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import type { Config } from "../config.js";
import type { ZodApp } from "./types.js";

/** Documents every route registered after it in `app`'s context, and serves the document. */
export async function registerOpenApi(
  app: ZodApp,
  info: { title: string; description: string },
  mode: Config["MODE"],
): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { ...info, version: "0.1.0" },
      servers: [{ url: "/" }],
      components: {
        securitySchemes: { api_key: { type: "apiKey", in: "header", name: "x-api-key" } },
      },
      // Development deployments also serve anonymous callers (rate limited per IP).
      security: mode === "production" ? [{ api_key: [] }] : [{ api_key: [] }, {}],
    },
    transform: jsonSchemaTransform,
  });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
