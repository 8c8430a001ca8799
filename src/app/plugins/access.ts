import cors from "@fastify/cors";
import { type AccessControl, installAccessControl } from "../../http/auth.js";
import { installIgnoredParams } from "../../http/ignored-params.js";
import { appPlugin } from "./app-plugin.js";

/** Who may call: browsers' origins (CORS), API keys and rate limits, and the parameters ignored. */
export const access = appPlugin(
  "access",
  async (app, options: { corsOrigins?: string; access: AccessControl }) => {
    if (options.corsOrigins) {
      const origins = options.corsOrigins.split(",").map((origin) => origin.trim());
      // Registered before the access checks, so browsers' preflight requests (which carry no key) are answered.
      await app.register(cors, {
        origin: origins.includes("*") ? "*" : origins,
        allowedHeaders: ["content-type", "x-api-key", "x-request-id", "x-sign-request"],
        exposedHeaders: [
          "x-request-id",
          "ratelimit",
          "ratelimit-policy",
          "x-ratelimit-limit",
          "x-ratelimit-remaining",
          "retry-after",
          "x-api-key-status",
          "x-ignored-params",
        ],
      });
    }
    installAccessControl(app, options.access);
    installIgnoredParams(app);
  },
);
