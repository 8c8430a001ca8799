import type { FastifyPluginAsync, RawServerDefault } from "fastify";
import fastifyPlugin from "fastify-plugin";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { ZodApp } from "../../http/types.js";

/**
 * A plugin that adds to the app it is registered on (not wrapped in a scope of its own), so that its
 * hooks and handlers reach every route, not only its own.
 */
export function appPlugin<Options extends object>(
  name: string,
  plugin: (app: ZodApp, options: Options) => Promise<void>,
): FastifyPluginAsync<Options, RawServerDefault, ZodTypeProvider> {
  return fastifyPlugin(plugin as FastifyPluginAsync<Options, RawServerDefault, ZodTypeProvider>, { name });
}
