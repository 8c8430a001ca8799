import type { FastifyPluginAsync, RawServerDefault } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { ZodApp } from "../../http/types.js";

/**
 * A plugin that adds to the app it is registered on (Fastify's `skip-override`, as fastify-plugin
 * sets it), so that its hooks and handlers reach every route, not only its own.
 */
export function appPlugin<Options extends object>(
  name: string,
  plugin: (app: ZodApp, options: Options) => Promise<void>,
): FastifyPluginAsync<Options, RawServerDefault, ZodTypeProvider> {
  return Object.assign(plugin, {
    [Symbol.for("skip-override")]: true,
    [Symbol.for("fastify.display-name")]: name,
  });
}
