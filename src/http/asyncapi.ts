/**
 * The AsyncAPI 3 document of a listener's WebSocket streams, served at `/asyncapi.json` beside the
 * OpenAPI documents: one channel per stream, the server receiving the clients' requests and sending
 * its frames, every message's payload generated from the zod schema that describes it.
 */
import { z } from "zod";
import type { StreamChannel } from "../contract/streams.js";

const SCHEMAS = "#/components/schemas/";

/** JSON Schema as the documents hold it. */
type JsonObject = Record<string, unknown>;

/** The document for `channels` on the listener at `host` (`name:port`, as the client reached it). */
export function asyncApiDocument(
  channels: readonly StreamChannel[],
  listener: { host: string; mode: "development" | "production" },
): JsonObject {
  const schemas: Record<string, JsonObject> = {};
  const messages: Record<string, JsonObject> = {};
  const documentChannels: Record<string, JsonObject> = {};
  const operations: Record<string, JsonObject> = {};
  const addMessage = (name: string, schema: z.ZodType, io: "input" | "output") => {
    if (messages[name]) return;
    schemas[name] = payloadSchema(schema, io, schemas);
    const { description } = schemas[name] as { description?: string };
    messages[name] = {
      name,
      title: name,
      contentType: "application/json",
      ...(description ? { summary: description } : {}),
      payload: { $ref: `${SCHEMAS}${name}` },
    };
  };
  for (const channel of channels) {
    // Requests are what a client writes (zod's input); frames what the server writes (its output).
    for (const [name, schema] of Object.entries(channel.requests)) addMessage(name, schema, "input");
    for (const [name, schema] of Object.entries(channel.frames)) addMessage(name, schema, "output");
    const names = [...Object.keys(channel.requests), ...Object.keys(channel.frames)];
    documentChannels[channel.id] = {
      address: channel.address,
      title: channel.title,
      description: channel.description,
      messages: Object.fromEntries(names.map((name) => [name, { $ref: `#/components/messages/${name}` }])),
      bindings: { ws: { method: "GET", bindingVersion: "0.1.0" } },
    };
    const reference = (name: string) => ({ $ref: `#/channels/${channel.id}/messages/${name}` });
    if (Object.keys(channel.requests).length > 0) {
      operations[`${channel.id}Requests`] = {
        action: "receive",
        channel: { $ref: `#/channels/${channel.id}` },
        summary: `What a client of ${channel.address} sends`,
        messages: Object.keys(channel.requests).map(reference),
      };
    }
    operations[`${channel.id}Frames`] = {
      action: "send",
      channel: { $ref: `#/channels/${channel.id}` },
      summary: `What ${channel.address} sends its clients`,
      messages: Object.keys(channel.frames).map(reference),
    };
  }
  const keyed = listener.mode === "production";
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Oddsgate streams",
      version: "0.1.0",
      description:
        "The WebSocket streams of this listener. Open one with a plain WebSocket upgrade (GET); the API key, where one is needed, goes in the x-api-key header of the upgrade request, never in the URL. The HTTP answers to a refused upgrade (426 upgrade_required, 403 stream_not_permitted, 401, 429, ...) are in the OpenAPI documents.",
    },
    defaultContentType: "application/json",
    servers: {
      oddsgate: {
        host: listener.host,
        protocol: "ws",
        description: keyed
          ? "A production deployment: every upgrade needs a key with the streams permission."
          : "A development deployment: a key is optional (anonymous callers are rate limited by address).",
        ...(keyed ? { security: [{ $ref: "#/components/securitySchemes/apiKey" }] } : {}),
      },
    },
    channels: documentChannels,
    operations,
    components: {
      schemas,
      messages,
      securitySchemes: { apiKey: { type: "httpApiKey", name: "x-api-key", in: "header" } },
    },
  };
}

/**
 * A message's payload as JSON Schema draft 7 (AsyncAPI's own schema format); the schemas it names by
 * `id` (a response the OpenAPI documents publish too, say) become components of their own.
 */
function payloadSchema(
  schema: z.ZodType,
  io: "input" | "output",
  components: Record<string, JsonObject>,
): JsonObject {
  const json = z.toJSONSchema(schema, { target: "draft-7", io, unrepresentable: "any" }) as JsonObject;
  const { $schema: _, definitions, ...rest } = json;
  for (const [name, definition] of Object.entries((definitions ?? {}) as Record<string, JsonObject>))
    components[name] ??= definition;
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/definitions/', `"${SCHEMAS}`)) as JsonObject;
}
